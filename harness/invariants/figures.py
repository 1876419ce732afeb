"""A job's bus bandwidth stated as an operator checks it: expected, against line rate and healthy.

Under ``ecmp`` a job's bus bandwidth is a random variable of the hash
functions the switches run (:mod:`harness.invariants.ecmp`): hash collisions
cost bandwidth even on a healthy non-blocking fabric.  What the reports state
is its **expected** value (the mean over
:data:`~harness.invariants.traffic.ECMP_DRAWS` seeded draws), the worst draw
beside it, and each job's expected value against two baselines:

``line rate``
    what the job's NICs give its collectives with no link shared (the
    healthy fabric's NIC rates, under NVLink): what the hardware could do;
``healthy``
    the same job on the same fabric with nothing broken, **under the same
    forwarding** (for ``ecmp``: its expected value there, collisions
    included): what the change or the fault costs.

Under ``static`` and ``adaptive`` there is one draw; the two baselines are
equal when the healthy fabric runs the job at line rate.  Across jobs the
reports name the **slowest job** (the least expected bandwidth against
healthy, lost jobs left out: they are counted as lost) with both fractions.

>>> from harness.fabric import preset
>>> from harness.fabric.jobs import Job
>>> from harness.faults.fault import FaultState
>>> from harness.invariants.analysis import Analysis
>>> from harness.invariants.state import Observation
>>> from harness.fabric.routing import Routing
>>> f = preset("seed-a800")
>>> pair = Job("pair", (f.index["su01/node01"], f.index["su02/node01"]))
>>> a = Analysis(f, Observation.from_state(FaultState.healthy(f)), [pair],
...              routing=Routing.stating(forwarding="ecmp"))
>>> x = job_figures(a, pair)
>>> (x.expected_gbs, x.line_rate_gbs, x.vs_line_rate, x.vs_healthy, x.draws)
(100.0, 100.0, 1.0, 1.0, 16)
"""

from __future__ import annotations

import math
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.model import Kind
from harness.fabric.routing import Forwarding
from harness.invariants.analysis import Analysis
from harness.invariants.traffic import ECMP_DRAWS


@dataclass(frozen=True, slots=True)
class BusbwFigures:
    """One job's bus bandwidth figures (GB/s) in one state (see the module)."""

    job: str
    forwarding: Forwarding
    draws: int  # hash draws the expected value averages (1: static, adaptive)
    expected_gbs: float  # the job's bus bandwidth: the mean over the draws (0: lost)
    worst_draw_gbs: float  # the least over the draws (= expected with one draw)
    line_rate_gbs: float  # the job's line rate: its NICs with no link shared, healthy
    healthy_gbs: float  # the same job on the same fabric healthy, same forwarding
    lost: bool = False

    @property
    def vs_line_rate(self) -> float:
        """Expected bus bandwidth over line rate (0 when the line rate is 0)."""
        return _ratio(self.expected_gbs, self.line_rate_gbs)

    @property
    def vs_healthy(self) -> float:
        """Expected bus bandwidth over the healthy fabric's (0 when that is 0)."""
        return _ratio(self.expected_gbs, self.healthy_gbs)

    def describe(self) -> str:
        """In words: ``241.7 GB/s expected (mean of 16 hash draws; worst 133.3) = 60.4% of
        line rate (400 GB/s), 66.7% of healthy (362.5 GB/s under ecmp)``."""
        if self.lost:
            return f"{self.job} is lost"
        how = (f"expected (mean of {self.draws} hash draws; worst {self.worst_draw_gbs:.4g})"
               if self.draws > 1 else f"({self.forwarding})")  # fmt: skip
        return (
            f"{self.expected_gbs:.4g} GB/s {how} = {self.vs_line_rate:.1%} of line rate "
            f"({self.line_rate_gbs:.4g} GB/s), {self.vs_healthy:.1%} of healthy "
            f"({self.healthy_gbs:.4g} GB/s under {self.forwarding})"
        )

    def to_json(self) -> dict[str, Any]:
        """The figures as JSON, each name saying what it is (GB/s; ratios to 6 places)."""
        return {
            "job": self.job,
            "lost": self.lost,
            "forwarding": self.forwarding,
            "hash_draws": self.draws,
            "expected_busbw_gbs": _round(self.expected_gbs),
            "worst_draw_busbw_gbs": _round(self.worst_draw_gbs),
            "line_rate_gbs": _round(self.line_rate_gbs),
            "healthy_expected_busbw_gbs": _round(self.healthy_gbs),
            "expected_vs_line_rate": round(self.vs_line_rate, 6),
            "expected_vs_healthy": round(self.vs_healthy, 6),
        }


def _ratio(x: float, base: float) -> float:
    return x / base if base > 0 and math.isfinite(base) else (1.0 if x == base else 0.0)


def _round(x: float) -> float | None:
    return round(x, 6) if math.isfinite(x) else None


def _nvlink(a: Analysis, job: Job) -> float:
    """The job's GPUs' least one-way bandwidth inside their servers (GB/s)."""
    return min((a.intra_gbs(g) for s in job.servers for g in a.parts(s, Kind.GPU)), default=0.0)


def line_rate_gbs(a: Analysis, job: Job, collective: Collective | None = None) -> float:
    """A job's line rate (GB/s): its collectives (or ``collective``) with no link shared,
    the least of them, on the healthy fabric, under its GPUs' NVLink there (a one-server
    job: NVLink alone)."""
    h = a.healthy
    nv = _nvlink(h, job)
    if len(job.servers) < 2:
        return nv if math.isfinite(nv) else 0.0
    line = min((c.line_gbs for c in h.job_traffic(job).collectives
                if collective in (None, c.collective)), default=math.inf)  # fmt: skip
    return float(min(line, nv))


def job_figures(a: Analysis, job: Job, *, lost: bool | None = None) -> BusbwFigures:
    """A job's figures in the state of ``a`` (``lost``: judged so by the caller, e.g. a job
    crashed by a reroute; by default the analysis's verdict)."""
    gone = a.verdicts[a.jobs.index(job)].lost if lost is None else lost
    draws = ECMP_DRAWS if a.forwarding == "ecmp" else 1
    expected = 0.0 if gone else a.job_busbw_gbs(job)
    worst = expected
    if not gone and len(job.servers) >= 2:
        low = min((c.worst_gbs for c in a.job_traffic(job).collectives), default=math.inf)
        worst = float(min(low, _nvlink(a, job)))
    return BusbwFigures(job.name, a.forwarding, draws, expected, worst, line_rate_gbs(a, job),
                        a.healthy.job_busbw_gbs(job), gone)  # fmt: skip


def all_figures(a: Analysis, lost: Collection[str] = ()) -> tuple[BusbwFigures, ...]:
    """Every job's figures (``lost``: names lost besides the analysis's verdicts)."""
    gone = set(lost)
    return tuple(
        job_figures(a, j, lost=True if j.name in gone else None) for j in a.jobs
    )  # fmt: skip


def slowest(figures: Sequence[BusbwFigures]) -> BusbwFigures | None:
    """The surviving job with the least expected bandwidth against healthy (then against
    line rate, then by name); None when none survives."""
    alive = [x for x in figures if not x.lost]
    return min(alive, key=lambda x: (x.vs_healthy, x.vs_line_rate, x.job), default=None)


def slowest_line(figures: Sequence[BusbwFigures]) -> str:
    """One line for a report: the slowest surviving job's figures ("" when none survives)."""
    x = slowest(figures)
    if x is None:
        return ""
    return f"slowest job's bus bandwidth: {x.job} {x.describe()}"
