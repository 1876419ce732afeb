"""Benchmark: ``harness sweep`` against the naive method, and ``harness risk``.

Run from the repository root::

    python benchmarks/bench_sweep.py                  # everything (about 3 min)
    python benchmarks/bench_sweep.py --naive-sample 300 --skip-big   # a quick look

What it measures, in one process and one run (so the ratios compare like
with like on a noisy machine):

1. seed-a800, per-SU jobs, every single failure of a switch, a compute cable
   or a NIC (2,460 cases):

   * the **naive method**: the compute fabric (NICs, switches, compute
     cables) as a ``networkx.MultiGraph`` made once by ``Fabric.to_networkx``;
     per case, copy the graph, remove the element (a switch or NIC node, or a
     cable edge by its key), recompute the connected components from scratch
     and judge every job and every server pair from scratch;
   * ``harness.planning.sweep.sweep(...)`` (cold: its one linear pass included);

   and checks that both give the same counts (disconnecting cases, job-losing
   cases) and the same answer case by case; exit status 1 when they differ.
2. clos-100k, per-SU jobs, the same categories (417,600 cases): wall time and
   peak memory of ``sweep``; the naive method on a few seeded random cases,
   extrapolated (it would take weeks), and compared case by case too.
3. ``harness.planning.risk.assess`` on seed-a800: change ``drain spine-05,spine-06``
   with the full N+1 margin (switches, cables, optics and NICs, after and
   before the change); then the same with a fault already present
   (``kill su02/leaf-r1``), where every case is judged against that state.

4. whole ``harness`` processes, as a user runs them (interpreter start and
   imports included; wall and CPU time of the child): ``harness sweep
   hpn-dual-tor``, ``harness risk hpn-dual-tor`` with its N+1 margin,
   ``harness sweep seed-a800 --bisection --state "kill su02/leaf-r1"``,
   ``harness sweep clos-100k``, next to ``harness --help`` (start-up alone).
   The peer of each in the same run is the full analysis per case
   (``CaseEvaluator.evaluate_exact``, what every dual-ToR case cost before it
   had a fast path) on a seeded sample, extrapolated to all cases; the
   sampled cases are compared with the fast answers.

A final table lists every target with PASS/MISS.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchutil import Measured
from benchutil import measure
from benchutil import median
from benchutil import mib
from benchutil import secs
from benchutil import table
from benchutil import verdict

from harness.fabric import preset
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.planning.sweep import SweepResult
from harness.planning.sweep import sweep
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure

SWITCH_KINDS = frozenset({"leaf", "spine", "core"})
COMPUTE_KINDS = SWITCH_KINDS | {"nic"}
CATEGORIES = ("switches", "cables", "nics")
GIB = 1024**3

# targets from the issue
TARGET_RATIO = 1000.0  # issue 10: the fast paths keep >= 1,000x under the new semantics
TARGET_BIG_S = 60.0
AIM_BIG_S = 10.0
TARGET_BIG_BYTES = 6 * GIB
TARGET_RISK_S = 2.0
TARGET_PROCESS_S = {"hpn-sweep": 2.0, "hpn-risk": 2.0, "seed-bisection": 10.0, "clos-sweep": 10.0}
HPN_CHANGE = "drain plane1/spine-01"
VALLEY = (  # su01/leaf-r0 keeps spines 1-10, su02/leaf-r0 spines 11-20: no spine in common
    ("su01/leaf-r0", "spine-1[1-9]"), ("su01/leaf-r0", "spine-20"),
    ("su02/leaf-r0", "spine-0[1-9]"), ("su02/leaf-r0", "spine-10"),
)  # fmt: skip


# -- the naive method --------------------------------------------------------------------
@dataclass(frozen=True)
class NaiveCase:
    """One single failure: a node (switch or NIC) or a cable edge ``(u, v, key)``."""

    label: str  # the element id or the cable id (as the sweep labels its cases)
    category: str  # switches | cables | nics
    node: str | None = None
    edge: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class NaiveOutcome:
    label: str
    pairs_disconnected: int  # GPU pairs that cannot talk, PXN allowed
    jobs_lost: tuple[str, ...]


@dataclass(frozen=True)
class NaiveJob:
    name: str
    servers: tuple[str, ...]
    failover: str


@dataclass
class NaiveModel:
    """The compute fabric as a networkx graph, plus the server -> NIC map."""

    graph: nx.MultiGraph
    server_gpus: dict[str, int]  # server id -> GPUs
    server_nics: dict[str, tuple[str, ...]]  # server id -> its rail NIC ids
    rail_nic: dict[tuple[str, int], str]  # (server id, rail) -> NIC id
    nic_ports: dict[str, int]  # NIC id -> ports it has
    nic_lag: dict[str, bool]  # NIC id -> ports bonded in hardware
    rails: int
    jobs: tuple[NaiveJob, ...]


def build_naive_model(fabric: Fabric, jobs: Sequence[Job]) -> NaiveModel:
    """The graph (``Fabric.to_networkx``, compute part only) and what maps servers to NICs."""
    g = fabric.to_networkx(cables_only=True)
    g.remove_nodes_from([n for n, k in g.nodes(data="kind") if k not in COMPUTE_KINDS])
    ids = fabric.ids
    server_gpus: dict[str, int] = defaultdict(int)
    for srv in fabric.parent[fabric.gpus].tolist():
        server_gpus[ids[srv]] += 1
    server_nics: dict[str, list[str]] = defaultdict(list)
    rail_nic: dict[tuple[str, int], str] = {}
    nic_ports: dict[str, int] = {}
    nic_lag: dict[str, bool] = {}
    for n, srv, rail in zip(fabric.nics.tolist(), fabric.parent[fabric.nics].tolist(),
                            fabric.rail[fabric.nics].tolist(), strict=True):  # fmt: skip
        spec = fabric.node_spec(n)
        server_nics[ids[srv]].append(ids[n])
        rail_nic[(ids[srv], int(rail))] = ids[n]
        nic_ports[ids[n]] = spec.nic_ports
        nic_lag[ids[n]] = spec.nic_lag
    for srv in fabric.servers.tolist():
        server_nics.setdefault(ids[srv], [])
        server_gpus.setdefault(ids[srv], 0)
    naive_jobs = tuple(NaiveJob(j.name, tuple(ids[s] for s in j.servers), j.failover) for j in jobs)
    return NaiveModel(
        g, dict(server_gpus), {k: tuple(v) for k, v in server_nics.items()}, rail_nic,
        nic_ports, nic_lag, fabric.rails, naive_jobs,
    )  # fmt: skip


def naive_cases(model: NaiveModel, categories: Sequence[str] = CATEGORIES) -> list[NaiveCase]:
    """Every single failure of the categories, read off the graph."""
    g = model.graph
    out: list[NaiveCase] = []
    for cat in categories:
        if cat == "switches":
            out.extend(NaiveCase(n, cat, node=n) for n, k in g.nodes(data="kind")
                       if k in SWITCH_KINDS)  # fmt: skip
        elif cat == "cables":
            out.extend(NaiveCase(k, cat, edge=(u, v, k)) for u, v, k in g.edges(keys=True))
        elif cat == "nics":
            out.extend(NaiveCase(n, cat, node=n) for n, k in g.nodes(data="kind") if k == "nic")
        else:
            msg = f"the naive method knows switches, cables and nics, not {cat!r}"
            raise ValueError(msg)
    return out


def naive_evaluate(model: NaiveModel, case: NaiveCase) -> NaiveOutcome:
    """Copy the graph, remove the failed thing, judge everything from scratch."""
    h = model.graph.copy()
    if case.node is not None:
        h.remove_node(case.node)
    elif case.edge is not None:
        u, v, key = case.edge
        h.remove_edge(u, v, key=key)
    return naive_judge(model, h, case.label)


def naive_judge(model: NaiveModel, h: nx.MultiGraph, label: str = "") -> NaiveOutcome:
    """Connectivity and job survival of a (damaged) compute graph, from scratch.

    Switches forward; servers and NICs do not (NCCL never routes through a
    host), so components are those of the switch subgraph and a NIC port
    reaches the component of its leaf.
    """
    kinds = h.nodes(data="kind")
    switches = [n for n, k in kinds if k in SWITCH_KINDS]
    comp: dict[str, int] = {}
    for i, members in enumerate(nx.connected_components(h.subgraph(switches))):
        for n in members:
            comp[n] = i
    ports: dict[str, dict[int, int]] = {}  # live NIC -> {port: component}
    for nic in model.nic_ports:
        if nic not in h:
            continue
        p: dict[int, int] = {}
        for leaf, edges in h.adj[nic].items():
            for data in edges.values():
                p[int(data["ports"][0])] = comp[leaf]  # the NIC is the cable's lower end
        ports[nic] = p
    return NaiveOutcome(label, _pairs_pxn(model, ports), _jobs_lost(model, ports))


def _pairs_pxn(model: NaiveModel, ports: dict[str, dict[int, int]]) -> int:
    """GPU pairs on different servers whose servers share no component (PXN allowed)."""
    total: dict[frozenset[int], int] = defaultdict(int)
    squares: dict[frozenset[int], int] = defaultdict(int)
    for srv, nics in model.server_nics.items():
        comps = frozenset(c for n in nics for c in ports.get(n, {}).values())
        n_gpus = model.server_gpus[srv]
        total[comps] += n_gpus
        squares[comps] += n_gpus * n_gpus
    keys = list(total)
    bad = 0
    for i, a in enumerate(keys):
        if not a:  # GPUs of different servers, all cut off
            bad += (total[a] * total[a] - squares[a]) // 2
        for b in keys[i + 1 :]:
            if not a & b:
                bad += total[a] * total[b]
    return bad


def _jobs_lost(model: NaiveModel, ports: dict[str, dict[int, int]]) -> tuple[str, ...]:
    lost = []
    for job in model.jobs:
        if len(job.servers) < 2:
            continue
        for rail in range(model.rails):
            nics = [model.rail_nic[(s, rail)] for s in job.servers if (s, rail) in model.rail_nic]
            if _rail_broken(model, job, nics, ports):
                lost.append(job.name)
                break
    return tuple(sorted(lost))


def _rail_broken(
    model: NaiveModel, job: NaiveJob, nics: Sequence[str], ports: dict[str, dict[int, int]]
) -> bool:
    """Can some NIC of the job on this rail not reach another one?"""
    if len(nics) < 2:
        return False
    strict_keys: set[tuple[tuple[int, int], ...]] = set()
    sigs: set[frozenset[int]] = set()
    for n in nics:
        p = ports.get(n)
        tolerant = model.nic_lag[n] or (job.failover == "port" and model.nic_ports[n] > 1)
        if not p or (not tolerant and len(p) < model.nic_ports[n]):
            return True  # NIC dead or a port (a needed one) down
        if not tolerant:
            strict_keys.add(tuple(sorted(p.items())))  # port p to port p: same plane
        sigs.add(frozenset(p.values()))
    if len(strict_keys) > 1:
        return True
    return any(not a & b for a, b in itertools.combinations(sigs, 2))


# -- the fast sweep and the comparison ---------------------------------------------------
def run_fast(fabric: Fabric, categories: Sequence[str] = CATEGORIES) -> SweepResult:
    """``harness.planning.sweep.sweep`` with per-SU jobs, cold (its one-pass cache emptied)."""
    from harness.planning.sweep import run as sweep_run

    cache = getattr(sweep_run, "_evaluator", None)
    if cache is not None and hasattr(cache, "cache_clear"):
        cache.cache_clear()
    return sweep(fabric, [JobSpec(per_su=True)], elements=list(categories), depth=1)


def fast_by_label(fabric: Fabric, result: SweepResult) -> dict[str, CaseResult]:
    return {c.label(fabric): c for c in result.cases}


@dataclass(frozen=True)
class Comparison:
    compared: int
    naive_disconnecting: int
    fast_disconnecting: int
    naive_job_losing: int
    fast_job_losing: int
    missing_in_fast: tuple[str, ...]  # naive cases the sweep did not enumerate
    extra_in_fast: tuple[str, ...]  # sweep cases the naive method did not enumerate
    mismatches: tuple[str, ...]  # per-case disagreements, described

    @property
    def counts_agree(self) -> bool:
        return (self.naive_disconnecting == self.fast_disconnecting
                and self.naive_job_losing == self.fast_job_losing)  # fmt: skip

    @property
    def agree(self) -> bool:
        return (self.counts_agree and not self.mismatches and not self.missing_in_fast
                and not self.extra_in_fast)  # fmt: skip


def compare(
    outcomes: Sequence[NaiveOutcome],
    fast: dict[str, CaseResult],
    *,
    whole: bool = True,
) -> Comparison:
    """Case by case; ``whole``: the naive outcomes cover every case (check both sets)."""
    seen = {o.label for o in outcomes}
    missing = tuple(o.label for o in outcomes if o.label not in fast)
    extra = tuple(sorted(set(fast) - seen)) if whole else ()
    mism = []
    nd = fd = nj = fj = 0
    for o in outcomes:
        c = fast.get(o.label)
        if c is None:
            continue
        nd += o.pairs_disconnected > 0
        fd += c.pairs_disconnected > 0
        nj += bool(o.jobs_lost)
        fj += bool(c.jobs_lost)
        if o.pairs_disconnected != c.pairs_disconnected or o.jobs_lost != tuple(c.jobs_lost):
            mism.append(
                f"{o.label}: naive pairs={o.pairs_disconnected} jobs={list(o.jobs_lost)}; "
                f"sweep pairs={c.pairs_disconnected} jobs={list(c.jobs_lost)} "
                f"({'exact' if c.exact else 'fast'} path)"
            )
    return Comparison(len(outcomes), nd, fd, nj, fj, missing, extra, tuple(mism))


def naive_run(
    model: NaiveModel, cases: Sequence[NaiveCase], sample: int, seed: int
) -> tuple[list[NaiveOutcome], float, int]:
    """Evaluate all cases, or a seeded random sample; (outcomes, seconds, cases run)."""
    chosen = list(cases)
    if 0 < sample < len(chosen):
        chosen = random.Random(seed).sample(chosen, sample)
    start = time.perf_counter()
    out = [naive_evaluate(model, c) for c in chosen]
    return out, time.perf_counter() - start, len(chosen)


def naive_stratified(
    model: NaiveModel, cases: Sequence[NaiveCase], per_category: int, seed: int
) -> tuple[list[NaiveOutcome], float, int, list[str]]:
    """A seeded sample of each category, timed case by case, extrapolated per category.

    Returns (outcomes, extrapolated seconds for all cases, cases run, one line per case).
    """
    rng = random.Random(seed)
    by_cat: dict[str, list[NaiveCase]] = defaultdict(list)
    for c in cases:
        by_cat[c.category].append(c)
    out: list[NaiveOutcome] = []
    lines: list[str] = []
    total = 0.0
    for cat, members in by_cat.items():
        chosen = rng.sample(members, min(per_category, len(members)))
        times = []
        for c in chosen:
            start = time.perf_counter()
            out.append(naive_evaluate(model, c))
            times.append(time.perf_counter() - start)
            lines.append(f"{cat:8s} {c.label}: {times[-1]:.2f} s")
        total += sum(times) / len(times) * len(members)
    return out, total, len(out), lines


def naive_breakdown(model: NaiveModel, cases: Sequence[NaiveCase]) -> tuple[float, float]:
    """Seconds per case of the graph copy alone, and of the rest (remove, components, judge)."""
    start = time.perf_counter()
    for _ in cases:
        model.graph.copy()
    copy = (time.perf_counter() - start) / max(len(cases), 1)
    start = time.perf_counter()
    for c in cases:
        naive_evaluate(model, c)
    whole = (time.perf_counter() - start) / max(len(cases), 1)
    return copy, max(whole - copy, 0.0)


# -- the benchmark ---------------------------------------------------------------------------
@dataclass
class Line:
    what: str
    got: str
    target: str
    ok: bool | None


def bench_seed(args: argparse.Namespace, lines: list[Line]) -> bool:
    print("== seed-a800: naive method vs harness sweep (per-SU jobs, depth 1, "
          "switches,cables,nics) ==")  # fmt: skip
    fabric = preset("seed-a800")
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    start = time.perf_counter()
    model = build_naive_model(fabric, jobs)
    t_graph = time.perf_counter() - start
    cases = naive_cases(model)
    print(f"naive: graph of {model.graph.number_of_nodes():,} nodes and "
          f"{model.graph.number_of_edges():,} edges built once in {secs(t_graph)} "
          f"(not counted); {len(cases):,} cases")  # fmt: skip
    fast_times = []
    result: SweepResult | None = None
    for _ in range(args.fast_repeats):
        start = time.perf_counter()
        result = run_fast(fabric)
        fast_times.append(time.perf_counter() - start)
    assert result is not None
    t_fast = median(fast_times)
    print(f"sweep: {len(result.cases):,} cases, {result.exact_cases} on the exact path; "
          f"median of {len(fast_times)} cold runs {secs(t_fast)} "
          f"(min {secs(min(fast_times))})")  # fmt: skip
    outcomes, t_naive_run, ran = naive_run(model, cases, args.naive_sample, args.seed)
    per_case = t_naive_run / max(ran, 1)
    sampled = ran < len(cases)
    t_naive = per_case * len(cases)
    if sampled:
        print(f"naive: {ran:,} of {len(cases):,} cases (seeded random sample, seed {args.seed}) "
              f"in {secs(t_naive_run)}, {per_case * 1000:.2f} ms/case -> EXTRAPOLATED to all "
              f"{len(cases):,} cases: {secs(t_naive)}")  # fmt: skip
    else:
        print(f"naive: all {len(cases):,} cases in {secs(t_naive)} ({per_case * 1000:.2f} ms/case)")
    cmp = compare(outcomes, fast_by_label(fabric, result), whole=not sampled)
    ratio = t_naive / t_fast if t_fast else float("inf")
    scope = f"on the {ran:,} sampled cases" if sampled else f"on all {ran:,} cases"
    print(f"counts {scope}: naive {cmp.naive_disconnecting:,} disconnecting, "
          f"{cmp.naive_job_losing:,} job-losing; sweep {cmp.fast_disconnecting:,} "
          f"disconnecting, {cmp.fast_job_losing:,} job-losing")  # fmt: skip
    if not sampled:
        print(f"sweep totals: {result.disconnecting:,} disconnecting, "
              f"{result.job_losing:,} job-losing (issue: 0 and 1,640)")  # fmt: skip
    _print_disagreements(cmp)
    print(f"ratio naive/sweep: {ratio:,.0f}x" + (" (naive extrapolated)" if sampled else ""))
    sub = random.Random(args.seed + 1).sample(cases, min(100, len(cases)))
    t_copy, t_rest = naive_breakdown(model, sub)
    print(f"naive per case, on 100 random cases: graph.copy() {t_copy * 1000:.2f} ms, "
          f"remove + components + judge {t_rest * 1000:.2f} ms "
          f"(without the copy the ratio would be about "
          f"{t_rest * len(cases) / t_fast:,.0f}x)")  # fmt: skip
    print()
    label = f"EXTRAPOLATED from {ran:,} cases" if sampled else "all cases"
    lines.append(Line("seed-a800 sweep, 2,460 cases (cold)", secs(t_fast), "-", None))
    lines.append(Line(f"seed-a800 naive ({label})", secs(t_naive), "-", None))
    lines.append(Line("seed-a800 ratio naive/sweep", f"{ratio:,.0f}x",
                      f">= {TARGET_RATIO:,.0f}x", ratio >= TARGET_RATIO))  # fmt: skip
    lines.append(Line(f"seed-a800 counts identical ({'sample' if sampled else 'all'})",
                      f"{cmp.naive_disconnecting}/{cmp.naive_job_losing} vs "
                      f"{cmp.fast_disconnecting}/{cmp.fast_job_losing}",
                      "identical", cmp.counts_agree))  # fmt: skip
    lines.append(Line("seed-a800 per-case agreement", f"{len(cmp.mismatches)} differ",
                      "0 differ", not cmp.mismatches and not cmp.missing_in_fast
                      and not cmp.extra_in_fast))  # fmt: skip
    if not sampled:
        lines.append(Line("seed-a800 totals (disconnecting/job-losing)",
                          f"{result.disconnecting}/{result.job_losing}", "0/1640",
                          (result.disconnecting, result.job_losing) == (0, 1640)))  # fmt: skip
    return cmp.agree


def _print_disagreements(cmp: Comparison) -> None:
    if cmp.missing_in_fast:
        print(f"!! {len(cmp.missing_in_fast)} naive cases the sweep did not enumerate: "
              f"{', '.join(cmp.missing_in_fast[:10])}")  # fmt: skip
    if cmp.extra_in_fast:
        print(f"!! {len(cmp.extra_in_fast)} sweep cases the naive method did not enumerate: "
              f"{', '.join(cmp.extra_in_fast[:10])}")  # fmt: skip
    if cmp.mismatches:
        print(f"!! {len(cmp.mismatches)} cases disagree:")
        for m in cmp.mismatches[:50]:
            print(f"   {m}")
    elif cmp.compared:
        print(f"per case: the naive method and the sweep agree on all {cmp.compared:,} "
              "compared cases (pairs disconnected with PXN, jobs lost)")  # fmt: skip


def bench_big(args: argparse.Namespace, lines: list[Line]) -> bool:
    print("== clos-100k: harness sweep (per-SU jobs, depth 1, switches,cables,nics) ==")
    start = time.perf_counter()
    fabric = preset("clos-100k")
    print(f"built clos-100k in {secs(time.perf_counter() - start)} (not counted)")
    m: Measured
    with measure(trace=args.trace_big) as m:
        result = run_fast(fabric)
    print(f"sweep: {len(result.cases):,} cases ({result.exact_cases} exact) in {secs(m.seconds)}; "
          f"{result.disconnecting:,} disconnecting, {result.job_losing:,} job-losing")  # fmt: skip
    hwm = "" if m.hwm_reset else " (peak RSS not resettable here: includes the fabric build)"
    traced = (f"tracemalloc peak {mib(m.traced_peak)} MiB (timed with tracing on), "
              if args.trace_big else "")  # fmt: skip
    print(f"memory: {traced}peak RSS delta {mib(m.rss_delta)} MiB, process peak RSS "
          f"{mib(m.peak_rss)} MiB{hwm}")  # fmt: skip
    t_fast = m.seconds
    fast = fast_by_label(fabric, result)
    n_cases = len(result.cases)
    del result
    ok = True
    if args.big_naive_sample > 0:
        jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
        start = time.perf_counter()
        model = build_naive_model(fabric, jobs)
        t_graph = time.perf_counter() - start
        cases = naive_cases(model)
        print(f"naive: graph of {model.graph.number_of_nodes():,} nodes and "
              f"{model.graph.number_of_edges():,} edges built once in {secs(t_graph)} "
              f"(not counted); {len(cases):,} cases")  # fmt: skip
        outcomes, t_naive, ran, detail = naive_stratified(
            model, cases, args.big_naive_sample, args.seed
        )
        print(f"naive: {ran} seeded random cases, {args.big_naive_sample} per category, "
              f"timed one by one:")  # fmt: skip
        for line in detail:
            print(f"   {line}")
        print(f"naive: EXTRAPOLATED to all {len(cases):,} cases (per-category mean x "
              f"category size): {t_naive:,.0f} s = {t_naive / 86400:.1f} days")  # fmt: skip
        cmp = compare(outcomes, fast, whole=False)
        _print_disagreements(cmp)
        ok = cmp.agree
        lines.append(Line(f"clos-100k naive (EXTRAPOLATED from {ran} cases)",
                          f"{t_naive / 86400:,.1f} days", "-", None))  # fmt: skip
        lines.append(Line("clos-100k ratio naive/sweep (extrapolated)",
                          f"{t_naive / t_fast:,.0f}x", "-", None))  # fmt: skip
        lines.append(Line(f"clos-100k per-case agreement ({ran} sampled cases)",
                          f"{len(cmp.mismatches)} differ", "0 differ", cmp.agree))  # fmt: skip
        if len(cases) != n_cases:
            print(f"!! the naive method enumerates {len(cases):,} cases, the sweep {n_cases:,}")
            ok = False
    print()
    lines.append(Line(f"clos-100k sweep, {n_cases:,} cases", secs(t_fast),
                      f"< {TARGET_BIG_S:.0f} s (aim {AIM_BIG_S:.0f} s)",
                      t_fast < TARGET_BIG_S))  # fmt: skip
    lines.append(Line("clos-100k sweep peak RSS delta", f"{mib(m.rss_delta)} MiB",
                      f"< {TARGET_BIG_BYTES // 1024**2:,} MiB",
                      m.rss_delta is not None and m.rss_delta < TARGET_BIG_BYTES))  # fmt: skip
    if m.traced_peak is not None:
        lines.append(Line("clos-100k sweep tracemalloc peak", f"{mib(m.traced_peak)} MiB",
                          f"< {TARGET_BIG_BYTES // 1024**2:,} MiB",
                          m.traced_peak < TARGET_BIG_BYTES))  # fmt: skip
    return ok


def bench_risk(args: argparse.Namespace, lines: list[Line]) -> None:
    from harness.observations.budget import parse_budget
    from harness.planning.risk import assess
    from harness.planning.risk import parse_change

    print("== harness risk: seed-a800, change 'drain spine-05,spine-06', full N+1 margin ==")
    fabric = preset("seed-a800")
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    change = parse_change("drain spine-05,spine-06")
    rules = parse_budget(args.budget)
    times = []
    report = None
    for _ in range(args.risk_repeats):
        start = time.perf_counter()
        report = assess(fabric, jobs, change, rules, require_margin=1, margin=True)
        times.append(time.perf_counter() - start)
    assert report is not None
    ma, mb = report.margin_after, report.margin_before
    assert ma is not None
    assert mb is not None
    t = median(times)
    print(f"budget {args.budget}: after the change {len(report.after.jobs_lost)} jobs lost, "
          f"bandwidth {report.after.bandwidth:.3f}, uplink {report.after.uplink:.3f}; "
          f"N+1: {len(ma.breaking):,} of {ma.cases:,} further single failures break the budget "
          f"after the change, {len(mb.breaking):,} of {mb.cases:,} before")  # fmt: skip
    print(f"assess: median of {len(times)} runs {secs(t)} (min {secs(min(times))})")
    print()
    lines.append(Line(f"risk assess seed-a800 (N+1: {ma.cases + mb.cases:,} cases)", secs(t),
                      f"< {TARGET_RISK_S:.0f} s", t < TARGET_RISK_S))  # fmt: skip
    times = []
    for _ in range(args.risk_repeats):
        start = time.perf_counter()
        report = assess(fabric, jobs, change, rules, state="kill su02/leaf-r1", require_margin=1)
        times.append(time.perf_counter() - start)
    t = median(times)
    print(f"with su02/leaf-r1 already down: {len(report.before.jobs_lost)} job lost before, "
          f"{len(report.added.jobs_lost)} added by the change; N+1 added "
          f"{len(report.margin_added):,}")  # fmt: skip
    print(f"assess: median of {len(times)} runs {secs(t)} (min {secs(min(times))})")
    print()
    lines.append(Line("risk assess seed-a800 with a state (N+1 vs that state)", secs(t),
                      f"< {TARGET_RISK_S:.0f} s", t < TARGET_RISK_S))  # fmt: skip


# -- whole processes -------------------------------------------------------------------
def run_process(argv: Sequence[str]) -> tuple[float, float, int]:
    """Run ``harness ARGV`` to the end: (wall seconds, CPU seconds of the child, exit code)."""
    exe = shutil.which("harness") or str(Path(sys.executable).with_name("harness"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([exe, *argv], capture_output=True, check=False,
                          env={**os.environ, "COLUMNS": "100"})  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        print(done.stderr.decode(errors="replace")[-2000:])
    return wall, cpu, done.returncode


def exact_peer(
    fabric: Fabric, evaluator: CaseEvaluator, singles: Sequence[Failure], sample: int, seed: int
) -> tuple[float, int, int]:
    """The full analysis per case on a seeded sample: (seconds extrapolated to all
    ``singles``, cases timed, cases whose fast answer differs)."""
    picked = random.Random(seed).sample(range(len(singles)), min(sample, len(singles)))
    fast = evaluator.evaluate_singles([singles[k] for k in picked])
    start = time.perf_counter()
    exact = [evaluator.evaluate_exact([singles[k]]) for k in picked]
    per = (time.perf_counter() - start) / max(len(picked), 1)
    differ = sum(1 for a, b in zip(fast, exact, strict=True) if not same_answer(a, b))
    return per * len(singles), len(picked), differ


def same_answer(a: CaseResult, b: CaseResult) -> bool:
    """Two results of one case agree on every measure (floats to 1e-9)."""
    for name in ("pairs_disconnected", "pairs_disconnected_direct", "jobs_lost"):
        if getattr(a, name) != getattr(b, name):
            return False
    for name in ("leaf_uplink_ratio", "min_busbw_ratio", "storage_ratio", "bisection_ratio"):
        x, y = getattr(a, name), getattr(b, name)
        if (x is None) != (y is None) or (
            x is not None and not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
        ):
            return False
    return True


def bench_processes(args: argparse.Namespace, lines: list[Line]) -> bool:
    from harness.faults.fault import Fault
    from harness.faults.fault import FaultState
    from harness.planning.sweep.cases import single_failures
    from harness.planning.sweep.categories import DEFAULT_MARGIN_CATEGORIES

    print("== whole harness processes (wall and CPU of the child), and the full analysis "
          "per case as the peer ==")  # fmt: skip
    wall, cpu, _ = run_process(["--help"])
    print(f"harness --help (start-up and imports): {secs(wall)} wall, {secs(cpu)} CPU")
    lines.append(Line("harness --help (start-up alone)", f"{secs(wall)} ({secs(cpu)} CPU)",
                      "-", None))  # fmt: skip
    ok = True
    hpn = preset("hpn-dual-tor")
    jobs = resolve_jobs([JobSpec(per_su=True)], hpn)
    runs: list[tuple[str, str, list[str], Fabric, FaultState, Sequence[str], bool]] = [
        ("hpn-sweep", "harness sweep hpn-dual-tor", ["sweep", "hpn-dual-tor"], hpn,
         FaultState.healthy(hpn), CATEGORIES, False),
        ("hpn-risk", f"harness risk hpn-dual-tor --change '{HPN_CHANGE}' --require-margin 1",
         ["risk", "hpn-dual-tor", "--change", HPN_CHANGE, "--require-margin", "1",
          "--budget", args.budget], hpn,
         FaultState.healthy(hpn).inject(Fault.parse({"drain": "plane1/spine-01"})),
         DEFAULT_MARGIN_CATEGORIES, False),
    ]  # fmt: skip
    seed = preset("seed-a800")
    runs.append(("seed-bisection",
                 "harness sweep seed-a800 --bisection --state 'kill su02/leaf-r1'",
                 ["sweep", "seed-a800", "--bisection", "--state", "kill su02/leaf-r1"], seed,
                 FaultState.healthy(seed).inject(Fault.parse({"kill": "su02/leaf-r1"})),
                 CATEGORIES, True))  # fmt: skip
    valley = Path(tempfile.mkdtemp(prefix="bench-sweep-")) / "valley.yaml"
    valley.write_text("".join(f"- cut: {{between: [{a}, '{b}']}}\n" for a, b in VALLEY))
    valley_state = FaultState.healthy(seed)
    for a, b in VALLEY:
        valley_state = valley_state.inject(Fault.parse({"cut": {"between": [a, b]}}))
    runs.append(("seed-bisection",
                 "harness sweep seed-a800 --bisection --state VALLEY (no spine above both "
                 "su01/leaf-r0 and su02/leaf-r0)",
                 ["sweep", "seed-a800", "--bisection", "--state", str(valley)], seed,
                 valley_state, CATEGORIES, True))  # fmt: skip
    if not args.skip_big:
        runs.append(("clos-sweep", "harness sweep clos-100k", ["sweep", "clos-100k"], None,
                     None, CATEGORIES, False))  # type: ignore[arg-type]  # fmt: skip
    for key, text, argv, fabric, state, cats, bisection in runs:
        wall, cpu, rc = run_process(argv)
        target = TARGET_PROCESS_S[key]
        print(f"{text}: {secs(wall)} wall, {secs(cpu)} CPU (exit {rc})")
        lines.append(Line(text, f"{secs(wall)} ({secs(cpu)} CPU)", f"< {target:.0f} s",
                          wall < target))  # fmt: skip
        if fabric is None or args.peer_sample <= 0:
            continue
        singles = single_failures(fabric, cats)
        ev = CaseEvaluator(fabric, resolve_jobs([JobSpec(per_su=True)], fabric), state,
                           bisection=bisection)  # fmt: skip
        n = len(singles) * (2 if key == "hpn-risk" else 1)  # risk: after and before the change
        t_exact, timed, differ = exact_peer(fabric, ev, singles, args.peer_sample, args.seed)
        t_exact *= n / len(singles)
        print(f"   peer: full analysis per case on {timed} seeded cases, EXTRAPOLATED to "
              f"{n:,} cases: {secs(t_exact)} ({t_exact / wall:,.0f}x the whole process); "
              f"{differ} of the {timed} differ from the fast path")  # fmt: skip
        lines.append(Line(f"   peer: full analysis per case (EXTRAPOLATED, {n:,} cases)",
                          f"{secs(t_exact)} = {t_exact / wall:,.0f}x", "-", None))  # fmt: skip
        lines.append(Line(f"   fast == full analysis ({timed} sampled cases)",
                          f"{differ} differ", "0 differ", differ == 0))  # fmt: skip
        ok = ok and differ == 0
    del jobs
    print()
    return ok


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--naive-sample", type=int, default=0, metavar="N",
                   help="seed-a800: time the naive method on N random cases and extrapolate "
                        "(default 0: all 2,460 cases, 1-2 minutes)")  # fmt: skip
    p.add_argument("--big-naive-sample", type=int, default=2, metavar="N",
                   help="clos-100k: naive cases per category (switches, cables, NICs) to "
                        "time and extrapolate (0: skip)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of the random samples")
    p.add_argument("--fast-repeats", type=int, default=3,
                   help="cold sweeps on seed-a800 (the median is reported)")  # fmt: skip
    p.add_argument("--risk-repeats", type=int, default=3)
    p.add_argument("--budget", default="jobs_lost=0,bandwidth>=0.9",
                   help="the risk budget (default: %(default)s)")  # fmt: skip
    p.add_argument("--skip-big", action="store_true", help="skip clos-100k")
    p.add_argument("--peer-sample", type=int, default=60, metavar="N",
                   help="whole processes: cases the full analysis times as the peer "
                        "(0: no peer)")  # fmt: skip
    p.add_argument("--skip-processes", action="store_true",
                   help="skip the whole-process timings")  # fmt: skip
    p.add_argument("--trace-big", action="store_true",
                   help="clos-100k: also take the tracemalloc peak (the sweep then runs "
                        "several times slower; its time is still reported)")  # fmt: skip
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"bench_sweep  {time.strftime('%Y-%m-%d %H:%M:%S')}  python {sys.version.split()[0]}  "
          f"numpy {np.__version__}  networkx {nx.__version__}")  # fmt: skip
    print()
    lines: list[Line] = []
    ok = bench_seed(args, lines)
    if not args.skip_big:
        ok = bench_big(args, lines) and ok
    bench_risk(args, lines)
    if not args.skip_processes:
        ok = bench_processes(args, lines) and ok
    print("== summary ==")
    print(table(["what", "measured", "target", "verdict"],
                [(x.what, x.got, x.target, verdict(x.ok)) for x in lines]))  # fmt: skip
    if not ok:
        print("\nFAIL: the naive method and the sweep disagree (see above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
