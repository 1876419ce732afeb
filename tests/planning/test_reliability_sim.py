"""The Monte Carlo of interruptions: the issue's analytic checks, seeds, sharding, restarts."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import statistics
from pathlib import Path

import pytest

from harness.fabric import preset
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.resolve import resolve_fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.invariants.timeline import cut_off
from harness.planning.reliability.fates import FateBook
from harness.planning.reliability.montecarlo import Study
from harness.planning.reliability.montecarlo import compare
from harness.planning.reliability.montecarlo import run_study
from harness.planning.reliability.rates import MONTH_S
from harness.planning.reliability.rates import load_rates
from harness.planning.reliability.rates import parse_rates_text
from harness.planning.reliability.simulate import draw_failures
from harness.planning.reliability.units import plan_units

ROOT = Path(__file__).resolve().parents[2]
LAB = str(ROOT / "fabrics" / "lab-2su.yaml")


def rates(classes: str, restart: str = "{after: 1m, spares: true}") -> str:
    return f"name: t\nsource: a test\nclasses:\n{classes}\nrestart: {restart}\n"


def cables(rate: float, repair: str, select: str = "{tier: access}") -> str:
    return (f"  - {{class: cable, fault: cut, select: {select}, per: link, "
            f"rate_per_month: {rate}, repair: {repair}}}")  # fmt: skip


def study(fabric_name: str, text: str, runs: int, months: float = 12.0, **kw: object) -> Study:
    fabric = resolve_fabric(fabric_name) if "/" in fabric_name else preset(fabric_name, **kw)
    jobs = tuple(resolve_jobs([JobSpec(per_su=True)], fabric))
    return Study(fabric, jobs, parse_rates_text(text, "t.yaml"), months, runs, seed=7)


def test_single_homed_jobs_are_interrupted_n_l_t_times() -> None:
    """Only access cables fail, at l per month; every cut interrupts the single-homed job over
    it, so the fabric-wide count of a run is Poisson with mean n * l * T."""
    s = study(LAB, rates(cables(0.02, "{dist: fixed, time: 1h}")), runs=200)
    n = len(s.fabric.servers) * s.fabric.rails
    assert n == 32
    o = run_study(s)
    per_run = [r.total for r in o.results]
    expected = n * 0.02 * 12
    mean = sum(per_run) / len(per_run)
    assert abs(mean - expected) < 3 * math.sqrt(expected / len(per_run)), (mean, expected)
    assert o.total.mean == pytest.approx(mean / 12)
    assert o.total.half_width == pytest.approx(
        1.959963984540054 * statistics.stdev(c / 12 for c in per_run) / math.sqrt(200)
    )
    assert list(o.per_source()) == ["cable"]
    assert o.per_source()["cable"].mean == pytest.approx(o.total.mean)
    # every failure drawn interrupted a job (none was already down, none hit a cut cable)
    assert sum(r.failures for r in o.results) - sum(per_run) <= len(per_run) // 20
    # down 1 minute per interruption, on spares: the jobs ran nearly all the time
    for f in o.availability().values():
        assert 0.999 < f.mean < 1.0


def test_on_dual_tor_a_single_access_failure_interrupts_nothing() -> None:
    f = preset("hpn-dual-tor")
    jobs = resolve_jobs([JobSpec(per_su=True)], f)
    text = rates(cables(0.001, "{dist: fixed, time: 1h}", "{tier: access, node: [1, 2]}"))
    (src,) = plan_units(f, parse_rates_text(text, "t.yaml"))
    book = FateBook(f, jobs)
    assert len(src.units) == 32
    for (t,) in src.units:
        assert book.interrupted(frozenset(), ("cable", t), src.fault(f, t)) == frozenset()
    # both ports of one NIC cut: the job is cut off
    a, b = src.units[0][0], src.units[2][0]  # node01/nic0 port 1 and port 2
    assert f.link_ids[a].split(":")[0] == f.link_ids[b].split(":")[0]
    book.interrupted(frozenset(), ("cable", a), src.fault(f, a))
    assert book.interrupted(frozenset({("cable", a)}), ("cable", b), src.fault(f, b)) == {"su01"}


def test_on_dual_tor_only_overlapping_pairs_count() -> None:
    """Only pairs of cables down at once cut a dual-homed job off.  A pair whose two cables
    each fail at l and are repaired after R is down together at 2 l (1 - exp(-l R)) ~
    2 l^2 R, so the runs count about that times the pairs that cut the job, times T.  Those
    pairs are the two ports of one NIC, and also (HPN's two planes: port 1 of every NIC
    goes to the plane-0 ToR, port 2 to the plane-1 one) port 1 of one server's NIC k with
    port 2 of another server's NIC k: one reaches only plane 1, the other only plane 0.
    With h servers per rail that is h^2 pairs per rail: n pairs for n cables, so
    n l^2 R T as the issue estimates, counted twice (2 l^2 R per pair)."""
    text = rates(cables(0.2, "{dist: fixed, time: 3d}", "{tier: access, node: [1, 2]}"))
    s = study("hpn-dual-tor", text, runs=80, hosts_per_segment=8, spines_per_plane=4,
              uplinks_per_leaf=4)  # fmt: skip
    (src,) = plan_units(s.fabric, s.rates)
    book = FateBook(s.fabric, s.jobs)
    targets = [t for (t,) in src.units]
    for t in targets:
        book.applied[(0, t)] = src.fault(s.fabric, t)
    assert all(not book.lost(frozenset({(0, t)})) for t in targets)
    bad = [(a, b) for a, b in itertools.combinations(targets, 2)
           if book.lost(frozenset({(0, a), (0, b)}))]  # fmt: skip
    ids = s.fabric.link_ids
    same_nic = [p for p in bad if ids[p[0]].split(":")[0] == ids[p[1]].split(":")[0]]
    assert (len(same_nic), len(bad)) == (16, 32)  # 2 servers x 8 NICs; h^2 = 4 per rail
    lam, r_months = 0.2, 3 * 86400 / MONTH_S
    expected = len(bad) * 2 * lam * (1 - math.exp(-lam * r_months)) * 12
    assert expected == pytest.approx(2 * len(targets) * lam**2 * r_months * 12, rel=0.02)
    o = run_study(s)
    mean = sum(r.total for r in o.results) / len(o.results)
    assert abs(mean - expected) < 3 * math.sqrt(expected / len(o.results)), (mean, expected)


def test_serial_and_sharded_runs_are_equal_run_by_run() -> None:
    text = rates(cables(0.05, "{dist: lognormal, median: 2d, p90: 9d}") + "\n" + (
        "  - {class: gpu, fault: kill, select: {kind: gpu}, per: server, rate_per_month: 0.1, "
        "repair: {dist: exponential, mean: 17h}}"))  # fmt: skip
    s = study(LAB, text, runs=12)
    serial = run_study(s)
    sharded = run_study(s, workers=2)
    assert serial.results == sharded.results
    assert serial.total == sharded.total
    assert draw_failures(plan_units(s.fabric, s.rates), s.horizon_s, 3) == draw_failures(
        plan_units(s.fabric, s.rates), s.horizon_s, 3)  # fmt: skip
    assert draw_failures(plan_units(s.fabric, s.rates), s.horizon_s, 3) != draw_failures(
        plan_units(s.fabric, s.rates), s.horizon_s, 4)  # fmt: skip


def test_waiting_for_the_repair_keeps_a_job_down_until_it_is_repaired() -> None:
    """A GPU lost under a job: on spares it is back after 1 minute, without spares only after
    the 100-hour repair; the counts are alike, the time it could run is not."""
    gpu = ("  - {class: gpu, fault: kill, select: {kind: gpu}, per: server, "
           "rate_per_month: 0.3, repair: {dist: fixed, time: 100h}}")  # fmt: skip
    spares = run_study(study(LAB, rates(gpu), runs=30))
    wait = run_study(study(LAB, rates(gpu, "{after: 1m, spares: false}"), runs=30))
    up_spares = min(f.mean for f in spares.availability().values())
    up_wait = max(f.mean for f in wait.availability().values())
    assert up_spares > 0.999
    # 4 servers x 0.3 per month: 1.2 failures a month per job, each down 100 h (0.137 month)
    assert 0.8 < up_wait < 0.9
    assert wait.total.mean < spares.total.mean  # a job down is not interrupted again


def test_checkpoints_lose_half_an_interval_per_interruption() -> None:
    text = rates(cables(0.05, "{dist: fixed, time: 1h}"), "{after: 1m, spares: true, "
                 "checkpoint: 2h}")  # fmt: skip
    o = run_study(study(LAB, text, runs=20))
    for r in o.results:
        for count, lost in zip(r.per_job, r.lost_work_s, strict=True):
            assert lost == pytest.approx(count * 3600.0)
    for name, f in o.effective().items():
        assert f.mean < o.availability()[name].mean


def test_a_comparison_is_the_difference_of_means_with_its_interval() -> None:
    a = run_study(study(LAB, rates(cables(0.02, "{dist: fixed, time: 1h}")), runs=40))
    b = run_study(study(LAB, rates(cables(0.04, "{dist: fixed, time: 1h}")), runs=40))
    c = compare(a, b)
    assert c.difference.mean == pytest.approx(b.total.mean - a.total.mean)
    assert c.difference.ci[0] > 0  # twice the rate: clearly more
    half = math.hypot(a.total.half_width, b.total.half_width)
    assert c.difference.half_width == pytest.approx(half)


def test_the_sweep_evaluator_and_the_full_analysis_agree_on_overlapping_states() -> None:
    """The states of kills, cuts and optics are judged by the sweep's evaluator; a drain
    or a hang by the full analysis.  Both give the same jobs cut off."""
    f = preset("seed-a800")
    jobs = resolve_jobs([JobSpec(per_su=True)], f)
    text = rates("\n".join([
        cables(0.01, "{dist: fixed, time: 1h}"),
        "  - {class: leaf, fault: kill, select: {tier: leaf}, per: switch, rate_per_month: 0.01,"
        " repair: {dist: fixed, time: 1h}}",
        "  - {class: optic, fault: optic, select: {tier: leaf-spine}, per: port,"
        " rate_per_month: 0.01, repair: {dist: fixed, time: 1h}}",
    ]))  # fmt: skip
    srcs = plan_units(f, parse_rates_text(text, "t.yaml"))
    book = FateBook(f, jobs)
    rng = random.Random(5)
    lost_some = 0
    for _ in range(24):
        state = set()
        for _ in range(rng.randint(1, 4)):
            si = rng.randrange(len(srcs))
            (t,) = srcs[si].units[rng.randrange(len(srcs[si].units))]
            book.applied[(si, t)] = srcs[si].fault(f, t)
            state.add((si, t))
        key = frozenset(state)
        fast = book.lost(key)
        full, _ = cut_off(book.analysis(key))
        assert fast == full, sorted(key)
        lost_some += bool(fast)
    assert book.evaluated == 24
    assert 0 < lost_some < 24


def test_llama3_rates_give_one_interruption_every_3_1_hours_on_2048_servers() -> None:
    """Calibration: the Llama 3 report's rates per server (rates/llama3-2024-per-server.yaml)
    on a 2,048-server fabric running one job over all of it: 419 interruptions in 54 days,
    about one every 3.1 hours, within the interval."""
    f = preset("clos-100k", sus=64)  # 64 SUs of 32 H100 servers: 2,048 servers
    jobs = tuple(resolve_jobs([JobSpec(name="llama3", nodes=("*",))], f))
    assert len(jobs[0].servers) == 2048
    r = load_rates(ROOT / "rates" / "llama3-2024-per-server.yaml")
    o = run_study(Study(f, jobs, r, months=54 / (365.25 / 12), runs=4, seed=0))
    per_54_days = [x.total for x in o.results]
    mean = sum(per_54_days) / len(per_54_days)
    assert abs(mean - 419) < 3 * math.sqrt(419 / len(per_54_days)), mean
    hours = 54 * 24 / mean
    assert 2.8 < hours < 3.4  # 3.09 h, within the 3 sigma of four runs


def test_a_reroute_as_slow_as_the_timeout_crashes_the_jobs_whose_traffic_crossed() -> None:
    """Spines fail under a job spanning both SUs: a 1 s reroute is survived, a 40 s one
    (beyond NCCL's 34 s) crashes it, as the scenario timeline decides."""
    fabric = resolve_fabric(LAB)
    jobs = tuple(resolve_jobs([JobSpec(name="both", nodes=("*",))], fabric))
    text = rates("  - {class: spine, fault: kill, select: {tier: spine}, per: switch, "
                 "rate_per_month: 0.1, repair: {dist: fixed, time: 4h}}")  # fmt: skip
    r = parse_rates_text(text, "t.yaml")
    counts = {}
    for reroute in (1.0, 40.0):
        routing = dataclasses.replace(DEFAULT_ROUTING, reroute=reroute)
        o = run_study(Study(fabric, jobs, r, 12.0, 20, seed=1, routing=routing))
        counts[reroute] = sum(x.total for x in o.results), sum(x.failures for x in o.results)
    assert counts[1.0][0] == 0
    assert 0 < counts[40.0][0] <= counts[40.0][1]
