"""Benchmark: ``harness risk`` and ``harness sweep`` with real jobs whose flows cross SUs.

Run from the repository root::

    python benchmarks/bench_flows.py                       # about 3 min
    python benchmarks/bench_flows.py --peer-sample 60 --skip-processes   # a quick look

Real training jobs span SUs, so their flows cross leaves and share the
spines: every case that moves a switch, a leaf-spine cable or a job's NIC
changes what the others get.  The jobs files are ``benchmarks/jobs/``
(6 and 20 jobs on seed-a800, every one crossing SUs).  In one process and
one run (the ratios compare like with like on a noisy machine):

1. per jobs file, forwarding model and base state (healthy, and after
   ``drain spine-05``, the two states ``harness risk`` judges its N+1 margin
   in), every single failure of the N+1 margin (switches, cables, optics,
   NICs: 5,660 cases) by the sweep's evaluator (cold: its one pass
   included), next to the **full analysis per case**
   (``CaseEvaluator.evaluate_exact``, what every such case cost before the
   flows it moves were recomputed locally) on a seeded sample, extrapolated
   to all cases; the sampled cases must EQUAL the full analysis (the bus
   bandwidth compared with ``==``), else exit status 1;
2. whole ``harness`` processes as a user runs them (wall and CPU of the
   child): ``harness risk seed-a800 --change "drain spine-05" --jobs FILE``
   (with the N+1 margin, and with ``--margin none``) and ``harness sweep
   seed-a800 --jobs FILE``, next to ``harness --help`` (start-up alone);
   target under 2 s each.

A final table lists every target with PASS/MISS.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sweep import run_process
from benchutil import secs
from benchutil import table
from benchutil import verdict

from harness.fabric import preset
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.routing import Forwarding
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.faults.state_file import load_jobs
from harness.planning.sweep import CaseEvaluator
from harness.planning.sweep import CaseResult
from harness.planning.sweep.cases import single_failures
from harness.planning.sweep.categories import DEFAULT_MARGIN_CATEGORIES

JOBS = Path(__file__).resolve().parent / "jobs"
JOB_FILES = ("seed-a800-6jobs.yaml", "seed-a800-20jobs.yaml")
CHANGE = "drain spine-05"
TARGET_PROCESS_S = 2.0


@dataclass(frozen=True)
class Row:
    """One case of part 1: the fast evaluator and the full analysis per case."""

    what: str
    cases: int
    fast_s: float  # CPU seconds, all cases
    exact_s: float  # CPU seconds, extrapolated from the sample
    sampled: int
    differ: int


def same(a: CaseResult, b: CaseResult) -> bool:
    """Two results of one case agree: counts equal, bus bandwidth EQUAL, the rest to 1e-12."""
    return (
        a.pairs_disconnected == b.pairs_disconnected
        and a.pairs_disconnected_direct == b.pairs_disconnected_direct
        and a.jobs_lost == b.jobs_lost
        and a.min_busbw_ratio == b.min_busbw_ratio
        and abs(a.leaf_uplink_ratio - b.leaf_uplink_ratio) <= 1e-12
        and abs(a.storage_ratio - b.storage_ratio) <= 1e-12
    )


def compare(
    fabric: Fabric,
    jobs_file: Path,
    state: FaultState,
    forwarding: Forwarding,
    *,
    sample: int,
    seed: int,
) -> Row:
    """Part 1 for one jobs file, base state and forwarding model."""
    jobs = resolve_jobs(load_jobs(str(jobs_file)), fabric)
    singles = single_failures(fabric, DEFAULT_MARGIN_CATEGORIES)
    start = time.process_time()  # CPU: the machine is shared, wall time is what others leave
    ev = CaseEvaluator(fabric, jobs, state, routing=Routing.stating(forwarding=forwarding))
    fast = ev.evaluate_singles(singles)
    fast_s = time.process_time() - start
    picked = random.Random(seed).sample(range(len(singles)), min(sample, len(singles)))
    start = time.process_time()
    exact = [ev.evaluate_exact([singles[k]]) for k in picked]
    per = (time.process_time() - start) / max(len(picked), 1)
    differ = sum(1 for k, e in zip(picked, exact, strict=True) if not same(fast[k], e))
    where = "healthy" if state.is_healthy else f"after {CHANGE}"
    what = f"{jobs_file.name}, {forwarding}, {where}"
    return Row(what, len(singles), fast_s, per * len(singles), len(picked), differ)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--peer-sample", type=int, default=150, help="cases timed by the full way")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-processes", action="store_true")
    p.add_argument("--ecmp", action="store_true", help="also under ecmp (16 hash draws)")
    args = p.parse_args(argv)
    fabric = preset("seed-a800")
    after = FaultState.healthy(fabric).inject(Fault.parse({"drain": "spine-05"}))
    rows: list[Row] = []
    models: tuple[Forwarding, ...] = ("static", "adaptive") + (("ecmp",) if args.ecmp else ())
    print("== every N+1 case on seed-a800 with cross-SU jobs: fast vs the full analysis ==")
    for name in JOB_FILES:
        for forwarding in models:
            for state in (FaultState.healthy(fabric), after):
                row = compare(fabric, JOBS / name, state, forwarding, sample=args.peer_sample,
                              seed=args.seed)  # fmt: skip
                rows.append(row)
                print(f"{row.what}: {secs(row.fast_s)} for {row.cases:,} cases", flush=True)
    print()
    print(table(
        ["case", "cases", "fast, all cases (CPU)", "full analysis (CPU, extrapolated)", "ratio",
         "sampled", "differ"],
        [(r.what, f"{r.cases:,}", secs(r.fast_s), secs(r.exact_s),
          f"{r.exact_s / r.fast_s:,.0f}x", r.sampled, r.differ) for r in rows],
    ))  # fmt: skip
    print()
    targets: list[tuple[str, str, str, bool | None]] = []
    if not args.skip_processes:
        print("== whole harness processes (wall and CPU of the child) ==")
        wall, cpu, _ = run_process(["--help"])
        targets.append(("harness --help (start-up alone)", f"{secs(wall)} ({secs(cpu)} CPU)",
                        "-", None))  # fmt: skip
        for name in JOB_FILES:
            path = str(JOBS / name)
            runs = [
                (f"harness risk seed-a800 --change '{CHANGE}' --jobs {name}",
                 ["risk", "seed-a800", "--change", CHANGE, "--jobs", path]),
                (f"harness risk ... --jobs {name} --margin none",
                 ["risk", "seed-a800", "--change", CHANGE, "--jobs", path, "--margin", "none"]),
                (f"harness sweep seed-a800 --jobs {name}", ["sweep", "seed-a800", "--jobs", path]),
            ]  # fmt: skip
            for text, cmd in runs:
                wall, cpu, rc = run_process(cmd)
                print(f"{text}: {secs(wall)} wall, {secs(cpu)} CPU (exit {rc})", flush=True)
                goal = f"< {TARGET_PROCESS_S:.0f} s"
                targets.append((text, f"{secs(wall)} ({secs(cpu)} CPU)", goal,
                                wall < TARGET_PROCESS_S))  # fmt: skip
        print()
    agree = all(r.differ == 0 for r in rows)
    targets.append(("sampled cases equal the full analysis",
                    f"{sum(r.differ for r in rows)} differ of {sum(r.sampled for r in rows)}",
                    "0", agree))  # fmt: skip
    print(table(["target", "measured", "goal", ""],
                [(a, b, c, verdict(d)) for a, b, c, d in targets]))  # fmt: skip
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
