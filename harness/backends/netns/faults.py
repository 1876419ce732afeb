"""Faults made real on an :class:`~harness.backends.netns.emulation.Emulation`.

======================  ================================================================
fault                   what happens in the namespaces
======================  ================================================================
``kill`` switch         every port of it goes admin down (its peers lose carrier)
``kill`` server / NIC   its interfaces go down (rail NICs, storage members)
``drain`` switch        the subnet manager routes around it first, then its ports go down
``cut`` cable           both ends of the veth pair go down
``optic`` port          that end goes down; the far end sees no carrier
``degrade`` link        the tbf rate of both ends drops to the remaining fraction
``flaky`` link          an nftables ``netdev`` table on the receiving end's ingress drops
                        that fraction of the arriving packets (both ends, or only the end
                        that receives from ``from:``); the link stays up and routed
``bond-member``         that storage member goes down; the bond keeps its other member
``hang`` switch         an nftables ``inet`` table in its namespace drops everything it
                        receives or sends (it forwards nothing, its links keep carrier);
                        ``bgp``: its FRR daemons are stopped (SIGSTOP) too; revert: the
                        table goes, the daemons are ended and fresh ones started (a reboot)
======================  ================================================================

Under ``routing: sm`` a failure (``kill``, ``cut``, ``optic``) is routed around
only when the subnet manager sweeps, ``sweep_delay`` seconds later (the
scenario's ``routing: {reroute: ...}``): until then every forwarding table
still points at what died and the traffic it sends there is lost.  A killed
element's own ports go down at once, and its neighbours keep using their next
hops toward it (the kernel uses a next hop without carrier, as it is told to
under ``sm``); a cut cable or a dead optic drops every packet both ways at
once (a tbf queue of 0 bytes on both ends: a veth cannot lose carrier while
both ends are up) and its ports go down when the sweep finds them.  A drain
is routed around before its links go (no blackhole), a repair is swept at
once.  Under ``bgp`` every change is made at once and FRR reacts to it.

A hang tells nobody: no port goes down.  Under ``bgp`` the neighbours find it
when its sessions time out (the hold timer, or BFD), which is measured.  Under
``sm`` the harness is the subnet manager: it finds the hung switch at the
sweep the model says finds it (``hang_delay`` seconds later: the next light
sweep, then the heavy one, :func:`~harness.invariants.outage.hang_s`), and
until then every table still points through it and what goes there is dropped.

Faults may overlap (a cut cable on a killed leaf): each interface end counts the
faults holding it down and comes back up only when the last one is reverted.
Every change is checked against what the kernel reports afterwards; a fault that
changed nothing is an error, never a silent pass.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from dataclasses import field

from harness.backends.netns.emulation import OPER_UP
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.nft import HangTable
from harness.backends.netns.nft import LossRules
from harness.backends.netns.nft import LossTable
from harness.backends.netns.routing import Alive
from harness.backends.netns.routing import compute
from harness.errors import BackendError
from harness.fabric.model import Kind
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind

SUPPORTED_FAULTS = frozenset(
    {"kill", "drain", "cut", "optic", "degrade", "bond-member", "flaky", "hang"}
)
SUPPORTED_ELEMENTS = frozenset(
    k.label
    for k in (
        Kind.NODE,
        Kind.NIC,
        Kind.STORAGE_NIC,
        Kind.LEAF,
        Kind.SPINE,
        Kind.CORE,
        Kind.STORAGE_SWITCH,
    )
)
End = tuple[int, int]  # (wire, end)
# The kernel sets a link's operational state from its linkwatch work, which waits for the
# RTNL lock; while another run tears down a big emulation (the kernel frees namespaces in
# the background, under that lock) it can wait many seconds, so the deadline is generous.
UP_TIMEOUT_S = 30.0
DRAIN_TIMEOUT_S = 60.0  # bgp: the rest of the fabric moves away from a drained switch
#: Failures the subnet manager must route around (a drain is routed around before it).
REROUTED = frozenset({FaultKind.KILL, FaultKind.CUT, FaultKind.OPTIC})


@dataclass(slots=True)
class _Effect:
    """What one injected fault did, so that reverting it undoes exactly that."""

    ends: tuple[End, ...] = ()
    dead: tuple[int, ...] = ()  # elements taken out of forwarding
    factors: tuple[tuple[int, float], ...] = ()  # (wire, factor)
    losses: tuple[tuple[int, int, float], ...] = ()  # flaky: (wire, receiving end, loss)
    tables: tuple[LossTable, ...] = ()  # flaky: the nft tables made for it
    hung: tuple[HangTable, ...] = ()  # hang: the nft tables that make its switches drop all


@dataclass(slots=True)
class FaultEngine:
    """Applies and reverts faults, and re-sweeps the routes (``routing: sm``)."""

    emu: Emulation
    sweep_delay: float = 0.0  # sm: seconds from a failure to the subnet manager's sweep
    hang_delay: float = 0.0  # sm: seconds from a hang to the sweep that routes around it
    holds: Counter[End] = field(default_factory=Counter)
    dead: Counter[int] = field(default_factory=Counter)
    factors: dict[int, list[float]] = field(default_factory=dict)
    effects: dict[int, _Effect] = field(default_factory=dict)
    changed_at: float | None = None
    forced: set[int] = field(default_factory=set)
    hung: set[int] = field(default_factory=set)  # bgp: switch namespaces whose daemons stopped
    drain_moved_s: list[float] = field(default_factory=list)  # bgp: routes moved per drain
    due: float | None = None  # when the sm sweep runs (monotonic seconds)
    pending: set[End] = field(default_factory=set)  # sm: ends that go down at the sweep
    lossy: dict[int, list[float]] = field(default_factory=dict)  # flaky: wire -> losses
    dropping: set[int] = field(default_factory=set)  # hang: namespaces that drop everything
    _rules: LossRules | None = None

    def __post_init__(self) -> None:
        if self.emu.bgp is not None:  # the daemons' initial convergence is the first settle
            self.changed_at = self.emu.bgp.started_at

    # -- what a fault touches ---------------------------------------------------------
    def _ends_of_element(self, element: int) -> list[End]:
        plan = self.emu.built
        f = plan.fabric
        targets = [element]
        if Kind(int(f.kind[element])) is Kind.NODE:
            targets += f.parts_of(element).tolist()
        out: list[End] = []
        for e in targets:
            for w, end in plan.element_ports.get(e, []):
                out.append((w, end))
        return out

    def _effect(self, fault: AppliedFault) -> _Effect:
        plan = self.emu.built
        f = plan.fabric
        kind = fault.fault.kind
        if kind in (FaultKind.KILL, FaultKind.DRAIN, FaultKind.BOND_MEMBER):
            ends = [e for el in fault.elements for e in self._ends_of_element(el)]
            dead = list(fault.elements)
            for el in fault.elements:
                if Kind(int(f.kind[el])) is Kind.NODE:
                    dead += f.parts_of(el).tolist()
            if not ends:
                what = ", ".join(f.ids[e] for e in fault.elements[:3])
                msg = f"{kind.value} {what}: nothing of it is realized in the namespaces"
                raise BackendError(msg)
            return _Effect(tuple(dict.fromkeys(ends)), tuple(dead))
        if kind is FaultKind.HANG:
            unreal = [f.ids[e] for e in fault.elements if not self._switch_ns([e])]
            if unreal:
                msg = f"hang {', '.join(unreal[:3])}: not realized as a switch namespace"
                raise BackendError(msg)
            return _Effect(dead=tuple(fault.elements))
        wires = []
        for link in fault.links:
            w = plan.wire_of_link.get(link)
            if w is None:
                msg = f"{kind.value}: {f.link_ids[link]} is not realized in the namespaces"
                raise BackendError(msg)
            wires.append(w)
        if kind is FaultKind.CUT:
            return _Effect(tuple((w, e) for w in wires for e in (0, 1)))
        if kind is FaultKind.OPTIC:
            ends = []
            for port in fault.ports:
                link, end = f.port_index[port]
                ends.append((plan.wire_of_link[link], end))
            return _Effect(tuple(ends))
        if kind is FaultKind.FLAKY:  # what end e sends is lost as it arrives at end 1 - e
            losses = [
                (w, 1 - sender, loss)
                for w, pair in zip(wires, fault.loss, strict=True)
                for sender, loss in enumerate(pair)
                if loss > 0
            ]
            return _Effect(losses=tuple(losses))
        return _Effect(factors=tuple(zip(wires, fault.factors, strict=True)))  # degrade

    # -- inject / revert ----------------------------------------------------------------
    def inject(self, fault: AppliedFault) -> None:
        """Take the fault's ports down, kill its elements and shape its rates and losses.

        Raises BackendError when the fault changes nothing (all it touches is already down or at
        that rate).
        """
        effect = self._effect(fault)
        emu = self.emu
        newly_dead = [el for el in effect.dead if self.dead[el] == 0]
        going_down = [e for e in effect.ends if self.holds[e] == 0]
        if (
            not going_down
            and not newly_dead
            and not self._rate_changes(effect)
            and not (effect.losses)
        ):
            msg = (
                f"{fault.fault.describe()} changed nothing on netns (everything it touches "
                "was already down or at that rate); refusing a silent pass"
            )
            raise BackendError(msg)
        for el in effect.dead:
            self.dead[el] += 1
        kind = fault.fault.kind
        if kind is FaultKind.DRAIN:
            self._route_around(newly_dead)  # before its links go (a graceful drain)
        elif kind in (FaultKind.KILL, FaultKind.HANG):
            self._hang(newly_dead)
        if kind is FaultKind.HANG:
            self._drop_everything(effect, newly_dead)
        for e in effect.ends:
            self.holds[e] += 1
        for w, factor in effect.factors:
            self.factors.setdefault(w, []).append(factor)
        self.effects[id(fault)] = effect
        delay = self.sweep_delay if kind in REROUTED and emu.bgp is None else 0.0
        if kind is FaultKind.HANG and emu.bgp is None:
            delay = self.hang_delay  # sm: nothing tells the subnet manager; its sweep finds it
        if delay > 0 and kind in (FaultKind.CUT, FaultKind.OPTIC):
            self._blackhole(going_down)  # the ports go down when the sweep finds them
        else:
            emu.set_admin(going_down, False)
            self._verify_down(going_down)
        self._apply_rates(effect)
        if effect.losses:
            self._add_losses(effect)
        now = time.monotonic()
        self.changed_at = now
        self.due = max(self.due or now, now + delay)

    def _blackhole(self, ends: list[End]) -> None:
        """Every packet over these ends' wires is lost from now on, both ways."""
        emu = self.emu
        wires = sorted({w for w, _ in ends} - {w for w, _ in self.pending})
        self.pending |= set(ends)
        emu.set_drop(wires, True)
        for w in wires:
            for end in (0, 1):
                p = emu.port(w, end)
                got = emu.qdisc_params(p.ns).get(p.ifindex)
                if got is None or got[1] != 0:
                    msg = (
                        f"{emu.fabric.link_ids[emu.built.wires[w].link]}: the kernel reports "
                        f"a queue limit of {got and got[1]} bytes on {p.ifname}, expected 0 (drop)"
                    )
                    raise BackendError(msg)

    def _sweep_pending(self) -> None:
        """The sweep found the dead cables: their ports go down, their wires stop dropping."""
        if not self.pending:
            return
        ends = sorted(self.pending)
        self.pending.clear()
        self.emu.set_admin(ends, False)
        self._verify_down(ends)
        self.emu.set_drop(sorted({w for w, _ in ends}), False)

    def _drop_everything(self, effect: _Effect, switches: list[int]) -> None:
        """hang: the switches' namespaces drop every packet (tables verified by nft.py)."""
        if self._rules is None:
            self._rules = LossRules(self.emu)
        nss = [ns for ns in self._switch_ns(switches) if ns not in self.dropping]
        effect.hung = self._rules.hang(nss)
        self.dropping |= set(nss)

    def _add_losses(self, effect: _Effect) -> None:
        """flaky: one nft table per receiving end (verified by the rules module)."""
        emu = self.emu
        if self._rules is None:
            self._rules = LossRules(emu)
        wanted = []
        for w, end, loss in effect.losses:
            p = emu.port(w, end)
            wanted.append((p.ns, p.ifname, loss))
        effect.tables = self._rules.add(wanted)
        for w, _, loss in effect.losses:
            self.lossy.setdefault(w, []).append(loss)

    def worst_loss(self) -> float:
        """The chance that a packet crossing every lossy link once is lost (an upper bound
        for any one path: what the probes retry against)."""
        kept = 1.0
        for losses in self.lossy.values():
            for loss in losses:
                kept *= 1.0 - loss
        return 1.0 - kept

    def _rate_changes(self, effect: _Effect) -> bool:
        return any(factor != 1.0 for _, factor in effect.factors)

    def revert(self, fault: AppliedFault) -> None:
        """Bring back what the fault took down (BackendError if it was never injected)."""
        effect = self.effects.pop(id(fault), None)
        if effect is None:
            msg = f"{fault.fault.describe()} was not injected on netns"
            raise BackendError(msg)
        coming_up = []
        for e in effect.ends:
            self.holds[e] -= 1
            if self.holds[e] == 0:
                del self.holds[e]
                coming_up.append(e)
        for el in effect.dead:
            self.dead[el] -= 1
            if self.dead[el] == 0:
                del self.dead[el]
        for w, factor in effect.factors:
            self.factors[w].remove(factor)
        if effect.tables and self._rules is not None:
            self._rules.remove(effect.tables)
            for w, _, loss in effect.losses:
                self.lossy[w].remove(loss)
                if not self.lossy[w]:
                    del self.lossy[w]
        if effect.hung and self._rules is not None:  # before the reboot: it forwards again
            self._rules.unhang(effect.hung)
            self.dropping -= {t.ns for t in effect.hung}
        never_down = [e for e in coming_up if e in self.pending]  # repaired before the sweep
        if never_down:
            self.pending -= set(never_down)
            live = {w for w, _ in self.pending}
            self.emu.set_drop(sorted({w for w, _ in never_down} - live), False)
        self.emu.set_admin(coming_up, True)
        self._apply_rates(effect)
        self._verify_up(coming_up)
        self._revive([el for el in effect.dead if self.dead[el] == 0])
        # an admin-down interface lost its static routes: re-push those namespaces
        self.forced |= {self.emu.port(w, end).ns for w, end in coming_up}
        self.changed_at = time.monotonic()
        self.due = self.changed_at  # a repair is swept at once (a failure it undid needs none)

    def _apply_rates(self, effect: _Effect) -> list[int]:
        emu = self.emu
        changed = []
        for w, _ in effect.factors:
            rate = emu.built.wires[w].rate_bps
            for factor in self.factors.get(w, []):
                rate = int(rate * factor)
            if rate != emu.rates[w]:
                emu.set_rate(w, rate)
                changed.append(w)
        for w in changed:
            for end in (0, 1):
                p = emu.port(w, end)
                got = emu.qdisc_rates(p.ns).get(p.ifindex)
                if got is None or abs(got - emu.rates[w]) > max(8, emu.rates[w] // 1000):
                    msg = (
                        f"degrade of {emu.fabric.link_ids[emu.built.wires[w].link]}: the kernel "
                        f"reports {got} bit/s on {p.ifname}, expected {emu.rates[w]}"
                    )
                    raise BackendError(msg)
        return changed

    def _flags(self, ends: list[End]) -> dict[tuple[int, int], int]:
        """Interface flags, now, in the namespaces of both ends of every wire touched."""
        emu = self.emu
        nss = {emu.port(w, e).ns for w, e in ends} | {emu.port(w, 1 - e).ns for w, e in ends}
        return emu.link_flags(nss)

    def _verify_down(self, ends: list[End]) -> None:
        emu = self.emu
        flags = self._flags(ends) if ends else {}
        for w, end in ends:
            if any(emu.carrier(w, flags)):
                here = emu.port(w, end)
                msg = (
                    f"{here.ifname} in {emu.built.namespaces[here.ns].name} was set down but the "
                    f"link {emu.fabric.link_ids[emu.built.wires[w].link]} still has carrier"
                )
                raise BackendError(msg)

    def _verify_up(self, ends: list[End]) -> None:
        """Every repaired link has carrier, then an operational state UP (within 30 s)."""
        emu = self.emu
        ends = [(w, end) for w, end in ends if (w, 1 - end) not in self.holds]
        deadline = time.monotonic() + UP_TIMEOUT_S
        while ends:
            flags = self._flags(ends)
            for w, end in ends:
                if not all(emu.carrier(w, flags)):
                    msg = (
                        f"{emu.fabric.link_ids[emu.built.wires[w].link]} did not come back up "
                        f"after the repair of {emu.port(w, end).ifname}"
                    )
                    raise BackendError(msg)
            ends = [
                (w, end)
                for w, end in ends
                if not all(flags.get((p.ns, p.ifindex), 0) & OPER_UP
                           for p in (emu.port(w, 0), emu.port(w, 1)))
            ]  # fmt: skip
            if ends and time.monotonic() > deadline:
                w, _ = ends[0]
                msg = (
                    f"{emu.fabric.link_ids[emu.built.wires[w].link]}: carrier but not operational "
                    f"{UP_TIMEOUT_S:g} s after the repair"
                )
                raise BackendError(msg)
            if ends:
                time.sleep(0.02)

    # -- routing ------------------------------------------------------------------------
    def alive(self) -> Alive:
        """The wires with both ends up and the elements not killed."""
        plan = self.emu.built
        wires = frozenset(
            w
            for w in range(len(plan.wires))
            if (w, 0) not in self.holds and (w, 1) not in self.holds
        )
        elements = frozenset(range(plan.fabric.n_elements)) - frozenset(self.dead)
        return Alive(wires, elements)

    # -- the control plane: sm sweeps, bgp daemons ---------------------------------------
    def _switch_ns(self, elements: list[int]) -> list[int]:
        plan = self.emu.built
        out = []
        for el in elements:
            ns = plan.ns_of.get(el)
            if ns is not None and plan.namespaces[ns].role == "switch":
                out.append(ns)
        return sorted(set(out))

    def live_switches(self) -> list[int]:
        """The switch namespaces whose switch is not dead."""
        plan = self.emu.built
        return [
            i
            for i, n in enumerate(plan.namespaces)
            if n.role == "switch" and n.elements[0] not in self.dead
        ]

    def _route_around(self, drained: list[int]) -> None:
        """sm: re-sweep without the drained switches.  bgp: they prepend their AS on
        every route, and the rest of the fabric must have moved away before returning."""
        self.sweep()  # sm: every table; bgp: the static routes of servers and storage
        bgp = self.emu.bgp
        nss = self._switch_ns(drained)
        if bgp is None or not nss:
            return
        bgp.set_drain(nss, True)
        plan = self.emu.built
        # what has another way must have moved; what has none (a drained leaf's own
        # block, the last spine) moves when the links go
        took = bgp.converge(
            compute(plan, self.alive()), self.live_switches(), DRAIN_TIMEOUT_S, partial=True,
            what=f"drain of {', '.join(plan.namespaces[n].name for n in nss)}",
        )  # fmt: skip
        self.drain_moved_s.append(took)

    def _hang(self, killed: list[int]) -> None:
        """bgp: a killed switch's daemons stop (a hung switch), before its links go."""
        bgp = self.emu.bgp
        if bgp is None:
            return
        nss = [ns for ns in self._switch_ns(killed) if ns not in self.hung]
        bgp.hang(nss)
        self.hung |= set(nss)

    def _revive(self, back: list[int]) -> None:
        """bgp: a switch no longer killed reboots (fresh daemons); one no longer drained
        stops prepending."""
        bgp = self.emu.bgp
        if bgp is None:
            return
        nss = self._switch_ns(back)
        restart = [ns for ns in nss if ns in self.hung]
        if restart:
            bgp.restart(restart)
            self.hung -= set(restart)
        undrain = [ns for ns in nss if ns in bgp.drained]
        if undrain:
            bgp.set_drain(undrain, False)

    def sweep(self) -> int:
        """Recompute every table from what is alive and install the difference."""
        router = self.emu.router
        if router is None:
            msg = "the emulation is not up"
            raise BackendError(msg)
        sent = router.push(compute(self.emu.built, self.alive()), frozenset(self.forced))
        self.forced.clear()
        self._sweep_pending()
        return sent

    def settle(self, timeout: float) -> float:
        """Seconds from the last change until the fabric's routes are what is alive needs.

        sm: the sweep installs them when it is due (``sweep_delay`` after a
        failure, at once after anything else).  bgp: the servers' static routes
        are swept and the FIB of every live switch is watched until it holds
        exactly the converged tables (every prefix, every next hop), and with
        BFD on until every BFD session between live switches is up.
        """
        if self.changed_at is None:
            return 0.0
        wait = (self.due or 0.0) - time.monotonic()
        self.due = None
        if wait > 0 and self.emu.bgp is None:
            time.sleep(wait)
        self.sweep()
        bgp = self.emu.bgp
        if bgp is not None:
            left = timeout - (time.monotonic() - self.changed_at)
            alive = self.alive()
            bgp.converge(
                compute(self.emu.built, alive), self.live_switches(), max(left, 0), alive=alive
            )
        took = time.monotonic() - self.changed_at
        self.changed_at = None
        if took > timeout:
            msg = f"routing took {took:.1f} s to settle, more than the {timeout:g} s allowed"
            raise BackendError(msg)
        return took

    def revert_all(self) -> None:
        """Nothing to undo in the kernel on close: the namespaces are removed whole."""
        self.effects.clear()
        self.lossy.clear()
        self.dropping.clear()
