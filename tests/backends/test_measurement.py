"""Measurement records, plans and the comparison of prediction with measurement (pure)."""

from __future__ import annotations

import dataclasses

import pytest

from harness.backends.measurement import FlowGroup
from harness.backends.measurement import JobRun
from harness.backends.measurement import LinkState
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import Probe
from harness.backends.measurement import TracedPath
from harness.backends.measurement import sample_pairs
from harness.backends.model_measure import predict_flows
from harness.backends.model_measure import predict_measurements
from harness.fabric.generators import three_tier
from harness.fabric.generators import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.compare import agree
from harness.observations.compare import disagreements
from harness.observations.plans import MeasureOptions
from harness.observations.plans import connectivity_plan
from harness.observations.plans import island_plan
from harness.observations.plans import predicted_islands
from harness.observations.plans import uplink_flow_group
from harness.observations.plans import witness_pairs

SMALL = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)


def analysis(fabric: Fabric, *faults: object) -> Analysis:
    state = FaultState.healthy(fabric)
    for raw in faults:
        state = state.inject(Fault.parse(raw), fabric)
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    return Analysis(fabric, Observation.from_state(state), jobs)


# -- sampling ---------------------------------------------------------------------------------
def test_sampled_pairs_join_nics_of_one_rail_on_different_servers() -> None:
    f = two_tier(sus=3, nodes_per_su=4, spines=4, leaf_radix=16, storage=False)
    pairs = sample_pairs(f, 5, seed=7)
    assert len(pairs) == 5 * f.rails
    assert len(set(pairs)) == len(pairs)
    for a, b in pairs:
        ia, ib = f.index[a], f.index[b]
        assert f.rail[ia] == f.rail[ib]
        assert f.parent[ia] != f.parent[ib]
    assert sample_pairs(f, 5, seed=7) == pairs
    assert sample_pairs(f, 5, seed=8) != pairs
    every = sample_pairs(f, None, seed=0)
    assert len(every) == f.rails * (12 * 11 // 2)  # one NIC per rail per server
    assert sample_pairs(f, 10_000, seed=0) == every  # asking for more than there are: all
    cross = sample_pairs(f, 1, seed=0, cross_rail=6)[f.rails :]
    assert len(cross) == 6
    assert all(f.rail[f.index[a]] != f.rail[f.index[b]] for a, b in cross)


def test_witnesses_are_the_pairs_the_prediction_says_are_cut() -> None:
    assert witness_pairs(analysis(SMALL), 10, 0, same_rail=True) == ()
    a = analysis(SMALL, {"kill": "su01/leaf-r0"})
    cut = witness_pairs(a, 10, 0, same_rail=True)
    assert cut
    for x, y in cut:
        assert not a.nic_reaches(SMALL.index[x], SMALL.index[y])
        assert SMALL.rail[SMALL.index[x]] == SMALL.rail[SMALL.index[y]] == 0
    plan = connectivity_plan(a, MeasureOptions(per_rail=2), cross_rail=False)
    assert set(cut) <= set(plan.probes)
    assert "predicted-cut pairs" in plan.note
    assert len(witness_pairs(a, 1, 0, same_rail=False)) == 1


def test_island_plan_probes_one_anchor_per_predicted_island() -> None:
    a = analysis(SMALL, {"kill": "su01/leaf-r0"})
    islands = predicted_islands(a)
    assert [len(g) for g in islands] == [14, 1, 1]  # the leaf's two NICs are cut off
    plan = island_plan(a, MeasureOptions())
    live = sum(len(g) for g in islands)
    assert len(plan.probes) == live * len(islands) - len(islands)
    assert plan.note == "3 island anchors, seed 0"


def test_uplink_flows_fill_the_leaf_uplinks() -> None:
    a = analysis(SMALL)
    group = uplink_flow_group(a, SMALL.index["su01/leaf-r0"])
    assert group.name == "uplinks su01/leaf-r0"
    assert all(src.startswith("su01/") for src, _ in group.pairs)
    assert all(dst.startswith("su02/") and dst.endswith("nic0") for _, dst in group.pairs)
    healthy = sum(x.gbps for x in predict_flows(a, group, 1.0))
    degraded = analysis(
        SMALL, {"degrade": {"target": "su01/leaf-r0:3--spine-01:1", "fraction": 0.5}}
    )
    half = sum(x.gbps for x in predict_flows(degraded, group, 1.0))
    assert half / healthy == pytest.approx(0.75)  # one of two uplinks at half speed
    gone = analysis(SMALL, {"kill": "su02/leaf-r0"})
    assert all(x.gbps == 0 for x in predict_flows(gone, group, 1.0))


def test_flows_across_pods_share_the_pod_uplinks() -> None:
    f = three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2,
                   radix=16, storage=False)  # fmt: skip
    a = analysis(f)
    nics = [f.ids[n] for n in f.nics.tolist() if f.rail[n] == 0]
    group = FlowGroup("x", ((nics[0], nics[-1]),))
    (flow,) = predict_flows(a, group, 1.0)
    assert flow.gbps > 0
    cores = analysis(f, {"kill": {"tier": "core"}})
    assert predict_flows(cores, group, 1.0)[0].gbps == 0


# -- records, plans, lookups -----------------------------------------------------------------
def test_plans_merge_without_duplicates() -> None:
    a = MeasurePlan(probes=(("x", "y"),), flows=(FlowGroup("g", (("x", "y"),)),), jobs=("j",),
                    flow_seconds=1.0, note="one")  # fmt: skip
    b = MeasurePlan(probes=(("x", "y"), ("y", "z")), jobs=("j", "k"), links=("l",),
                    flow_seconds=3.0, note="two")  # fmt: skip
    c = a | b
    assert c.probes == (("x", "y"), ("y", "z"))
    assert c.jobs == ("j", "k")
    assert c.flow_seconds == 3.0
    assert c.kinds == {"probes", "flows", "jobs", "links"}
    assert c.note == "one; two"
    assert c.describe() == "2 probes, 1 flow groups, 2 jobs, 1 links (one; two)"
    assert MeasurePlan().empty
    assert MeasurePlan().describe() == "nothing"


def test_flows_are_kept_running_only_when_every_plan_with_flows_asks_so() -> None:
    """A drill's flow probe asks for its group as it runs now (``flow_now``); a plan that asks
    for nothing, or for a collective's traffic, never turns a windowed measurement into a
    stream (a union of plans without flows once said ``flow_now``, and the traffic of a
    scenario's bandwidth expectation ran as streams that were never ended)."""
    g = FlowGroup("g", (("x", "y"),))
    streamed = MeasurePlan(flows=(g,), flow_now=True)
    windowed = MeasurePlan(flows=(g,))
    traffic = MeasurePlan(traffic=(g,), jobs=("j",))
    assert not (MeasurePlan() | MeasurePlan()).flow_now
    assert not (MeasurePlan() | MeasurePlan() | windowed).flow_now
    assert not (traffic | MeasurePlan()).flow_now
    assert (streamed | MeasurePlan()).flow_now
    assert (MeasurePlan() | streamed | traffic).flow_now  # the traffic itself is windowed
    assert not (streamed | windowed).flow_now


def test_missing_names_what_was_not_measured() -> None:
    plan = MeasurePlan(probes=(("a", "b"),), paths=(("a", "b"),), jobs=("j",), links=("l",),
                       flows=(FlowGroup("g", (("a", "b"),)),))  # fmt: skip
    m = Measurements("x", probes=(Probe("b", "a", True),))
    assert m.missing(plan) == ["path a -> b", "flow g: a -> b", "job j", "link l"]


# -- agreement ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("predicted", "measured", "tolerance", "same"),
    [
        (True, True, 0.0, True),
        (True, 1, 0.0, False),  # a boolean is not a count
        (3, 3, 0.5, True),
        (3, 4, 0.5, False),  # counts are exact, whatever the tolerance
        (0.5, 0.54, 0.1, True),
        (0.5, 0.6, 0.1, False),
        (float("inf"), float("inf"), 0.0, True),
        ([0, 2], (0, 2), 0.0, True),
        ([0, 2], [0], 0.0, False),
        ("cross-su", "cross-su", 0.0, True),
        ("cross-su", "rail-local", 0.0, False),
    ],
)
def test_agree(predicted: object, measured: object, tolerance: float, same: bool) -> None:
    assert agree(predicted, measured, tolerance) is same


def test_disagreements_say_what_differs_in_plain_words() -> None:
    a = analysis(SMALL, {"kill": "spine-01"})
    plan = MeasurePlan(
        probes=(("su01/node01/nic0", "su02/node01/nic0"),),
        paths=(("su01/node01/nic0", "su02/node01/nic0"),),
        flows=(uplink_flow_group(a, SMALL.index["su01/leaf-r0"]),),
        jobs=("su01",),
        links=("su01/leaf-r0:3--spine-01:1",),
    )
    predicted = predict_measurements(a, plan)
    assert disagreements(predicted, predicted) == []
    wrong = dataclasses.replace(
        predicted,
        probes=(dataclasses.replace(predicted.probes[0], ok=False),),
        paths=(TracedPath("su01/node01/nic0", "su02/node01/nic0", ("su01/leaf-r0",), False),),
        flows=tuple(dataclasses.replace(x, gbps=x.gbps / 2) for x in predicted.flows),
        jobs=(JobRun("su01", False, ended="timeout", seconds=10.0, detail="gloo timed out"),),
        links=(LinkState("su01/leaf-r0:3--spine-01:1", True, 200.0),),
    )
    text = disagreements(predicted, wrong)
    assert text[0] == "su01/node01/nic0 does not reach su02/node01/nic0 (the model says it should)"
    assert text[1].startswith("path su01/node01/nic0 -> su02/node01/nic0: 1 switches (lost)")
    assert any(t.startswith("flow ") and "the model says" in t for t in text)
    assert "job su01 is stopped (timeout: gloo timed out), the model says alive" in text
    assert text[-1].startswith(
        "link su01/leaf-r0:3--spine-01:1: up at 200 Gb/s, the model says down"
    )
    assert disagreements(predicted, Measurements("x"))[0].endswith("not probed")
