"""States of a pre-change risk check in numbers: before, after, and what the change adds.

:func:`summarize` reads a state's analysis against the healthy fabric;
:func:`summarize_added` compares the state after the change with the one
before it, so what was already lost is not the change's loss.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.invariants.analysis import Analysis
from harness.invariants.figures import BusbwFigures
from harness.invariants.figures import all_figures
from harness.invariants.traffic import JobTraffic
from harness.observations.budget import BUDGET_METRICS


@dataclass(frozen=True, slots=True)
class StateSummary:
    """One state in numbers (before or after the change), or what the change adds.

    For :attr:`RiskReport.added` the counts are differences (after minus
    before; ``jobs_lost``: the jobs lost after and not before) and the ratios
    are after to before, over what was still alive before.

    *Lost* jobs are the running jobs that die (cut off, or crashed by a reroute
    as slow as their timeout); *unplaceable* ones could not start now (their
    NICs cannot reach each other): a crashed job is lost but may be placeable.
    ``bandwidth`` is the lowest ratio over the jobs that **survive** (a lost
    job has no bandwidth to speak of: it is counted in ``jobs_lost``), and
    ``bandwidth_job`` names that job ("" when none survives).
    """

    jobs_lost: tuple[str, ...]
    reasons: tuple[str, ...]
    nics_cut: int
    gpus_cut: int  # GPUs with no path to any other server, PXN allowed
    gpu_pairs_disconnected: int
    bandwidth: float  # min busbw ratio over the surviving jobs (1 when none survives)
    job_bandwidth: tuple[tuple[str, float], ...]  # every job (a lost one: 0)
    uplink: float
    bisection: float | None
    storage: float
    # per job: what its collectives get and its uplink ratio (the state's, not relative)
    traffic: tuple[tuple[str, JobTraffic, float], ...] = ()
    bandwidth_job: str = ""  # the surviving job with the lowest ratio
    jobs_unplaceable: tuple[str, ...] = ()  # jobs that could not start now
    # per job: expected bus bandwidth against line rate and healthy (:mod:`~.figures`)
    figures: tuple[BusbwFigures, ...] = ()

    def metric(self, name: str) -> float:
        """The value of a budget metric (a disconnected count as a float; bisection 1 when
        unknown)."""
        if name == "jobs_lost":
            return float(len(self.jobs_lost))
        if name == "bisection":
            return self.bisection if self.bisection is not None else 1.0
        if name == "gpu_pairs_disconnected":
            return float(self.gpu_pairs_disconnected)
        return float(getattr(self, name))

    def reasons_of(self, job: str) -> tuple[str, ...]:
        """Why ``job`` is lost (the ``JOB: `` prefix dropped)."""
        head = f"{job}: "
        return tuple(r[len(head) :] for r in self.reasons if r.startswith(head))


def _nics_cut(a: Analysis) -> int:
    f = a.fabric
    live_nics = [n for n in f.nics.tolist() if a.up[n]]
    return sum(1 for n in live_nics if not a.nic_comps(n)) + int((~a.up[f.nics]).sum())


def _storage_ratio(a: Analysis, ref: Analysis) -> float:
    vals = [
        a.storage_gbps(s) / h
        for s in a.fabric.servers.tolist()
        if (h := ref.storage_gbps(s)) and a.up[s]
    ]
    return min(vals, default=1.0)


def _bisection_ratio(a: Analysis, ref: Analysis, *, nothing: float) -> float | None:
    """Bisection of ``a`` to ``ref``; ``nothing``: the ratio when ``ref`` has none."""
    if a.fabric.n_sus < 2:
        return None
    base = ref.bisection_gbps
    return a.bisection_gbps / base if base else nothing


def _slowest(ratios: tuple[tuple[str, float], ...], lost: tuple[str, ...]) -> tuple[float, str]:
    """The lowest ratio over the jobs not ``lost`` and its job (1.0, "" when none is left)."""
    gone = set(lost)
    alive = [(r, name) for name, r in ratios if name not in gone]
    if not alive:
        return 1.0, ""
    r, name = min(alive)
    return r, name


def summarize(a: Analysis, crashed: Mapping[str, str] | None = None) -> StateSummary:
    """A state in numbers, against the healthy fabric.

    ``crashed``: jobs that are connected in this state but crashed on the way
    into it (a reroute as slow as their timeout), each with why: lost too.
    """
    crashed = crashed or {}
    cut = set(a.jobs_lost())
    lost = tuple(j.name for j in a.jobs if j.name in cut or j.name in crashed)
    reasons = tuple(
        f"{v.name}: {r}"
        for v in a.verdicts
        for r in ((crashed[v.name],) if v.name in crashed else v.reasons[:2] if v.lost else ())
    )
    ratios = tuple((j.name, 0.0 if j.name in crashed else a.job_busbw_ratio(j)) for j in a.jobs)
    traffic = tuple((j.name, a.job_traffic(j), a.job_uplink_ratio(j)) for j in a.jobs)
    bw, slowest = _slowest(ratios, lost)
    unplaceable = tuple(j.name for j in a.jobs if j.name in cut)
    return StateSummary(
        lost, reasons, _nics_cut(a), a.gpus_isolated(pxn=True), a.gpu_pairs_disconnected(pxn=True),
        bw, ratios, a.leaf_uplink_ratio(), _bisection_ratio(a, a.healthy, nothing=0.0),
        _storage_ratio(a, a.healthy), traffic, slowest, unplaceable, all_figures(a, crashed),
    )  # fmt: skip


def summarize_added(
    after: Analysis, before: Analysis, sa: StateSummary, sb: StateSummary
) -> StateSummary:
    """What the change adds: ``after`` against ``before`` (see :class:`StateSummary`)."""
    f = after.fabric
    new_lost = tuple(j for j in sa.jobs_lost if j not in sb.jobs_lost)
    reasons = tuple(r for r in sa.reasons if r.split(": ", 1)[0] in new_lost)
    ratios = tuple(
        (j.name, 0.0 if j.name in sa.jobs_lost else after.job_busbw_gbs(j) / b)
        for j in after.jobs
        if (b := before.job_busbw_gbs(j)) > 0
    )
    live_a = after.leaf_uplinks[0]
    live_b = before.leaf_uplinks[0]
    leaves = f.leaves[after.up[f.leaves]]
    leaves = leaves[live_b[leaves] > 0]
    uplink = float((live_a[leaves] / live_b[leaves]).min()) if leaves.size else 1.0
    bw, slowest = _slowest(ratios, sa.jobs_lost)
    unplaceable = tuple(j for j in sa.jobs_unplaceable if j not in sb.jobs_unplaceable)
    return StateSummary(
        new_lost, reasons, sa.nics_cut - sb.nics_cut, sa.gpus_cut - sb.gpus_cut,
        sa.gpu_pairs_disconnected - sb.gpu_pairs_disconnected, bw, ratios, uplink,
        _bisection_ratio(after, before, nothing=1.0), _storage_ratio(after, before), (),
        slowest, unplaceable,
    )  # fmt: skip


def budget_values(added: StateSummary, after: StateSummary) -> dict[tuple[str, bool], float]:
    """Every budget metric, on what the change adds (``False``) and on the state after it
    (``True``)."""
    out = {(name, False): added.metric(name) for name in BUDGET_METRICS}
    out.update({(name, True): after.metric(name) for name in BUDGET_METRICS})
    return out
