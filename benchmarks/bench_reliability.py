"""``harness reliability`` against a naive per-run full analysis, in the same run.

    python benchmarks/bench_reliability.py                 # about 2 minutes
    python benchmarks/bench_reliability.py --naive-runs 1  # quicker

The naive method plays the same runs (the same failures, drawn from the same seeds) but
decides every failure's fate from scratch: the full ``Analysis`` of the state before and
after it, its cut-off jobs and ``crashed_by_change``, no cache, no sweep evaluator, no
shortcut for faults inside servers.  Both must give identical run results (the script
exits 1 when they do not); the table gives the seconds per run of each and their ratio.
The issue's target: ``harness reliability seed-a800 --compare hpn-dual-tor --runs 1000``
under a minute on this 2-core machine (timed here with ``--workers 2``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from benchutil import secs
from benchutil import table
from benchutil import verdict

from harness.fabric import preset
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import crashed_by_change
from harness.invariants.timeline import cut_off
from harness.planning.reliability.fates import FateBook
from harness.planning.reliability.fates import FaultKey
from harness.planning.reliability.fates import StateKey
from harness.planning.reliability.montecarlo import Study
from harness.planning.reliability.montecarlo import run_study
from harness.planning.reliability.rates import Rates
from harness.planning.reliability.rates import load_rates
from harness.planning.reliability.simulate import RunResult
from harness.planning.reliability.simulate import simulate_run
from harness.planning.reliability.units import plan_units

ROOT = Path(__file__).resolve().parents[1]
RATES = ROOT / "rates" / "llama3-2024.yaml"


class NaiveBook(FateBook):
    """Every fate from scratch: two full analyses per failure, nothing kept."""

    def _full(self, state: StateKey) -> Analysis:
        applied = tuple(self.applied[k] for k in sorted(state, key=repr))
        obs = Observation.from_state(FaultState(self.fabric, applied))
        self.full_analyses += 1
        return Analysis(self.fabric, obs, self.jobs, routing=self.routing)

    def lost(self, state: StateKey) -> frozenset[str]:
        got, _ = cut_off(self._full(state))
        return got

    def interrupted(self, state: StateKey, key: FaultKey, applied: AppliedFault) -> frozenset[str]:
        self.applied.setdefault(key, applied)
        before, after = self._full(state), self._full(state | {key})
        cut = cut_off(after)[0] - cut_off(before)[0]
        return frozenset(cut | set(crashed_by_change(before, after, [applied], self.routing)))


def play(book: FateBook, fabric: Fabric, rates: Rates, runs: Sequence[int]) -> list[RunResult]:
    sources = plan_units(fabric, rates)
    horizon = 12 * 365.25 / 12 * 86400.0
    return [simulate_run(book, sources, rates.restart, horizon, seed=0, run=k) for k in runs]


def compare_methods(
    fabric: Fabric, jobs: Sequence[Job], rates: Rates, naive_runs: int, fast_runs: int
) -> tuple[float, float, bool]:
    """Seconds per run of the naive and the cached method, and whether they agree."""
    t0 = time.perf_counter()
    naive = play(NaiveBook(fabric, jobs), fabric, rates, range(naive_runs))
    t1 = time.perf_counter()
    fast = play(FateBook(fabric, jobs), fabric, rates, range(fast_runs))
    t2 = time.perf_counter()
    return (t1 - t0) / naive_runs, (t2 - t1) / fast_runs, fast[:naive_runs] == naive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-runs", type=int, default=3, help="runs of the naive method")
    parser.add_argument("--runs", type=int, default=1000, help="runs of the timed study")
    parser.add_argument("--workers", type=int, default=2, help="processes of the timed study")
    args = parser.parse_args(argv)
    rates = load_rates(RATES)
    rows = []
    agree_all = True
    for name in ("seed-a800", "hpn-dual-tor"):
        fabric = preset(name)
        jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
        naive, fast, agree = compare_methods(fabric, jobs, rates, args.naive_runs, 100)
        agree_all &= agree
        rows.append([name, secs(naive), secs(fast), f"{naive / fast:,.0f}x",
                     "yes" if agree else "NO"])  # fmt: skip
    print(table(["fabric", "naive / run", "reliability / run", "ratio", "same runs"], rows))
    start = time.perf_counter()
    for name in ("seed-a800", "hpn-dual-tor"):
        fabric = preset(name)
        jobs = tuple(resolve_jobs([JobSpec(per_su=True)], fabric))
        run_study(Study(fabric, jobs, rates, 12.0, args.runs, 0), workers=args.workers)
    took = time.perf_counter() - start
    print()
    print(f"seed-a800 --compare hpn-dual-tor, {args.runs} runs, {args.workers} workers: "
          f"{secs(took)} (target under 60 s: {verdict(took < 60)})")  # fmt: skip
    return 0 if agree_all else 1


if __name__ == "__main__":
    sys.exit(main())
