"""Benchmark: build every preset, and check every invariant of a damaged fabric.

Run from the repository root::

    python benchmarks/bench_model.py                 # everything (about 11 min)
    python benchmarks/bench_model.py --skip-big      # without clos-100k
    python benchmarks/bench_model.py --one check:seed-a800:warm   # one measurement

Every measurement runs in a fresh subprocess (``--one NAME``) so that peaks
do not mix, twice: once untimed-by-tracing for the wall time and the peak RSS
delta, once under ``tracemalloc`` for the peak of Python allocations.

Measurements:

* ``build:PRESET``: ``harness.fabric.preset(PRESET)`` for every preset.
* ``check:FABRIC:cold|warm``: a **full check** of a damaged fabric: per-SU
  jobs, faults "drain all spines but one" and "kill one leaf", then every
  observation of ``harness.observations.registry.OBSERVATIONS`` (both with and without PXN
  where it takes ``pxn``; ``path_class``/``hops`` for one GPU pair across the
  fabric; checkpoints with a ``CheckpointSpec``).  A full check includes the
  healthy reference: ``warm`` precomputes it once as the runner does
  (``Analysis(..., healthy=h)`` with ``h`` already evaluated), ``cold``
  computes it inside every check.  ``clos-100k`` uses the literal fault
  (3,199 of 3,200 spines drained: the fabric falls apart into islands);
  ``clos-100k-pods`` drains all spines but one *in every pod*, which keeps
  the fabric connected, as the seed-a800 fault does.  The cold clos-100k
  child also times the build, for the "built and checked" target.
* ``scenarios``: ``harness run scenarios/`` in-process (load + run every
  scenario on the model backend), when the directory has scenarios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchutil import measure
from benchutil import median
from benchutil import mib
from benchutil import secs
from benchutil import table
from benchutil import verdict

from harness.errors import ScenarioError
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.presets import PRESETS
from harness.fabric.presets import preset
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.observation import Context
from harness.observations.observation import ObservationDef
from harness.observations.registry import OBSERVATIONS
from harness.observations.registry import observe

ROOT = Path(__file__).resolve().parent.parent
GIB = 1024**3
BIG = "clos-100k"
CHECKPOINT = CheckpointSpec(size_gb=2000.0, sharded=True, interval_s=1800.0)

# targets from the issue
TARGET_SEED_CHECK_S = 0.1  # "well under 100 ms"
TARGET_BIG_S = 30.0  # clos-100k built AND checked
TARGET_BIG_BYTES = 4 * GIB


# -- the full check ----------------------------------------------------------------------
def representative_faults(fabric: Fabric, *, per_pod: bool = False) -> list[Fault]:
    """Drain all spines but one (fabric-wide, or in every pod), and kill the first leaf."""
    if per_pod:
        drained = []
        for pod in sorted(set(fabric.pod[fabric.spines].tolist())):
            spines = sorted(fabric.ids[i] for i in fabric.spines.tolist()
                            if int(fabric.pod[i]) == pod)  # fmt: skip
            drained.extend(spines[1:])
        drain = Fault.parse({"drain": drained})
    else:
        drain = Fault.parse({"drain": {"tier": "spine", "all-but": 1}})
    leaf = fabric.ids[int(fabric.leaves[0])]
    return [drain, Fault.parse({"kill": leaf})]


def damaged_state(fabric: Fabric, faults: Sequence[Fault]) -> FaultState:
    state = FaultState.healthy(fabric)
    for fault in faults:
        state = state.inject(fault, fabric)
    return state


def gpu_pair(fabric: Fabric) -> list[str]:
    """A GPU of the first server and one of the last: the longest path of the fabric."""
    first, last = int(fabric.servers[0]), int(fabric.servers[-1])
    return [fabric.ids[int(fabric.parts_of(s, Kind.GPU)[0])] for s in (first, last)]


def bond_member(fabric: Fabric) -> tuple[str, str] | None:
    """The first server with a storage bond, and its first member (None: no storage NICs)."""
    for s in fabric.servers.tolist():
        nics = fabric.parts_of(int(s), Kind.STORAGE_NIC)
        if len(nics):
            return fabric.ids[int(s)], fabric.ids[int(nics[0])]
    return None


def observation_args(
    d: ObservationDef, pair: Sequence[str], link: str = "", bond: tuple[str, str] | None = None
) -> list[dict[str, Any]]:
    """The argument sets one observation is computed with (empty: it does not apply)."""
    base: dict[str, Any] = {}
    if "member" in d.args:
        if bond is None:
            return []  # no storage bond to look at
        base["node"], base["member"] = bond
    if "between" in d.args:
        base["between"] = list(pair)
    if "link" in d.args and link:
        base["link"] = link
    if "from" in d.args and link:
        base["from"] = link.split(":", maxsplit=1)[0]  # link_loss: from the first end
    if "pods" in d.args:
        base["pods"] = [1, 2]  # the first two pods (a two-tier fabric answers n/a)
    if any(k not in base for k in d.required):
        return []  # needs an argument this benchmark cannot make up
    if "pxn" in d.args:
        return [base, {**base, "pxn": True}]
    return [base]


def check_analysis(a: Analysis, ctx: Context | None = None) -> dict[str, Any]:
    """Every observation that applies, computed on ``a``: name -> value."""
    ctx = ctx or Context(CHECKPOINT)
    pair = gpu_pair(a.fabric)
    link = a.fabric.link_ids[int(a.fabric.links_of_kind(LinkKind.LEAF_SPINE)[0])]
    out: dict[str, Any] = {}
    for name, d in OBSERVATIONS.items():
        for args in observation_args(d, pair, link, bond_member(a.fabric)):
            key = name + ("[pxn]" if args.get("pxn") else "")
            try:
                out[key] = observe(name, a, ctx, args).value
            except ScenarioError as err:  # e.g. bisection of a one-SU fabric
                out[key] = f"n/a: {err}"
    return out


def full_check(
    fabric: Fabric,
    jobs: Sequence[Job],
    state: FaultState,
    *,
    healthy: Analysis | None = None,
    ctx: Context | None = None,
) -> dict[str, Any]:
    """A full check: a fresh Analysis of ``state`` and every observation on it."""
    a = Analysis(fabric, Observation.from_state(state), jobs, healthy=healthy)
    return check_analysis(a, ctx)


def healthy_reference(fabric: Fabric, jobs: Sequence[Job]) -> Analysis:
    """The healthy Analysis, evaluated once (what the runner keeps for a whole scenario)."""
    h = Analysis(fabric, Observation.from_state(FaultState.healthy(fabric)), jobs)
    check_analysis(h)  # fills its caches: bisection, flows, verdicts, components...
    return h


# -- one measurement (runs in a child process) ---------------------------------------------
def run_one(name: str, repeats: int, trace: bool) -> dict[str, Any]:
    """Perform one measurement and return its numbers (JSON-able)."""
    kind, _, rest = name.partition(":")
    if kind == "build":
        return _run_build(rest, repeats, trace)
    if kind == "check":
        fab, _, mode = rest.partition(":")
        return _run_check(fab, mode, repeats, trace)
    if kind == "scenarios":
        return _run_scenarios(trace)
    msg = f"unknown measurement {name!r}"
    raise SystemExit(msg)


def _run_build(name: str, repeats: int, trace: bool) -> dict[str, Any]:
    times = []
    with measure(trace=trace) as m:
        for _ in range(repeats):
            start = time.perf_counter()
            f = preset(name)
            times.append(time.perf_counter() - start)
            s = f.summary()
            del f
    note = f"{s['elements']:,} elements, {s['links']:,} links"
    return {"times": times, "traced_peak": m.traced_peak, "rss_delta": m.rss_delta,
            "peak_rss": m.peak_rss, "note": note}  # fmt: skip


def _run_check(fab: str, mode: str, repeats: int, trace: bool) -> dict[str, Any]:
    per_pod = fab.endswith("-pods")
    name = fab.removesuffix("-pods")
    start = time.perf_counter()
    fabric = preset(name)
    build_s = time.perf_counter() - start
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    state = damaged_state(fabric, representative_faults(fabric, per_pod=per_pod))
    _ = state.element_up, state.link_capacity
    healthy = None
    healthy_s = 0.0
    if mode == "warm":
        start = time.perf_counter()
        healthy = healthy_reference(fabric, jobs)
        healthy_s = time.perf_counter() - start
    elif mode != "cold":
        msg = f"check mode is cold or warm, not {mode!r}"
        raise SystemExit(msg)
    times = []
    values: dict[str, Any] = {}
    with measure(trace=trace) as m:
        for _ in range(repeats):
            start = time.perf_counter()
            values = full_check(fabric, jobs, state, healthy=healthy)
            times.append(time.perf_counter() - start)
    shown = {"pairs(pxn)": "gpu_pairs_disconnected[pxn]", "islands": "islands",
             "lost": "jobs_lost", "uplink": "leaf_uplink_ratio", "bisection": "bisection_ratio",
             "path(pxn)": "path_class[pxn]"}  # fmt: skip
    note = f"{len(values)} obs: " + ", ".join(
        f"{short}={_short(values[k])}" for short, k in shown.items() if k in values
    )
    return {"times": times, "traced_peak": m.traced_peak, "rss_delta": m.rss_delta,
            "peak_rss": m.peak_rss, "build_s": build_s, "healthy_s": healthy_s,
            "note": note, "observations": len(values)}  # fmt: skip


def _short(v: Any) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _run_scenarios(trace: bool) -> dict[str, Any]:
    try:
        from harness.run.scenario import run_scenario
        from harness.scenario.discover import discover
        from harness.scenario.load import load_file
    except ImportError as err:
        return {"skipped": f"no scenario loader ({err})"}
    files = discover([ROOT / "scenarios"]) if (ROOT / "scenarios").is_dir() else []
    if not files:
        return {"skipped": "no scenarios under scenarios/"}
    status: dict[str, int] = {}
    with measure(trace=trace) as m:
        start = time.perf_counter()
        for path in files:
            try:
                scenarios = load_file(path)
            except ScenarioError:
                status["bad file"] = status.get("bad file", 0) + 1
                continue
            for sc in scenarios:
                if "model" not in sc.backends:
                    continue
                try:
                    st = run_scenario(sc, "model").status
                except ScenarioError:
                    st = "error"
                status[st] = status.get(st, 0) + 1
        seconds = time.perf_counter() - start
    note = f"{len(files)} files: " + ", ".join(f"{v} {k}" for k, v in sorted(status.items()))
    return {"times": [seconds], "traced_peak": m.traced_peak, "rss_delta": m.rss_delta,
            "peak_rss": m.peak_rss, "note": note}  # fmt: skip


# -- the driver ------------------------------------------------------------------------------
@dataclass
class Row:
    name: str
    result: dict[str, Any]
    traced: dict[str, Any] | None


def child(name: str, repeats: int, trace: bool) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter and read its RESULT line."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", name, "--repeats", str(repeats)]
    if trace:
        cmd.append("--trace")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            out: dict[str, Any] = json.loads(line[len("RESULT ") :])
            return out
    return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}


def plan(args: argparse.Namespace) -> list[tuple[str, int]]:
    """(measurement, repeats) in the order they run."""
    out = []
    for p in PRESETS:
        if p == BIG and args.skip_big:
            continue
        out.append((f"build:{p}", args.big_repeats if p == BIG else args.build_repeats))
    for mode in ("warm", "cold"):
        out.append((f"check:seed-a800:{mode}", args.repeats))
    if not args.skip_big:
        for fab in (BIG, f"{BIG}-pods"):
            for mode in ("warm", "cold"):
                out.append((f"check:{fab}:{mode}", args.big_repeats))
    if not args.skip_scenarios:
        out.append(("scenarios", 1))
    return out


def _targets(name: str, t: float) -> tuple[str, bool | None]:
    if name.startswith("check:seed-a800"):
        return "well under 100 ms", t < TARGET_SEED_CHECK_S
    return "", None


def report(rows: Sequence[Row]) -> tuple[str, list[tuple[str, str, str, str]]]:
    body = []
    summary: list[tuple[str, str, str, str]] = []
    for row in rows:
        r = row.result
        if "skipped" in r or "error" in r:
            body.append((row.name, "-", "-", "-", "-", "-", "-",
                         r.get("skipped") or f"ERROR {r.get('error')}"))  # fmt: skip
            continue
        times = r["times"]
        t = median(times)
        traced = row.traced.get("traced_peak") if row.traced else None
        target, ok = _targets(row.name, t)
        note = r.get("note", "")
        if r.get("healthy_s"):
            note = f"healthy ref. took {secs(r['healthy_s'])}; " + note
        body.append((row.name, str(len(times)), secs(t), secs(min(times)), mib(traced),
                     mib(r["rss_delta"]), mib(r["peak_rss"]), note))  # fmt: skip
        if ok is not None:
            summary.append((f"full check {row.name.split(':', 1)[1]}", secs(t), target,
                            verdict(ok)))  # fmt: skip
        if row.name.startswith(f"check:{BIG}") and row.name.endswith(":cold"):
            total = r["build_s"] + times[0]
            peak = r["peak_rss"]
            fab = row.name.split(":")[1]
            summary.append((f"{fab}: build + first cold check", f"{total:.2f} s "
                            f"({r['build_s']:.2f} + {times[0]:.2f})", "< 30 s",
                            verdict(total < TARGET_BIG_S)))  # fmt: skip
            summary.append((f"{fab}: process peak RSS (build + checks)", f"{mib(peak)} MiB",
                            "< 4,096 MiB", verdict(peak < TARGET_BIG_BYTES)))  # fmt: skip
    headers = ["measurement", "n", "median", "min", "tracemalloc peak MiB",
               "peak RSS delta MiB", "process peak RSS MiB", "notes"]  # fmt: skip
    return table(headers, body, left=(0, 7)), summary


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--one", metavar="NAME", help="run one measurement here and print RESULT")
    p.add_argument("--repeats", type=int, default=20, help="repeats of the seed-a800 checks")
    p.add_argument("--build-repeats", type=int, default=5, help="repeats of the small builds")
    p.add_argument("--big-repeats", type=int, default=2,
                   help="repeats of the clos-100k build and checks (1-3)")  # fmt: skip
    p.add_argument("--trace", action="store_true", help="with --one: under tracemalloc")
    p.add_argument("--no-trace", action="store_true", help="skip the tracemalloc runs")
    p.add_argument("--skip-big", action="store_true", help="skip clos-100k")
    p.add_argument("--skip-scenarios", action="store_true")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.one:
        print("RESULT " + json.dumps(run_one(args.one, args.repeats, args.trace)))
        return 0
    import numpy as np

    print(f"bench_model  {time.strftime('%Y-%m-%d %H:%M:%S')}  python {sys.version.split()[0]}  "
          f"numpy {np.__version__}; one fresh subprocess per measurement (and one more under "
          f"tracemalloc, 1 repeat)")  # fmt: skip
    rows = []
    for name, repeats in plan(args):
        print(f"  running {name} ({repeats} repeat(s)) ...", flush=True)
        result = child(name, repeats, trace=False)
        traced = None
        if not args.no_trace and "times" in result:
            traced = child(name, 1, trace=True)
        rows.append(Row(name, result, traced))
    body, summary = report(rows)
    print()
    print(body)
    print()
    print("== targets ==")
    print(table(["what", "measured", "target", "verdict"], summary))
    errors = [r.name for r in rows if "error" in r.result]
    if errors:
        print(f"\nERROR in: {', '.join(errors)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
