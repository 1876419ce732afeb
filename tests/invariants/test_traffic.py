"""The flow engine: NCCL's trees, flows per collective, forwarding models, pod pairs."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric.generators import three_tier
from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.routing import Forwarding
from harness.invariants.collectives import btree_parent
from harness.invariants.collectives import dtree_parents
from harness.invariants.collectives import rank_flows
from harness.invariants.network import Network
from harness.invariants.network import pod_nic_gbps
from harness.invariants.network import pod_pair_gbps
from harness.invariants.traffic import ECMP_DRAWS
from harness.invariants.traffic import job_traffic

ALL: tuple[Collective, ...] = ("ring", "tree", "all-to-all")
LINE = 4 * 200 / 8  # seed-a800: 4 rails x 200 Gb/s, in GB/s


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


def nodes(f: Fabric, su: int, count: int = 20) -> list[int]:
    return [f.index[f"su{su:02d}/node{n:02d}"] for n in range(1, count + 1)]


def network(f: Fabric, spines_left: int | None = None) -> Network:
    """seed-a800 with every spine past the first ``spines_left`` drained (cables at 0)."""
    up = np.ones(f.n_elements, dtype=bool)
    cap = f.link_capacity.copy()
    if spines_left is not None:
        gone = f.spines[spines_left:]
        up[gone] = False
        cap[np.isin(f.link_b, gone)] = 0.0
    return Network(f, up, cap, np.full(f.n_elements, 200 / 8))


def ratios(net: Network, jobs: list[Job], forwarding: Forwarding) -> list[dict[str, float]]:
    return [
        {c.collective: round(c.busbw_gbs / LINE, 4) for c in t.collectives}
        for t in job_traffic(net, jobs, forwarding)
    ]


# -- NCCL's double binary tree --------------------------------------------------------------
def test_btree_is_nccls_illustration() -> None:
    # trees.cc: 0-8; 8-4, 8-12; 4-2, 4-6; 12-10, 12-13; 2-1, 2-3; 6-5, 6-7; 10-9, 10-11
    want = {1: 2, 2: 4, 3: 2, 4: 8, 5: 6, 6: 4, 7: 6, 8: 0, 9: 10, 10: 12, 11: 10, 12: 8, 13: 12}
    assert {r: btree_parent(14, r) for r in range(1, 14)} == want
    assert btree_parent(14, 0) == -1


def test_second_tree_mirrors_even_and_shifts_odd() -> None:
    _, mirror = dtree_parents(12)  # trees.cc: root 11, then 3, then 7 and 1
    assert mirror[11] == -1
    assert (mirror[3], mirror[7], mirror[1]) == (11, 3, 3)
    _, shifted = dtree_parents(13)  # root 1, then 9, then 5 and 0
    assert shifted[1] == -1
    assert (shifted[9], shifted[5], shifted[0]) == (1, 9, 9)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 40, 199, 200])
def test_each_tree_spans_the_ranks_with_at_most_two_children(n: int) -> None:
    for parents in dtree_parents(n):
        assert parents.count(-1) == 1
        children = np.bincount([p for p in parents if p >= 0], minlength=n)
        assert children.max() <= 2
        for start in range(n):  # every rank climbs to the root without a cycle
            seen, r = set(), start
            while parents[r] >= 0:
                assert r not in seen
                seen.add(r)
                r = parents[r]


def test_flows_per_collective() -> None:
    src, dst = rank_flows("ring", 5)
    assert list(zip(src.tolist(), dst.tolist(), strict=True)) == [(0, 1), (1, 2), (2, 3),
                                                                   (3, 4), (4, 0)]  # fmt: skip
    src, dst = rank_flows("tree", 40)
    assert src.size == 4 * 39  # two trees, every edge both ways
    assert np.array_equal(np.bincount(src, minlength=40), np.bincount(dst, minlength=40))
    src, dst = rank_flows("all-to-all", 6)
    assert src.size == 30
    assert not (src == dst).any()
    assert rank_flows("tree", 1)[0].size == 0


# -- the cases ------------------------------------------------------------------------
def test_interleaved_ranks_over_one_spine_get_one_twentieth() -> None:
    f = seed()
    a, b = nodes(f, 1), nodes(f, 2)
    mixed = Job("mixed", tuple(x for pair in zip(a, b, strict=True) for x in pair), collectives=ALL)
    ordered = Job("ordered", tuple(a + b), collectives=ALL)
    models: tuple[Forwarding, ...] = ("adaptive", "static", "ecmp")
    for forwarding in models:
        got = ratios(network(f, 1), [mixed], forwarding)[0]
        assert got["ring"] == pytest.approx(0.05)  # 20 flows on one uplink
        assert got["tree"] < 0.15
        assert got["all-to-all"] < 0.1
        got = ratios(network(f, 1), [ordered], forwarding)[0]
        assert got["ring"] == 1.0  # one ring edge per direction leaves the SU
        assert got["tree"] < 1.0
    # healthy: every collective at line rate with perfect spreading
    for forwarding in models[:2]:
        for job in (mixed, ordered):
            assert ratios(network(f), [job], forwarding) == [
                {"ring": 1.0, "tree": 1.0, "all-to-all": 1.0}
            ]


def test_the_tree_of_a_200_node_job_over_one_spine() -> None:
    f = seed()
    job = Job("all", tuple(int(s) for s in f.servers))
    models: tuple[Forwarding, ...] = ("adaptive", "static")
    for forwarding in models:
        got = ratios(network(f, 1), [job], forwarding)[0]
        assert got["ring"] == 1.0  # a sorted ring leaves each SU once per direction
        assert got["tree"] < 0.9  # the trees leave every SU several times
        assert ratios(network(f), [job], forwarding)[0] == {"ring": 1.0, "tree": 1.0}


def test_per_flow_ecmp_collides_where_d_mod_k_does_not() -> None:
    f = seed()
    a, b = nodes(f, 1), nodes(f, 2)
    jobs = [Job(f"pair{k:02d}", (x, y), collectives=("ring",))
            for k, (x, y) in enumerate(zip(a, b, strict=True))]  # fmt: skip
    healthy = network(f)
    assert {r["ring"] for r in ratios(healthy, jobs, "static")} == {1.0}
    assert {r["ring"] for r in ratios(healthy, jobs, "adaptive")} == {1.0}
    got = job_traffic(healthy, jobs, "ecmp")
    slowest = min(t.collectives[0].busbw_gbs for t in got)
    worst = min(t.collectives[0].worst_gbs for t in got)
    assert slowest < 0.8 * LINE  # 20 flows hashed over 20 uplinks collide
    assert worst <= slowest
    assert worst <= 0.5 * LINE + 1e-9  # in some draw two flows share an uplink
    assert ECMP_DRAWS >= 8


def test_static_d_mod_k_collides_after_one_spine_and_adaptive_does_not() -> None:
    f = seed()
    a, b = nodes(f, 1), nodes(f, 2)
    jobs = [Job(f"pair{k:02d}", (x, y), collectives=("ring",))
            for k, (x, y) in enumerate(zip(a, b, strict=True))]  # fmt: skip
    net = network(f, 19)
    static = [r["ring"] for r in ratios(net, jobs, "static")]
    adaptive = [r["ring"] for r in ratios(net, jobs, "adaptive")]
    assert min(static) == 0.5  # destinations 1 and 20 both map to uplink 1 of 19
    assert max(static) == 1.0
    assert adaptive == [0.95] * 20  # pooled: 19 of 20 uplinks for 20 flows


def test_the_bottleneck_is_named() -> None:
    f = seed()
    a, b = nodes(f, 1), nodes(f, 2)
    mixed = Job("mixed", tuple(x for pair in zip(a, b, strict=True) for x in pair))
    ring = job_traffic(network(f, 1), [mixed], "static")[0].collectives[0]
    assert ring.bottleneck.startswith("cable su0")
    assert "200 Gb/s live for 4000 Gb/s offered" in ring.bottleneck


def test_other_jobs_load_the_same_uplinks() -> None:
    f = seed()
    a, b = nodes(f, 1), nodes(f, 2)
    one = Job("one", (a[0], b[0], a[1], b[1]), collectives=("ring",))
    other = Job("other", (a[2], b[2], a[3], b[3]), collectives=("ring", "tree"))
    alone = ratios(network(f, 1), [one], "adaptive")[0]["ring"]
    shared = ratios(network(f, 1), [one, other], "adaptive")[0]["ring"]
    assert shared < alone


def test_a_server_on_its_own_has_no_flows() -> None:
    f = seed()
    got = job_traffic(network(f), [Job("solo", (nodes(f, 1)[0],))], "static")[0]
    assert [c.busbw_gbs for c in got.collectives] == [np.inf, np.inf]
    assert got.cross_leaf_flows == 0


# -- pods ---------------------------------------------------------------------------------------
def small_three_tier() -> Fabric:
    # 6 pods of 1 SU, 4 spines per pod with 4 uplinks each dealt over 3 cores per group
    return three_tier(sus=6, nodes_per_su=2, node="a800", sus_per_pod=1, spines_per_pod=4,
                      radix=8, storage=False)  # fmt: skip


def healthy(f: Fabric) -> Network:
    return Network(f, np.ones(f.n_elements, dtype=bool), f.link_capacity,
                   np.full(f.n_elements, 25.0))  # fmt: skip


def test_pod_pairs_through_the_cores_match_the_exact_max_flow() -> None:
    f = small_three_tier()
    net = healthy(f)
    pods = sorted(set(f.pod[f.leaves].tolist()))
    for a in pods:
        for b in pods:
            if a != b:
                assert net.pair_gbps(a, b) == pytest.approx(pod_pair_gbps(net, a, b))
    cap = f.link_capacity.copy()
    rng = np.random.default_rng(7)
    upper = np.flatnonzero(f.link_kind >= 3)
    cap[rng.choice(upper, size=upper.size // 4, replace=False)] = 0.0
    net2 = Network(f, np.ones(f.n_elements, dtype=bool), cap, np.full(f.n_elements, 25.0))
    for a in pods:
        for b in pods:
            if a != b:  # through the cores never promises less than the exact max-flow
                assert net2.pair_gbps(a, b) >= pod_pair_gbps(net2, a, b) - 1e-9


def test_clos_100k_pod_pairs_are_oversubscribed() -> None:
    f = preset("clos-100k")
    net = healthy(f)
    demand = pod_nic_gbps(f)
    assert demand[1] == 1024 * 400  # 4 SUs x 32 nodes x 8 rails x 400 Gb/s
    x = net.pod_core_gbps[1:]
    through = np.minimum(x[:, None, :], x[None, :, :]).sum(-1)[np.triu_indices(100, 1)]
    assert through.min() == 14 * 32 * 400  # adjacent pods share 14 of each group's 32 cores
    assert (through == demand[1]).sum() == 150  # only pods 25 apart share every core
    for b in (2, 26, 27):  # the exact max-flow agrees
        assert pod_pair_gbps(net, 1, b) == net.pair_gbps(1, b)
    assert pod_pair_gbps(net, 1, 2) / demand[1] == pytest.approx(0.4375)
