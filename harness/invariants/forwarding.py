"""Paths of flows under the forwarding models: pooled (adaptive), d-mod-k (static), hashed (ecmp).

A flow between two leaves climbs to a spine (and in three tiers, between
pods, through the cores) and comes down, over the links the forwarding
model (:data:`harness.fabric.routing.Forwarding`) gives it:

``adaptive``
    flows are spread over every live uplink (InfiniBand adaptive routing,
    Spectrum-X): a leaf's live uplinks are one pooled capacity per
    direction, as are a pod's core uplinks.
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

from harness.fabric.routing import Forwarding
from harness.invariants.ecmp import hop_key
from harness.invariants.ecmp import inter_pod_paths
from harness.invariants.network import FloatArray
from harness.invariants.network import IntArray
from harness.invariants.network import Network

PATH_RESOURCES = 5  # resources per flow at most: leaf up, leaf down, pod up, pod down, pod pair


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
        # pod up, pod down, pod pair
        self.leaf_up = 2 * self.n_links
        self.leaf_down = self.leaf_up + self.n
        self.pod_up = self.leaf_down + self.n
        self.pod_down = self.pod_up + self.p
        self.pair = self.pod_down + self.p

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
        for k in np.flatnonzero(ids >= self.pair).tolist():
            a, b = divmod(int(ids[k]) - self.pair, self.p)
            out[k] = net.pair_gbps(a, b)
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
        out[cross, 0] = res.leaf_up + fl.leaf_a[cross]
        out[cross, 1] = res.leaf_down + fl.leaf_b[cross]
        return out
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
