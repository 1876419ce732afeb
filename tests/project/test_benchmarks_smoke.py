"""The benchmarks' own code, on tiny fabrics (no timing: performance lives in benchmarks/).

``benchmarks/bench_sweep.py`` claims a ratio between the naive method and
``harness sweep``; that ratio means something only if both compute the same
thing.  These tests run the benchmark's functions and check that they agree
case by case (GPU pairs disconnected with PXN, jobs lost), on fabrics small
enough to sweep completely in a fraction of a second.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from harness.fabric import dual_tor
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.observations.registry import OBSERVATIONS
from harness.planning.sweep import CaseResult
from harness.planning.sweep import SweepResult

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _import(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def bs() -> ModuleType:
    return _import("bench_sweep")


@pytest.fixture(scope="module")
def bm() -> ModuleType:
    return _import("bench_model")


def tiny() -> Fabric:
    return two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)


def one_spine() -> Fabric:
    """The spine is an articulation point: the sweep takes its exact path there."""
    return two_tier(sus=2, nodes_per_su=2, spines=1, leaf_radix=8, storage=False)


def tiny_three_tier() -> Fabric:
    return three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2,
                      radix=16, storage=False)  # fmt: skip


def tiny_dual_tor() -> Fabric:
    """Two-port NICs bonded in hardware, two planes (the base has two components)."""
    return dual_tor(segments=1, hosts_per_segment=4, spines_per_plane=2, uplinks_per_leaf=2,
                    leaf_radix=16, spine_radix=32, storage=False)  # fmt: skip


def _sweep_both(
    bs: ModuleType, fabric: Fabric
) -> tuple[list[Any], dict[str, CaseResult], SweepResult]:
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    model = bs.build_naive_model(fabric, jobs)
    cases = bs.naive_cases(model)
    outcomes, _, ran = bs.naive_run(model, cases, 0, 0)
    assert ran == len(cases)
    result = bs.run_fast(fabric)
    return outcomes, bs.fast_by_label(fabric, result), result


def test_tiny_fabric_naive_and_sweep_agree_case_by_case(bs: ModuleType) -> None:
    fabric = tiny()
    outcomes, fast, result = _sweep_both(bs, fabric)
    # 8 leaves + 2 spines, 16 leaf-spine + 16 access cables, 16 NICs
    assert len(outcomes) == len(fast) == 58
    for o in outcomes:
        c = fast[o.label]
        assert (o.pairs_disconnected, o.jobs_lost) == (c.pairs_disconnected, c.jobs_lost), o.label
    cmp = bs.compare(outcomes, fast)
    assert cmp.agree
    assert cmp.missing_in_fast == cmp.extra_in_fast == cmp.mismatches == ()
    # a leaf, an access cable or a NIC loses its SU's job; nothing disconnects
    assert (cmp.naive_disconnecting, cmp.naive_job_losing) == (0, 8 + 16 + 16)
    assert (result.disconnecting, result.job_losing) == (0, 40)


@pytest.mark.parametrize("make", [one_spine, tiny_three_tier, tiny_dual_tor])
def test_more_tiny_fabrics_agree_case_by_case(bs: ModuleType, make: Callable[[], Fabric]) -> None:
    outcomes, fast, result = _sweep_both(bs, make())
    cmp = bs.compare(outcomes, fast)
    assert cmp.mismatches == ()
    assert cmp.agree
    assert len(outcomes) == len(result.cases)
    assert cmp.naive_job_losing > 0


def test_naive_method_knows_the_answer_on_its_own(bs: ModuleType) -> None:
    """Independent of the sweep: the lone spine cuts the SUs apart, a leaf loses its job."""
    fabric = one_spine()
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    model = bs.build_naive_model(fabric, jobs)
    by_label = {c.label: c for c in bs.naive_cases(model)}
    spine = bs.naive_evaluate(model, by_label["spine-01"])
    assert spine.pairs_disconnected == 16 * 16  # 2 nodes x 8 GPUs on each side
    assert spine.jobs_lost == ()  # each SU's job stays on its own leaves
    leaf = bs.naive_evaluate(model, by_label["su01/leaf-r0"])
    assert (leaf.pairs_disconnected, leaf.jobs_lost) == (0, ("su01",))
    healthy = bs.naive_judge(model, model.graph)
    assert (healthy.pairs_disconnected, healthy.jobs_lost) == (0, ())


def test_comparison_reports_a_disagreement(bs: ModuleType) -> None:
    """The benchmark's exit status depends on this: a doctored case must show up."""
    outcomes, fast, _ = _sweep_both(bs, tiny())
    i = next(k for k, o in enumerate(outcomes) if o.jobs_lost)
    doctored = list(outcomes)
    doctored[i] = dataclasses.replace(outcomes[i], jobs_lost=())
    cmp = bs.compare(doctored, fast)
    assert not cmp.agree
    assert not cmp.counts_agree
    assert len(cmp.mismatches) == 1
    assert cmp.mismatches[0].startswith(outcomes[i].label + ":")
    assert not bs.compare(outcomes[:-1], fast).agree  # a case only the sweep has


def test_sampled_naive_run_is_seeded_and_compares(bs: ModuleType) -> None:
    fabric = tiny()
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    model = bs.build_naive_model(fabric, jobs)
    cases = bs.naive_cases(model)
    first, _, ran = bs.naive_run(model, cases, 7, 3)
    again, _, _ = bs.naive_run(model, cases, 7, 3)
    assert ran == 7
    assert [o.label for o in first] == [o.label for o in again]
    cmp = bs.compare(first, bs.fast_by_label(fabric, bs.run_fast(fabric)), whole=False)
    assert cmp.agree
    assert cmp.compared == 7


@pytest.mark.parametrize("per_pod", [False, True])
def test_full_check_computes_every_observation(bm: ModuleType, per_pod: bool) -> None:
    fabric = tiny_three_tier()
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    state = bm.damaged_state(fabric, bm.representative_faults(fabric, per_pod=per_pod))
    cold = bm.full_check(fabric, jobs, state)
    healthy = bm.healthy_reference(fabric, jobs)
    warm = bm.full_check(fabric, jobs, state, healthy=healthy)
    assert warm == cold  # precomputing the healthy reference changes no answer
    assert {k.removesuffix("[pxn]") for k in cold} == set(OBSERVATIONS)
    assert not [k for k, v in cold.items() if isinstance(v, str) and v.startswith("n/a")]
    assert cold["jobs_lost"] == 1  # the killed leaf's SU
    # per pod: one spine of two left in each pod; fabric-wide: pod 2 keeps no spine
    assert cold["leaf_uplink_ratio"] == pytest.approx(0.5 if per_pod else 0.0)


def test_stratified_sample_covers_every_category(bs: ModuleType) -> None:
    fabric = tiny_three_tier()
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    model = bs.build_naive_model(fabric, jobs)
    outcomes, extrapolated, ran, lines = bs.naive_stratified(model, bs.naive_cases(model), 2, 0)
    assert ran == len(outcomes) == len(lines) == 6
    assert {line.split()[0] for line in lines} == {"switches", "cables", "nics"}
    assert extrapolated > 0
    assert bs.compare(outcomes, bs.fast_by_label(fabric, bs.run_fast(fabric)), whole=False).agree


def test_bench_flows_compares_every_sampled_case_with_the_full_analysis(tmp_path: Path) -> None:
    """``bench_flows.compare`` times the fast path and the full analysis on the same cases
    and counts the cases where they differ: on a tiny fabric with jobs across SUs, none."""
    bf = _import("bench_flows")
    fabric = tiny()
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        "- {name: a, nodes: [su01/node01, su02/node01]}\n"
        "- {name: b, nodes: [su02/node02, su01/node02]}\n"
    )
    row = bf.compare(fabric, jobs, bf.FaultState.healthy(fabric), "static", sample=400, seed=0)
    assert row.sampled == row.cases > 0
    assert row.differ == 0


def test_bench_reliability_naive_and_cached_fates_agree_run_by_run() -> None:
    br = _import("bench_reliability")
    from harness.planning.reliability.rates import parse_rates_text

    fabric = tiny()
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    rates = parse_rates_text(
        "name: t\nsource: a test\nclasses:\n"
        "  - {class: cable, fault: cut, select: {tier: access}, per: link, rate_per_month: 0.1,"
        " repair: {dist: lognormal, median: 2d, p90: 9d}}\n"
        "  - {class: gpu, fault: kill, select: {kind: gpu}, per: server, rate_per_month: 0.2,"
        " repair: {dist: exponential, mean: 17h}}\n"
        "  - {class: spine, fault: kill, select: {tier: spine}, per: switch, rate_per_month: 0.2,"
        " repair: {dist: fixed, time: 3d}}\n",
        "t.yaml",
    )
    naive = br.play(br.NaiveBook(fabric, jobs), fabric, rates, range(3))
    fast = br.play(br.FateBook(fabric, jobs), fabric, rates, range(3))
    assert naive == fast
    assert sum(r.total for r in fast) > 0
