"""The live fabric as the flow engine reads it: wiring tables, live capacities, pod-pair capacity.

:class:`Network` holds the element state, link capacities and NIC rates a
placement runs on, and the tables read off them (rail NICs, access ports,
leaf uplinks in port order, pooled uplink capacity); :func:`pod_pair_gbps`
is the exact up-down max-flow between two pods.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_flow

from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind
from harness.invariants.adaptive import AdaptivePools
from harness.invariants.adaptive import adaptive_pools

IntArray = npt.NDArray[np.int64]


FloatArray = npt.NDArray[np.float64]


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
        """The network of a fabric's element states, link capacities and NIC rates."""
        return cls(fabric, up, cap, nic_rate)

    # fabric tables (wiring only) ---------------------------------------------------
    @cached_property
    def server_row(self) -> IntArray:
        """Element index -> its row among the servers (-1 for what is no server)."""
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
        """The number of pods (1 unless the fabric has three tiers)."""
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
    def port_rank(self) -> IntArray:
        """(NIC, port slot) -> its access cable's place among its leaf's access cables, in
        leaf port order from 0 (0: none): the index OpenSM's ftree gives the compute node
        port (``fabric_route_to_cns`` routes a leaf's nodes in port order, each to the least
        loaded up port group: on a healthy leaf, position mod up groups)."""
        table, _ = self.access
        f = self.fabric
        out = np.zeros(table.shape, dtype=np.int64)
        nic, slot = np.nonzero(table >= 0)
        link = table[nic, slot]
        order = np.lexsort((f.link_b_port[link], f.link_b[link]))
        leaf = f.link_b[link][order]
        starts = np.r_[0, np.flatnonzero(np.diff(leaf)) + 1] if leaf.size else leaf
        first = np.repeat(starts, np.diff(np.r_[starts, leaf.size]))
        out[nic[order], slot[order]] = np.arange(leaf.size) - first
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
        """The links of ``links`` that have capacity left."""
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
    def adaptive_pools(self) -> AdaptivePools:
        """Every leaf's pools of uplinks under adaptive forwarding (:mod:`~.adaptive`)."""
        return adaptive_pools(self)

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


def pod_nic_gbps(fabric: Fabric) -> FloatArray:
    """Per pod: the healthy Gb/s of its rail NICs' access cables (what it can offer)."""
    acc = fabric.links_of_kind(LinkKind.ACCESS)
    leaf = fabric.link_b[acc]
    pods = int(fabric.pod.max()) + 1
    out: FloatArray = np.bincount(
        fabric.pod[leaf], weights=fabric.link_capacity[acc], minlength=pods
    ).astype(np.float64)
    return out
