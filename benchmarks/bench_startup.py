"""Start-up of the ``harness`` command, against ``python -c pass`` in the same run.

    python benchmarks/bench_startup.py            # every command line below, 7 runs each
    python benchmarks/bench_startup.py --runs 3   # quicker

Each command line runs as a fresh process (``python -m harness ...``, the interpreter of
this venv); the table gives the median wall time, its ratio to a bare interpreter start
measured in the same run, and the issue's targets (issue 26): ``--version``, ``--help`` and
the completion script under 0.2 s, and no command's own ``--help`` (all its start-up before
its own work) over 0.25 s.  Two whole ``harness risk`` processes are timed as well (target
of the risk issue: the 20-job change under 2 s).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from benchutil import median
from benchutil import secs
from benchutil import table
from benchutil import verdict

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "benchmarks" / "jobs"
COMMANDS = ("run", "validate", "show", "risk", "sweep", "reliability", "audit", "export", "emulate",
            "clean")  # fmt: skip

#: (label, arguments after ``python``, target seconds or None)
LINES: list[tuple[str, list[str], float | None]] = [
    ("python -c pass", ["-c", "pass"], None),
    ("harness --version", ["-m", "harness", "--version"], 0.2),
    ("harness --help", ["-m", "harness", "--help"], 0.2),
    ("harness --print-completion bash", ["-m", "harness", "--print-completion", "bash"], 0.2),
    *((f"harness {c} --help", ["-m", "harness", c, "--help"], 0.25) for c in COMMANDS),
]
RISK = [
    (f"harness risk seed-a800 ({n} jobs)",
     ["-m", "harness", "risk", "seed-a800", "--change", "drain spine-03",
      "--jobs", str(JOBS / f"seed-a800-{n}jobs.yaml")], target)
    for n, target in (("20", 2.0), ("6", None))
]  # fmt: skip


def wall(args: list[str]) -> float:
    """Wall seconds of one process ``python ARGS`` (its output discarded)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], stdout=subprocess.DEVNULL, check=False, cwd=ROOT)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command line")
    parser.add_argument("--skip-risk", action="store_true", help="no whole risk processes")
    args = parser.parse_args(argv)
    lines = LINES + ([] if args.skip_risk else RISK)
    # Interleaved rounds, so load that comes and goes hits every line alike.
    times: dict[str, list[float]] = {label: [] for label, _, _ in lines}
    for _ in range(args.runs):
        for label, cmd, _ in lines:
            times[label].append(wall(cmd))
    bare = median(times["python -c pass"])
    rows = []
    for label, _, target in lines:
        t = median(times[label])
        ok = None if target is None else t < target
        rows.append([label, secs(t), f"{t / bare:,.1f}x", secs(target), verdict(ok)])
    print(table(["command line", "median", "vs python -c pass", "target", ""], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
