"""Paths between NICs and GPUs over the routes the fabric's routing uses (pure).

Under ``up-down`` routing (the default; see :mod:`harness.invariants.reach`) a
route climbs from the source leaf and descends to the destination leaf, never
down and up again through a lower tier; under ``shortest`` any live path.  The
route is a shortest one of those (every shortest route is as good, ECMP:
compare lengths and tiers, not ids).
Path classes between two GPUs: ``nvlink`` (same server, 0 switches), ``pcie``
(same server, through the CPUs), ``rail-local`` (one leaf), ``cross-rail``
(same SU: leaf, spine, leaf), ``cross-su`` (different SUs, through a spine),
``cross-pod`` (through a core); ``hops`` counts the switches traversed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from harness.errors import ScenarioError
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.routing import PathRule
from harness.invariants.servers import ServerView
from harness.invariants.state import Observation
from harness.invariants.topology import kind_mask
from harness.invariants.topology import live_switch_links
from harness.invariants.topology import nic_leaves

Route = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RouteGraph:
    """The graph routes are searched in.

    ``shortest``: the live switch graph over element indices.  ``up-down``:
    two copies of it, directed: element ``x`` going up is node ``x``, going
    down is node ``n + x``; up-links lead up in the first copy and down in the
    second, and every switch may turn from up to down (``x -> n + x``), never
    back, so every path is up-down.
    """

    rule: PathRule
    matrix: csr_matrix
    n: int

    def ends(self, leaves_a: list[int], leaves_b: list[int]) -> tuple[list[int], list[int]]:
        """The nodes a route starts at and ends at."""
        if self.rule == "shortest":
            return leaves_a, leaves_b
        return leaves_a, [self.n + x for x in leaves_b]


def switch_graph(fabric: Fabric, obs: Observation, rule: PathRule) -> RouteGraph:
    """The graph routes under ``rule`` are searched in."""
    links = live_switch_links(fabric, obs)
    n = fabric.n_elements
    lo, hi = fabric.link_a[links], fabric.link_b[links]
    if rule == "shortest":
        m = coo_matrix((np.ones(links.size), (lo, hi)), shape=(n, n)).tocsr()
        return RouteGraph(rule, m, n)
    turn = np.flatnonzero(kind_mask(fabric, COMPUTE_SWITCH_KINDS) & obs.element_up)
    rows = np.concatenate([lo, n + hi, turn])
    cols = np.concatenate([hi, n + lo, n + turn])
    m = coo_matrix((np.ones(rows.size), (rows, cols)), shape=(2 * n, 2 * n)).tocsr()
    return RouteGraph(rule, m, n)


def _shortest(graph: RouteGraph, leaves_a: list[int], leaves_b: list[int]) -> Route | None:
    """The switches of one shortest route from a leaf of ``leaves_a`` to one of ``leaves_b``."""
    src, dst = graph.ends(leaves_a, leaves_b)
    dist, pred = shortest_path(
        graph.matrix,
        directed=graph.rule != "shortest",
        unweighted=True,
        indices=src,
        return_predecessors=True,
    )
    sub = dist[:, dst]
    if not np.isfinite(sub.min()):
        return None
    i, j = np.unravel_index(int(np.argmin(sub)), sub.shape)
    node, nodes = dst[int(j)], []
    while node >= 0:
        nodes.append(int(node))
        if node == src[int(i)]:
            break
        node = int(pred[int(i), node])
    route: list[int] = []
    for x in reversed(nodes):  # the turn from up to down stays at one switch
        if not route or route[-1] != x % graph.n:
            route.append(x % graph.n)
    return tuple(route)


def nic_route(fabric: Fabric, obs: Observation, graph: RouteGraph, a: int, b: int) -> Route | None:
    """The switches of one shortest route from NIC ``a`` to NIC ``b`` (None: none)."""
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
        from harness.inputs.suggest import closest

        near = closest(gid, [f.ids[g] for g in f.gpus.tolist()], n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = f"{gid!r} is not a GPU of fabric {f.name!r}{hint}"
        raise ScenarioError(msg)
    return i


def gpu_path(
    fabric: Fabric,
    obs: Observation,
    view: ServerView,
    graph: RouteGraph,
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
