"""Traffic of jobs: the flows each collective places on each link, and what is left of them (pure).

A job runs its collectives over its servers in **rank order** (the order of
its server list).  On every rail each collective is a set of flows between the
rail NICs of two ranks (NCCL uses the same rail on both ends; port ``p`` of a
NIC talks to port ``p`` of the other: the same plane):

``ring``
    rank ``i`` -> rank ``i+1`` (NCCL's ring all-reduce; two ranks: both ways).
``tree``
    NCCL's double binary tree (``ncclGetDtree``, ``src/graph/trees.cc``): the
    binary tree of :func:`btree_parent` plus its mirror (even rank counts) or
    the same tree shifted by one rank (odd); every parent-child edge carries
    data both ways (reduce up, broadcast down), in both trees.
``all-to-all``
    every rank to every other rank.

Each flow asks for its fair share of the NICs at both ends
(``rate / flows out`` at the sender, ``rate / flows in`` at the receiver).
A flow between NICs on one leaf crosses only that leaf; a flow between two
leaves climbs to a spine (and in three tiers, between pods, through the
cores) and comes down, over the links the **forwarding** model gives it:

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
    per-flow hashing (RoCE with BGP, RFC 7938): each flow's uplink and
    downlink are drawn by a hash of (source, destination, port).  The
    expected bus bandwidth is the mean over :data:`ECMP_DRAWS` seeded hash
    functions; the worst of them is reported beside it.

In three tiers, flows between pods climb through their leaf's uplinks (chosen
as above), then share the pods' core uplinks and the **pod-pair capacity**
(the exact up-down max-flow between the two pods, :func:`pod_pair_gbps`) as
pooled capacities, whatever the forwarding; they come down pooled over the
destination leaf's uplinks.

Every link direction is shared in proportion to what its flows ask: a flow
gets ``min(1, capacity / offered load)`` of its demand on the most loaded
link of its path.  All placed jobs load the links at once (the planning view:
lost ones too); for the other jobs, the heaviest of their collectives on each
link.  A collective's bus bandwidth is ``rails x`` the slowest flow's rate
scaled to a full NIC: on a healthy non-blocking fabric it is the rails' line
rate, for every collective; a link that must carry more than it can slows the
collective by the worst flow's share (NCCL splits a collective evenly over its
channels, so the slowest one paces it).  A job's bandwidth is the worst of
its collectives.

>>> from harness.fabric import preset
>>> from harness.fabric.jobs import Job
>>> import numpy as np
>>> f = preset("seed-a800")
>>> su = lambda s: [f.index[f"su{s:02d}/node{n:02d}"] for n in range(1, 21)]
>>> interleaved = Job("mixed", tuple(x for pair in zip(su(1), su(2)) for x in pair))
>>> cap = f.link_capacity.copy()
>>> cap[np.isin(f.link_b, f.spines[1:])] = 0.0  # every spine but spine-01 drained
>>> net = Network.of(f, np.ones(f.n_elements, bool), cap, np.full(f.n_elements, 25.0))
>>> [round(c.busbw_gbs / 100, 3) for c in job_traffic(net, [interleaved])[0].collectives]
[0.05, 0.05]
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from functools import cached_property
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_flow

from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Forwarding = Literal["static", "adaptive", "ecmp"]
FORWARDINGS: tuple[Forwarding, ...] = ("static", "adaptive", "ecmp")
DEFAULT_FORWARDING: Forwarding = "static"
"""OpenSM's ftree/updn/minhop tables are static per destination unless adaptive routing is on."""
COLLECTIVE_ORDER: tuple[Collective, ...] = ("ring", "tree", "all-to-all")
ECMP_DRAWS = 16
"""Seeded hash functions an ``ecmp`` estimate averages over (and takes the worst of)."""
_PATH = 5  # resources per flow at most: leaf up, leaf down, pod up, pod down, pod pair


# -- ranks -> flows -------------------------------------------------------------------
def btree_parent(n: int, rank: int) -> int:
    """The parent of ``rank`` in NCCL's binary tree over ``n`` ranks (-1: the root).

    Follows ``ncclGetBtree``: the lowest set bit of the rank decides its level;
    the parent sets the next bit (or, out of range, only clears its own).

    >>> [btree_parent(14, r) for r in range(14)]
    [-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12]
    """
    if rank == 0:
        return -1
    bit = 1
    while bit < n and not bit & rank:
        bit <<= 1
    up = (rank ^ bit) | (bit << 1)
    return rank ^ bit if up >= n else up


def dtree_parents(n: int) -> tuple[list[int], list[int]]:
    """Parents in NCCL's two trees: the binary tree, and its mirror (even n) or shift (odd n).

    >>> dtree_parents(4)
    ([-1, 2, 0, 2], [1, 3, 1, -1])
    >>> dtree_parents(3)
    ([-1, 0, 0], [2, -1, 1])
    """
    first = [btree_parent(n, r) for r in range(n)]
    second = []
    for r in range(n):
        if n % 2:
            u = btree_parent(n, (r - 1) % n)
            second.append(-1 if u < 0 else (u + 1) % n)
        else:
            u = btree_parent(n, n - 1 - r)
            second.append(-1 if u < 0 else n - 1 - u)
    return first, second


@cache
def rank_flows(collective: Collective, n: int) -> tuple[IntArray, IntArray]:
    """Directed flows (sender ranks, receiver ranks) of one collective over ``n`` ranks.

    >>> [list(x) for x in rank_flows("ring", 3)]
    [[0, 1, 2], [1, 2, 0]]
    >>> len(rank_flows("tree", 8)[0]), len(rank_flows("all-to-all", 8)[0])
    (28, 56)
    """
    pairs: list[tuple[int, int]] = []
    if n >= 2:
        if collective == "ring":
            pairs = [(0, 1), (1, 0)] if n == 2 else [(i, (i + 1) % n) for i in range(n)]
        elif collective == "tree":
            for parents in dtree_parents(n):
                for child, parent in enumerate(parents):
                    if parent >= 0:
                        pairs += [(child, parent), (parent, child)]
        else:
            pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    src, dst = arr[:, 0].copy(), arr[:, 1].copy()
    src.flags.writeable = False
    dst.flags.writeable = False
    return src, dst


# -- the fabric as the flow engine reads it ---------------------------------------------
@dataclass(frozen=True, eq=False)
class Network:
    """The live fabric the flows run on: element state, link capacities, NIC rates (GB/s)."""

    fabric: Fabric
    up: npt.NDArray[np.bool_]
    cap: FloatArray
    nic_rate: FloatArray

    @classmethod
    def of(
        cls,
        fabric: Fabric,
        up: npt.NDArray[np.bool_],
        cap: FloatArray,
        nic_rate: FloatArray,
    ) -> Network:
        return cls(fabric, up, cap, nic_rate)

    # fabric tables (wiring only) ---------------------------------------------------
    @cached_property
    def server_row(self) -> IntArray:
        f = self.fabric
        row = np.full(f.n_elements, -1, dtype=np.int64)
        row[f.servers] = np.arange(f.servers.size)
        return row

    @cached_property
    def rail_nics(self) -> IntArray:
        """(server row, rail) -> the server's NIC on that rail (-1: none)."""
        f = self.fabric
        out = np.full((f.servers.size, max(f.rails, 1)), -1, dtype=np.int64)
        nics = f.nics
        rails = f.rail[nics]
        ok = rails >= 0
        out[self.server_row[f.parent[nics[ok]]], rails[ok]] = nics[ok]
        return out

    @cached_property
    def access(self) -> tuple[IntArray, IntArray]:
        """(NIC, port slot) -> its access cable (-1: none), and the number of port slots."""
        f = self.fabric
        acc = f.links_of_kind(LinkKind.ACCESS)
        ports = f.link_a_port[acc].astype(np.int64)
        slots = int(ports.max()) if ports.size else 1
        table = np.full((f.n_elements, max(slots, 1)), -1, dtype=np.int64)
        table[f.link_a[acc], np.maximum(ports, 1) - 1] = acc
        return table, np.array([slots])

    @cached_property
    def uplinks(self) -> dict[int, IntArray]:
        """Leaf -> its leaf-spine cables in port order."""
        f = self.fabric
        links = f.links_of_kind(LinkKind.LEAF_SPINE)
        order = np.lexsort((f.link_a_port[links], f.link_a[links]))
        links = links[order]
        out: dict[int, IntArray] = {}
        leaves, starts = np.unique(f.link_a[links], return_index=True)
        for leaf, part in zip(leaves.tolist(), np.split(links, starts[1:]), strict=True):
            out[int(leaf)] = part.astype(np.int64)
        return out

    @cached_property
    def downlinks(self) -> dict[tuple[int, int], IntArray]:
        """(spine, leaf) -> the cables between them in port order."""
        out: dict[tuple[int, int], list[int]] = defaultdict(list)
        f = self.fabric
        for leaf, links in self.uplinks.items():
            for link in links.tolist():
                out[int(f.link_b[link]), leaf].append(link)
        return {k: np.array(v, dtype=np.int64) for k, v in out.items()}

    @cached_property
    def pods(self) -> int:
        return int(self.fabric.pod.max()) + 1 if self.fabric.tiers == 3 else 1

    # live state ------------------------------------------------------------------
    @cached_property
    def port_leaf(self) -> IntArray:
        """(NIC, port slot) -> the leaf its live access cable reaches (-1: none)."""
        f = self.fabric
        table, _ = self.access
        out = np.full(table.shape, -1, dtype=np.int64)
        has = table >= 0
        link = table[has]
        leaf = f.link_b[link]
        nic = f.link_a[link]
        live = (self.cap[link] > 0) & self.up[leaf] & self.up[nic]
        out[has] = np.where(live, leaf, -1)
        return out

    @cached_property
    def port_number(self) -> IntArray:
        """(NIC, port slot) -> the leaf port its access cable plugs into (0: none)."""
        table, _ = self.access
        out = np.zeros(table.shape, dtype=np.int64)
        has = table >= 0
        out[has] = self.fabric.link_b_port[table[has]]
        return out

    @cached_property
    def leaf_up_gbps(self) -> FloatArray:
        """Per element: live leaf-spine Gb/s of a leaf (one direction)."""
        f = self.fabric
        links = f.links_of_kind(LinkKind.LEAF_SPINE)
        out: FloatArray = np.bincount(
            f.link_a[links], weights=self.cap[links], minlength=f.n_elements
        ).astype(np.float64)
        return out

    @cached_property
    def pod_up_gbps(self) -> FloatArray:
        """Per pod: live spine-core Gb/s (one direction)."""
        f = self.fabric
        links = f.links_of_kind(LinkKind.SPINE_CORE)
        return np.bincount(
            f.pod[f.link_a[links]], weights=self.cap[links], minlength=self.pods
        ).astype(np.float64)

    @cached_property
    def _core_reach(self) -> npt.NDArray[np.bool_]:
        """Per element: a spine with a live core uplink."""
        f = self.fabric
        links = f.links_of_kind(LinkKind.SPINE_CORE)
        out = np.zeros(f.n_elements, dtype=bool)
        out[f.link_a[links][self.cap[links] > 0]] = True
        return out

    def live_links(self, links: IntArray) -> IntArray:
        return links[self.cap[links] > 0]

    @cached_property
    def spine_reaches(self) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_]]:
        """Row per spine, column per leaf: is there a live cable between them?"""
        f = self.fabric
        links = f.links_of_kind(LinkKind.LEAF_SPINE)
        live = links[self.cap[links] > 0]
        spine_row = np.full(f.n_elements, -1, dtype=np.int64)
        leaf_col = np.full(f.n_elements, -1, dtype=np.int64)
        spines = np.unique(f.link_b[links])
        leaves = np.unique(f.link_a[links])
        spine_row[spines] = np.arange(spines.size)
        leaf_col[leaves] = np.arange(leaves.size)
        out = np.zeros((max(spines.size, 1), max(leaves.size, 1)), dtype=bool)
        out[spine_row[f.link_b[live]], leaf_col[f.link_a[live]]] = True
        return spine_row, leaf_col, out

    @cached_property
    def pod_core_gbps(self) -> FloatArray:
        """(pod, core) -> live Gb/s between the pod's spines and that core (three tiers)."""
        f = self.fabric
        cores = f.cores
        out = np.zeros((self.pods, max(cores.size, 1)))
        if f.tiers != 3 or not cores.size:
            return out
        pos = np.full(f.n_elements, -1, dtype=np.int64)
        pos[cores] = np.arange(cores.size)
        links = f.links_of_kind(LinkKind.SPINE_CORE)
        np.add.at(out, (f.pod[f.link_a[links]], pos[f.link_b[links]]), self.cap[links])
        return out

    @cached_property
    def pod_leaf_gbps(self) -> FloatArray:
        """Per pod: live leaf-spine Gb/s (one direction)."""
        f = self.fabric
        links = f.links_of_kind(LinkKind.LEAF_SPINE)
        return np.bincount(
            f.pod[f.link_a[links]], weights=self.cap[links], minlength=self.pods
        ).astype(np.float64)

    def pair_gbps(self, pod_a: int, pod_b: int) -> float:
        """Live Gb/s from pod ``pod_a`` to pod ``pod_b`` through the cores.

        Each core carries what both pods' spines can send it and take from it,
        ``min(pod a -> core, core -> pod b)``, summed over the cores, and no
        more than either pod's leaf tier: the up-down max-flow when the spines
        are not the bottleneck (as in every generated fabric: a spine has as
        many ports up as down); :func:`pod_pair_gbps` is the exact max-flow.
        """
        x = self.pod_core_gbps
        through = float(np.minimum(x[pod_a], x[pod_b]).sum())
        return min(through, float(self.pod_leaf_gbps[pod_a]), float(self.pod_leaf_gbps[pod_b]))


def pod_pair_gbps(net: Network, pod_a: int, pod_b: int) -> float:
    """Live capacity (Gb/s) from the leaves of pod ``pod_a`` to those of pod ``pod_b``.

    The exact max-flow over up-down paths only (leaf -> spine -> core -> spine
    -> leaf; no valley through a third pod), in units of 0.1 Gb/s.
    """
    f = net.fabric
    if f.tiers != 3 or pod_a == pod_b:
        return float("inf")
    ls = f.links_of_kind(LinkKind.LEAF_SPINE)
    sc = f.links_of_kind(LinkKind.SPINE_CORE)
    ls = ls[net.cap[ls] > 0]
    sc = sc[net.cap[sc] > 0]
    units = np.floor(net.cap * 10).astype(np.int64)
    pod_leaf = f.pod[f.link_a[ls]]
    pod_spine = f.pod[f.link_a[sc]]
    n = f.n_elements
    # two copies of the switches: the climb (index i) and the descent (n + i)
    src, dst = 2 * n, 2 * n + 1
    up_a = ls[pod_leaf == pod_a]
    core_a = sc[pod_spine == pod_a]
    core_b = sc[pod_spine == pod_b]
    down_b = ls[pod_leaf == pod_b]
    leaves_a = np.unique(f.link_a[up_a])
    leaves_b = np.unique(f.link_a[down_b])
    if not (leaves_a.size and leaves_b.size):
        return 0.0  # a pod with no live leaf uplink sends or takes nothing
    big = np.int64(np.iinfo(np.int32).max // 4)
    rows = [
        np.full(leaves_a.size, src), f.link_a[up_a], f.link_a[core_a], n + f.link_b[core_b],
        n + f.link_b[down_b], n + leaves_b,
    ]  # fmt: skip
    cols = [
        leaves_a, f.link_b[up_a], f.link_b[core_a], n + f.link_a[core_b], n + f.link_a[down_b],
        np.full(leaves_b.size, dst),
    ]  # fmt: skip
    vals = [
        np.full(leaves_a.size, big), units[up_a], units[core_a], units[core_b], units[down_b],
        np.full(leaves_b.size, big),
    ]  # fmt: skip
    # a core is one switch: its climb copy hands over to its descent copy
    cores = f.cores
    rows.append(cores)
    cols.append(n + cores)
    vals.append(np.full(cores.size, big))
    r = np.concatenate(rows).astype(np.int64)
    c = np.concatenate(cols).astype(np.int64)
    v = np.concatenate(vals).astype(np.int64)
    used, inv = np.unique(np.concatenate([r, c]), return_inverse=True)
    ri, ci = inv[: r.size], inv[r.size :]
    m = coo_matrix((v, (ri, ci)), shape=(used.size, used.size)).tocsr()
    m.sum_duplicates()
    m.data = np.minimum(m.data, big)
    g = csr_array((m.data.astype(np.int32), m.indices, m.indptr), shape=m.shape)
    s = int(np.searchsorted(used, src))
    t = int(np.searchsorted(used, dst))
    return float(maximum_flow(g, s, t).flow_value) / 10.0


# -- results -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CollectiveBandwidth:
    """Bus bandwidth of one collective of a job, and the link that paces it."""

    collective: Collective
    busbw_gbs: float  # expected (ecmp: mean over the seeded hashes)
    worst_gbs: float  # ecmp: the worst seeded hash; otherwise the same as busbw_gbs
    bottleneck: str = ""  # the most loaded link of the slowest flow ("" when none is over)


@dataclass(frozen=True, slots=True)
class JobTraffic:
    """What a job's collectives get from the fabric."""

    name: str
    forwarding: Forwarding
    collectives: tuple[CollectiveBandwidth, ...]
    cross_leaf_flows: int  # flows of the job (all collectives, all rails) between two leaves
    pod_pair_gbps: float | None  # least live capacity between two pods the job spans

    @property
    def worst(self) -> CollectiveBandwidth | None:
        """The collective with the least bus bandwidth (the job's bandwidth)."""
        return min(self.collectives, key=lambda c: c.busbw_gbs, default=None)


# -- placing flows -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Flows:
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


def _place(net: Network, jobs: Sequence[Job]) -> _Flows:
    """Every port-level flow of every job's collectives, in one pass per (size, collective)."""
    nc = len(COLLECTIVE_ORDER)
    cols: dict[str, list[npt.NDArray[np.int64] | FloatArray]] = defaultdict(list)
    _, nslots_arr = net.access
    nslots = int(nslots_arr[0])
    rails = net.rail_nics.shape[1]
    batches: dict[tuple[Collective, int], list[int]] = defaultdict(list)
    for j, job in enumerate(jobs):
        for collective in job.collectives:
            batches[collective, len(job.servers)].append(j)
    for (collective, n), members in batches.items():
        s_rank, d_rank = rank_flows(collective, n)
        if not s_rank.size:
            continue
        out_deg = np.bincount(s_rank, minlength=n)
        in_deg = np.bincount(d_rank, minlength=n)
        volume = float(max(out_deg.max(), in_deg.max()))
        rows = net.server_row[np.array([jobs[j].servers for j in members], dtype=np.int64)]
        # (job, rail, flow) flattened
        a = net.rail_nics[rows[:, s_rank]].transpose(0, 2, 1).reshape(-1)
        b = net.rail_nics[rows[:, d_rank]].transpose(0, 2, 1).reshape(-1)
        per = rails * s_rank.size
        job_idx = np.repeat(np.array(members, dtype=np.int64), per)
        src_rank = np.tile(s_rank, len(members) * rails)
        dst_rank = np.tile(d_rank, len(members) * rails)
        ok = (a >= 0) & (b >= 0)
        a, b, job_idx = a[ok], b[ok], job_idx[ok]
        demand = np.minimum(
            net.nic_rate[a] / out_deg[src_rank[ok]], net.nic_rate[b] / in_deg[dst_rank[ok]]
        )
        la_all = net.port_leaf[a]
        lb_all = net.port_leaf[b]
        both = (la_all >= 0) & (lb_all >= 0)
        common = both.sum(axis=1)
        none = common == 0
        group = job_idx * nc + COLLECTIVE_ORDER.index(collective)
        for p in range(nslots):
            take = both[:, p] | (none & (p == 0))
            k = int(take.sum())
            if not k:
                continue
            cols["group"].append(group[take])
            cols["src"].append(a[take])
            cols["dst"].append(b[take])
            cols["slot"].append(np.full(k, p))
            cols["leaf_a"].append(np.where(both[take, p], la_all[take, p], -1))
            cols["leaf_b"].append(np.where(both[take, p], lb_all[take, p], -1))
            cols["key"].append(net.port_number[b[take], p])
            cols["demand"].append(np.where(none[take], 0.0, demand[take]))
            cols["scale"].append(np.full(k, volume))
            cols["weight"].append(1.0 / np.maximum(common[take], 1))
    if not cols:
        e = np.zeros(0, dtype=np.int64)
        z = np.zeros(0)
        return _Flows(e, e, e, e, e, e, e, z, z, z)
    cat = {k: np.concatenate(v) for k, v in cols.items()}
    return _Flows(
        cat["group"].astype(np.int64), cat["src"].astype(np.int64),
        cat["dst"].astype(np.int64), cat["slot"].astype(np.int64),
        cat["leaf_a"].astype(np.int64), cat["leaf_b"].astype(np.int64),
        cat["key"].astype(np.int64), cat["demand"].astype(np.float64),
        cat["scale"].astype(np.float64), cat["weight"].astype(np.float64),
    )  # fmt: skip


def _mix(x: IntArray) -> IntArray:
    """A 64-bit integer hash (splitmix64's finaliser), elementwise."""
    z = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(1)).astype(np.int64)


class _Resources:
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


def _paths(net: Network, fl: _Flows, res: _Resources, forwarding: Forwarding,
           seed: int) -> IntArray:  # fmt: skip
    """Per flow: the resource ids of its path (-1 padded); a flow with no path gets -2."""
    f = net.fabric
    n = fl.src.size
    out = np.full((n, _PATH), -1, dtype=np.int64)
    cross = (fl.leaf_a >= 0) & (fl.leaf_a != fl.leaf_b)
    out[fl.leaf_a < 0, 0] = -2  # no live common port: no path
    if not cross.any():
        return out
    pod_a = np.where(fl.leaf_a >= 0, f.pod[np.maximum(fl.leaf_a, 0)], 0)
    pod_b = np.where(fl.leaf_b >= 0, f.pod[np.maximum(fl.leaf_b, 0)], 0)
    inter = cross & (f.tiers == 3) & (pod_a != pod_b)
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
        base = (fl.src * np.int64(1_000_003) + fl.dst) * np.int64(8) + fl.slot
        key_up = _mix(base ^ _mix(np.full(n, 2 * seed + 1, dtype=np.int64)))
        key_down = _mix(base ^ _mix(np.full(n, 2 * seed + 2, dtype=np.int64)))
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


def _evaluate(
    net: Network, fl: _Flows, paths: IntArray, res: _Resources, n_jobs: int
) -> tuple[FloatArray, list[str]]:
    """Per group (job x collective): the slowest flow's rate at full scale (GB/s), and why."""
    nc = len(COLLECTIVE_ORDER)
    groups = n_jobs * nc
    value = fl.demand * fl.scale
    dead = paths[:, 0] == -2
    why = [""] * groups
    has = paths >= 0
    if has.any():
        rows, cols = np.nonzero(has)
        ids = paths[rows, cols]
        uniq, inv = np.unique(ids, return_inverse=True)
        load = np.zeros((groups, uniq.size))
        np.add.at(load, (fl.group[rows], inv), fl.gbps[rows])
        per_job = load.reshape(n_jobs, nc, uniq.size)
        heaviest = per_job.max(axis=1)
        others = heaviest.sum(axis=0)[None, :] - heaviest  # (jobs, resources)
        total = per_job + others[:, None, :]
        cap = res.capacity(uniq)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(total > 0, np.minimum(1.0, cap[None, None, :] / total), 1.0)
        ratio = ratio.reshape(groups, uniq.size)
        share = np.ones((fl.src.size, _PATH))
        share[rows, cols] = ratio[fl.group[rows], inv]
        worst_col = share.argmin(axis=1)
        slow = share.min(axis=1)
        value = value * slow
        flat_total = total.reshape(groups, uniq.size)
    value = np.where(dead, 0.0, value)
    best = np.full(groups, np.inf)
    np.minimum.at(best, fl.group, value)
    if has.any():
        order = np.lexsort((value, fl.group))  # per group, its slowest flow first
        g_sorted = fl.group[order]
        firsts = np.r_[0, np.flatnonzero(np.diff(g_sorted)) + 1] if order.size else order
        for at in firsts.tolist():
            k, g = int(order[at]), int(g_sorted[at])
            if dead[k]:
                why[g] = "no live up-down path between the ranks' leaves"
                continue
            if slow[k] >= 1.0:
                continue
            rid = int(paths[k, worst_col[k]])
            u = int(np.searchsorted(uniq, rid))
            why[g] = (
                f"{res.describe(rid)}: {cap[u]:g} Gb/s live for {flat_total[g, u]:.4g} Gb/s offered"
            )
    return best, why


def _over_draws(values: list[FloatArray], groups: int, rails: int) -> tuple[FloatArray, FloatArray]:
    """Expected (mean over the hash draws) and worst bus bandwidth per group, over all rails."""
    stack = np.stack(values) if values else np.zeros((1, groups))
    return stack.mean(axis=0) * rails, stack.min(axis=0) * rails


def job_traffic(
    net: Network, jobs: Sequence[Job], forwarding: Forwarding = "static"
) -> tuple[JobTraffic, ...]:
    """Bus bandwidth per collective of every job (GB/s over all rails; inf: no flow)."""
    fl = _place(net, jobs)
    res = _Resources(net)
    nc = len(COLLECTIVE_ORDER)
    rails = net.fabric.rails
    draws = ECMP_DRAWS if forwarding == "ecmp" else 1
    values = []
    why: list[str] = []
    for seed in range(draws):
        paths = _paths(net, fl, res, forwarding, seed)
        v, w = _evaluate(net, fl, paths, res, len(jobs))
        values.append(v)
        if seed == 0 or not why:
            why = w
    expected, worst = _over_draws(values, len(jobs) * nc, rails)
    out = []
    f = net.fabric
    cross = (fl.leaf_a >= 0) & (fl.leaf_a != fl.leaf_b)
    job_of = fl.group // nc
    for j, job in enumerate(jobs):
        cb = tuple(
            CollectiveBandwidth(c, float(expected[j * nc + COLLECTIVE_ORDER.index(c)]),
                                float(worst[j * nc + COLLECTIVE_ORDER.index(c)]),
                                why[j * nc + COLLECTIVE_ORDER.index(c)])
            for c in job.collectives
        )  # fmt: skip
        mine = cross & (job_of == j)
        pair: float | None = None
        if f.tiers == 3 and mine.any():
            pa = f.pod[fl.leaf_a[mine]]
            pb = f.pod[fl.leaf_b[mine]]
            between = {(int(a), int(b)) for a, b in zip(pa.tolist(), pb.tolist(), strict=True)
                       if a != b}  # fmt: skip
            if between:
                pair = min(net.pair_gbps(a, b) for a, b in sorted(between))
        out.append(JobTraffic(job.name, forwarding, cb, int(mine.sum()), pair))
    return tuple(out)


def pod_nic_gbps(fabric: Fabric) -> FloatArray:
    """Per pod: the healthy Gb/s of its rail NICs' access cables (what it can offer)."""
    acc = fabric.links_of_kind(LinkKind.ACCESS)
    leaf = fabric.link_b[acc]
    pods = int(fabric.pod.max()) + 1
    out: FloatArray = np.bincount(
        fabric.pod[leaf], weights=fabric.link_capacity[acc], minlength=pods
    ).astype(np.float64)
    return out


class LeafLocalFlows:
    """One job's flows when no flow of any job crosses two leaves: fast re-evaluation.

    Then no flow takes a cable or a pooled capacity, so jobs do not share
    anything and a flow's rate is its demand, ``min(rate of the sender /
    flows out, rate of the receiver / flows in)``, or 0 when the two NICs
    have no live port of one plane in common: exactly what :func:`job_traffic`
    computes in that case (the same float operations).  :meth:`busbw` gives
    each collective's bus bandwidth after some NICs changed their rate or
    lost ports, re-evaluating only the flows of those NICs (the failure
    sweep's fast path).
    """

    def __init__(self, net: Network, job: Job, forwarding: Forwarding) -> None:
        self.job = job
        self.rails = net.fabric.rails
        self.draws = ECMP_DRAWS if forwarding == "ecmp" else 1
        self.rate = net.nic_rate
        self.live = net.port_leaf >= 0  # (NIC, port slot) -> a live port
        self._rows: dict[int, tuple[bool, ...]] = {}  # NIC -> its live port slots
        rows = net.server_row[np.array(job.servers, dtype=np.int64)]
        self.flows: list[_LocalCollective] = []
        for collective in job.collectives:
            s_rank, d_rank = rank_flows(collective, len(job.servers))
            out_deg = np.bincount(s_rank, minlength=len(job.servers))
            in_deg = np.bincount(d_rank, minlength=len(job.servers))
            volume = float(max(out_deg.max(), in_deg.max())) if s_rank.size else 0.0
            a = net.rail_nics[rows[s_rank]].T.reshape(-1)  # rail-major
            b = net.rail_nics[rows[d_rank]].T.reshape(-1)
            n_out = np.tile(out_deg[s_rank], self.rails).astype(np.float64)
            n_in = np.tile(in_deg[d_rank], self.rails).astype(np.float64)
            ok = (a >= 0) & (b >= 0)
            a, b, n_out, n_in = a[ok], b[ok], n_out[ok], n_in[ok]
            common = (self.live[a] & self.live[b]).any(axis=1)
            demand = np.minimum(self.rate[a] / n_out, self.rate[b] / n_in)
            value = np.where(common, demand, 0.0) * volume  # as job_traffic's demand x scale
            of_nic: dict[int, list[int]] = defaultdict(list)
            for k, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
                of_nic[x].append(k)
                if y != x:
                    of_nic[y].append(k)
            self.flows.append(_LocalCollective(
                a.tolist(), b.tolist(), n_out.tolist(), n_in.tolist(), volume, value.tolist(),
                np.argsort(value, kind="stable").tolist(), dict(of_nic),
            ))  # fmt: skip

    def _live_row(self, nic: int) -> tuple[bool, ...]:
        got = self._rows.get(nic)
        if got is None:
            got = self._rows[nic] = tuple(bool(x) for x in self.live[nic])
        return got

    def busbw(
        self, rate: dict[int, float], lost_slots: dict[int, set[int]]
    ) -> dict[Collective, float]:
        """Bus bandwidth (GB/s) per collective once the NICs in ``rate`` run at that rate
        (GB/s) and the NICs in ``lost_slots`` lost those port slots (0-based)."""
        touched = set(rate) | set(lost_slots)

        def rate_of(nic: int) -> float:
            return rate[nic] if nic in rate else float(self.rate[nic])

        rows: dict[int, list[bool]] = {}

        def live_of(nic: int) -> list[bool]:
            row = rows.get(nic)
            if row is None:
                row = rows[nic] = list(self._live_row(nic))
                for slot in lost_slots.get(nic, ()):
                    row[slot] = False
            return row

        best = []
        for c in self.flows:
            hit = {k for nic in touched for k in c.of_nic.get(nic, ())}
            low = next((c.value[k] for k in c.order if k not in hit), math.inf)
            for k in hit:
                x, y = c.a[k], c.b[k]
                common = any(p and q for p, q in zip(live_of(x), live_of(y), strict=True))
                demand = min(rate_of(x) / c.n_out[k], rate_of(y) / c.n_in[k])
                low = min(low, (demand if common else 0.0) * c.volume)
            best.append(low)
        if self.draws == 1:  # the mean of one draw is the draw itself
            expected = [v * self.rails for v in best]
        else:  # the same reduction as job_traffic's (two columns at least)
            padded = np.array([*best, 0.0])
            expected = _over_draws([padded] * self.draws, padded.size, self.rails)[0].tolist()
        return dict(zip(self.job.collectives, expected[: len(best)], strict=True))


@dataclass(frozen=True, slots=True)
class _LocalCollective:
    """One collective's flows over all rails (:class:`LeafLocalFlows`), as Python lists."""

    a: list[int]  # sender NIC
    b: list[int]  # receiver NIC
    n_out: list[float]  # flows out of the sender's rank
    n_in: list[float]  # flows into the receiver's rank
    volume: float  # per-rank volume (scale to a full NIC)
    value: list[float]  # the flow's rate x volume in the base
    order: list[int]  # flows by value, slowest first
    of_nic: dict[int, list[int]]  # NIC -> its flows
