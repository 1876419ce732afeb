"""Routing semantics: up-down (no valley paths) against shortest, on the issue's cases."""

from __future__ import annotations

import functools
from typing import Any

from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.reach import PathRule
from harness.invariants.state import Observation
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import Failure

SEED_VALLEY = (
    {"cut": {"between": ["su01/leaf-r0", "spine-1[1-9]"]}},
    {"cut": {"between": ["su01/leaf-r0", "spine-20"]}},
    {"cut": {"between": ["su02/leaf-r0", "spine-0[1-9]"]}},
    {"cut": {"between": ["su02/leaf-r0", "spine-10"]}},
)
B200_VALLEY = (
    {"cut": {"between": ["pod01/spine-1[7-9]", "core-*"]}},
    {"cut": {"between": ["pod01/spine-[23]?", "core-*"]}},
    {"cut": {"between": ["pod02/spine-0?", "core-*"]}},
    {"cut": {"between": ["pod02/spine-1[0-6]", "core-*"]}},
)


@functools.cache
def fabric(name: str) -> Fabric:
    return preset(name)


def state(f: Fabric, faults: tuple[Any, ...]) -> FaultState:
    s = FaultState.healthy(f)
    for raw in faults:
        s = s.inject(Fault.parse(raw))
    return s


def analyse(
    f: Fabric, faults: tuple[Any, ...], jobs: tuple[JobSpec, ...], rule: PathRule
) -> Analysis:
    obs = Observation.from_state(state(f, faults))
    return Analysis(f, obs, resolve_jobs(jobs, f), routing=Routing.stating(paths=rule))


def test_seed_valley_loses_the_job_under_up_down_only() -> None:
    f = fabric("seed-a800")
    jobs = (JobSpec(name="su01-su02", nodes=("su01/node*", "su02/node*")),)
    ud = analyse(f, SEED_VALLEY, jobs, "up-down")
    sp = analyse(f, SEED_VALLEY, jobs, "shortest")
    assert ud.jobs_lost() == ["su01-su02"]
    assert "no up-down route" in ud.verdicts[0].reasons[0]
    assert ud.path("su01/node01/gpu0", "su02/node01/gpu0") == ("disconnected", -1)
    # rail 0 of su01 against rail 0 of su02: 20 servers x 2 GPUs behind each rail-0 NIC
    assert ud.gpu_pairs_disconnected() == 40 * 40
    assert ud.gpu_pairs_disconnected(pxn=True) == 0  # PXN hands over to another rail
    # min-hop routing takes the valley: leaf, spine, another leaf, spine, leaf
    assert sp.jobs_lost() == []
    assert sp.path("su01/node01/gpu0", "su02/node01/gpu0") == ("cross-su", 5)
    route = sp.nic_route(f.index["su01/node01/nic0"], f.index["su02/node01/nic0"])
    assert route is not None
    assert [f.ids[x].split("-")[0] for x in route] == ["su01/leaf", "spine", route_leaf(f, route),
                                                       "spine", "su02/leaf"]  # fmt: skip
    assert ud.nic_route(f.index["su01/node01/nic0"], f.index["su02/node01/nic0"]) is None
    # every other SU still reaches both leaves through one spine
    assert ud.path("su01/node01/gpu0", "su03/node01/gpu0") == ("cross-su", 3)
    assert ud.path("su02/node01/gpu0", "su03/node01/gpu0") == ("cross-su", 3)


def route_leaf(f: Fabric, route: tuple[int, ...]) -> str:
    """The middle element of a five-switch route, as a leaf id prefix."""
    mid = f.ids[route[2]]
    assert "/leaf-" in mid
    return mid.split("-")[0]


def test_b200_pods_on_different_core_groups_have_no_route() -> None:
    f = fabric("b200-16su")
    jobs = (JobSpec(name="pods-1-2", nodes=("su01/node*", "su05/node*")),)
    ud = analyse(f, B200_VALLEY, jobs, "up-down")
    sp = analyse(f, B200_VALLEY, jobs, "shortest")
    assert ud.jobs_lost() == ["pods-1-2"]
    assert ud.path("su01/node01/gpu0", "su05/node01/gpu0") == ("disconnected", -1)
    assert sp.jobs_lost() == []
    assert sp.path("su01/node01/gpu0", "su05/node01/gpu0") == ("cross-pod", 9)
    assert ud.path("su01/node01/gpu0", "su09/node01/gpu0") == ("cross-pod", 5)


def test_the_sweep_from_a_valley_state_matches_the_exact_analysis() -> None:
    f = fabric("seed-a800")
    specs = (JobSpec(per_su=True), JobSpec(name="su01-su02", nodes=("su01/node*", "su02/node*")))
    ev = CaseEvaluator(f, resolve_jobs(specs, f), state(f, SEED_VALLEY[:2]))
    # su01/leaf-r0 hangs on spines 1-10: losing one of them is fine, losing all is not
    singles = [Failure.of(f, f.ids[i]) for i in f.spines.tolist()]
    for fast, x in zip(ev.evaluate_singles(singles), singles, strict=True):
        exact = ev.evaluate_exact([x])
        assert (fast.jobs_lost, fast.pairs_disconnected_direct) == (
            exact.jobs_lost,
            exact.pairs_disconnected_direct,
        )
    ten = [Failure.of(f, f"spine-{k:02d}") for k in range(1, 11)]
    got = ev.evaluate(ten)
    assert got.exact
    assert got.jobs_lost == ("su01-su02",)  # the per-SU job of su01 stays rail-local
