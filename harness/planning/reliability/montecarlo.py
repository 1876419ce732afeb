"""The Monte Carlo study: runs of a fabric's year, serial or sharded over processes, summed up.

(Planning stage.)  :func:`run_study` plays ``runs`` runs (run ``k`` seeded ``seed + k``,
:mod:`~harness.planning.reliability.simulate`), in this process or in ``workers``
processes, each taking a contiguous block of run indices with its own cache: a run's
result depends on its index alone, so serial and sharded studies are equal, run by run.

Every figure is per month: the mean over runs with its 95 % confidence interval (normal,
``1.96 x sd / sqrt(runs)``) and the runs' p5 / p50 / p95.  :func:`compare` gives the
difference of two studies' means, with its interval (independent runs).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.planning.reliability.fates import FateBook
from harness.planning.reliability.rates import MONTH_S
from harness.planning.reliability.rates import Rates
from harness.planning.reliability.simulate import RunResult
from harness.planning.reliability.simulate import simulate_run
from harness.planning.reliability.units import Source
from harness.planning.reliability.units import plan_units

#: z of a two-sided 95 % normal interval.
Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Figure:
    """A per-month figure over runs: mean, its 95 % interval, and the runs' percentiles.

    >>> f = Figure.of([1.0, 2.0, 3.0, 4.0])
    >>> f.mean, f.p50, round(f.ci[1] - f.ci[0], 3)
    (2.5, 2.5, 2.53)
    """

    mean: float
    ci: tuple[float, float]
    p5: float
    p50: float
    p95: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Figure:
        """The figure of one value per run."""
        v = np.asarray(values, dtype=float)
        mean = float(v.mean()) if v.size else 0.0
        half = Z95 * float(v.std(ddof=1)) / math.sqrt(v.size) if v.size > 1 else 0.0
        p5, p50, p95 = (float(x) for x in np.percentile(v, [5, 50, 95])) if v.size else (0,) * 3
        return cls(mean, (mean - half, mean + half), p5, p50, p95)

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.ci[1] - self.ci[0]) / 2

    def to_json(self) -> dict[str, float | list[float]]:
        """As JSON."""
        return {"mean": self.mean, "ci95": list(self.ci), "p5": self.p5, "p50": self.p50,
                "p95": self.p95}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Study:
    """What to simulate: a fabric, its jobs, a rates file, the horizon and the runs."""

    fabric: Fabric
    jobs: tuple[Job, ...]
    rates: Rates
    months: float = 12.0
    runs: int = 1000
    seed: int = 0
    routing: Routing = DEFAULT_ROUTING

    @property
    def horizon_s(self) -> float:
        """The horizon in seconds."""
        return self.months * MONTH_S


@dataclass(frozen=True, slots=True)
class Outcome:
    """A study's runs and its per-month figures."""

    study: Study
    sources: tuple[str, ...]
    results: tuple[RunResult, ...]
    states_analysed: int  # distinct fault states judged, summed over the processes

    def _per_month(self, counts: Sequence[int]) -> Figure:
        return Figure.of([c / self.study.months for c in counts])

    @property
    def total(self) -> Figure:
        """Job interruptions per month, fabric-wide (all jobs)."""
        return self._per_month([r.total for r in self.results])

    def per_job(self) -> dict[str, Figure]:
        """Interruptions per month of each job."""
        return {j.name: self._per_month([r.per_job[i] for r in self.results])
                for i, j in enumerate(self.study.jobs)}  # fmt: skip

    def per_source(self) -> dict[str, Figure]:
        """Interruptions per month attributed to each class and domain."""
        return {s: self._per_month([r.per_source[i] for r in self.results])
                for i, s in enumerate(self.sources)}  # fmt: skip

    def availability(self) -> dict[str, Figure]:
        """Per job: the fraction of the horizon it could run (runs' values, not per month)."""
        h = self.study.horizon_s
        return {j.name: Figure.of([r.uptime_s[i] / h for r in self.results])
                for i, j in enumerate(self.study.jobs)}  # fmt: skip

    def effective(self) -> dict[str, Figure]:
        """Per job: training time kept (ran, less the work lost since its last checkpoint)."""
        h = self.study.horizon_s
        return {j.name: Figure.of([(r.uptime_s[i] - r.lost_work_s[i]) / h
                                   for r in self.results])
                for i, j in enumerate(self.study.jobs)}  # fmt: skip


def _block(study: Study, sources: tuple[Source, ...], runs: range) -> tuple[list[RunResult], int]:
    """The runs of one block, in a worker process with its own cache."""
    book = FateBook(study.fabric, study.jobs, study.routing)
    out = [simulate_run(book, sources, study.rates.restart, study.horizon_s, seed=study.seed,
                        run=k) for k in runs]  # fmt: skip
    return out, book.full_analyses + book.evaluated


def blocks(runs: int, workers: int) -> list[range]:
    """Contiguous blocks of run indices, about ten per worker (for progress and balance).

    >>> blocks(10, 1), blocks(10, 2)[:2]
    ([range(0, 10)], [range(0, 1), range(1, 2)])
    """
    if workers <= 1:
        return [range(runs)]
    n = min(runs, workers * 10)
    edges = [round(i * runs / n) for i in range(n + 1)]
    return [range(a, b) for a, b in itertools.pairwise(edges) if b > a]


def run_study(
    study: Study, *, workers: int = 1, progress: Callable[[int, int], None] | None = None
) -> Outcome:
    """Play ``study.runs`` runs (``workers`` processes when > 1) and sum them up."""
    sources = plan_units(study.fabric, study.rates)
    results: list[RunResult] = []
    analysed = 0
    if workers <= 1:
        book = FateBook(study.fabric, study.jobs, study.routing)
        for k in range(study.runs):
            results.append(simulate_run(book, sources, study.rates.restart, study.horizon_s,
                                        seed=study.seed, run=k))  # fmt: skip
            if progress is not None:
                progress(k + 1, study.runs)
        analysed = book.full_analyses + book.evaluated
    else:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures import as_completed

        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {
                pool.submit(_block, study, sources, b): b for b in blocks(study.runs, workers)
            }
            for fut in as_completed(futures):
                got, n = fut.result()
                results.extend(got)
                analysed += n
                if progress is not None:
                    progress(len(results), study.runs)
        results.sort(key=lambda r: r.run)
    names = tuple([c.name for c in study.rates.classes] + [d.name for d in study.rates.domains])
    return Outcome(study, names, tuple(results), analysed)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two designs' interruptions per month and their difference (``other - base``)."""

    base: Outcome
    other: Outcome
    difference: Figure


def compare(base: Outcome, other: Outcome) -> Comparison:
    """The difference of the fabric-wide means, with its 95 % interval (independent runs)."""
    a, b = base.total, other.total
    diff = b.mean - a.mean
    half = math.hypot(a.half_width, b.half_width)
    per_run = [y.total / other.study.months - x.total / base.study.months
               for x, y in zip(base.results, other.results, strict=False)]  # fmt: skip
    p = Figure.of(per_run)
    return Comparison(base, other, Figure(diff, (diff - half, diff + half), p.p5, p.p50, p.p95))
