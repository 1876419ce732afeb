"""What the live hardware can carry: NIC and NVLink rates, leaf and pod uplinks, bisection (pure).

* **NIC rate**: min(live ports, its PCIe path) in GB/s (PCIe Gen4 x16 moves
  about 26 GB/s effective, which caps a 400G NIC behind it).
* **Leaf uplink ratio**: live / healthy uplink capacity, minimum over live leaves.
* **Bisection**: exact max-flow (``scipy.sparse.csgraph.maximum_flow``,
  integers in units of 0.1 Gb/s) from the NICs of the first half of the SUs to
  those of the second half over live cables.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_flow

from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants.servers import ServerView
from harness.invariants.servers import internal_adjacency
from harness.invariants.state import Observation
from harness.invariants.topology import IntArray
from harness.invariants.topology import live_switch_links

FloatArray = npt.NDArray[np.float64]


def leaf_uplinks(fabric: Fabric, obs: Observation) -> tuple[FloatArray, FloatArray]:
    """Per element: live and healthy uplink capacity (Gb/s) of leaves."""
    f = fabric
    links = f.links_by_kind[LinkKind.LEAF_SPINE]
    live: FloatArray = np.bincount(
        f.link_a[links], weights=obs.link_capacity[links], minlength=f.n_elements
    ).astype(np.float64)
    full: FloatArray = np.bincount(
        f.link_a[links], weights=f.link_capacity[links], minlength=f.n_elements
    ).astype(np.float64)
    return live, full


def pod_uplinks(fabric: Fabric, obs: Observation) -> tuple[dict[int, float], dict[int, float]]:
    """Per pod: live and healthy spine-core uplink capacity (Gb/s)."""
    f = fabric
    links = f.links_by_kind[LinkKind.SPINE_CORE]
    live: dict[int, float] = defaultdict(float)
    full: dict[int, float] = defaultdict(float)
    pods = f.pod[f.link_a[links]].tolist()
    for p, c, h in zip(pods, obs.link_capacity[links].tolist(), f.link_capacity[links].tolist(),
                       strict=True):  # fmt: skip
        live[p] += c
        full[p] += h
    return live, full


def leaf_uplink_ratio(
    fabric: Fabric,
    obs: Observation,
    uplinks: tuple[FloatArray, FloatArray],
    leaf: str | None = None,
) -> float:
    """Live / healthy uplinks of ``leaf``, or the minimum over the live leaves."""
    live, full = uplinks
    f = fabric
    if leaf is not None:
        i = f.index.get(leaf)
        if i is None or f.kind[i] != int(Kind.LEAF):
            msg = f"{leaf!r} is not a leaf of fabric {f.name!r}"
            raise ScenarioError(msg)
        return float(live[i] / full[i]) if full[i] else 0.0
    leaves = f.leaves[obs.element_up[f.leaves]]
    if not leaves.size or not full[leaves].any():
        return 0.0
    has = leaves[full[leaves] > 0]
    return float((live[has] / full[has]).min())


def leaf_set_uplink_ratio(uplinks: tuple[FloatArray, FloatArray], leaves: set[int]) -> float:
    """Live / healthy uplinks of the least served of ``leaves`` (1 when none has uplinks)."""
    live, full = uplinks
    ratios = [float(live[x] / full[x]) for x in sorted(leaves) if full[x] > 0]
    return min(ratios, default=1.0)


def nic_rates(fabric: Fabric, obs: Observation, comp: IntArray) -> FloatArray:
    """Per element: usable rate of a rail NIC in GB/s (live ports, PCIe path); 0 else."""
    ports, path = nic_rate_terms(fabric, obs, comp)
    rate = nic_rate(ports, path)
    rate = np.where((fabric.kind == int(Kind.NIC)) & obs.element_up, rate, 0.0)
    rate.flags.writeable = False
    return rate


def nic_rate(ports: FloatArray, path: FloatArray) -> FloatArray:
    """A live NIC's rate (GB/s) from its live port Gb/s and its PCIe path Gb/s."""
    out: FloatArray = np.minimum(ports, path) / 8.0
    return out


def nic_rate_terms(
    fabric: Fabric, obs: Observation, comp: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Per element: the Gb/s of a NIC's live access ports (to a live switch) and of its PCIe
    path (its PCIe link, and what the GPUs behind that PCIe switch can feed it)."""
    f = fabric
    up, cap = obs.element_up, obs.link_capacity
    n = f.n_elements
    acc = f.links_by_kind[LinkKind.ACCESS]
    ok = comp[f.link_b[acc]] >= 0
    ports: FloatArray = np.bincount(f.link_a[acc], weights=cap[acc] * ok, minlength=n).astype(
        np.float64
    )
    pcie = f.links_by_kind[LinkKind.PCIE]
    a, b = f.link_a[pcie], f.link_b[pcie]
    from_gpu = f.kind[a] == int(Kind.GPU)
    gpu_side = np.bincount(b[from_gpu], weights=cap[pcie][from_gpu] * up[a[from_gpu]], minlength=n)
    from_nic = f.kind[a] == int(Kind.NIC)
    nic_pcie = np.zeros(n)
    nic_pcie[a[from_nic]] = cap[pcie][from_nic] * up[b[from_nic]]
    gpu_of_nic = np.zeros(n)
    gpu_of_nic[a[from_nic]] = gpu_side[b[from_nic]]
    path: FloatArray = np.minimum(nic_pcie, gpu_of_nic)
    return ports, path


def nvlink_rates(fabric: Fabric, obs: Observation) -> FloatArray:
    """Per element: bidirectional NVLink GB/s of a GPU through live NVSwitches."""
    f = fabric
    nv = f.links_by_kind[LinkKind.NVLINK]
    a, b = f.link_a[nv], f.link_b[nv]
    total = np.bincount(
        a, weights=obs.link_capacity[nv] * obs.element_up[b], minlength=f.n_elements
    )
    rate = np.where(obs.element_up, total / 8.0 * 2, 0.0)
    rate.flags.writeable = False
    return rate


def intra_gbs(
    fabric: Fabric, obs: Observation, view: ServerView, nvlink: FloatArray, gpu: int
) -> float:
    """One-way bandwidth a GPU has to the other GPUs of its server (GB/s).

    NVLink (half the bidirectional figure ``nvlink``); with no NVLink left, its
    PCIe link, if the server's GPUs can still reach each other through the CPUs.
    """
    nv = float(nvlink[gpu]) / 2
    if nv > 0 or not obs.element_up[gpu]:
        return nv
    f = fabric
    srv = int(f.parent[gpu])
    if not any(gpu in g and len(g) > 1 for g in view.intra_groups(srv)):
        return 0.0 if len(view.parts(srv, Kind.GPU)) > 1 else float("inf")
    return max(
        (float(obs.link_capacity[link]) / 8.0 for sw, link in internal_adjacency(f, gpu)
         if f.kind[sw] == int(Kind.PCIE_SWITCH)),
        default=0.0,
    )  # fmt: skip


def bisection_gbps(fabric: Fabric, obs: Observation) -> float:
    """Exact max-flow between the NICs of the two halves of the SUs (Gb/s)."""
    f = fabric
    if f.n_sus < 2:
        msg = f"bisection needs at least 2 SUs; fabric {f.name!r} has {f.n_sus}"
        raise ScenarioError(msg)
    cap = obs.link_capacity
    half = (f.n_sus + 1) // 2
    n = f.n_elements
    src, dst = n, n + 1
    sw_links = live_switch_links(f, obs)
    units = np.floor(cap * 10).astype(np.int64)  # 0.1 Gb/s units
    rows = [f.link_a[sw_links], f.link_b[sw_links]]
    cols = [f.link_b[sw_links], f.link_a[sw_links]]
    vals = [units[sw_links], units[sw_links]]
    acc = f.links_by_kind[LinkKind.ACCESS]
    acc = acc[cap[acc] > 0]
    leaf = f.link_b[acc]
    side_a = f.su[leaf] <= half
    rows += [np.full(int(side_a.sum()), src), leaf[~side_a]]
    cols += [leaf[side_a], np.full(int((~side_a).sum()), dst)]
    vals += [units[acc][side_a], units[acc][~side_a]]
    m = coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n + 2, n + 2),
    ).tocsr()
    m.sum_duplicates()
    if m.data.size and m.data.max() > np.iinfo(np.int32).max:
        msg = "bisection capacities overflow 32-bit flow units"
        raise ScenarioError(msg)
    flow_graph = csr_array((m.data.astype(np.int32), m.indices, m.indptr), shape=m.shape)
    return float(maximum_flow(flow_graph, src, dst).flow_value) / 10.0
