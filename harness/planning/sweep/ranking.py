"""Worst first, and alike together: the order of a sweep's (or an N+1 margin's) cases.

A case is worse than another when it loses the jobs of more GPUs, then when it
cuts off more GPU pairs, then when the surviving jobs keep less bus bandwidth
(then less leaf uplink, then less storage): :func:`rank_key`.  The number of
jobs lost is not a measure: one 480-GPU job outweighs two of 160.

Cases equal by the fabric's symmetry (the same outcome in every number, and
the same role: the same NIC index on servers of one SU, the same rail's leaf
in any SU, any spine) are one :class:`CaseGroup`, shown as one row with a
count ("su01/node01..20/nic0: 20 alike"): :func:`group_cases`.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.planning.id_ranges import compress_ids
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure

RankKey = tuple[int, int, float, float, float]
_DIGITS = 9  # ratios equal to this many digits are equal outcomes


def job_gpus(fabric: Fabric, jobs: Sequence[Job]) -> dict[str, int]:
    """GPUs per job: the GPUs of its servers."""
    f = fabric
    per_spec = [s.gpus for s in f.node_specs]
    return {j.name: sum(per_spec[int(f.node_spec_of[s])] for s in j.servers) for j in jobs}


def gpus_lost(c: CaseResult, gpus: dict[str, int]) -> int:
    """GPUs whose jobs the case loses."""
    return sum(gpus.get(j, 0) for j in c.jobs_lost)


def rank_key(fabric: Fabric, jobs: Sequence[Job]) -> Callable[[CaseResult], RankKey]:
    """The sort key of cases, worst first: GPUs of the jobs lost, GPU pairs cut off, then the
    surviving jobs' bus bandwidth, leaf uplinks and storage (ascending)."""
    gpus = job_gpus(fabric, jobs)

    def key(c: CaseResult) -> RankKey:
        return (-gpus_lost(c, gpus), -c.pairs_disconnected, c.min_busbw_ratio,
                c.leaf_uplink_ratio, c.storage_ratio)  # fmt: skip

    return key


@dataclass(frozen=True, slots=True)
class CaseGroup:
    """Cases alike by the fabric's symmetry: the same outcome, failures of the same role."""

    cases: tuple[CaseResult, ...]
    label: str  # the cases' labels written as one ("su01/node01..20/nic0")
    gpus_lost: int  # GPUs whose jobs each case loses

    @property
    def first(self) -> CaseResult:
        """The group's first case (every case of the group has its numbers)."""
        return self.cases[0]

    @property
    def count(self) -> int:
        """How many cases are alike."""
        return len(self.cases)

    def describe(self) -> str:
        """``su01/node01..20/nic0: 20 alike`` (the label alone for a group of one)."""
        return self.label if self.count == 1 else f"{self.label}: {self.count:,} alike"


def _role(f: Fabric, i: int) -> tuple[int, ...]:
    """An element's role: its kind, rail and plane; its SU too when it belongs to a server
    (the servers of one SU are alike; a leaf of one rail is alike in every SU)."""
    server_side = int(f.parent[i]) >= 0 or int(f.kind[i]) == int(Kind.NODE)
    return (int(f.kind[i]), int(f.rail[i]), int(f.plane[i]), int(f.su[i]) if server_side else 0)


def failure_role(f: Fabric, x: Failure) -> tuple[object, ...]:
    """The role of a failure: of its element, or of both ends of its cable (and for an optic,
    which end)."""
    if x.kind == "element":
        return ("element", *_role(f, x.index))
    a, b = int(f.link_a[x.index]), int(f.link_b[x.index])
    ends = (_role(f, a), _role(f, b))
    if x.kind == "optic":
        owner = f.index.get(x.id.rsplit(":", 1)[0], a)
        return ("optic", int(f.link_kind[x.index]), ends, owner == a)
    return ("link", int(f.link_kind[x.index]), ends)


def _outcome(c: CaseResult, lost_gpus: int, f: Fabric) -> tuple[object, ...]:
    bis = None if c.bisection_ratio is None else round(c.bisection_ratio, _DIGITS)
    return (c.category(f), lost_gpus, len(c.jobs_lost), len(c.crashed), c.pairs_disconnected,
            c.pairs_disconnected_direct, round(c.min_busbw_ratio, _DIGITS),
            round(c.leaf_uplink_ratio, _DIGITS), round(c.storage_ratio, _DIGITS), bis)  # fmt: skip


def group_cases(
    fabric: Fabric, jobs: Sequence[Job], ranked: Sequence[CaseResult]
) -> list[CaseGroup]:
    """``ranked`` cases in groups alike by symmetry, in the order of their first case."""
    f = fabric
    gpus = job_gpus(f, jobs)
    groups: dict[tuple[object, ...], list[CaseResult]] = {}
    lost_of: dict[tuple[object, ...], int] = {}
    for c in ranked:
        n = gpus_lost(c, gpus)
        key = (_outcome(c, n, f), tuple(failure_role(f, x) for x in c.failures))
        groups.setdefault(key, []).append(c)
        lost_of[key] = n
    return [
        CaseGroup(tuple(cs), compress_ids([c.label(f) for c in cs]), lost_of[k])
        for k, cs in groups.items()
    ]
