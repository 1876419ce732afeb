"""Records of a sweep's cases: what failed (:class:`Failure`) and what it did (:class:`CaseResult`).

A failure is named by its id as scenario files write it and carries its
position in the fabric's arrays; a case result holds the GPU pairs, jobs and
ratios the evaluator found, and whether the full analysis (``exact``) ran.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from dataclasses import field

from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.selectors import Selector

COMPUTE_CABLES = (LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)


@functools.cache
def _category(kind: str, code: int) -> str:
    """A failure's category from its kind and the element's (or the cable's) kind code."""
    if kind == "element":
        return Kind(code).label
    tier = LinkKind(code).label
    return f"optic ({tier})" if kind == "optic" else f"cable ({tier})"


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed thing of a case, named by its id.

    ``kind``: ``"element"`` (killed: a switch, server, NIC...), ``"link"`` (a cut
    cable) or ``"optic"`` (one end of a cable).  ``id``: the element id, the cable
    id, or for an optic the port id (``ELEMENT:PORT``), as scenario files write
    them.  ``index`` is the position in the fabric's arrays (the element; for
    links and optics the cable) that the evaluator works with.

    >>> from harness.fabric import preset
    >>> f = preset("seed-a800")
    >>> Failure.of(f, "spine-05")
    Failure(kind='element', id='spine-05')
    >>> Failure.of(f, "su01/leaf-r0:21").describe()
    'optic su01/leaf-r0:21'
    """

    kind: str  # "element" | "link" | "optic"
    index: int = field(repr=False)  # element index; link and optic: the cable's index
    id: str  # element id, cable id, or port id (optic)

    @classmethod
    def of(cls, fabric: Fabric, target: str) -> Failure:
        """The failure of ``target``: an element id (killed), a cable id (cut) or a
        port id ``ELEMENT:PORT`` (its optic)."""
        if target in fabric.index:
            return cls("element", fabric.index[target], target)
        if target in fabric.port_index:
            return cls("optic", fabric.port_index[target][0], target)
        if target in fabric.link_index:
            return cls("link", fabric.link_index[target], target)
        msg = f"{target!r} is not an element, cable or port id of fabric {fabric.name!r}"
        raise ScenarioError(msg)

    @property
    def port(self) -> str:
        """The port id of an optic failure ("" otherwise)."""
        return self.id if self.kind == "optic" else ""

    @property
    def fault(self) -> str:
        """The scenario-file fault kind: ``kill``, ``cut`` or ``optic``."""
        return {"element": "kill", "link": "cut"}.get(self.kind, self.kind)

    def describe(self) -> str:
        """``kill spine-05``, ``cut CABLE``, ``optic PORT``."""
        return f"{self.fault} {self.id}"

    def label(self, fabric: Fabric | None = None) -> str:
        """The id (``optic PORT`` for an optic), as sweep tables show it."""
        return f"optic {self.id}" if self.kind == "optic" else self.id

    def category(self, fabric: Fabric) -> str:
        """The case category of the failure (``spine``, ``leaf-spine``, ``optic``...)."""
        if self.kind == "element":
            return _category(self.kind, int(fabric.kind[self.index]))
        return _category(self.kind, int(fabric.link_kind[self.index]))

    def to_fault(self, fabric: Fabric) -> AppliedFault:
        """The failure as an applied fault: kill an element, cut a cable or fail an optic."""
        if self.kind == "element":
            sel = Selector(ids=(self.id,))
            return AppliedFault(Fault(FaultKind.KILL, sel), (self.index,), (), ())
        if self.kind == "optic":
            sel = Selector(ids=(self.id,))
            return AppliedFault(Fault(FaultKind.OPTIC, sel), (), (self.index,), (0.0,), (self.id,))
        sel = Selector(ids=(self.id,))
        return AppliedFault(Fault(FaultKind.CUT, sel), (), (self.index,), (0.0,))


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one case does to the fabric."""

    failures: tuple[Failure, ...]
    pairs_disconnected: int  # GPU pairs that cannot talk, PXN allowed
    pairs_disconnected_direct: int  # ... without PXN
    jobs_lost: tuple[str, ...]  # jobs lost by this case (beyond the base)
    leaf_uplink_ratio: float  # min over live leaves, vs healthy (or the reference)
    min_busbw_ratio: float  # min over the jobs that survive, vs healthy (or the reference)
    storage_ratio: float  # min over live servers of storage bond vs healthy (or the reference)
    exact: bool  # True: evaluated by the full Analysis
    bisection_ratio: float | None = None
    reasons: tuple[str, ...] = field(default=())
    busbw_job: str = ""  # the surviving job with min_busbw_ratio ("" when none survives)
    crashed: tuple[str, ...] = ()  # of jobs_lost: connected, but crashed during the reroute

    @property
    def unplaceable(self) -> tuple[str, ...]:
        """The jobs of :attr:`jobs_lost` that could not start now (their NICs are cut off)."""
        return tuple(j for j in self.jobs_lost if j not in self.crashed)

    @property
    def ids(self) -> tuple[str, ...]:
        """The ids of what failed in this case (element, cable or port ids)."""
        return tuple(f.id for f in self.failures)

    def label(self, fabric: Fabric | None = None) -> str:
        """The case's failures' labels joined with `` + ``, as sweep tables show it."""
        return " + ".join(f.label() for f in self.failures)

    def category(self, fabric: Fabric) -> str:
        """The case's failures' categories joined with `` + ``."""
        return " + ".join(f.category(fabric) for f in self.failures)


def relabel(r: CaseResult, failures: tuple[Failure, ...]) -> CaseResult:
    """``r`` for other failures that do exactly the same (a NIC and its cable, say); what
    ``dataclasses.replace`` does, without its look-ups."""
    return CaseResult(
        failures, r.pairs_disconnected, r.pairs_disconnected_direct, r.jobs_lost,
        r.leaf_uplink_ratio, r.min_busbw_ratio, r.storage_ratio, r.exact, r.bisection_ratio,
        r.reasons, r.busbw_job, r.crashed,
    )  # fmt: skip
