"""Analysis: known answers from DOMAIN.md (Part 1 and §6) on the presets and small fabrics."""

from __future__ import annotations

import functools
import re
from typing import Any

import networkx as nx
import pytest

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.fabric import dual_tor
from harness.fabric import preset
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.observation import Context
from harness.observations.registry import observe

PER_SU = JobSpec(per_su=True)


@functools.cache
def fabric(name: str) -> Fabric:
    return preset(name)


@functools.cache
def small() -> Fabric:
    """2 SUs x 4 A800 nodes, 2 spines of 8 ports: each leaf 4 down, 2 up."""
    return two_tier(sus=2, nodes_per_su=4, spines=2, leaf_radix=8, storage=False)


@functools.cache
def pods() -> Fabric:
    return three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2,
                      radix=16, storage=False)  # fmt: skip


def state(f: Fabric, *faults: Any) -> FaultState:
    s = FaultState.healthy(f)
    for raw in faults:
        s = s.inject(Fault.parse(raw))
    return s


def analyse(f: Fabric, *faults: Any, jobs: tuple[JobSpec, ...] = (PER_SU,)) -> Analysis:
    return Analysis(f, Observation.from_state(state(f, *faults)), resolve_jobs(jobs, f))


def value(a: Analysis, name: str, ctx: Context | None = None, **args: Any) -> Any:
    return observe(name, a, ctx, args).value


# -- the seed cluster (DOMAIN.md Part 1) -----------------------------------------------------------


def test_healthy_seed() -> None:
    a = analyse(fabric("seed-a800"))
    assert a.gpu_pairs_disconnected() == 0
    assert len(a.islands()) == 1
    assert a.rails_connected() == [0, 1, 2, 3]
    assert a.nics_isolated() == 0
    assert a.jobs_lost() == []
    assert a.leaf_uplink_ratio() == 1.0
    assert a.healthy is a


def test_one_spine_left_keeps_every_pair_connected() -> None:
    a = analyse(fabric("seed-a800"), {"kill": {"tier": "spine", "all-but": 1}})
    assert a.gpu_pairs_disconnected() == 0
    assert value(a, "all_gpus_connected") is True
    assert len(a.islands()) == 1
    assert a.leaf_uplink_ratio() == 0.05  # exactly 1 of 20 uplinks
    assert a.leaf_uplink_ratio("su07/leaf-r2") == 0.05
    assert a.jobs_lost() == []
    # each side of the bisection: 20 leaves x one 200G uplink
    assert a.bisection_gbps == 4000.0
    assert value(a, "bisection_ratio") == 0.05


def test_all_spines_dead_leaves_40_nic_islands() -> None:
    a = analyse(fabric("seed-a800"), {"kill": {"tier": "spine"}})
    assert len(a.islands()) == 40  # 10 SUs x 4 rails
    assert {i.nics for i in a.islands()} == {20}
    assert len(a.islands(pxn=True)) == 10  # with PXN an SU's rails join through NVLink
    assert a.rails_connected() == []
    # 1600 GPUs: 40 rail groups of 40 GPUs, plus same-server cross-rail pairs over NVLink
    assert a.gpu_pairs_disconnected() == 1600 * 1599 // 2 - (40 * 780 + 200 * 24)
    assert a.jobs_lost() == []  # per-SU jobs are rail-local


def test_all_spines_dead_loses_a_cross_su_job() -> None:
    jobs = (PER_SU, JobSpec(name="two-sus", nodes=("su01/*", "su02/*")))
    a = analyse(fabric("seed-a800"), {"kill": {"tier": "spine"}}, jobs=jobs)
    assert a.jobs_lost() == ["two-sus"]


def test_a_leaf_loss_loses_exactly_its_sus_job() -> None:
    a = analyse(fabric("seed-a800"), {"kill": "su03/leaf-r1"})
    assert a.jobs_lost() == ["su03"]
    (verdict,) = [v for v in a.verdicts if v.lost]
    assert verdict.reasons[0] == (
        "su03/node01/nic1 (rail 1) cannot reach the job's other NICs: leaf su03/leaf-r1 is down"
    )
    assert all("leaf su03/leaf-r1 is down" in r for r in verdict.reasons[:8])
    assert "su03/node01/nic1" in verdict.culprits
    assert a.nics_isolated() == 20
    assert a.rails_connected() == [0, 2, 3]
    assert len(a.islands()) == 21  # the fabric, plus 20 cut-off NICs
    detail = observe("jobs_lost", a).detail
    assert "su03/leaf-r1 is down" in detail


@pytest.mark.parametrize("port", ["su01/node01/nic0:1", "su01/leaf-r0:1"])
def test_an_optic_on_a_node_leaf_cable_isolates_one_nic(port: str) -> None:
    a = analyse(fabric("seed-a800"), {"optic": port})
    assert a.nics_isolated() == 1
    assert [i.label for i in a.islands()][1:] == ["1 NIC: su01/node01/nic0"]
    assert a.jobs_lost() == ["su01"]
    assert "cable su01/node01/nic0:1--su01/leaf-r0:1 is down" in a.verdicts[0].reasons[0]


def test_a_leaf_spine_cable_costs_one_twentieth_of_that_leaf() -> None:
    a = analyse(fabric("seed-a800"), {"cut": "su01/leaf-r0:21--spine-01:1"})
    assert a.leaf_uplink_ratio("su01/leaf-r0") == 0.95
    assert a.leaf_uplink_ratio("su01/leaf-r1") == 1.0
    assert a.jobs_lost() == []
    assert a.gpu_pairs_disconnected() == 0


def test_bisection_of_the_healthy_seed() -> None:
    # half the SUs: 5 SUs x 4 leaves x 20 uplinks x 200 Gb/s
    assert analyse(fabric("seed-a800")).bisection_gbps == 80_000.0


# -- DGX H100 SuperPOD (DOMAIN.md §6, scenarios 1-3 and 5) -----------------------------------------


def test_superpod_fifteen_of_sixteen_spines_dead() -> None:
    a = analyse(fabric("superpod-h100"), {"kill": {"tier": "spine", "all-but": 1}})
    assert a.gpu_pairs_disconnected() == 0
    assert a.leaf_uplink_ratio() == 0.0625  # 2 of 32 uplinks
    assert a.path("su01/node01/gpu0", "su01/node02/gpu0") == ("rail-local", 1)


def test_superpod_all_spines_dead() -> None:
    a = analyse(fabric("superpod-h100"), {"kill": {"tier": "spine"}})
    assert len(a.islands()) == 32  # 8 rails x 4 SUs
    assert len(a.islands(pxn=True)) == 4
    assert a.path("su01/node01/gpu0", "su02/node01/gpu0", pxn=True) == ("disconnected", -1)


def test_superpod_leaf_loss() -> None:
    a = analyse(fabric("superpod-h100"), {"kill": "su02/leaf-r3"})
    assert a.nics_isolated() == 32
    assert a.jobs_lost() == ["su02"]


def test_superpod_one_leaf_spine_optic() -> None:
    a = analyse(fabric("superpod-h100"), {"optic": "su01/leaf-r0:33"})
    assert a.leaf_uplink_ratio("su01/leaf-r0") == 31 / 32
    assert a.gpu_pairs_disconnected() == 0
    assert a.jobs_lost() == []


# -- bisection cross-checked with networkx ---------------------------------------------------------


def nx_bisection(f: Fabric, s: FaultState) -> float:
    """Max-flow from the NICs of the first half of the SUs to the others, with networkx."""
    g = nx.DiGraph()
    half = (f.n_sus + 1) // 2
    kinds = (LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
    for i in f.links_of_kind(*kinds).tolist():
        cap = float(s.link_capacity[i])
        if cap <= 0:
            continue
        a, b = f.ids[f.link_a[i]], f.ids[f.link_b[i]]
        for u, v in ((a, b), (b, a)):
            old = g.get_edge_data(u, v, {"capacity": 0.0})["capacity"]
            g.add_edge(u, v, capacity=old + cap)
    for n in f.nics.tolist():
        if f.ids[n] in g:
            if int(f.su[n]) <= half:
                g.add_edge("SOURCE", f.ids[n])
            else:
                g.add_edge(f.ids[n], "SINK")
    if "SOURCE" not in g or "SINK" not in g:
        return 0.0
    return float(nx.maximum_flow_value(g, "SOURCE", "SINK"))


@pytest.mark.parametrize(
    "faults",
    [
        (),
        ({"kill": "spine-01"},),
        ({"cut": "su01/leaf-r0:5--spine-01:1"}, {"kill": "su02/leaf-r3"}),
        ({"degrade": {"target": {"tier": "leaf-spine", "su": 1}, "fraction": 0.25}},),
        ({"kill": {"tier": "spine"}},),
        ({"kill": "su01/node01"}, {"optic": "su02/leaf-r1:6"}),
    ],
)
def test_bisection_matches_networkx(faults: tuple[Any, ...]) -> None:
    f = small()
    s = state(f, *faults)
    ours = Analysis(f, Observation.from_state(s)).bisection_gbps
    assert ours == pytest.approx(nx_bisection(f, s), abs=0.1)


def test_small_bisection_known_answer() -> None:
    # 4 leaves per side, 2 x 200G uplinks each: 1,600 Gb/s (access would allow 3,200)
    assert analyse(small()).bisection_gbps == 1600.0


def test_three_tier_bisection_matches_networkx() -> None:
    f = pods()
    cases: list[tuple[Any, ...]] = [
        (),
        ({"kill": "core-g01-01"},),
        ({"kill": {"tier": "spine", "pod": 1}},),
        ({"cut": {"tier": "spine-core", "pod": 2, "all-but": 3}},),
    ]
    for faults in cases:
        s = state(f, *faults)
        assert Analysis(f, Observation.from_state(s)).bisection_gbps == pytest.approx(
            nx_bisection(f, s), abs=0.1
        )


def test_bisection_needs_two_sus() -> None:
    f = two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8, storage=False)
    with pytest.raises(
        ScenarioError, match="bisection needs at least 2 SUs; fabric 'two-tier' has 1"
    ):
        _ = analyse(f).bisection_gbps


# -- path classes and PXN --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("su01/node01/gpu0", "su01/node01/gpu5", ("nvlink", 0)),
        ("su01/node01/gpu0", "su01/node02/gpu1", ("rail-local", 1)),  # gpu0, gpu1: rail 0
        ("su01/node01/gpu0", "su01/node02/gpu2", ("cross-rail", 3)),
        ("su01/node01/gpu0", "su02/node01/gpu0", ("cross-su", 3)),
    ],
)
def test_path_classes(a: str, b: str, expected: tuple[str, int]) -> None:
    h = analyse(fabric("seed-a800"))
    assert h.path(a, b) == expected
    assert value(h, "path_class", between=[a, b]) == expected[0]
    assert value(h, "hops", between=[a, b]) == expected[1]


def test_cross_pod_path() -> None:
    h = analyse(pods())
    assert h.path("su01/node01/gpu0", "su03/node01/gpu0") == ("cross-pod", 5)
    assert h.path("su01/node01/gpu0", "su02/node01/gpu0") == ("cross-su", 3)


def test_pcie_path_when_every_nvswitch_is_dead() -> None:
    a = analyse(fabric("seed-a800"), {"kill": {"glob": "su01/node01/nvsw*"}})
    assert a.path("su01/node01/gpu0", "su01/node01/gpu5") == ("pcie", 0)
    assert value(a, "nvlink_gbs_per_gpu", gpu="su01/node01/gpu0") == 0.0


def test_dead_gpu_is_disconnected_and_loses_its_job() -> None:
    a = analyse(fabric("seed-a800"), {"kill": "su01/node01/gpu0"})
    assert a.path("su01/node01/gpu0", "su01/node01/gpu5") == ("disconnected", -1)
    assert a.jobs_lost() == ["su01"]
    assert a.verdicts[0].reasons == ("gpu su01/node01/gpu0 is down",)


def test_pxn_reaches_another_rail_through_nvlink() -> None:
    f = fabric("seed-a800")
    a = analyse(f, {"kill": {"tier": "spine"}})
    assert a.path("su01/node01/gpu0", "su01/node02/gpu2") == ("disconnected", -1)
    assert a.path("su01/node01/gpu0", "su01/node02/gpu2", pxn=True) == ("rail-local", 1)
    assert a.gpu_pairs_disconnected(pxn=True) < a.gpu_pairs_disconnected()


def test_pxn_rescues_gpus_behind_a_dead_leaf() -> None:
    a = analyse(fabric("seed-a800"), {"kill": "su01/leaf-r0"})
    # GPUs 0 and 1 of each su01 server use nic0
    assert a.gpus_isolated() == 40
    assert a.gpus_isolated(pxn=True) == 0
    assert a.path("su01/node01/gpu0", "su01/node02/gpu0") == ("disconnected", -1)
    assert a.path("su01/node01/gpu0", "su01/node02/gpu0", pxn=True) == ("rail-local", 1)
    assert a.jobs_lost() == ["su01"]  # PXN is a connect-time choice, not failover


def test_a_gpu_keeps_its_own_nic_when_another_part_of_its_server_dies() -> None:
    # H100: two GPUs and two NICs per PCIe switch; gpu0 uses nic0 only (no runtime reroute),
    # whether or not some unrelated part of the server (an NVSwitch) is down
    cut = {"cut": "su01/node01/nic0:1--su01/leaf-r0:1"}
    f = fabric("superpod-h100")
    for faults in [(cut,), (cut, {"kill": "su01/node01/nvsw3"})]:
        a = analyse(f, *faults)
        assert a.gpus_isolated() == 1
        assert a.gpu_pairs_disconnected() == 1008  # gpu0 with every GPU of the other 126 nodes
        assert a.path("su01/node01/gpu0", "su02/node01/gpu0") == ("disconnected", -1)
        assert a.path("su01/node01/gpu0", "su02/node01/gpu0", pxn=True) == ("cross-su", 3)
        assert a.gpus_isolated(pxn=True) == 0


def test_path_errors() -> None:
    h = analyse(fabric("seed-a800"))
    with pytest.raises(ScenarioError, match=r"'su01/node01/gpu9' is not a GPU .*did you mean"):
        h.path("su01/node01/gpu9", "su01/node01/gpu0")


# -- bandwidth -------------------------------------------------------------------------------------


def test_seed_bandwidth_figures() -> None:
    a = analyse(fabric("seed-a800"))
    assert value(a, "node_nic_gbs") == 100.0  # 4 x 200 Gb/s = 4 x 25 GB/s
    assert value(a, "nvlink_gbs_per_gpu") == 400.0
    assert value(a, "job_busbw_gbs", job="su01") == 100.0  # rails x 25 GB/s, under NVLink/2
    assert value(a, "storage_gbps") == 50.0  # the bond of 2 x 25 Gb/s


def test_a_dead_nic_costs_a_quarter_of_the_node() -> None:
    a = analyse(fabric("seed-a800"), {"kill": "su01/node01/nic2"})
    assert value(a, "node_nic_gbs", node="su01/node01") == 75.0
    assert value(a, "node_nic_ratio", node="su01/node01") == 0.75
    assert value(a, "node_nic_ratio", node="su01/node02") == 1.0


def test_lost_jobs_have_no_bandwidth() -> None:
    a = analyse(fabric("seed-a800"), {"kill": "su01/leaf-r0"})
    job = a.job("su01")
    assert a.job_busbw_gbs(job) == 0.0
    assert a.job_busbw_ratio(job) == 0.0
    assert value(a, "min_job_busbw_ratio") == 0.0
    assert value(a, "jobs_survived") == 9


def test_leaf_uplinks_are_shared_fairly_by_ring_flows() -> None:
    # four 2-node jobs, each su01/nodeN + su02/nodeN: every leaf carries 4 ring flows out
    # and 4 in over 2 x 200G uplinks -> 100 Gb/s = 12.5 GB/s per flow, x 4 rails
    f = small()
    jobs = tuple(JobSpec(name=f"pair{n}", nodes=(f"su01/node0{n}", f"su02/node0{n}"))
                 for n in range(1, 5))  # fmt: skip
    h = analyse(f, jobs=jobs)
    assert [h.job_busbw_gbs(j) for j in h.jobs] == [50.0] * 4
    one = analyse(f, {"kill": "spine-01"}, jobs=jobs)
    assert [one.job_busbw_gbs(j) for j in one.jobs] == [25.0] * 4
    assert value(one, "min_job_busbw_ratio") == 0.5
    assert value(one, "job_busbw_ratio", job="pair3") == 0.5
    # two jobs only: 200 Gb/s per flow, the NICs (25 GB/s) are the limit again
    two = analyse(f, jobs=jobs[:2])
    assert [two.job_busbw_gbs(j) for j in two.jobs] == [100.0, 100.0]


def test_a_leaf_without_uplinks_loses_a_cross_su_job() -> None:
    jobs = (JobSpec(name="all", nodes=("*",)),)
    a = analyse(small(), {"kill": "spine-01"}, {"cut": "su01/leaf-r0:6--spine-02:1"}, jobs=jobs)
    assert a.jobs_lost() == ["all"]
    assert "leaf su01/leaf-r0 has no live uplink" in a.verdicts[0].reasons[0]


# -- checkpoints (seed: storage bond, two-phase save) ----------------------------------------------


@functools.cache
def seed_l34() -> Fabric:
    """seed-a800 with a layer 3+4 storage bond hash (the preset keeps Linux's layer2)."""
    return two_tier(sus=10, nodes_per_su=20, node="a800", spines=20, cables_per_pair=1,
                    leaf_radix=40, node_overrides={"bond_hash": "layer3+4"})  # fmt: skip


def test_checkpoint_stall_doubles_with_a_bond_member_down() -> None:
    ctx = Context(CheckpointSpec(size_gb=98.0, sharded=True))  # 7B params x 14 bytes
    f = seed_l34()
    h = analyse(f)
    a = analyse(f, {"bond-member": "su01/node01/stor0"})
    base = value(h, "checkpoint_sync_stall_s", ctx, job="su01")
    # each node writes its 4.9 GB shard as 8 streams (one per GPU); layer3+4 hashes
    # them 4 per 25 Gb/s member (tests/invariants/test_bond_hash.py)
    assert base == pytest.approx(98 / 20 * 8 / 50)
    assert value(a, "checkpoint_sync_stall_s", ctx, job="su01") == pytest.approx(2 * base)
    assert value(a, "checkpoint_sync_stall_s", ctx, job="su02") == pytest.approx(base)
    assert value(a, "storage_gbps", node="su01/node01") == 25.0
    # the two-phase save's stall is the GPU -> host copy, which the bond does not touch
    assert value(a, "checkpoint_async_stall_s", ctx, job="su01") == value(
        h, "checkpoint_async_stall_s", ctx, job="su01"
    )
    assert value(h, "checkpoint_async_stall_s", ctx, job="su01") < base / 10


def test_unsharded_checkpoint_is_one_stream_on_one_bond_member() -> None:
    # 802.3ad hashes a flow to one member: 98 GB at 25 Gb/s, not at the bond's 50
    ctx = Context(CheckpointSpec(size_gb=98.0, sharded=False))
    h = analyse(fabric("seed-a800"))
    assert value(h, "checkpoint_sync_stall_s", ctx) == pytest.approx(98 * 8 / 25)  # 31.36 s
    assert value(h, "storage_gbps", node="su01/node01") == 50.0  # the bond is still 50


def test_a_layer2_bond_gains_nothing_from_its_second_member() -> None:
    # seed-a800 keeps Linux's default hash, layer2: all 8 streams of a server go to one
    # storage target (one MAC pair), so on one member, healthy or not
    ctx = Context(CheckpointSpec(size_gb=98.0, sharded=True))
    f = fabric("seed-a800")
    h, a = analyse(f), analyse(f, {"bond-member": "su01/node01/stor0"})
    assert value(h, "checkpoint_sync_stall_s", ctx, job="su01") == pytest.approx(4.9 * 8 / 25)
    assert value(a, "checkpoint_sync_stall_s", ctx, job="su01") == pytest.approx(4.9 * 8 / 25)
    assert value(h, "storage_gbps", node="su01/node01") == 50.0  # the bond is still 50


def test_a_checkpoint_writes_one_stream_per_shard() -> None:
    h = analyse(seed_l34())
    one = Context(CheckpointSpec(size_gb=98.0, shards_per_server=1))
    three = Context(CheckpointSpec(size_gb=98.0, shards_per_server=3))
    assert value(h, "checkpoint_sync_stall_s", one) == pytest.approx(4.9 * 8 / 25)
    # 3 streams over 2 members: layer3+4 puts 2 on one, so 2/3 of the shard at 25 Gb/s
    assert value(h, "checkpoint_sync_stall_s", three) == pytest.approx(4.9 * 2 / 3 * 8 / 25)
    # layer2 (seed-a800's default) puts all 3 on one member: the whole shard at 25 Gb/s
    l2 = analyse(fabric("seed-a800"))
    assert value(l2, "checkpoint_sync_stall_s", three) == pytest.approx(4.9 * 8 / 25)


def test_checkpoint_observations_need_a_checkpoint() -> None:
    with pytest.raises(ScenarioError, match=re.escape("need `checkpoint: {size_gb: ...}`")):
        value(analyse(fabric("seed-a800")), "checkpoint_sync_stall_s")


# -- dual-ToR (HPN) --------------------------------------------------------------------------------


def test_dual_tor_nic_tor_cable_loss_loses_no_job() -> None:
    f = fabric("hpn-dual-tor")
    a = analyse(f, {"cut": "su01/node001/nic0:1--su01/leaf-r0a:1"})
    assert a.jobs_lost() == []
    assert a.nics_isolated() == 0
    # the host keeps 15 of its 16 NIC ports: -6.25%, HPN's figure
    assert value(a, "node_nic_ratio", node="su01/node001") == 0.9375


def test_dual_tor_leaf_loss_loses_no_job() -> None:
    a = analyse(fabric("hpn-dual-tor"), {"kill": "su01/leaf-r0a"})
    assert a.jobs_lost() == []
    assert a.gpu_pairs_disconnected() == 0


def test_dual_tor_without_bonding_needs_port_failover() -> None:
    f = dual_tor(segments=1, hosts_per_segment=4, spines_per_plane=2, leaf_radix=8,
                 spine_radix=64, storage=False, node_overrides={"nic_lag": False})  # fmt: skip
    cut = {"cut": "su01/node01/nic0:1--su01/leaf-r0a:1"}
    strict = analyse(f, cut)
    assert strict.jobs_lost() == ["su01"]
    assert "cable su01/node01/nic0:1--su01/leaf-r0a:1 is down" in strict.verdicts[0].reasons[0]
    failover = analyse(f, cut, jobs=(JobSpec(per_su=True, failover="port"),))
    assert failover.jobs_lost() == []


def test_single_tor_access_cable_loss_loses_the_job() -> None:
    a = analyse(fabric("superpod-h100"), {"cut": "su01/node01/nic0:1--su01/leaf-r0:1"})
    assert a.jobs_lost() == ["su01"]


# -- errors and purity -----------------------------------------------------------------------------


def test_named_things_must_exist() -> None:
    a = analyse(fabric("seed-a800"))
    with pytest.raises(ScenarioError, match="'spine-01' is not a leaf of fabric 'seed-a800'"):
        a.leaf_uplink_ratio("spine-01")
    with pytest.raises(ScenarioError, match=r"no job named 'su-01'; did you mean 'su01'"):
        a.job("su-01")
    with pytest.raises(ScenarioError, match="name one with `job: NAME`"):
        a.job(None)
    with pytest.raises(
        ScenarioError, match=r"unknown observation 'job_lost'; did you mean 'jobs_lost'"
    ):
        value(a, "job_lost")


def test_analysis_does_not_touch_its_inputs() -> None:
    f = small()
    s = state(f, {"kill": "spine-01"})
    obs = Observation.from_state(s)
    up, cap = obs.element_up.copy(), obs.link_capacity.copy()
    a = Analysis(f, obs, resolve_jobs([PER_SU], f))
    a.jobs_lost()
    _ = a.bisection_gbps
    a.islands(pxn=True)
    assert (obs.element_up == up).all()
    assert (obs.link_capacity == cap).all()


def test_job_matrix_shape() -> None:
    f = small()
    jobs = resolve_jobs([PER_SU], f)
    assert [j.name for j in jobs] == ["su01", "su02"]
    assert all(isinstance(j, Job) and len(j.servers) == 4 for j in jobs)
