"""Run a failure sweep: enumerate cases, evaluate them (locally, in processes or on
a Dask cluster), and summarize.  Pure apart from the executors it is handed.
"""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from typing import Any

import numpy as np

from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.resolve import build_fabric
from harness.fabric.resolve import checked_ref
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Forwarding
from harness.fabric.routing import PathRule
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.figures import BusbwFigures
from harness.invariants.figures import all_figures
from harness.invariants.routed_links import RoutedLinks
from harness.invariants.state import Observation
from harness.invariants.timeline import reroute_fragile
from harness.planning.sweep.cases import DEFAULT_CATEGORIES
from harness.planning.sweep.cases import sampled_pairs
from harness.planning.sweep.cases import single_failures
from harness.planning.sweep.cases import switch_pairs
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.ranking import CaseGroup
from harness.planning.sweep.ranking import gpus_lost
from harness.planning.sweep.ranking import group_cases
from harness.planning.sweep.ranking import job_gpus
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure
from harness.planning.sweep.reroute import with_reroute_crashes

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """Everything a worker needs to rebuild the evaluator (picklable)."""

    fabric: Fabric | str  # a Fabric, or a preset name / fabric file path
    jobs: tuple[JobSpec, ...] = ()
    state: tuple[Fault, ...] = ()
    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    depth: int = 1
    pair_sample: int = 1000
    seed: int = 0
    bisection: bool = False
    fabric_params: tuple[tuple[str, Any], ...] = ()
    # which routes exist (paths), how flows spread over uplinks (forwarding) and how long a
    # failure stalls the jobs whose traffic it takes (reroute): a job whose timeout that
    # reaches crashes, as in the risk check's N+1 margin
    routing: Routing = DEFAULT_ROUTING

    @property
    def forwarding(self) -> Forwarding:
        """How flows spread over the uplinks, as ``routing`` resolves it."""
        return self.routing.forwarding_model

    @property
    def paths(self) -> PathRule:
        """Which routes exist (``routing``'s ``paths``)."""
        return self.routing.paths

    @property
    def reroute_s(self) -> float:
        """Seconds a failure stalls the jobs whose traffic it takes (``routing``'s ``reroute``)."""
        return self.routing.reroute

    def base_state(self, fabric: Fabric) -> FaultState:
        """The state every case starts from: ``fabric`` with the ``state`` faults in."""
        state = FaultState.healthy(fabric)
        for fault in self.state:
            state = state.inject(fault)
        return state


@dataclass(frozen=True)
class SweepResult:
    """What a sweep found: every case's result, with the spec and how it ran."""

    fabric: Fabric
    spec: SweepSpec
    cases: tuple[CaseResult, ...]
    sampled_pairs: int
    seconds: float
    exact_cases: int
    jobs: tuple[Job, ...] = field(default=())
    # per job, in the base state: expected bus bandwidth against line rate and healthy
    figures: tuple[BusbwFigures, ...] = field(default=())

    def vs_line_rate(self, c: CaseResult) -> float | None:
        """The case's slowest surviving job (:attr:`CaseResult.busbw_job`): its expected bus
        bandwidth over its line rate (the row's ratio is against the same fabric healthy,
        same forwarding); None when no job survives or its figures are unknown."""
        x = next((x for x in self.figures if x.job == c.busbw_job), None)
        if x is None or x.line_rate_gbs <= 0:
            return None
        return c.min_busbw_ratio * x.healthy_gbs / x.line_rate_gbs

    @property
    def disconnecting(self) -> int:
        """Cases that disconnect at least one GPU pair (PXN allowed)."""
        return sum(1 for c in self.cases if c.pairs_disconnected > 0)

    @property
    def job_losing(self) -> int:
        """Cases that lose at least one job."""
        return sum(1 for c in self.cases if c.jobs_lost)

    def ranked(self) -> list[CaseResult]:
        """The cases, worst first (:func:`~harness.planning.sweep.ranking.rank_key`): the most
        GPUs whose jobs are lost, the most GPU pairs cut, then the lowest bus bandwidth of the
        surviving jobs, uplink and storage ratios (a stable order: ties keep the sweep's)."""
        return list(self._ranked)

    @cached_property
    def _ranked(self) -> tuple[CaseResult, ...]:
        cs = self.cases
        gpus = job_gpus(self.fabric, self.jobs)
        keys = (
            np.array([c.storage_ratio for c in cs], dtype=np.float64),
            np.array([c.leaf_uplink_ratio for c in cs], dtype=np.float64),
            np.array([c.min_busbw_ratio for c in cs], dtype=np.float64),
            -np.array([c.pairs_disconnected for c in cs], dtype=np.int64),
            -np.array([gpus_lost(c, gpus) if c.jobs_lost else 0 for c in cs], dtype=np.int64),
        )  # np.lexsort: the last key first, stable
        return tuple(cs[i] for i in np.lexsort(keys).tolist()) if cs else ()

    def groups(self) -> list[CaseGroup]:
        """The ranked cases, those alike by the fabric's symmetry grouped (worst first)."""
        return list(self._groups)

    @cached_property
    def _groups(self) -> tuple[CaseGroup, ...]:
        return tuple(group_cases(self.fabric, self.jobs, self._ranked))

    def by_category(self) -> dict[str, tuple[int, int, int]]:
        """Category -> (cases, disconnecting, job-losing)."""
        return dict(self._by_category)

    @cached_property
    def _by_category(self) -> dict[str, tuple[int, int, int]]:
        out: dict[str, list[int]] = {}
        for c in self.cases:
            row = out.setdefault(c.category(self.fabric), [0, 0, 0])
            row[0] += 1
            row[1] += c.pairs_disconnected > 0
            row[2] += bool(c.jobs_lost)
        return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def build_fabric_for(spec: SweepSpec) -> Fabric:
    """The fabric a sweep spec names (built from its name when a worker gets only the name)."""
    if isinstance(spec.fabric, Fabric):
        return spec.fabric
    # The name is read anew each time (the directory may have changed); the
    # fabric is cached, as every shard a worker evaluates starts from it.
    return build_fabric(checked_ref(spec.fabric, spec.fabric_params))


def enumerate_cases(fabric: Fabric, spec: SweepSpec) -> tuple[list[tuple[Failure, ...]], int]:
    """The cases of a sweep and how many of them are sampled pairs."""
    singles = single_failures(fabric, spec.categories)
    cases: list[tuple[Failure, ...]] = [(x,) for x in singles]
    sampled = 0
    if spec.depth >= 2:
        if "switches" in spec.categories:
            cases.extend(switch_pairs(fabric))
        pairs = sampled_pairs(fabric, singles, spec.pair_sample, spec.seed)
        sampled = len(pairs)
        cases.extend(pairs)
    return cases, sampled


_Prepared = tuple[CaseEvaluator, list[tuple[Failure, ...]], int, dict[str, RoutedLinks]]
_EVALUATORS: dict[SweepSpec, tuple[Fabric, _Prepared]] = {}


def _evaluator(spec: SweepSpec) -> _Prepared:
    """The prepared evaluator of a spec, kept while the fabric its name names is the same."""
    fabric = build_fabric_for(spec)
    kept = _EVALUATORS.get(spec)
    if kept is not None and kept[0] is fabric:
        return kept[1]
    prepared = _prepare(spec, fabric)
    _EVALUATORS.pop(spec, None)
    if len(_EVALUATORS) >= 2:  # a worker holds at most two prepared sweeps
        _EVALUATORS.pop(next(iter(_EVALUATORS)))
    _EVALUATORS[spec] = (fabric, prepared)
    return prepared


def _prepare(spec: SweepSpec, fabric: Fabric) -> _Prepared:
    jobs = resolve_jobs(spec.jobs, fabric)
    state = spec.base_state(fabric)
    ev = CaseEvaluator(fabric, jobs, state, bisection=spec.bisection, routing=spec.routing)
    ev.prepare()
    cases, sampled = enumerate_cases(fabric, spec)
    fragile = reroute_fragile(ev.base, spec.reroute_s, skip=ev._base_lost)
    return ev, cases, sampled, fragile


def evaluate_shard(spec: SweepSpec, start: int, stop: int) -> tuple[list[CaseResult], int]:
    """Evaluate cases[start:stop] (runs in a worker process or on a Dask worker)."""
    ev, cases, _, fragile = _evaluator(spec)
    before = ev.exact_cases
    out = _evaluate(ev, cases[start:stop], fragile)
    return out, ev.exact_cases - before


def _evaluate(
    ev: CaseEvaluator,
    cases: Sequence[tuple[Failure, ...]],
    fragile: Mapping[str, RoutedLinks],
) -> list[CaseResult]:
    """Singles in bulk (same answers, vectorized), pairs one by one, order kept; then the
    ``fragile`` jobs a case's reroute crashes (:mod:`.reroute`)."""
    singles = [c[0] for c in cases if len(c) == 1]
    if len(singles) == len(cases):  # a depth-1 sweep
        out = ev.evaluate_singles(singles)
    else:
        bulk = iter(ev.evaluate_singles(singles))
        out = [next(bulk) if len(c) == 1 else ev.evaluate(c) for c in cases]
    if not fragile:
        return out
    return [with_reroute_crashes(ev.fabric, c, fragile, ev) for c in out]


def _collect(
    futures: Sequence[Any], results: list[CaseResult], total: int, progress: Progress | None
) -> int:
    """Gather shard results in order (Dask and concurrent.futures alike); count exact cases."""
    exact = 0
    for fut in futures:
        part, n_exact = fut.result()
        results.extend(part)
        exact += n_exact
        if progress:
            progress(len(results), total)
    return exact


def _shards(n: int, parts: int) -> list[tuple[int, int]]:
    size = max(1, math.ceil(n / max(parts, 1)))
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def run_sweep(
    spec: SweepSpec,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> SweepResult:
    """Run a sweep locally (``workers`` processes) or on a Dask cluster (``scheduler``)."""
    with paused_gc():
        return _run_sweep(spec, workers=workers, scheduler=scheduler, progress=progress)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a sweep runs.

    A sweep allocates hundreds of thousands of acyclic objects (cases,
    results) on top of a fabric of millions; every full collection walks them
    all, for nothing (clos-100k: 2.3 s of 11 s of CPU).  What cycles there are
    get collected once it is back on.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _run_sweep(
    spec: SweepSpec,
    *,
    workers: int,
    scheduler: str | None,
    progress: Progress | None,
) -> SweepResult:
    start = time.perf_counter()
    fabric = build_fabric_for(spec)
    if scheduler is None and workers <= 1:
        ev, cases, sampled, fragile = _evaluator(spec)  # enumerates the cases once, for both
    else:
        cases, sampled = enumerate_cases(fabric, spec)
    jobs = resolve_jobs(spec.jobs, fabric)
    total = len(cases)
    results: list[CaseResult] = []
    exact = 0
    if scheduler is None and workers <= 1:
        before = ev.exact_cases
        if progress:
            progress(0, total)  # the total is known before the first case
        step = max(500, total // 50)  # about 50 steps; bulk kernels take a step at once
        for i in range(0, total, step):
            results.extend(_evaluate(ev, cases[i : i + step], fragile))
            if progress:
                progress(len(results), total)
        exact = ev.exact_cases - before
    else:
        if progress:
            progress(0, total)
        shards = _shards(total, (workers if scheduler is None else 8) * 4)
        if scheduler is not None:
            from distributed import Client

            with Client(scheduler) as client:  # type: ignore[no-untyped-call]
                futures = client.map(
                    evaluate_shard, [spec] * len(shards), [a for a, _ in shards],
                    [b for _, b in shards], pure=False,
                )  # fmt: skip
                exact = _collect(futures, results, total, progress)
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futs = [pool.submit(evaluate_shard, spec, a, b) for a, b in shards]
                exact = _collect(futs, results, total, progress)
    base = ev.base if scheduler is None and workers <= 1 else _base_analysis(spec, fabric, jobs)
    return SweepResult(
        fabric, spec, tuple(results), sampled, time.perf_counter() - start, exact, jobs,
        all_figures(base),
    )  # fmt: skip


def _base_analysis(spec: SweepSpec, fabric: Fabric, jobs: Sequence[Job]) -> Analysis:
    """The sweep's base state analysed once (its jobs' figures, when workers ran the cases)."""
    state = spec.base_state(fabric)
    return Analysis(fabric, Observation.from_state(state), jobs, routing=spec.routing)


def sweep(
    fabric: Fabric,
    jobs: Sequence[JobSpec] = (JobSpec(per_su=True),),
    *,
    elements: Sequence[str] = DEFAULT_CATEGORIES,
    depth: int = 1,
    state: Sequence[Fault] = (),
    bisection: bool = False,
    pair_sample: int = 1000,
    seed: int = 0,
    routing: Routing = DEFAULT_ROUTING,
) -> SweepResult:
    """Python API: sweep single (and with ``depth=2`` paired) failures of a fabric.

    ``routing``: which routes exist, how flows spread and how long each failure
    stalls the jobs whose traffic it takes (``reroute``; a job whose timeout that
    reaches is lost); ``harness sweep`` takes it from the fabric's ``routing:``
    and its options, as ``harness risk`` does.

    >>> from harness.fabric import preset
    >>> r = sweep(preset("seed-a800"), elements=["switches"])
    >>> len(r.cases), r.job_losing, r.disconnecting
    (60, 40, 0)
    """
    spec = SweepSpec(fabric, tuple(jobs), tuple(state), tuple(elements), depth, pair_sample,
                     seed, bisection, routing=routing)  # fmt: skip
    return run_sweep(spec)
