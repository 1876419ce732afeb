"""Faults and the fault state of a fabric (core layer, pure).

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
from harness.fabric.model import SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.selectors import Domain
from harness.selectors import Selector
from harness.selectors import parse_selector
from harness.selectors import port_arrays
from harness.selectors import resolve


class FaultKind(enum.Enum):
    KILL = "kill"
    DRAIN = "drain"
    CUT = "cut"
    OPTIC = "optic"
    DEGRADE = "degrade"
    BOND_MEMBER = "bond-member"

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
}


FAULT_KINDS: dict[str, FaultKind] = {k.value: k for k in FaultKind}
KILLABLE = frozenset(Kind) - {Kind.STORAGE}


@dataclass(frozen=True, slots=True)
class Fault:
    """What to break: a kind, a selector, and for ``degrade`` how much."""

    kind: FaultKind
    target: Selector
    fraction: float | None = None  # degrade: remaining fraction of the speed
    lanes: int | None = None  # degrade: remaining lanes
    origin: Origin | None = field(default=None, compare=False)  # where a state file wrote it

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

    def describe(self) -> str:
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
        if self.kind in (FaultKind.KILL, FaultKind.DRAIN, FaultKind.BOND_MEMBER):
            allowed = {
                FaultKind.KILL: KILLABLE,
                FaultKind.DRAIN: SWITCH_KINDS,
                FaultKind.BOND_MEMBER: frozenset({Kind.STORAGE_NIC}),
            }[self.kind]
            bad = [i for i in idx if Kind(int(fabric.kind[i])) not in allowed]
            if bad:
                what = Kind(int(fabric.kind[bad[0]])).label
                need = ", ".join(sorted(k.label for k in allowed))
                msg = (
                    f"{self.kind.value} cannot apply to {fabric.ids[bad[0]]} (a {what}); "
                    f"it applies to: {need}. Narrow the selector, e.g. with kind: or tier:"
                )
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
        if self.kind is FaultKind.DEGRADE:
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
        return AppliedFault(self, elements, links, factors, ports)


@dataclass(frozen=True, slots=True)
class AppliedFault:
    """A fault resolved against one fabric: concrete indices."""

    fault: Fault
    elements: tuple[int, ...]
    links: tuple[int, ...]
    factors: tuple[float, ...]  # per link: remaining fraction of capacity (0: down)
    ports: tuple[str, ...] = ()

    def targets(self, fabric: Fabric, limit: int = 6) -> str:
        names = (
            list(self.ports)
            or [fabric.ids[i] for i in self.elements]
            or [fabric.link_ids[i] for i in self.links]
        )
        head = ", ".join(names[:limit])
        return head + (f" and {len(names) - limit} more" if len(names) > limit else "")

    def describe(self, fabric: Fabric) -> str:
        return f"{self.fault.kind.verb} {self.targets(fabric)}"

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
        return cls(fabric)

    def inject(self, fault: Fault | AppliedFault, fabric: Fabric | None = None) -> FaultState:
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
    def link_capacity(self) -> npt.NDArray[np.float64]:
        """Per link: live capacity in Gb/s (0 when down or an end is down)."""
        f = self.fabric
        up = self.element_up
        cap = f.link_capacity * self.link_factor * (up[f.link_a] & up[f.link_b])
        cap.flags.writeable = False
        return cap
