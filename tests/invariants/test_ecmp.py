"""Per-hop ECMP between pods, and bus bandwidth stated against line rate and healthy.

Under ``ecmp`` a flow between pods is hashed at its leaf, its spine, the core
and the destination pod's spine (:mod:`harness.invariants.ecmp`); the figures
of :mod:`harness.invariants.figures` state a job's expected bandwidth against
its line rate and against the healthy fabric under the same forwarding.
"""

from __future__ import annotations

import functools

import numpy as np

from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.fabric.generators import three_tier
from harness.fabric.jobs import Job
from harness.fabric.routing import Routing
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.ecmp import hop_key
from harness.invariants.figures import job_figures
from harness.invariants.figures import slowest
from harness.invariants.forwarding import Resources
from harness.invariants.forwarding import flow_paths
from harness.invariants.network import Network
from harness.invariants.state import Observation
from harness.invariants.traffic import ECMP_DRAWS
from harness.invariants.traffic import _evaluate
from harness.invariants.traffic import _place
from harness.invariants.traffic import job_traffic

LINE = 4 * 200 / 8  # a800: 4 rails x 200 Gb/s, in GB/s


@functools.cache
def pods() -> Fabric:
    """3 pods of 1 SU (2 servers), 4 spines per pod with 4 core uplinks over 3 cores each."""
    return three_tier(sus=3, nodes_per_su=2, node="a800", sus_per_pod=1, spines_per_pod=4,
                      radix=8, storage=False)  # fmt: skip


def net_of(f: Fabric, cap: np.ndarray | None = None, dead: tuple[int, ...] = ()) -> Network:
    up = np.ones(f.n_elements, dtype=bool)
    up[list(dead)] = False
    return Network(f, up, f.link_capacity.copy() if cap is None else cap,
                   np.full(f.n_elements, 25.0))  # fmt: skip


def servers(f: Fabric, *prefixes: str) -> tuple[int, ...]:
    return tuple(s for s in f.servers.tolist() if f.ids[s].startswith(prefixes))


def test_every_hop_between_pods_is_a_live_cable_of_one_up_down_path() -> None:
    f = pods()
    sc = f.links_of_kind(LinkKind.SPINE_CORE)
    rng = np.random.default_rng(3)
    for trial in range(6):
        cap = f.link_capacity.copy()
        cap[rng.choice(sc, size=trial * 5, replace=False)] = 0.0  # more of the cores cut
        net = net_of(f, cap)
        fl = _place(net, [Job("all", servers(f, ""))])
        inter = np.flatnonzero((fl.leaf_a >= 0) & (f.pod[fl.leaf_a] != f.pod[fl.leaf_b]))
        assert inter.size
        for seed in range(4):
            paths = flow_paths(net, fl, Resources(net), "ecmp", seed)
            for k in inter.tolist():
                hops = paths[k]
                if hops[0] == -2:  # no uplink leads there: no spine reaches lb via a core
                    continue
                links, down = hops[:4] // 2, hops[:4] % 2
                assert down.tolist() == [0, 0, 1, 1]
                assert (cap[links] > 0).all()
                a, b = f.link_a[links], f.link_b[links]
                assert a[0] == fl.leaf_a[k]
                assert b[0] == a[1]
                assert b[1] == b[2]
                assert a[2] == b[3]
                assert a[3] == fl.leaf_b[k]  # -> the destination leaf
                assert hops[4] == -1  # no pooled capacity under ecmp


def test_a_leaf_with_no_spine_left_above_the_cores_has_no_path() -> None:
    f = pods()
    cap = f.link_capacity.copy()
    sc = f.links_of_kind(LinkKind.SPINE_CORE)
    cap[sc[f.pod[f.link_a[sc]] == 1]] = 0.0  # pod 1's spines lose every core uplink
    net = net_of(f, cap)
    fl = _place(net, [Job("x", servers(f, "su01/", "su02/"))])
    paths = flow_paths(net, fl, Resources(net), "ecmp", 0)
    cross = (fl.leaf_a >= 0) & (fl.leaf_a != fl.leaf_b)
    assert cross.any()
    assert (paths[cross, 0] == -2).all()


def test_each_hop_hashes_on_its_own_and_two_tiers_keep_their_hashes() -> None:
    src, dst, slot = np.arange(200), np.arange(200)[::-1].copy(), np.zeros(200, dtype=np.int64)
    keys = [hop_key(src, dst, slot, 5, hop) for hop in range(4)]
    for i in range(4):
        for j in range(i + 1, 4):  # independent hashes: the picks mod 4 agree about 1/4
            same = float(np.mean(keys[i] % 4 == keys[j] % 4))
            assert 0.1 < same < 0.4, (i, j, same)
    assert not np.array_equal(hop_key(src, dst, slot, 0, 1), hop_key(src, dst, slot, 1, 1))


def test_a_draw_where_no_two_flows_share_a_cable_gives_line_rate() -> None:
    """Hash collisions are what costs bandwidth on a healthy fabric: a draw whose flows
    share no cable direction runs at line rate, one whose flows share one does not."""
    f = pods()
    net = net_of(f)
    jobs = [Job("pair", servers(f, "su01/node01", "su03/node01"), collectives=("ring",))]
    fl = _place(net, jobs)
    res = Resources(net)
    seen = set()
    for seed in range(ECMP_DRAWS):
        paths = flow_paths(net, fl, res, "ecmp", seed)
        used = paths[paths >= 0]
        collide = np.unique(used).size < used.size
        value = float(_evaluate(net, fl, paths, res, 1)[0][0]) * f.rails
        assert (value < LINE - 1e-9) == collide, seed
        seen.add(collide)
    assert seen == {False, True}  # 16 draws: some collide, some do not
    got = job_traffic(net, jobs, "ecmp")[0].collectives[0]
    assert got.worst_gbs < got.busbw_gbs < LINE
    assert got.line_gbs == LINE


def test_static_and_adaptive_still_pool_the_cores() -> None:
    f = pods()
    net = net_of(f)
    fl = _place(net, [Job("pair", servers(f, "su01/node01", "su03/node01"))])
    res = Resources(net)
    for forwarding in ("static", "adaptive"):
        paths = flow_paths(net, fl, res, forwarding, 0)
        inter = (fl.leaf_a >= 0) & (fl.leaf_a != fl.leaf_b)
        assert (paths[inter, 4] >= res.pair).all()


def analysis(f: Fabric, jobs: list[Job], forwarding: str, cut: list[int] | None = None
             ) -> Analysis:  # fmt: skip
    state = FaultState.healthy(f)
    obs = Observation.from_state(state)
    if cut:
        cap = obs.link_capacity.copy()
        cap[cut] = 0.0
        obs = Observation("model", obs.element_up, cap)
    return Analysis(f, obs, jobs, routing=Routing.stating(forwarding=forwarding))


def test_figures_state_both_baselines_and_the_slowest_job() -> None:
    f = pods()
    pair = Job("pair", servers(f, "su01/node01", "su03/node01"), collectives=("ring",))
    local = Job("local", servers(f, "su02/"))
    healthy = analysis(f, [pair, local], "ecmp")
    x = job_figures(healthy, pair)
    assert x.draws == ECMP_DRAWS
    assert x.line_rate_gbs == LINE
    assert x.vs_healthy == 1.0
    assert x.vs_line_rate == x.expected_gbs / LINE < 1.0
    assert x.worst_draw_gbs < x.expected_gbs
    sc = f.links_of_kind(LinkKind.SPINE_CORE)
    cut = sc[(f.pod[f.link_a[sc]] == 1) & (f.link_a_port[sc] > 5)].tolist()  # 1 uplink each
    after = analysis(f, [pair, local], "ecmp", cut)
    y = job_figures(after, pair)
    assert y.healthy_gbs == x.expected_gbs
    assert y.line_rate_gbs == LINE
    assert y.vs_healthy == y.expected_gbs / x.expected_gbs < 1.0
    worst = slowest([job_figures(after, pair), job_figures(after, local)])
    assert worst is not None
    assert worst.job == "pair"
    js = y.to_json()
    assert set(js) >= {"expected_busbw_gbs", "worst_draw_busbw_gbs", "line_rate_gbs",
                       "healthy_expected_busbw_gbs", "expected_vs_line_rate",
                       "expected_vs_healthy", "hash_draws"}  # fmt: skip
    assert "of line rate" in y.describe()
    assert "of healthy" in y.describe()
    static = job_figures(analysis(f, [pair], "static"), pair)
    assert (static.draws, static.vs_line_rate, static.vs_healthy) == (1, 1.0, 1.0)
