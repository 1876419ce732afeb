"""One Monte Carlo run: a fabric's fault state over months, and what each change does to jobs.

(Planning stage, pure.)  Run ``k`` draws everything from ``numpy.random.default_rng(seed +
k)``, in a fixed order, so it gives the same result wherever it runs:

1. per source (the rates file's classes, then its domains): the number of failures over
   the horizon (Poisson, ``units x rate x months``), their times (uniform), their units
   (uniform), the target hit within each unit (uniform) and each failure's repair time;
2. the events are then played in time order (a repair before a failure at the same
   instant).  A failure of something already broken changes nothing (its repair is
   counted).  At a failure every running job's fate is decided by the
   :class:`~harness.planning.reliability.fates.FateBook` on the fault state *as the job
   sees it*; an interrupted job is counted once, attributed to the failure's class;
3. **restart**: with ``spares: true`` the job runs again ``after`` later on spare servers:
   it is placed away from every fault standing at that moment (they no longer touch it,
   until repaired); with ``spares: false`` it waits until it can run on its own servers
   (not cut off, no fault hitting its servers) and restarts ``after`` later.

A job's *availability* is the fraction of the horizon it ran.  With a checkpoint interval,
each interruption also loses half an interval of work on average: the *effective* ratio
is the training time kept over the horizon.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from dataclasses import dataclass
from typing import cast

import numpy as np

from harness.fabric.model import Fabric
from harness.faults.fault import AppliedFault
from harness.invariants.timeline import in_node_crash
from harness.planning.reliability.fates import FateBook
from harness.planning.reliability.fates import StateKey
from harness.planning.reliability.rates import MONTH_S
from harness.planning.reliability.rates import Repair
from harness.planning.reliability.rates import RestartPolicy
from harness.planning.reliability.units import Source

# event kinds, in the order they are played at one instant
_REPAIR, _RESTART, _FAIL = 0, 1, 2


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one run counted: interruptions per job and per source, and per job the seconds
    it ran and the work it lost to checkpoints."""

    run: int
    per_job: tuple[int, ...]
    per_source: tuple[int, ...]
    uptime_s: tuple[float, ...]
    lost_work_s: tuple[float, ...]
    failures: int  # failures drawn (all sources)

    @property
    def total(self) -> int:
        """Job interruptions in the run, all jobs."""
        return sum(self.per_job)


def draw_repairs(repair: Repair, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` repair times (seconds) drawn from ``repair``."""
    if repair.dist == "fixed":
        return np.full(n, repair.a)
    if repair.dist == "exponential":
        return rng.exponential(repair.a, n)
    if repair.dist == "lognormal":
        return np.exp(rng.normal(np.log(repair.a), repair.sigma, n))
    times = np.asarray(repair.times, dtype=float)
    return times[rng.integers(0, times.size, n)]


@dataclass(frozen=True, slots=True)
class Failure:
    """One drawn failure: when, of which source and target, and its repair time."""

    at: float
    source: int
    target: int
    repair_s: float


def draw_failures(sources: tuple[Source, ...], horizon_s: float, seed: int) -> list[Failure]:
    """The failures of one run, drawn in the fixed order of the module doc."""
    rng = np.random.default_rng(seed)
    out: list[Failure] = []
    months = horizon_s / MONTH_S
    for si, src in enumerate(sources):
        n = int(rng.poisson(len(src.units) * src.rate_per_month * months))
        at = rng.uniform(0.0, horizon_s, n)
        unit = rng.integers(0, len(src.units), n)
        pick = rng.random(n)
        repair = draw_repairs(src.repair, rng, n)
        for k in range(n):
            members = src.units[int(unit[k])]
            target = int(unit[k]) if src.together else members[int(pick[k] * len(members))]
            out.append(Failure(float(at[k]), si, target, float(repair[k])))
    out.sort(key=lambda x: (x.at, x.source, x.target))
    return out


class _Run:
    """The mutable state of one run (kept inside :func:`simulate_run`)."""

    def __init__(self, book: FateBook, sources: tuple[Source, ...], policy: RestartPolicy):
        self.book, self.sources, self.policy = book, sources, policy
        self.fabric: Fabric = book.fabric
        n = len(book.jobs)
        self.active: dict[tuple[int, int], int] = {}  # fault key -> failures standing
        self.running = [True] * n
        self.pending = [False] * n  # a restart is scheduled
        self.spared: list[set[tuple[int, int]]] = [set() for _ in range(n)]
        self.since = [0.0] * n
        self.uptime = [0.0] * n
        self.per_job = [0] * n
        self.lost_work = [0.0] * n
        self.per_source = [0] * len(sources)
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0

    def push(self, at: float, kind: int, a: int, b: int = 0) -> None:
        heapq.heappush(self.heap, (at, kind, self.seq, a, b))
        self.seq += 1

    def state(self, j: int | None = None) -> StateKey:
        keys = frozenset(self.active)
        return keys - self.spared[j] if j is not None and self.spared[j] else keys

    def applied(self, key: Hashable) -> AppliedFault:
        got = self.book.applied.get(key)
        if got is None:
            source, target = cast(tuple[int, int], key)
            got = self.sources[source].fault(self.fabric, target)
            self.book.applied[key] = got
        return got

    def fail(self, at: float, key: tuple[int, int]) -> None:
        if key in self.active:
            self.active[key] += 1
            return
        applied = self.applied(key)
        views: dict[StateKey, frozenset[str]] = {}
        for j, job in enumerate(self.book.jobs):
            if not self.running[j]:
                continue
            view = self.state(j)
            hit = views.get(view)
            if hit is None:
                hit = views[view] = self.book.interrupted(view, key, applied)
            if job.name in hit:
                self.interrupt(j, at, key[0])
        self.active[key] = 1

    def interrupt(self, j: int, at: float, source: int) -> None:
        self.running[j] = False
        self.uptime[j] += at - self.since[j]
        self.per_job[j] += 1
        self.per_source[source] += 1
        if self.policy.checkpoint_s:
            self.lost_work[j] += min(self.policy.checkpoint_s / 2, at - self.since[j])
        if self.policy.spares:
            self.pending[j] = True
            self.push(at + self.policy.after_s, _RESTART, j)

    def placeable(self, j: int) -> bool:
        state = self.state()
        if self.book.jobs[j].name in self.book.lost(state):
            return False
        job = self.book.jobs[j]
        return all(in_node_crash(self.fabric, self.applied(k), job) is None for k in state)

    def repair(self, at: float, key: tuple[int, int]) -> None:
        self.active[key] -= 1
        if self.active[key]:
            return
        del self.active[key]
        for s in self.spared:
            s.discard(key)
        self.wake(at)

    def wake(self, at: float) -> None:
        if self.policy.spares:
            return
        for j in range(len(self.running)):
            if not self.running[j] and not self.pending[j] and self.placeable(j):
                self.pending[j] = True
                self.push(at + self.policy.after_s, _RESTART, j)

    def restart(self, at: float, j: int) -> None:
        self.pending[j] = False
        if self.policy.spares:
            self.spared[j] = set(self.active)
        elif not self.placeable(j):
            return  # broken again meanwhile: the next repair wakes it
        self.running[j] = True
        self.since[j] = at


def simulate_run(
    book: FateBook, sources: tuple[Source, ...], policy: RestartPolicy, horizon_s: float,
    *, seed: int, run: int,
) -> RunResult:  # fmt: skip
    """Run ``run`` of a Monte Carlo (drawn from ``seed + run``) over ``horizon_s`` seconds."""
    failures = draw_failures(sources, horizon_s, seed + run)
    r = _Run(book, sources, policy)
    for i, x in enumerate(failures):
        r.push(x.at, _FAIL, i)
    while r.heap:
        at, kind, _, a, _b = heapq.heappop(r.heap)
        if at >= horizon_s:
            break
        if kind == _FAIL:
            x = failures[a]
            r.fail(at, (x.source, x.target))
            r.push(at + x.repair_s, _REPAIR, a)
        elif kind == _REPAIR:
            x = failures[a]
            r.repair(at, (x.source, x.target))
        else:
            r.restart(at, a)
        if kind == _FAIL and not policy.spares:
            r.wake(at)  # interrupted by a reroute or with nothing left broken: restart
    for j, up in enumerate(r.running):
        if up:
            r.uptime[j] += horizon_s - r.since[j]
    return RunResult(run, tuple(r.per_job), tuple(r.per_source), tuple(r.uptime),
                     tuple(r.lost_work), len(failures))  # fmt: skip
