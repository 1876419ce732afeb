"""Faults made real in ibsim through its console, each verified by ``ibnetdiscover``.

======================  ==================================================================
fault                   what is sent to ibsim's console
======================  ==================================================================
``kill`` switch         ``Unlink "<switch>"[<port>]`` for every cabled port of it
``kill`` NIC            ``Unlink "<nic>"[<port>]``: the HCA's port
``drain`` switch        ``Unlink`` port by port, waiting for OpenSM to route around each one
                        before the next (the last cable goes only when the rest are
                        routed around; ibsim has no administrative port disable)
``cut`` cable           ``Unlink "<a>"[<port>]`` (ibsim takes both ends of the cable down)
``optic`` port          the same on the port's end (ibsim cannot fail one direction only)
restore                 ``ReLink`` the same ports
``degrade``             not supported on ibsim: ibsim 0.10's console cannot change a
                        port's width or speed (only the net file sets them at start)
======================  ==================================================================

After each fault the live wiring is read back with ``ibnetdiscover`` (island
by island, :meth:`Simulation.change`): a port that should be down and is still
linked (or the other way round) is a :class:`BackendError` -- a fault that
changed nothing never passes silently.  Then every island is routed again: the
master OpenSM's by the master, each other one by an SM inside it.  A fault that
cuts the master's own HCA off is no exception: the rest is routed by a standby.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.backends.ibsim.net import CablePort
from harness.backends.ibsim.net import cable_ends
from harness.backends.ibsim.sim import Simulation
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Kind
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind

SUPPORTED_FAULTS = frozenset({FaultKind.KILL, FaultKind.DRAIN, FaultKind.CUT, FaultKind.OPTIC})
#: Why ``hang`` is not one of them.
HANG_REFUSED = (
    "ibsim cannot hang a switch: its console links, unlinks and removes nodes, and a switch "
    "it keeps answers every SMP and forwards by its tables, so OpenSM would never lose it; "
    "the model predicts a hang under control sm (found at the next sweep, routing: {sweep: ...})"
)


@dataclass(frozen=True, slots=True)
class FaultEffect:
    """What one fault did: the cable ends it took down and how long re-routing took."""

    fault: AppliedFault
    ports: tuple[CablePort, ...]
    rerouted_s: float  # from the console command to OpenSM's next SUBNET UP


def _ports_of_element(sim: Simulation, element: int) -> list[CablePort]:
    f = sim.fabric
    kind = Kind(int(f.kind[element]))
    if kind not in COMPUTE_SWITCH_KINDS and kind is not Kind.NIC:
        msg = (
            f"{f.ids[element]} is a {kind.label}: on ibsim only switches and rail NICs exist "
            "(kill a leaf, spine, core or NIC)"
        )
        raise ScenarioError(msg)
    out = []
    for li in f.links_at(element).tolist():
        try:
            a, b = cable_ends(f, int(li))
        except ValueError:
            continue
        out.append(a if a.node == f.ids[element] else b)
    return out


def ports_of(sim: Simulation, fault: AppliedFault) -> list[CablePort]:
    """The cable ends (on ibsim) a fault takes down."""
    kind = fault.fault.kind
    if kind not in SUPPORTED_FAULTS:
        msg = (
            f"{kind.value} is not supported on ibsim (its console cannot change a port's width "
            "or speed); run this scenario on the model or netns backend"
        )
        raise ScenarioError(msg)
    if kind in (FaultKind.KILL, FaultKind.DRAIN):
        return [p for e in fault.elements for p in _ports_of_element(sim, e)]
    if kind is FaultKind.CUT:
        return [cable_ends(sim.fabric, li)[0] for li in fault.links]
    # optic: the failed end; ports are "<element>:<port>" ids
    out = []
    for pid, li in zip(fault.ports, fault.links, strict=True):
        a, b = cable_ends(sim.fabric, li)
        out.append(b if pid == f"{b.node}:{b.port}" else a)
    return out


def planned(sim: Simulation, fault: AppliedFault) -> FaultEffect:
    """What injecting ``fault`` will take down (nothing sent yet; ``rerouted_s`` 0).

    The backend keeps it before :func:`inject_planned` sends a line, so a fault whose
    inject was cut short (an error, a signal) is still reverted by :func:`revert`.
    """
    ports = ports_of(sim, fault)
    if not ports:
        msg = f"{fault.describe(sim.fabric)}: no cable of it exists on ibsim"
        raise BackendError(msg)
    return FaultEffect(fault, tuple(ports), 0.0)


def inject(sim: Simulation, fault: AppliedFault) -> FaultEffect:
    """Take the fault's ports down, verify it, and wait until every island is routed again."""
    return inject_planned(sim, planned(sim, fault))


def inject_planned(sim: Simulation, effect: FaultEffect) -> FaultEffect:
    """:func:`inject` for an effect :func:`planned` made: its ports go down, routed around."""
    fault, ports = effect.fault, list(effect.ports)
    what = fault.describe(sim.fabric)
    if fault.fault.kind is FaultKind.DRAIN:
        # one port at a time, each routed around before the next goes
        rerouted = sum(
            sim.change([p], up=False, what=f"{what}: routing around {p.node}[{p.port}]")
            for p in ports
        )
    else:
        rerouted = sim.change(ports, up=False, what=f"routing around {what}")
    return FaultEffect(fault, tuple(ports), rerouted)


def revert(sim: Simulation, effect: FaultEffect) -> float:
    """ReLink what a fault unlinked, verify the ports are back, wait for the routing.

    Only the ports still unlinked: an inject cut short may have taken some or none down
    (none: nothing to do, 0 s).
    """
    what = effect.fault.describe(sim.fabric)
    ports = [p for p in effect.ports if sim.unlinked(p)]
    if not ports:
        return 0.0
    return sim.change(ports, up=True, what=f"routing after restoring {what}")
