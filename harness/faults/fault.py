"""Faults and the fault state of a fabric (faults stage, pure).

A :class:`Fault` says what to break (kind + selector + parameters).  Resolved
against a fabric it becomes an :class:`AppliedFault` (concrete element, link
and port indices).  A :class:`FaultState` is an immutable stack of applied
faults; :meth:`FaultState.inject` and :meth:`FaultState.revert` return new
states, so restoring every fault returns exactly the healthy state.

>>> from harness.fabric import preset
>>> f = preset("seed-a800")
>>> s = FaultState.healthy(f).inject(Fault.parse({"kill": "spine-05"}), f)
>>> [f.ids[i] for i in s.applied[0].elements]
['spine-05']
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.errors import Origin
from harness.errors import ScenarioError
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.faults.selectors import Domain
from harness.faults.selectors import Selector
from harness.faults.selectors import parse_selector
from harness.faults.selectors import port_arrays
from harness.faults.selectors import resolve


class FaultKind(enum.Enum):
    """What a fault does: kill, drain, cut, optic, degrade, bond-member, flaky or hang.

    ``hang``: a switch keeps its links up and forwards nothing (a hung ASIC or
    control plane).  Once routed around it is a ``kill`` for connectivity and
    bandwidth, but no port goes down, so nothing tells the control plane: what is
    routed through it is lost until the BGP hold timer, BFD or the subnet
    manager's next sweep finds it (:mod:`harness.invariants.outage`).
    Its restore is a reboot: the switch comes back with fresh control-plane state.
    """

    KILL = "kill"
    DRAIN = "drain"
    CUT = "cut"
    OPTIC = "optic"
    DEGRADE = "degrade"
    BOND_MEMBER = "bond-member"
    FLAKY = "flaky"
    HANG = "hang"

    @property
    def domain(self) -> Domain:
        """What its selector picks from."""
        return _KIND_WORDS[self][0]

    @property
    def verb(self) -> str:
        """What injecting it says before the targets (``killed spine-05``)."""
        return _KIND_WORDS[self][1]

    @property
    def undone(self) -> str:
        """What restoring it says, with ``{t}`` for the targets (``spine-05 back up``)."""
        return _KIND_WORDS[self][2]


# per kind: (selector domain, verb when injected, words when restored)
_KIND_WORDS: dict[FaultKind, tuple[Domain, str, str]] = {
    FaultKind.KILL: (Domain.ELEMENTS, "killed", "{t} back up"),
    FaultKind.DRAIN: (Domain.ELEMENTS, "drained", "{t} back in service"),
    FaultKind.CUT: (Domain.CABLES, "cut", "{t} reconnected"),
    FaultKind.OPTIC: (Domain.PORTS, "optic failed on", "optic replaced on {t}"),
    FaultKind.DEGRADE: (Domain.LINKS, "degraded", "{t} back to full speed"),
    FaultKind.BOND_MEMBER: (Domain.ELEMENTS, "bond member down:", "bond member back: {t}"),
    FaultKind.FLAKY: (Domain.LINKS, "made flaky:", "{t} no longer loses packets"),
    FaultKind.HANG: (Domain.ELEMENTS, "hung", "{t} rebooted"),
}
FLAKY_KEYS = ("target", "loss", "from")
# why a hang cannot apply to these (what else it could name)
_HANG_REFUSED = {
    Kind.STORAGE_SWITCH: ": a hung storage switch is found by the bonds' LACP timeout, which "
    "the model does not time",
}


FAULT_KINDS: dict[str, FaultKind] = {k.value: k for k in FaultKind}
KILLABLE = frozenset(Kind) - {Kind.STORAGE}
#: What can hang: the routed switches.  A storage switch is left out: a hung one is found by
#: the bonds' LACP timeout (fast: 3 s, slow: 90 s), which the model does not time; a server,
#: NIC or GPU runs no control plane whose silence reroutes anything.
HANGABLE = COMPUTE_SWITCH_KINDS


@dataclass(frozen=True, slots=True)
class Fault:
    """What to break: a kind, a selector, and for ``degrade``/``flaky`` how much.

    ``flaky``: the link stays up and routed but loses ``loss`` (0 < loss < 1)
    of the packets crossing it, in both directions or, with ``sender`` (the
    scenario's ``from:``), only those sent by that end of it.

    >>> Fault.parse({"flaky": {"target": "a--b", "loss": "5%", "from": "a"}}).describe()
    'flaky a--b losing 5% of the packets sent by a'
    """

    kind: FaultKind
    target: Selector
    fraction: float | None = None  # degrade: remaining fraction of the speed
    lanes: int | None = None  # degrade: remaining lanes
    origin: Origin | None = field(default=None, compare=False)  # where a state file wrote it
    loss: float | None = None  # flaky: fraction of the packets lost
    sender: str | None = None  # flaky: only the packets this end sends (None: both ways)

    @classmethod
    def parse(cls, raw: Any) -> Fault:
        """Parse ``{kill: SELECTOR}`` / ``{degrade: {target: S, fraction: F}}``."""
        if not isinstance(raw, dict) or len(raw) != 1:
            msg = (
                "an inject step takes exactly one fault, e.g. {kill: spine-05}; "
                f"fault kinds: {', '.join(FAULT_KINDS)}"
            )
            raise ScenarioError(msg)
        ((name, body),) = raw.items()
        if name not in FAULT_KINDS:
            import difflib

            near = difflib.get_close_matches(str(name), FAULT_KINDS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"unknown fault kind {name!r}{hint} (known: {', '.join(FAULT_KINDS)})"
            raise ScenarioError(msg)
        kind = FAULT_KINDS[name]
        if kind is FaultKind.FLAKY:
            return cls._parse_flaky(body)
        if kind is not FaultKind.DEGRADE:
            return cls(kind, parse_selector(body))
        if not isinstance(body, dict) or "target" not in body:
            msg = "degrade takes {target: SELECTOR, fraction: F} or {target: SELECTOR, lanes: N}"
            raise ScenarioError(msg)
        extra = set(body) - {"target", "fraction", "lanes"}
        if extra:
            msg = f"degrade: unknown key {sorted(extra)[0]!r} (known: target, fraction, lanes)"
            raise ScenarioError(msg)
        fraction, lanes = body.get("fraction"), body.get("lanes")
        if (fraction is None) == (lanes is None):
            msg = "degrade needs exactly one of 'fraction' (0 < f < 1) or 'lanes' (lanes left)"
            raise ScenarioError(msg)
        if fraction is not None and not (
            isinstance(fraction, int | float)
            and not isinstance(fraction, bool)
            and 0 < fraction < 1
        ):
            msg = f"degrade fraction must be a number between 0 and 1 (exclusive), got {fraction!r}"
            raise ScenarioError(msg)
        if lanes is not None and not (
            isinstance(lanes, int) and not isinstance(lanes, bool) and lanes >= 1
        ):
            msg = f"degrade lanes must be a whole number >= 1, got {lanes!r}"
            raise ScenarioError(msg)
        return cls(kind, parse_selector(body["target"]),
                   float(fraction) if fraction is not None else None, lanes)  # fmt: skip

    @classmethod
    def _parse_flaky(cls, body: Any) -> Fault:
        if not isinstance(body, dict) or "target" not in body or "loss" not in body:
            msg = (
                "flaky takes {target: LINKS, loss: 5%} (both directions) or "
                "{target: LINKS, loss: 5%, from: END} (only the packets END sends)"
            )
            raise ScenarioError(msg)
        extra = set(body) - set(FLAKY_KEYS)
        if extra:
            msg = f"flaky: unknown key {sorted(extra)[0]!r} (known: {', '.join(FLAKY_KEYS)})"
            raise ScenarioError(msg)
        sender = body.get("from")
        if "from" in body and not (isinstance(sender, str) and sender.strip()):
            msg = f"flaky from: names one end of the links (an element id), got {sender!r}"
            raise ScenarioError(msg)
        return cls(FaultKind.FLAKY, parse_selector(body["target"]), loss=parse_loss(body["loss"]),
                   sender=sender)  # fmt: skip

    def describe(self) -> str:
        """The fault in words, as written (``degrade spine-01 to 0.5 of its speed``)."""
        if self.loss is not None:
            way = f" of the packets sent by {self.sender}" if self.sender else " both ways"
            return f"{self.kind.value} {self.target.describe()} losing {percent(self.loss)}{way}"
        extra = ""
        if self.fraction is not None:
            extra = f" to {self.fraction:g} of its speed"
        elif self.lanes is not None:
            extra = f" to {self.lanes} lane(s)"
        return f"{self.kind.value} {self.target.describe()}{extra}"

    def resolve(self, fabric: Fabric) -> AppliedFault:
        """Resolve the selector and check that the fault applies to what it hits.

        A problem is placed at :attr:`origin` when the fault came from a file.
        """
        if self.origin is None:
            return self._resolve(fabric)
        try:
            return self._resolve(fabric)
        except ScenarioError as err:
            raise self.origin.locate(err) from None

    def _resolve(self, fabric: Fabric) -> AppliedFault:
        idx = resolve(self.target, fabric, self.kind.domain)
        elements: tuple[int, ...] = ()
        links: tuple[int, ...] = ()
        factor = 0.0
        if self.kind in (FaultKind.KILL, FaultKind.DRAIN, FaultKind.BOND_MEMBER, FaultKind.HANG):
            allowed = {
                FaultKind.KILL: KILLABLE,
                FaultKind.DRAIN: SWITCH_KINDS,
                FaultKind.BOND_MEMBER: frozenset({Kind.STORAGE_NIC}),
                FaultKind.HANG: HANGABLE,
            }[self.kind]
            bad = [i for i in idx if Kind(int(fabric.kind[i])) not in allowed]
            if bad:
                what = Kind(int(fabric.kind[bad[0]])).label
                need = ", ".join(sorted(k.label for k in allowed))
                why = _HANG_REFUSED.get(Kind(int(fabric.kind[bad[0]])), "") if (
                    self.kind is FaultKind.HANG) else ""  # fmt: skip
                msg = (
                    f"{self.kind.value} cannot apply to {fabric.ids[bad[0]]} (a {what}{why}); "
                    f"it applies to: {need}. Narrow the selector, e.g. with kind: or tier:"
                )
                if self.kind is FaultKind.HANG:
                    msg += ", or kill it (it goes down, and its peers see that at once)"
                raise ScenarioError(msg)
            elements = tuple(idx)
        elif self.kind is FaultKind.OPTIC:
            plinks, _ = port_arrays(fabric)
            links = tuple(sorted({int(plinks[i]) for i in idx}))
        else:
            links = tuple(idx)  # cut: the CABLES domain holds only cables
            if self.kind is FaultKind.DEGRADE:
                factor = self.fraction if self.fraction is not None else 1.0
        factors: tuple[float, ...] = ()
        loss: tuple[tuple[float, float], ...] = ()
        if self.kind is FaultKind.FLAKY:
            factors = (1.0,) * len(links)  # a lossy link stays up at its speed
            loss = self._loss_per_link(fabric, links)
        elif self.kind is FaultKind.DEGRADE:
            if self.lanes is not None:
                lanes = fabric.link_lanes[list(links)]
                if int(lanes.min()) <= self.lanes:
                    worst = links[int(np.argmin(lanes))]
                    msg = (
                        f"degrade to {self.lanes} lane(s): {fabric.link_ids[worst]} has only "
                        f"{int(lanes.min())}; give fewer lanes or use fraction:"
                    )
                    raise ScenarioError(msg)
                factors = tuple(float(self.lanes / ln) for ln in lanes.tolist())
            else:
                factors = (factor,) * len(links)
        else:
            factors = (0.0,) * len(links)
        ports: tuple[str, ...] = ()
        if self.kind is FaultKind.OPTIC:
            names = list(fabric.port_index)
            ports = tuple(names[i] for i in idx)
        return AppliedFault(self, elements, links, factors, ports, loss)

    def _loss_per_link(
        self, fabric: Fabric, links: tuple[int, ...]
    ) -> tuple[tuple[float, float], ...]:
        """Per link: (loss of what its a end sends, loss of what its b end sends)."""
        p = float(self.loss or 0.0)
        if self.sender is None:
            return ((p, p),) * len(links)
        s = fabric.index.get(self.sender)
        if s is None:
            msg = f"flaky from: {self.sender!r} is not an element of fabric {fabric.name!r}"
            raise ScenarioError(msg)
        out = []
        for link in links:
            a, b = int(fabric.link_a[link]), int(fabric.link_b[link])
            if s not in (a, b):
                msg = (
                    f"flaky from: {self.sender} is not an end of {fabric.link_ids[link]} (its "
                    f"ends: {fabric.ids[a]}, {fabric.ids[b]}); name an end of every link the "
                    "target picks, or leave from: out to lose packets both ways"
                )
                raise ScenarioError(msg)
            out.append((p, 0.0) if s == a else (0.0, p))
        return tuple(out)


def percent(x: float) -> str:
    """A fraction as a percentage (``0.05`` -> ``5%``).

    >>> percent(0.05), percent(0.125), percent(0.0001)
    ('5%', '12.5%', '0.01%')
    """
    return f"{x * 100:.4g}%"


def parse_loss(raw: Any) -> float:
    """A flaky link's loss: ``5%`` or a fraction ``0.05``; 0 < loss < 100 %.

    >>> parse_loss("5%"), parse_loss(0.25), parse_loss("0.5 %")
    (0.05, 0.25, 0.005)
    """
    value: float | None = None
    if isinstance(raw, str) and raw.strip().endswith("%"):
        try:
            value = float(raw.strip()[:-1]) / 100
        except ValueError:
            value = None
    elif isinstance(raw, int | float) and not isinstance(raw, bool):
        if raw >= 1:
            msg = (
                f"flaky loss {raw!r} is not a fraction: write {raw:g}% or "
                f"{raw / 100:g} (0 < loss < 1)"
            )
            raise ScenarioError(msg)
        value = float(raw)
    if value is None or not (0 < value < 1):  # nan fails too
        msg = (
            f"flaky loss must be a percentage between 0% and 100% (exclusive), e.g. 5%, "
            f"or a fraction such as 0.05; got {raw!r}"
        )
        raise ScenarioError(msg)
    return round(value, 12)


@dataclass(frozen=True, slots=True)
class AppliedFault:
    """A fault resolved against one fabric: concrete indices."""

    fault: Fault
    elements: tuple[int, ...]
    links: tuple[int, ...]
    factors: tuple[float, ...]  # per link: remaining fraction of capacity (0: down)
    ports: tuple[str, ...] = ()
    loss: tuple[tuple[float, float], ...] = ()  # flaky, per link: (a sends, b sends) lost

    def targets(self, fabric: Fabric, limit: int = 6) -> str:
        """The fault's targets by id, the first ``limit`` of them and how many more."""
        names = (
            list(self.ports)
            or [fabric.ids[i] for i in self.elements]
            or [fabric.link_ids[i] for i in self.links]
        )
        head = ", ".join(names[:limit])
        return head + (f" and {len(names) - limit} more" if len(names) > limit else "")

    def describe(self, fabric: Fabric) -> str:
        """What injecting the fault did, in words (``killed spine-05``)."""
        text = f"{self.fault.kind.verb} {self.targets(fabric)}"
        if self.fault.loss is not None:
            lost = percent(self.fault.loss)
            who = f"sent by {self.fault.sender}" if self.fault.sender else "both ways"
            text += f" ({lost} of the packets {who} lost)"
        return text

    def describe_restore(self, fabric: Fabric) -> str:
        """What reverting it did, e.g. ``spine-05 back in service`` (a drain)."""
        return self.fault.kind.undone.format(t=self.targets(fabric))


@dataclass(frozen=True, eq=False)
class FaultState:
    """An immutable stack of applied faults on one fabric, with derived masks."""

    fabric: Fabric
    applied: tuple[AppliedFault, ...] = field(default=())

    @classmethod
    def healthy(cls, fabric: Fabric) -> FaultState:
        """The state with no fault applied."""
        return cls(fabric)

    def inject(self, fault: Fault | AppliedFault, fabric: Fabric | None = None) -> FaultState:
        """The state with one more fault (a :class:`Fault` is resolved on ``fabric`` first)."""
        fab = fabric or self.fabric
        applied = fault.resolve(fab) if isinstance(fault, Fault) else fault
        return FaultState(self.fabric, (*self.applied, applied))

    def revert(self, applied: AppliedFault) -> FaultState:
        """The state without ``applied`` (the most recent match)."""
        items = list(self.applied)
        for i in range(len(items) - 1, -1, -1):
            if items[i] is applied:
                del items[i]
                return FaultState(self.fabric, tuple(items))
        msg = f"fault {applied.fault.describe()} is not applied"
        raise ScenarioError(msg)

    @property
    def is_healthy(self) -> bool:
        """Whether no fault is applied."""
        return not self.applied

    @cached_property
    def element_up(self) -> npt.NDArray[np.bool_]:
        """Per element: up and forwarding.  A dead server takes its parts along."""
        f = self.fabric
        up = np.ones(f.n_elements, dtype=bool)
        for a in self.applied:
            if a.elements:
                up[list(a.elements)] = False
        dead_servers = np.flatnonzero(~up & (f.kind == int(Kind.NODE)))
        if dead_servers.size:
            up[np.isin(f.parent, dead_servers)] = False
        up.flags.writeable = False
        return up

    @cached_property
    def link_factor(self) -> npt.NDArray[np.float64]:
        """Per link: remaining fraction of its capacity from link faults (0: down)."""
        factor = np.ones(self.fabric.n_links, dtype=np.float64)
        for a in self.applied:
            if a.links:
                idx = np.array(a.links, dtype=np.int64)
                factor[idx] = factor[idx] * np.array(a.factors)
        factor.flags.writeable = False
        return factor

    @cached_property
    def link_loss(self) -> npt.NDArray[np.float64]:
        """Per link and direction (column 0: what its a end sends, 1: its b end): the
        fraction of packets lost on a live link by flaky faults (independent losses)."""
        kept = np.ones((self.fabric.n_links, 2), dtype=np.float64)
        for a in self.applied:
            if a.loss:
                idx = np.array(a.links, dtype=np.int64)
                kept[idx] = kept[idx] * (1.0 - np.array(a.loss, dtype=np.float64))
        loss = np.round(1.0 - kept, 12)
        loss.flags.writeable = False
        return loss

    @cached_property
    def link_capacity(self) -> npt.NDArray[np.float64]:
        """Per link: live capacity in Gb/s (0 when down or an end is down)."""
        f = self.fabric
        up = self.element_up
        cap = f.link_capacity * self.link_factor * (up[f.link_a] & up[f.link_b])
        cap.flags.writeable = False
        return cap
