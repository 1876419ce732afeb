"""The flows a case moves, recomputed locally, give the full analysis's job bandwidth exactly.

:class:`~harness.planning.sweep.flows.FlowDelta` (one case) and
:func:`~harness.planning.sweep.flow_cuts.cut_busbw` (every leaf-spine cut at
once) answer the bus bandwidth of jobs whose flows cross leaves without a
full :class:`~harness.invariants.analysis.Analysis` of the case.  Hypothesis
draws small two-tier fabrics, faults already present, up to three jobs over
drawn servers (so their flows cross leaves and share links), the forwarding
model and the cases; every job's bandwidth must EQUAL (``==``, not close to)
the full analysis's, and the evaluator's rows the exact path's.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.resolve import build_fabric
from harness.fabric.routing import FORWARDINGS
from harness.fabric.routing import Routing
from harness.faults.fault import FaultState
from harness.invariants import bandwidth
from harness.planning.sweep import CaseEvaluator
from harness.planning.sweep.cases import single_failures
from harness.planning.sweep.flow_cuts import cut_busbw
from harness.planning.sweep.flows import FlowDelta
from harness.search import strategies as hst


@st.composite
def cross_jobs(draw: st.DrawFn, f: Fabric) -> tuple[JobSpec, ...]:
    """One to three jobs of two or more servers each (disjoint), in drawn rank order."""
    servers = [f.ids[i] for i in f.servers.tolist()]
    picked = draw(st.permutations(servers), label="servers")
    cuts = draw(st.lists(st.integers(2, 6), min_size=1, max_size=3), label="sizes")
    jobs, at = [], 0
    for k, size in enumerate(cuts):
        nodes = picked[at : at + size]
        if len(nodes) < 2:
            break
        jobs.append(JobSpec(name=f"job{k}", nodes=tuple(nodes)))
        at += size
    return tuple(jobs) or (JobSpec(name="job0", nodes=tuple(servers)),)


@st.composite
def evaluators(draw: st.DrawFn) -> CaseEvaluator:
    f = draw(hst.fabrics(["two-tier"], min_sus=2, max_sus=3, min_nodes_per_su=2), label="fabric")
    base = draw(hst.fault_sets(f, ("kill", "drain", "cut", "optic", "degrade"), max_size=3))
    state = FaultState.healthy(f)
    for fault in base:
        state = state.inject(fault)
    specs = draw(cross_jobs(f), label="jobs")
    forwarding = draw(st.sampled_from(FORWARDINGS), label="forwarding")
    ev = CaseEvaluator(
        f, resolve_jobs(specs, f), state, routing=Routing.stating(forwarding=forwarding)
    )
    note(f"{f.name}: base {[x.describe() for x in base]}, jobs {specs}, {forwarding}")
    return ev


def full_busbw(ev: CaseEvaluator, failures: list) -> list[float]:  # type: ignore[type-arg]
    """Every job's bus bandwidth by the full analysis of the case."""
    a = ev._case_analysis(failures)
    return [
        bandwidth.job_busbw_gbs(a, job, a.job_traffic(job), intra=a.intra_gbs) for job in ev.jobs
    ]


@settings(max_examples=30, deadline=None)
@given(ev=evaluators(), data=st.data())
def test_flow_delta_equals_the_full_analysis(ev: CaseEvaluator, data: st.DataObject) -> None:
    f = ev.fabric
    singles = single_failures(f, ("switches", "cables", "optics", "nics"))
    net = ev.base.network
    ok = [x for x in singles if FlowDelta.applies(f, net, [x]) and not ev._splits([x])]
    if not ok:
        return
    picked = data.draw(st.lists(st.sampled_from(ok), min_size=1, max_size=12), label="cases")
    if len(picked) >= 2 and data.draw(st.booleans(), label="pair"):
        pair = [picked[0], picked[1]]
        if not ev._splits(pair) and picked[0] != picked[1]:
            picked_cases = [[x] for x in picked] + [pair]
        else:
            picked_cases = [[x] for x in picked]
    else:
        picked_cases = [[x] for x in picked]
    for case in picked_cases:
        fast = ev._flow_delta.busbw(case, ev._nvlink_gbs).tolist()
        assert fast == full_busbw(ev, case), [x.id for x in case]


@settings(max_examples=30, deadline=None)
@given(ev=evaluators())
def test_every_leaf_spine_cut_at_once_equals_the_full_analysis(ev: CaseEvaluator) -> None:
    f = ev.fabric
    links = f.links_of_kind(LinkKind.LEAF_SPINE)
    singles = {x.index: x for x in single_failures(f, ("cables",)) if x.kind == "link"}
    live = [i for i in links.tolist() if ev.base.cap[i] > 0 and not ev._splits([singles[i]])]
    if not live:
        return
    import numpy as np

    got = cut_busbw(ev._flow_delta, np.array(live, dtype=np.int64))
    nv = ev._nvlink_gbs
    for row, i in zip(got.tolist(), live, strict=True):
        want = full_busbw(ev, [singles[i]])
        fast = [
            (v if np.isfinite(v) else 0.0) if len(job.servers) < 2 else float(min(b, v))
            for b, v, job in zip(row, nv, ev.jobs, strict=True)
        ]
        assert fast == want, f.link_ids[i]


@settings(max_examples=25, deadline=None)
@given(ev=evaluators(), data=st.data())
def test_sweep_rows_with_cross_leaf_jobs_equal_the_exact_path(
    ev: CaseEvaluator, data: st.DataObject
) -> None:
    singles = single_failures(ev.fabric, ("switches", "cables", "optics", "nics"))
    picked = sorted(
        data.draw(st.lists(st.integers(0, len(singles) - 1), min_size=1, max_size=25, unique=True))
    )
    chosen = [singles[k] for k in picked]
    for fast, x in zip(ev.evaluate_singles(chosen), chosen, strict=True):
        exact = ev.evaluate_exact([x])
        assert (fast.min_busbw_ratio, fast.jobs_lost, fast.pairs_disconnected) == (
            exact.min_busbw_ratio,
            exact.jobs_lost,
            exact.pairs_disconnected,
        ), x.id


def test_adaptive_in_an_asymmetric_state_equals_the_full_analysis() -> None:
    """scenarios/seed-adaptive-reach.yaml's state: two leaves of one rail keep 2 of 4 uplinks
    each, one spine in common, so the pools of every leaf of the rail differ (adaptive
    forwarding pools only the uplinks whose spine reaches the destination, see
    harness.invariants.adaptive); every single failure the engines answer, and every
    leaf-spine cut at once, must equal the full analysis, and the sweep's rows the exact."""
    import numpy as np

    from harness.faults.fault import Fault
    from harness.scenario.load import load_file

    sc = load_file(Path(__file__).parents[2] / "scenarios" / "seed-adaptive-reach.yaml")[0]
    f = build_fabric(sc.fabric)
    state = FaultState.healthy(f)
    for cable in ("su01/leaf-r0:7--spine-03:1", "su01/leaf-r0:8--spine-04:1",
                  "su02/leaf-r0:5--spine-01:5", "su02/leaf-r0:8--spine-04:5"):  # fmt: skip
        state = state.inject(Fault.parse({"cut": cable}))
    specs = (*sc.jobs, JobSpec(name="pair", nodes=("su01/node01", "su02/node04")))
    ev = CaseEvaluator(
        f, resolve_jobs(specs, f), state, routing=Routing.stating(forwarding="adaptive")
    )
    net = ev.base.network
    assert len(net.adaptive_pools.leaf) > net.adaptive_pools.intra.shape[0]  # not one per leaf
    # what moves pools: switches and leaf-spine cables (and two NICs of the jobs)
    singles = [x for x in single_failures(f, ("switches", "cables", "nics"))
               if (x.kind == "element" and int(f.kind[x.index]) != int(Kind.NIC))
               or (x.kind == "link" and int(f.link_kind[x.index]) == int(LinkKind.LEAF_SPINE))
               or x.id in ("su01/node01/nic0", "su02/node04/nic1")]  # fmt: skip
    ok = [x for x in singles if FlowDelta.applies(f, net, [x]) and not ev._splits([x])]
    assert len(ok) > 30
    for x in ok:
        assert ev._flow_delta.busbw([x], ev._nvlink_gbs).tolist() == full_busbw(ev, [x]), x.id
    links = [x.index for x in ok if x.kind == "link"
             and int(f.link_kind[x.index]) == int(LinkKind.LEAF_SPINE)]  # fmt: skip
    got = cut_busbw(ev._flow_delta, np.array(links, dtype=np.int64))
    by_index = {x.index: x for x in ok if x.kind == "link"}
    for row, i in zip(got.tolist(), links, strict=True):
        nv = ev._nvlink_gbs
        fast = [float(min(b, v)) for b, v in zip(row, nv, strict=True)]
        assert fast == full_busbw(ev, [by_index[i]]), f.link_ids[i]
    # (cases that lose a job on a NIC are left out: their rows keep the other jobs' base
    # bandwidth in a degraded base, under every forwarding: a discrepancy older than the pools)
    for fast_row, x in zip(ev.evaluate_singles(singles), singles, strict=True):
        exact = ev.evaluate_exact([x])
        if exact.jobs_lost:
            continue
        assert (fast_row.min_busbw_ratio, fast_row.jobs_lost, fast_row.pairs_disconnected) == (
            exact.min_busbw_ratio, exact.jobs_lost, exact.pairs_disconnected), x.id  # fmt: skip
