"""A collective measured by its traffic pattern (pure: plans and the measured ratio).

On a backend that moves packets, ``job_busbw_ratio`` runs the flows the job's
collective places (:func:`harness.observations.plans.collective_flow_group`) and compares
the pacing flow with the healthy fabric's; the model predicts it instead.
"""

from __future__ import annotations

from harness.backends.measurement import Flow
from harness.backends.measurement import JobRun
from harness.backends.measurement import Measurements
from harness.fabric.generators import two_tier
from harness.fabric.jobs import Job
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.observation import MeasureInput
from harness.observations.observation import PlanInput
from harness.observations.plans import MeasureOptions
from harness.observations.plans import collective_flow_group
from harness.observations.registry import measure
from harness.observations.registry import plan_for

F = two_tier(sus=2, nodes_per_su=4, node="a800", spines=4, leaf_radix=8)
SERVERS = [F.index[f"su{s:02d}/node{n:02d}"] for n in range(1, 5) for s in (1, 2)]
JOB = Job("interleaved", tuple(SERVERS), collectives=("ring", "tree"))


def _analysis(raw: object | None = None) -> Analysis:
    state = FaultState.healthy(F)
    if raw is not None:
        state = state.inject(Fault.parse(raw).resolve(F))
    return Analysis(F, Observation.from_state(state), (JOB,))


def test_the_ring_flows_follow_the_rank_order_on_one_rail() -> None:
    group = collective_flow_group(_analysis(), JOB, "ring")
    assert group.name == "traffic interleaved ring"
    assert group.pairs[0] == ("su01/node01/nic0", "su02/node01/nic0")
    assert group.pairs[-1] == ("su02/node04/nic0", "su01/node01/nic0")
    assert len(group.pairs) == 8
    assert len(collective_flow_group(_analysis(), JOB, "tree").pairs) == 28


def test_the_rail_with_the_least_uplinks_left_is_measured() -> None:
    a = _analysis({"cut": {"between": ["su02/leaf-r2", "spine-0[123]"]}})
    pairs = collective_flow_group(a, JOB, "ring").pairs
    assert {p.rsplit("/", 1)[1] for pair in pairs for p in pair} == {"nic2"}


def test_only_a_named_job_gets_its_collectives_flows() -> None:
    a = _analysis()
    plan = plan_for("job_busbw_ratio", PlanInput(a, {"job": "interleaved"}, MeasureOptions()))
    assert plan is not None
    names = [g.name for g in plan.traffic]
    assert names == ["traffic interleaved ring", "traffic interleaved tree"]
    assert plan.kinds == {"jobs", "traffic"}
    every = plan_for("job_busbw_ratio", PlanInput(a, {}, MeasureOptions()))
    assert every is not None
    assert every.traffic == ()


def _flows(group: str, pairs: tuple[tuple[str, str], ...], gbps: list[float]) -> tuple[Flow, ...]:
    return tuple(Flow(group, s, d, g, 2.0) for (s, d), g in zip(pairs, gbps, strict=True))


def test_the_pacing_flow_against_healthy_is_the_measured_ratio() -> None:
    a = _analysis()
    args = {"job": "interleaved", "collective": "ring"}
    plan = plan_for("job_busbw_ratio", PlanInput(a, args, MeasureOptions()))
    assert plan is not None
    (group,) = plan.traffic
    n = len(group.pairs)
    base = Measurements("netns", flows=_flows(group.name, group.pairs, [190.0] * n),
                        jobs=(JobRun("interleaved", True),))  # fmt: skip
    # one uplink per leaf: the 4 flows leaving each leaf split it unevenly, as TCP does
    uneven = [80.0, 20.0, 60.0, 30.0, 30.0, 60.0, 20.0, 80.0]  # ranks alternate su01, su02
    now = Measurements("netns", flows=_flows(group.name, group.pairs, uneven),
                       jobs=(JobRun("interleaved", True),))  # fmt: skip
    got = measure("job_busbw_ratio", MeasureInput(now, base, plan, F, args))
    assert got is not None
    assert got.value == 0.25  # 190 Gb/s through each leaf's uplinks for 4 flows, against 190
    assert "uplinks" in got.detail
    assert "not by the job" in got.detail
    lost = Measurements("netns", flows=now.flows, jobs=(JobRun("interleaved", False),))
    dead = measure("job_busbw_ratio", MeasureInput(lost, base, plan, F, args))
    assert dead is not None
    assert dead.value == 0.0


def test_a_tree_flow_counts_its_share_of_its_nics() -> None:
    a = _analysis()
    args = {"job": "interleaved", "collective": "tree"}
    plan = plan_for("job_busbw_ratio", PlanInput(a, args, MeasureOptions()))
    assert plan is not None
    (group,) = plan.traffic
    out: dict[str, int] = {}
    for s, _ in group.pairs:
        out[s] = out.get(s, 0) + 1
    # every flow at 1/k of a NIC, k its sender's (= receiver's) fan-out: all at full speed
    fair = [200.0 / out[s] for s, _ in group.pairs]
    base = Measurements("netns", flows=_flows(group.name, group.pairs, fair),
                        jobs=(JobRun("interleaved", True),))  # fmt: skip
    got = measure("job_busbw_ratio", MeasureInput(base, base, plan, F, args))
    assert got is not None
    assert got.value == 1.0
