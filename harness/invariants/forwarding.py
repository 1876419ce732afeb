"""Paths of flows under the forwarding models: pooled (adaptive), d-mod-k (static), hashed (ecmp).

A flow between two leaves climbs to a spine (and in three tiers, between
pods, through the cores) and comes down, over the links the forwarding
model (:data:`harness.fabric.routing.Forwarding`) gives it:

``adaptive``
    flows are spread over the live uplinks whose spine still reaches the
    destination leaf (InfiniBand adaptive routing, Spectrum-X): a flow is on
    the pool of its leaf's uplinks it can use and on every larger pool of
    that leaf (and the same coming down into the destination leaf), as
    :mod:`harness.invariants.adaptive` derives them; in a healthy or
    symmetric state that is one pool per leaf and direction, all its live
    uplinks.  A pod's core uplinks are pooled.
``static``
    per-destination tables as OpenSM's ftree/updn builds them: every flow to
    one destination takes the same uplink, the leaf's live uplinks that lead
    to the destination's leaf, in port order, picked by the destination's
    port on its leaf modulo their number (``d-mod-k``).  The spine comes down
    to the destination leaf on its live cables picked the same way.
``ecmp``
    per-flow hashing (RoCE with BGP, RFC 7938): every switch a flow crosses
    hashes it onto one of its next hops that still lead to the destination,
    each hop with its own hash of (source, destination, port): the leaf's
    uplink and the spine's downlink in two tiers; between pods of three tiers
    also the spine's core uplink and the core's downlink
    (:mod:`harness.invariants.ecmp`, which states the assumption about hash
    polarisation).  The expected bus bandwidth is the mean over
    :data:`~harness.invariants.traffic.ECMP_DRAWS` seeded hash functions; the
    worst of them is reported beside it.

In three tiers, under ``static`` and ``adaptive``, flows between pods climb
through their leaf's uplinks (chosen as above), then share the pods' core
uplinks and the **pod-pair capacity** (the exact up-down max-flow between
the two pods, :func:`~harness.invariants.network.pod_pair_gbps`) as pooled
capacities; they come down pooled over the destination leaf's uplinks.  That
pools what adaptive routing spreads over the cores; for OpenSM's ftree it is
an optimistic bound (ftree assigns each destination one path through the
cores too, so destinations can collide on a core cable that the pool counts
as shared capacity).  Only ``ecmp`` is hashed
cable by cable through the cores.

:func:`flow_paths` gives each flow its path as resource ids (:class:`Resources`:
cable directions and pooled capacities).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.fabric.routing import Forwarding
from harness.invariants.ecmp import hop_key
from harness.invariants.ecmp import inter_pod_paths
from harness.invariants.network import FloatArray
from harness.invariants.network import IntArray
from harness.invariants.network import Network

PATH_RESOURCES = 5  # resources per flow: leaf up, leaf down, pod up, pod down, pod pair
# (adaptive forwarding adds columns after these: the larger pools a flow is also on)


@dataclass(frozen=True, slots=True)
class Flows:
    """Port-level flows of every job and collective (one row each)."""

    group: IntArray  # job * len(COLLECTIVE_ORDER) + collective
    src: IntArray  # NIC
    dst: IntArray  # NIC
    slot: IntArray  # port slot
    leaf_a: IntArray
    leaf_b: IntArray
    key: IntArray  # destination's port on its leaf (static d-mod-k)
    demand: FloatArray  # GB/s of the rank-level flow
    scale: FloatArray  # nominal per-rank volume / 1 (so demand x scale = a full NIC)
    weight: FloatArray  # share of the rank-level flow on this port (1 / common live ports)

    @property
    def gbps(self) -> FloatArray:
        """Offered load on the links of the path (Gb/s)."""
        return self.demand * self.weight * 8.0


class Resources:
    """Resource ids of link directions and pooled capacities, and their live Gb/s."""

    def __init__(self, net: Network) -> None:
        self.net = net
        f = net.fabric
        self.n_links = f.n_links
        self.n = f.n_elements
        self.p = net.pods
        # id layout: cable up 2*l, cable down 2*l+1, leaf up pool, leaf down pool,
        # pod up, pod down, pod pair, then adaptive pools (up 2p, down 2p + 1)
        self.leaf_up = 2 * self.n_links
        self.leaf_down = self.leaf_up + self.n
        self.pod_up = self.leaf_down + self.n
        self.pod_down = self.pod_up + self.p
        self.pair = self.pod_down + self.p
        self.extra = self.pair + self.p * self.p

    def pool_ids(self, pools: IntArray, down: bool) -> IntArray:
        """Resource ids of adaptive pools (:attr:`Network.adaptive_pools` indices, -1: none):
        a leaf's pool of every live uplink is the leaf's pooled uplinks."""
        ap = self.net.adaptive_pools
        safe = np.maximum(pools, 0)
        whole = (self.leaf_down if down else self.leaf_up) + ap.leaf[safe]
        ids = np.where(ap.full[safe], whole, self.extra + 2 * safe + int(down))
        return np.where(pools >= 0, ids, -1).astype(np.int64)

    def capacity(self, ids: IntArray) -> FloatArray:
        """The live Gb/s of each resource id (link directions and pooled capacities)."""
        net = self.net
        out = np.zeros(ids.size)
        cable = ids < self.leaf_up
        out[cable] = net.cap[ids[cable] // 2]
        pool = (ids >= self.leaf_up) & (ids < self.pod_up)
        leaf = (ids[pool] - self.leaf_up) % self.n
        out[pool] = net.leaf_up_gbps[leaf]
        pod = (ids >= self.pod_up) & (ids < self.pair)
        out[pod] = net.pod_up_gbps[(ids[pod] - self.pod_up) % self.p]
        for k in np.flatnonzero((ids >= self.pair) & (ids < self.extra)).tolist():
            a, b = divmod(int(ids[k]) - self.pair, self.p)
            out[k] = net.pair_gbps(a, b)
        extra = ids >= self.extra
        if extra.any():
            out[extra] = net.adaptive_pools.gbps[(ids[extra] - self.extra) // 2]
        return out

    def describe(self, rid: int) -> str:
        """A resource id in words (``cable ID (up)``, ``LEAF uplinks (down)``...)."""
        f = self.net.fabric
        if rid < self.leaf_up:
            link, down = divmod(rid, 2)
            return f"cable {f.link_ids[link]} ({'down' if down else 'up'})"
        if rid < self.pod_up:
            leaf = (rid - self.leaf_up) % self.n
            return f"{f.ids[leaf]} uplinks ({'down' if rid >= self.leaf_down else 'up'})"
        if rid < self.pair:
            pod = (rid - self.pod_up) % self.p
            return f"pod {pod} core uplinks ({'down' if rid >= self.pod_down else 'up'})"
        if rid >= self.extra:
            ap = self.net.adaptive_pools
            p, down = divmod(rid - self.extra, 2)
            to = ", ".join(f.ids[s] for s in ap.spines(p))
            return f"{f.ids[ap.leaf[p]]} uplinks to {to} ({'down' if down else 'up'})"
        a, b = divmod(rid - self.pair, self.p)
        return f"pod {a} -> pod {b} capacity"


def flow_paths(net: Network, fl: Flows, res: Resources, forwarding: Forwarding,
           seed: int) -> IntArray:  # fmt: skip
    """Per flow: the resource ids of its path (-1 padded); a flow with no path gets -2."""
    f = net.fabric
    n = fl.src.size
    out = np.full((n, PATH_RESOURCES), -1, dtype=np.int64)
    cross = (fl.leaf_a >= 0) & (fl.leaf_a != fl.leaf_b)
    out[fl.leaf_a < 0, 0] = -2  # no live common port: no path
    if not cross.any():
        return out
    pod_a = np.where(fl.leaf_a >= 0, f.pod[np.maximum(fl.leaf_a, 0)], 0)
    pod_b = np.where(fl.leaf_b >= 0, f.pod[np.maximum(fl.leaf_b, 0)], 0)
    inter = cross & (f.tiers == 3) & (pod_a != pod_b)
    if forwarding == "ecmp" and inter.any():  # hashed at every hop (:mod:`.ecmp`)
        rows = np.flatnonzero(inter)
        got = inter_pod_paths(net, fl.src[rows], fl.dst[rows], fl.slot[rows],
                              leaves=(fl.leaf_a[rows], fl.leaf_b[rows]), seed=seed)  # fmt: skip
        out[rows, : got.shape[1]] = got
        cross, inter = cross & ~inter, np.zeros_like(inter)
    if inter.any():
        out[inter, 2] = res.pod_up + pod_a[inter]
        out[inter, 3] = res.pod_down + pod_b[inter]
        out[inter, 4] = res.pair + pod_a[inter] * res.p + pod_b[inter]
    if forwarding == "adaptive":
        return _adaptive_paths(fl, res, out, cross, inter)
    if forwarding == "static":
        key_up = key_down = fl.key
    else:
        key_up = hop_key(fl.src, fl.dst, fl.slot, seed, 0)
        key_down = hop_key(fl.src, fl.dst, fl.slot, seed, 3)
    out[inter, 1] = res.leaf_down + fl.leaf_b[inter]
    pairs = np.stack([fl.leaf_a, np.where(inter, -1, fl.leaf_b)], axis=1)
    idx = np.flatnonzero(cross)
    uniq, inv = np.unique(pairs[idx], axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(uniq.shape[0] + 1))
    for u in range(uniq.shape[0]):
        rows = idx[order[bounds[u] : bounds[u + 1]]]
        la, lb = int(uniq[u, 0]), int(uniq[u, 1])
        ups = net.live_links(net.uplinks.get(la, np.zeros(0, dtype=np.int64)))
        ups = ups[net.up[f.link_b[ups]]]
        if lb < 0:  # to another pod: an uplink whose spine still reaches the cores
            ups = ups[net._core_reach[f.link_b[ups]]]
        else:
            spine_row, leaf_col, reaches = net.spine_reaches
            ups = ups[reaches[spine_row[f.link_b[ups]], leaf_col[lb]]]
        if not ups.size:
            out[rows, 0] = -2
            continue
        up = ups[key_up[rows] % ups.size]
        out[rows, 0] = 2 * up
        if lb < 0:
            continue
        spines = f.link_b[up]
        for s in np.unique(spines).tolist():
            sel = rows[spines == s]
            downs = net.live_links(net.downlinks[(int(s), lb)])
            out[sel, 1] = 2 * downs[key_down[sel] % downs.size] + 1
    return out


def _adaptive_paths(
    fl: Flows, res: Resources, out: IntArray, cross: npt.NDArray[np.bool_],
    inter: npt.NDArray[np.bool_],
) -> IntArray:  # fmt: skip
    """Adaptive paths: the pools of the flow's admissible uplinks and every larger pool of
    its leaf, up and down (:mod:`harness.invariants.adaptive`); none: no path (-2)."""
    ap = res.net.adaptive_pools
    idx = np.flatnonzero(cross)
    ca, cb = ap.leaf_col[fl.leaf_a[idx]], ap.leaf_col[fl.leaf_b[idx]]
    ok = (ca >= 0) & (cb >= 0)
    sa, sb, far = np.maximum(ca, 0), np.maximum(cb, 0), inter[idx]
    up = np.where(ok, np.where(far, ap.inter[sa], ap.intra[sa, sb]), -1)
    down = np.where(ok, np.where(far, ap.inter[sb], ap.intra[sb, sa]), -1)
    ok = (up >= 0) & (down >= 0)
    out[idx[~ok]] = -1
    out[idx[~ok], 0] = -2
    idx, up, down = idx[ok], up[ok], down[ok]
    out[idx, 0] = res.pool_ids(up, down=False)
    out[idx, 1] = res.pool_ids(down, down=True)
    more = np.concatenate([res.pool_ids(ap.supersets[up], down=False),
                           res.pool_ids(ap.supersets[down], down=True)], axis=1)  # fmt: skip
    used = (more >= 0).any(axis=0)
    if not used.any():
        return out
    wide = np.full((out.shape[0], int(used.sum())), -1, dtype=np.int64)
    wide[idx] = more[:, used]
    return np.concatenate([out, wide], axis=1)
