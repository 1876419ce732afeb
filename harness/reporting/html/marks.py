"""What a fabric drawing highlights: faulted elements and cables, lost jobs' servers.

Reporting stage, pure.

A :class:`Marks` maps element and link indices of one fabric to what is wrong with
them (a :class:`Mark`: a status, where it comes from, a note for the tooltip) and
servers to the lost jobs they run.  It is built from applied faults
(:meth:`Marks.from_faults`: the ``--state`` faults and the change are given
different sources, so the drawing tells them apart), from an audit
(:meth:`Marks.from_audit`) and from the jobs an analysis found lost
(:meth:`Marks.with_lost`).

>>> from harness.fabric import preset
>>> from harness.faults.fault import Fault, FaultState
>>> f = preset("seed-a800")
>>> s = FaultState.healthy(f).inject(Fault.parse({"drain": "spine-03"}))
>>> m = Marks.from_faults(f, [(a, "change") for a in s.applied])
>>> [(f.ids[i], k.status, k.source) for i, ks in m.elements.items() for k in ks]
[('spine-03', 'drained', 'change')]
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING

from harness.fabric.model import Fabric
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind

if TYPE_CHECKING:
    from harness.fabric.jobs import Job
    from harness.planning.audit.diff import AuditReport

# Statuses, worst first: a unit drawn for several elements shows the worst one.
STATUSES = ("failed", "missing", "wrong-rail", "drained", "degraded")
# Where a mark comes from: the faults already present, the change (or the step) under
# study, an audit of a live dump.
SOURCES = ("state", "change", "audit")

STATUS_LABELS = {
    "failed": "failed (killed, cut, optic down)",
    "missing": "missing from the live fabric",
    "wrong-rail": "cabled to another rail's leaf",
    "drained": "drained (out of forwarding)",
    "degraded": "degraded (below its design rate)",
}
SOURCE_LABELS = {
    "state": "already present (--state): hatched / dashed",
    "change": "the change or step: solid",
    "audit": "found by the audit: solid",
}

_FAULT_STATUS = {
    FaultKind.KILL: "failed",
    FaultKind.DRAIN: "drained",
    FaultKind.CUT: "failed",
    FaultKind.OPTIC: "failed",
    FaultKind.DEGRADE: "degraded",
    FaultKind.BOND_MEMBER: "degraded",
    FaultKind.FLAKY: "degraded",
    FaultKind.HANG: "failed",  # it forwards nothing, though its links are up
}


@dataclass(frozen=True, slots=True)
class Mark:
    """One thing wrong with an element or a cable."""

    status: str
    source: str
    note: str


def worst(marks: Iterable[Mark]) -> Mark | None:
    """The mark with the worst status (the change before the state on ties)."""
    ranked = sorted(marks, key=lambda m: (STATUSES.index(m.status), m.source == "state", m.note))
    return ranked[0] if ranked else None


def _freeze(d: Mapping[int, list[Mark]]) -> Mapping[int, tuple[Mark, ...]]:
    return MappingProxyType({k: tuple(v) for k, v in d.items()})


@dataclass(frozen=True)
class Marks:
    """Element and link marks of one fabric, and the lost jobs per server."""

    elements: Mapping[int, tuple[Mark, ...]] = field(default_factory=lambda: MappingProxyType({}))
    links: Mapping[int, tuple[Mark, ...]] = field(default_factory=lambda: MappingProxyType({}))
    lost: Mapping[int, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_faults(cls, fabric: Fabric, faults: Iterable[tuple[AppliedFault, str]]) -> Marks:
        """Marks for applied faults, each with its source (``state`` or ``change``)."""
        elements: dict[int, list[Mark]] = {}
        links: dict[int, list[Mark]] = {}
        for applied, source in faults:
            status = _FAULT_STATUS[applied.fault.kind]
            verb = applied.fault.kind.verb
            for i in applied.elements:
                elements.setdefault(i, []).append(Mark(status, source, f"{verb} {fabric.ids[i]}"))
            ports = dict(zip(applied.links, applied.ports, strict=False))
            for i, factor in zip(applied.links, applied.factors, strict=True):
                what = ports.get(i) or fabric.link_ids[i]
                note = f"{verb} {what}"
                if status == "degraded":
                    note += f" (to {factor:.0%} of its capacity)"
                links.setdefault(i, []).append(Mark(status, source, note))
        return cls(_freeze(elements), _freeze(links))

    @classmethod
    def from_audit(cls, design: Fabric, audit: AuditReport) -> Marks:
        """Marks on the design for what an audit found (missing, wrong rail, degraded)."""
        elements: dict[int, list[Mark]] = {}
        links: dict[int, list[Mark]] = {}
        for sw in audit.missing_switches:
            if sw in design.index:
                i = design.index[sw]
                elements.setdefault(i, []).append(Mark("missing", "audit", f"missing switch {sw}"))
        for cable in audit.missing_links:
            if cable in design.link_index:
                links.setdefault(design.link_index[cable], []).append(
                    Mark("missing", "audit", f"missing cable {cable}")
                )
        for d in audit.degraded_links:
            if d.design in design.link_index:
                note = f"degraded cable {d.live}: {d.live_gbps:g} of {d.design_gbps:g} Gb/s"
                links.setdefault(design.link_index[d.design], []).append(
                    Mark("degraded", "audit", note)
                )
        for w in audit.wrong_rail:
            note = f"{w.nic} (rail {w.nic_rail}) is cabled to {w.leaf} (rail {w.leaf_rail})"
            if w.expected:
                note += f", expected {w.expected}"
            for eid in (w.nic, w.leaf):
                if eid in design.index:
                    elements.setdefault(design.index[eid], []).append(
                        Mark("wrong-rail", "audit", note)
                    )
        return cls(_freeze(elements), _freeze(links))

    def with_lost(self, jobs: Iterable[Job], lost: Iterable[str]) -> Marks:
        """These marks plus the servers of the ``lost`` jobs (names) among ``jobs``."""
        names = set(lost)
        servers: dict[int, list[str]] = {}
        for job in jobs:
            if job.name in names:
                for s in job.servers:
                    servers.setdefault(int(s), []).append(job.name)
        return Marks(
            self.elements, self.links, MappingProxyType({k: tuple(v) for k, v in servers.items()})
        )

    def merged(self, other: Marks) -> Marks:
        """Both sets of marks (lost jobs of both)."""
        el: dict[int, list[Mark]] = {k: list(v) for k, v in self.elements.items()}
        ln: dict[int, list[Mark]] = {k: list(v) for k, v in self.links.items()}
        lost: dict[int, list[str]] = {k: list(v) for k, v in self.lost.items()}
        for k, v in other.elements.items():
            el.setdefault(k, []).extend(v)
        for k, v in other.links.items():
            ln.setdefault(k, []).extend(v)
        for k, names in other.lost.items():
            lost.setdefault(k, []).extend(n for n in names if n not in lost.get(k, []))
        return Marks(
            _freeze(el), _freeze(ln), MappingProxyType({k: tuple(v) for k, v in lost.items()})
        )

    def rows(self, fabric: Fabric) -> list[tuple[str, str, str, str]]:
        """(what, status, source, note) for every mark, elements first, for a table."""
        out = [
            (fabric.ids[i], m.status, m.source, m.note)
            for i, ms in sorted(self.elements.items())
            for m in ms
        ]
        out += [
            (fabric.link_ids[i], m.status, m.source, m.note)
            for i, ms in sorted(self.links.items())
            for m in ms
        ]
        return out


def marks_for_states(
    fabric: Fabric, state: Sequence[AppliedFault], change: Sequence[AppliedFault]
) -> Marks:
    """Marks of the faults already present (``state``) and of a change on top."""
    return Marks.from_faults(
        fabric, [*((a, "state") for a in state), *((a, "change") for a in change)]
    )
