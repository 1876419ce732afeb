"""Paths between NICs and GPUs over the live switch graph (pure).

Every shortest live path is as good (ECMP): compare lengths and tiers, not ids.
Path classes between two GPUs: ``nvlink`` (same server, 0 switches), ``pcie``
(same server, through the CPUs), ``rail-local`` (one leaf), ``cross-rail``
(same SU: leaf, spine, leaf), ``cross-su`` (different SUs, through a spine),
``cross-pod`` (through a core); ``hops`` counts the switches traversed.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.invariants.servers import ServerView
from harness.invariants.topology import live_switch_links
from harness.invariants.topology import nic_leaves
from harness.observation import Observation

Route = tuple[int, ...]


def switch_graph(fabric: Fabric, obs: Observation) -> csr_matrix:
    """The live switch graph as a sparse adjacency matrix over element indices."""
    links = live_switch_links(fabric, obs)
    n = fabric.n_elements
    return coo_matrix(
        (np.ones(links.size), (fabric.link_a[links], fabric.link_b[links])), shape=(n, n)
    ).tocsr()


def _shortest(graph: csr_matrix, leaves_a: list[int], leaves_b: list[int]) -> Route | None:
    """The switches of one shortest path from a leaf of ``leaves_a`` to one of ``leaves_b``."""
    dist, pred = shortest_path(
        graph, directed=False, unweighted=True, indices=leaves_a, return_predecessors=True
    )
    sub = dist[:, leaves_b]
    if not np.isfinite(sub.min()):
        return None
    i, j = np.unravel_index(int(np.argmin(sub)), sub.shape)
    node, hops = leaves_b[int(j)], []
    while node >= 0:
        hops.append(int(node))
        if node == leaves_a[int(i)]:
            break
        node = int(pred[int(i), node])
    return tuple(reversed(hops))


def nic_route(fabric: Fabric, obs: Observation, graph: csr_matrix, a: int, b: int) -> Route | None:
    """The switches of one shortest live path from NIC ``a`` to NIC ``b`` (None: none)."""
    if not (obs.element_up[a] and obs.element_up[b]):
        return None
    leaves_a, leaves_b = nic_leaves(fabric, obs, a), nic_leaves(fabric, obs, b)
    if not leaves_a or not leaves_b:
        return None
    return _shortest(graph, leaves_a, leaves_b)


def lookup_gpu(fabric: Fabric, gid: str) -> int:
    """The element index of GPU ``gid`` (a :class:`ScenarioError` naming the closest id if not)."""
    f = fabric
    i = f.index.get(gid)
    if i is None or f.kind[i] != int(Kind.GPU):
        from harness.suggest import closest

        near = closest(gid, [f.ids[g] for g in f.gpus.tolist()], n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = f"{gid!r} is not a GPU of fabric {f.name!r}{hint}"
        raise ScenarioError(msg)
    return i


def gpu_path(
    fabric: Fabric,
    obs: Observation,
    view: ServerView,
    graph: csr_matrix,
    pair: tuple[int, int],
    *,
    pxn: bool = False,
) -> tuple[str, int]:
    """(path class, switches traversed) of the best live path between a ``pair`` of GPUs."""
    f = fabric
    a, b = pair
    if not (obs.element_up[a] and obs.element_up[b]):
        return "disconnected", -1
    sa, sb = int(f.parent[a]), int(f.parent[b])
    if sa == sb:
        if any(a in gr and b in gr for gr in view.nvlink_groups(sa)):
            return "nvlink", 0
        if any(a in gr and b in gr for gr in view.intra_groups(sa)):
            return "pcie", 0
        return "disconnected", -1

    def sources(g: int, srv: int) -> list[int]:
        if not pxn:
            return view.gpu_nics(g)
        for group in view.nvlink_groups(srv):
            if g in group:
                return [n for h in group for n in view.gpu_nics(h)]
        return []

    leaves_a = sorted({x for n in sources(a, sa) for x in nic_leaves(f, obs, n)})
    leaves_b = sorted({x for n in sources(b, sb) for x in nic_leaves(f, obs, n)})
    if not leaves_a or not leaves_b:
        return "disconnected", -1
    route = _shortest(graph, leaves_a, leaves_b)
    if route is None:
        return "disconnected", -1
    return path_class(f, route, sa, sb), len(route)


def path_class(fabric: Fabric, route: Route, server_a: int, server_b: int) -> str:
    """The class of a route of switches between two servers."""
    f = fabric
    if len(route) == 1:
        return "rail-local"
    if any(f.kind[s] == int(Kind.CORE) for s in route):
        return "cross-pod"
    if int(f.su[server_a]) == int(f.su[server_b]):
        return "cross-rail"
    return "cross-su"
