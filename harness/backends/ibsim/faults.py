"""Faults made real in ibsim through its console, each verified by ``ibnetdiscover``.

======================  ==================================================================
fault                   what is sent to ibsim's console
======================  ==================================================================
``kill`` switch         ``Unlink "<switch>"``: every port of it (its peers see link down)
``kill`` NIC            ``Unlink "<nic>"``: the HCA's port
``drain`` switch        ``Unlink`` port by port, waiting for OpenSM to route around each one
                        before the next (the last cable goes only when the rest are
                        routed around; ibsim has no administrative port disable)
``cut`` cable           ``Unlink "<a>"[<port>]`` (ibsim takes both ends of the cable down)
``optic`` port          the same on the port's end (ibsim cannot fail one direction only)
restore                 ``ReLink`` the same ports
``degrade``             not supported on ibsim: ibsim 0.10's console cannot change a
                        port's width or speed (only the net file sets them at start)
======================  ==================================================================

After each fault the live wiring is read back with ``ibnetdiscover``: a port
that should be down and is still linked (or the other way round) is a
:class:`BackendError` -- a fault that changed nothing never passes silently.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness.backends.ibsim.net import CablePort
from harness.backends.ibsim.net import cable_ends
from harness.backends.ibsim.sim import Simulation
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Kind
from harness.faults import AppliedFault
from harness.faults import FaultKind

SUPPORTED_FAULTS = frozenset({FaultKind.KILL, FaultKind.DRAIN, FaultKind.CUT, FaultKind.OPTIC})


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


def _check(sim: Simulation, ports: list[CablePort], *, linked: bool, what: str) -> None:
    wiring = sim.wiring()
    wrong = []
    for p in ports:
        desc = sim.names.desc_of[sim.fabric.index[p.node]]
        if wiring.linked(desc, p.port) != linked:
            wrong.append(f"{p.node}[{p.port}]")
    if wrong:
        state = "still linked" if not linked else "still down"
        msg = (
            f"{what} changed nothing on ibsim for {', '.join(wrong[:6])}: ibnetdiscover shows "
            f"the port{'s' if len(wrong) > 1 else ''} {state}"
        )
        raise BackendError(msg)


def _spare_the_sm(sim: Simulation, fault: AppliedFault, ports: list[CablePort]) -> None:
    f = sim.fabric
    host = f.index[sim.sm_host]
    (link,) = [int(li) for li in f.links_at(host).tolist() if _is_cable(sim, int(li))]
    sm_ends = set(cable_ends(f, link))
    leaf = next(e.node for e in sm_ends if e.node != sim.sm_host)
    if sm_ends & set(ports) or any(f.ids[e] == leaf for e in fault.elements):
        msg = (
            f"{fault.describe(f)} would cut off {sim.sm_host}, the HCA OpenSM runs on: ibsim "
            "runs a single subnet manager (no standby); choose another target"
        )
        raise BackendError(msg)


def _is_cable(sim: Simulation, link: int) -> bool:
    try:
        cable_ends(sim.fabric, link)
    except ValueError:
        return False
    return True


def inject(sim: Simulation, fault: AppliedFault) -> FaultEffect:
    """Take the fault's ports down, verify it, and wait for OpenSM to route around it."""
    ports = ports_of(sim, fault)
    _spare_the_sm(sim, fault, ports)
    if not ports:
        msg = f"{fault.describe(sim.fabric)}: no cable of it exists on ibsim"
        raise BackendError(msg)
    t0 = time.monotonic()
    if fault.fault.kind is FaultKind.DRAIN:
        # one port at a time, each routed around before the next goes
        for p in ports:
            mark = sim.routings_done()
            sim.unlink(p)
            sim.wait_routed(mark, time.monotonic(), f"routing around {p.node}[{p.port}]")
        rerouted = time.monotonic() - t0
    else:
        mark = sim.routings_done()
        for p in ports:
            sim.unlink(p)
        rerouted = sim.wait_routed(mark, t0, f"routing around {fault.describe(sim.fabric)}")
    _check(sim, ports, linked=False, what=fault.describe(sim.fabric))
    return FaultEffect(fault, tuple(ports), rerouted)


def revert(sim: Simulation, effect: FaultEffect) -> float:
    """ReLink what a fault unlinked, verify the ports are back, wait for the routing."""
    mark, t0 = sim.routings_done(), time.monotonic()
    for p in effect.ports:
        sim.relink(p)
    took = sim.wait_routed(mark, t0, f"routing after restoring {effect.fault.describe(sim.fabric)}")
    _check(
        sim, list(effect.ports), linked=True, what=f"restoring {effect.fault.describe(sim.fabric)}"
    )
    return took
