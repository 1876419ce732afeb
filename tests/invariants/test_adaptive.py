"""Adaptive forwarding pools only the uplinks whose spine still reaches the destination leaf.

Three kinds of check on one small fabric (4 SUs x 1 A800 server, 4 spines: on
every rail four leaves, one per SU, each with one cable to every spine):

- healthy, every leaf has one pool, its live uplinks: the paths are the
  plain pooled model's (the leaf's pooled uplinks, five columns);
- the non-nested example the union pools exist for: leaf 1 healthy, leaf 2
  keeps spines {1, 2}, leaf 3 keeps {2, 3}; two flows from leaf 1 to each
  fit their own pools, but all four are forced onto leaf 1's cables to
  spines {1, 2, 3}: 3/4 each;
- exactness (Hall): over drawn cuts and flows, every flow gets its full
  demand exactly when a routing exists that overloads no uplink and no
  downlink (the climb and the descent each checked by a max-flow).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_flow

from harness.fabric.model import LinkKind
from harness.fabric.resolve import FabricRef
from harness.fabric.resolve import build_fabric
from harness.invariants.collectives import COLLECTIVE_ORDER
from harness.invariants.forwarding import Flows
from harness.invariants.forwarding import Resources
from harness.invariants.forwarding import flow_paths
from harness.invariants.network import FloatArray
from harness.invariants.network import Network
from harness.invariants.traffic import _evaluate

PARAMS = (("sus", 4), ("nodes_per_su", 1), ("node", "a800"), ("spines", 4), ("leaf_radix", 16))
F = build_fabric(FabricRef(generator="two-tier", params=PARAMS))
LS = F.links_of_kind(LinkKind.LEAF_SPINE)
RAIL0 = [F.index[f"su0{s}/leaf-r0"] for s in range(1, 5)]
NC = len(COLLECTIVE_ORDER)
SPINES = [F.index[f"spine-0{s}"] for s in range(1, 5)]


def cable(leaf: int, spine: int) -> int:
    """The cable between rail 0's leaf of SU ``leaf`` and spine ``spine`` (1-based)."""
    a, b = RAIL0[leaf - 1], SPINES[spine - 1]
    return int(LS[(F.link_a[LS] == a) & (F.link_b[LS] == b)][0])


def network(cut: list[int]) -> Network:
    cap = F.link_capacity.copy()
    cap[cut] = 0.0
    return Network.of(F, np.ones(F.n_elements, bool), cap, np.full(F.n_elements, 25.0))


def flows(pairs: list[tuple[int, int]]) -> Flows:
    """One 200 Gb/s flow per (source leaf, destination leaf) of rail 0 (SUs 1-based)."""
    n = len(pairs)
    ints = np.zeros(n, dtype=np.int64)
    la = np.array([RAIL0[a - 1] for a, _ in pairs], dtype=np.int64)
    lb = np.array([RAIL0[b - 1] for _, b in pairs], dtype=np.int64)
    ones = np.ones(n)
    src = np.arange(n, dtype=np.int64)
    return Flows(ints, src, src + n, ints, la, lb, ints, np.full(n, 25.0), ones, ones)


def rates(net: Network, fl: Flows) -> FloatArray:
    """Each flow's share of its demand (one flow per group, so each is its own group)."""
    n = fl.src.size
    fl = Flows(np.arange(n) * NC, *(getattr(fl, k) for k in (
        "src", "dst", "slot", "leaf_a", "leaf_b", "key", "demand", "scale", "weight")))  # fmt: skip
    res = Resources(net)
    paths = flow_paths(net, fl, res, "adaptive", 0)
    best, _ = _evaluate(net, fl, paths, res, n)
    return best.reshape(n, NC)[:, 0] / 25.0


def test_healthy_paths_are_the_pooled_model() -> None:
    net = network([])
    fl = flows([(1, 2), (1, 3), (4, 1)])
    res = Resources(net)
    paths = flow_paths(net, fl, res, "adaptive", 0)
    assert paths.shape == (3, 5)
    assert (paths[:, 0] == res.leaf_up + fl.leaf_a).all()
    assert (paths[:, 1] == res.leaf_down + fl.leaf_b).all()
    assert net.adaptive_pools.full.all()


def test_overlapping_classes_share_their_union() -> None:
    cut = [cable(2, 3), cable(2, 4), cable(3, 1), cable(3, 4)]
    net = network(cut)
    got = rates(net, flows([(1, 2), (1, 2), (1, 3), (1, 3)]))
    assert got.tolist() == [0.75] * 4  # 4 flows on leaf 1's cables to spines 1-3
    assert rates(net, flows([(1, 2), (1, 3), (1, 4), (1, 4)])).tolist() == [1.0] * 4
    # the pooled model of every live uplink would have said 1.0: four flows, four cables
    assert rates(network([]), flows([(1, 2), (1, 2), (1, 3), (1, 3)])).tolist() == [1.0] * 4
    ap = net.adaptive_pools
    mine = [tuple(ap.spines(p)) for p in np.flatnonzero(ap.leaf == RAIL0[0]).tolist()]
    assert tuple(SPINES[:3]) in mine  # the union of {1, 2} and {2, 3}


def feasible(net: Network, pairs: list[tuple[int, int]], down: bool) -> bool:
    """Whether the flows' climb (or descent) fits: a max-flow flow -> spine -> cable."""
    spine_row, leaf_col, reaches = net.spine_reaches
    n = len(pairs)
    nodes = 2 + n + 4 * 4  # source, sink, flows, (leaf, spine) cables
    rows, cols, vals = [], [], []
    for k, (a, b) in enumerate(pairs):
        rows.append(0)
        cols.append(2 + k)
        vals.append(2)
        for s in range(4):
            ok = reaches[spine_row[SPINES[s]], leaf_col[RAIL0[a - 1]]] and reaches[
                spine_row[SPINES[s]], leaf_col[RAIL0[b - 1]]]  # fmt: skip
            if ok:
                rows.append(2 + k)
                cols.append(2 + n + 4 * ((b if down else a) - 1) + s)
                vals.append(2)
    for leaf in range(4):
        for s in range(4):
            rows.append(2 + n + 4 * leaf + s)
            cols.append(1)
            vals.append(2 if net.cap[cable(leaf + 1, s + 1)] > 0 else 0)
    g = csr_array((np.array(vals, dtype=np.int32), (rows, cols)), shape=(nodes, nodes))
    return bool(maximum_flow(g, 0, 1).flow_value == 2 * n)


PAIR = st.tuples(st.integers(1, 4), st.integers(1, 4)).filter(lambda p: p[0] != p[1])


@settings(max_examples=40, deadline=None)
@given(
    cut=st.sets(st.tuples(st.integers(1, 4), st.integers(1, 4)), max_size=8),
    pairs=st.lists(PAIR, min_size=1, max_size=8),
)
def test_full_rate_exactly_when_a_balanced_routing_exists(
    cut: set[tuple[int, int]], pairs: list[tuple[int, int]]
) -> None:
    net = network([cable(a, s) for a, s in sorted(cut)])
    got = rates(net, flows(pairs))
    routable = [feasible(net, [p], down=False) for p in pairs]
    live = [p for p, ok in zip(pairs, routable, strict=True) if ok]
    assert [g > 0 for g in got.tolist()] == routable  # no admissible spine: no path
    fits = feasible(net, live, down=False) and feasible(net, live, down=True)
    assert all(g == 1.0 for g, ok in zip(got.tolist(), routable, strict=True) if ok) == fits
