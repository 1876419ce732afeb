"""Evaluate many small failure cases against one base state, fast (core layer, pure).

The naive way to sweep single failures copies the graph, removes the element
and recomputes components and job survival from scratch: one graph search per
case.  :class:`CaseEvaluator` does one linear pass instead:

1. the base state is analysed once (which leaves reach which under the path
   rule, which NIC ports reach which *class* of leaves, which GPUs have no
   fabric path, which jobs are already lost, the leaves' uplink capacity, the
   flows of the jobs);
2. when every live NIC port of the base reaches exactly one class of leaves
   (one class on a connected fabric; one per plane on a dual-ToR fabric,
   whose NIC ports ``p`` all hang on the leaves of plane ``p``), each class
   gets an up-down index (:class:`~harness.invariants.reach.UpDownIndex`;
   under ``shortest`` the articulation points and bridges of the switch
   graph).  A case that splits no class has a local effect: the NIC ports it
   takes down (what the GPUs behind them still reach, per class; which jobs
   lose a NIC or a plane), the uplink capacity it removes, and the bandwidth
   of the jobs whose flows it touches.  That is computed in time
   proportional to what the case touches; when no flow of any job crosses
   two leaves, only the flows of the NICs that lost ports are evaluated
   again (:class:`~harness.invariants.leaf_flows.LeafLocalFlows`), otherwise
   the flows are placed again on the case's fabric;
3. a case that does split a class (an articulation point, a bridge, or for
   pairs a 2-cut), or a base whose NIC ports reach several classes at once
   (a valley, say), is evaluated by the full
   :class:`~harness.invariants.analysis.Analysis` (``exact`` path), so results are
   always exact; the row says which path ran.

The tests compare both paths case by case (``tests/unit/test_sweep.py`` on
every case of small fabrics, ``tests/properties/test_prop_sweep.py`` on drawn
fabrics, faults, jobs, path rules, forwarding models and the bisection).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property

import networkx as nx
import numpy as np
import numpy.typing as npt

from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import DEFAULT_FORWARDING
from harness.fabric.routing import Forwarding
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.fault import FaultState
from harness.faults.selectors import Selector
from harness.invariants import bandwidth
from harness.invariants.analysis import Analysis
from harness.invariants.capacity import nic_rate
from harness.invariants.capacity import nic_rate_terms
from harness.invariants.connectivity import cross_bad_pairs
from harness.invariants.connectivity import intra_bad_pairs
from harness.invariants.connectivity import server_pairs_term
from harness.invariants.leaf_flows import LeafLocalFlows
from harness.invariants.reach import PathRule
from harness.invariants.reach import Signature
from harness.invariants.reach import UpDownIndex
from harness.invariants.state import Observation
from harness.invariants.topology import components
from harness.invariants.verdicts import tolerant

COMPUTE_CABLES = (LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
_SWITCH_KIND_CODES = frozenset(int(k) for k in COMPUTE_SWITCH_KINDS)


@functools.cache
def _category(kind: str, code: int) -> str:
    """A failure's category from its kind and the element's (or the cable's) kind code."""
    if kind == "element":
        return Kind(code).label
    tier = LinkKind(code).label
    return f"optic ({tier})" if kind == "optic" else f"cable ({tier})"


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed thing of a case, named by its id.

    ``kind``: ``"element"`` (killed: a switch, server, NIC...), ``"link"`` (a cut
    cable) or ``"optic"`` (one end of a cable).  ``id``: the element id, the cable
    id, or for an optic the port id (``ELEMENT:PORT``), as scenario files write
    them.  ``index`` is the position in the fabric's arrays (the element; for
    links and optics the cable) that the evaluator works with.

    >>> from harness.fabric import preset
    >>> f = preset("seed-a800")
    >>> Failure.of(f, "spine-05")
    Failure(kind='element', id='spine-05')
    >>> Failure.of(f, "su01/leaf-r0:21").describe()
    'optic su01/leaf-r0:21'
    """

    kind: str  # "element" | "link" | "optic"
    index: int = field(repr=False)  # element index; link and optic: the cable's index
    id: str  # element id, cable id, or port id (optic)

    @classmethod
    def of(cls, fabric: Fabric, target: str) -> Failure:
        """The failure of ``target``: an element id (killed), a cable id (cut) or a
        port id ``ELEMENT:PORT`` (its optic)."""
        if target in fabric.index:
            return cls("element", fabric.index[target], target)
        if target in fabric.port_index:
            return cls("optic", fabric.port_index[target][0], target)
        if target in fabric.link_index:
            return cls("link", fabric.link_index[target], target)
        msg = f"{target!r} is not an element, cable or port id of fabric {fabric.name!r}"
        raise ScenarioError(msg)

    @property
    def port(self) -> str:
        """The port id of an optic failure ("" otherwise)."""
        return self.id if self.kind == "optic" else ""

    @property
    def fault(self) -> str:
        """The scenario-file fault kind: ``kill``, ``cut`` or ``optic``."""
        return {"element": "kill", "link": "cut"}.get(self.kind, self.kind)

    def describe(self) -> str:
        """``kill spine-05``, ``cut CABLE``, ``optic PORT``."""
        return f"{self.fault} {self.id}"

    def label(self, fabric: Fabric | None = None) -> str:
        """The id (``optic PORT`` for an optic), as sweep tables show it."""
        return f"optic {self.id}" if self.kind == "optic" else self.id

    def category(self, fabric: Fabric) -> str:
        if self.kind == "element":
            return _category(self.kind, int(fabric.kind[self.index]))
        return _category(self.kind, int(fabric.link_kind[self.index]))

    def to_fault(self, fabric: Fabric) -> AppliedFault:
        if self.kind == "element":
            sel = Selector(ids=(self.id,))
            return AppliedFault(Fault(FaultKind.KILL, sel), (self.index,), (), ())
        if self.kind == "optic":
            sel = Selector(ids=(self.id,))
            return AppliedFault(Fault(FaultKind.OPTIC, sel), (), (self.index,), (0.0,), (self.id,))
        sel = Selector(ids=(self.id,))
        return AppliedFault(Fault(FaultKind.CUT, sel), (), (self.index,), (0.0,))


@dataclass(frozen=True, slots=True)
class CaseResult:
    """What one case does to the fabric."""

    failures: tuple[Failure, ...]
    pairs_disconnected: int  # GPU pairs that cannot talk, PXN allowed
    pairs_disconnected_direct: int  # ... without PXN
    jobs_lost: tuple[str, ...]  # jobs lost by this case (beyond the base)
    leaf_uplink_ratio: float  # min over live leaves, vs healthy (or the reference)
    min_busbw_ratio: float  # min over jobs (lost: 0), vs healthy (or the reference)
    storage_ratio: float  # min over live servers of storage bond vs healthy (or the reference)
    exact: bool  # True: evaluated by the full Analysis
    bisection_ratio: float | None = None
    reasons: tuple[str, ...] = field(default=())

    @property
    def ids(self) -> tuple[str, ...]:
        """The ids of what failed in this case (element, cable or port ids)."""
        return tuple(f.id for f in self.failures)

    def label(self, fabric: Fabric | None = None) -> str:
        return " + ".join(f.label() for f in self.failures)

    def category(self, fabric: Fabric) -> str:
        return " + ".join(f.category(fabric) for f in self.failures)


def _relabel(r: CaseResult, failures: tuple[Failure, ...]) -> CaseResult:
    """``r`` for other failures that do exactly the same (a NIC and its cable, say); what
    ``dataclasses.replace`` does, without its look-ups."""
    return CaseResult(
        failures, r.pairs_disconnected, r.pairs_disconnected_direct, r.jobs_lost,
        r.leaf_uplink_ratio, r.min_busbw_ratio, r.storage_ratio, r.exact, r.bisection_ratio,
        r.reasons,
    )  # fmt: skip


def _empty_pairs(n: int, e: int) -> int:
    """GPU pairs with an empty side among ``n`` GPUs of which ``e`` reach nothing (see
    :meth:`CaseEvaluator._inter_pairs`)."""
    return e * (n - e) + e * (e - 1) // 2


def _empty_pairs_v(
    n: npt.NDArray[np.int64] | int, e: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """:func:`_empty_pairs` of arrays."""
    return np.asarray(e * (n - e) + e * (e - 1) // 2, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class _ServerReach:
    """A server's GPUs in the base: their NICs, what they reach (direct, PXN), NVLink groups
    (positions), the pairs that cannot talk inside it, and its pair terms (direct, PXN)."""

    gpus: list[int]
    nics: list[tuple[int, ...]]
    direct: list[Signature]
    pxn: list[Signature]
    groups: list[list[int]]
    intra: int
    terms: tuple[int, int]


class CaseEvaluator:
    """Evaluate failure cases on top of a base fault state.

    The ratios of a case (job bus bandwidth, leaf uplinks, storage, bisection)
    are taken against the healthy fabric, or against ``reference`` when one is
    given (e.g. the state before a change): then a job lost in the reference,
    a leaf with no live uplink there, or a server without storage there is left
    out of the minimum, since a case cannot take from it what is already gone.
    """

    def __init__(
        self,
        fabric: Fabric,
        jobs: Sequence[Job],
        base: FaultState | None = None,
        *,
        bisection: bool = False,
        reference: Analysis | None = None,
        paths: PathRule | None = None,
        forwarding: Forwarding = DEFAULT_FORWARDING,
    ) -> None:
        self.fabric = fabric
        self.forwarding: Forwarding = forwarding
        self.jobs = tuple(jobs)
        self.state = base or FaultState.healthy(fabric)
        self.bisection = bisection
        self.reference = reference
        self.paths: PathRule = paths or (reference.paths if reference else "up-down")
        healthy_state = FaultState.healthy(fabric)
        self.healthy = self._analysis(healthy_state, healthy=False)
        # with no faults present the base is the healthy fabric: analyse it once
        self.base = self.healthy if self.state.is_healthy else self._analysis(self.state)
        self.exact_cases = 0

    def _analysis(self, state: FaultState, *, healthy: bool = True) -> Analysis:
        """The full analysis of ``state`` under this evaluator's path rule."""
        ref = self.healthy if healthy else None
        return Analysis(
            self.fabric, Observation.from_state(state), self.jobs, healthy=ref, paths=self.paths,
            forwarding=self.forwarding,
        )  # fmt: skip

    # -- precomputation (one pass) ---------------------------------------------
    @cached_property
    def _base_lost(self) -> frozenset[str]:
        return frozenset(self.base.jobs_lost())

    @cached_property
    def _classes(self) -> dict[int, list[int]] | None:
        """Class -> the leaves of the base's live NIC ports in it, when every such port's
        signature is one class (None otherwise).

        Then the leaves of one class all reach each other and those of two
        classes never do: one class on a connected fabric, one per plane on a
        dual-ToR fabric's planes.  A case that leaves every class whole
        (:meth:`_splits`) changes only the ports it takes down.
        """
        f = self.fabric
        out: dict[int, set[int]] = defaultdict(set)
        for nic, ports in self._ports.items():
            sigs = self.base.nic_ports.get(nic, {})
            for port, link in ports.items():
                sig = sigs.get(port, frozenset())
                if len(sig) != 1:
                    return None
                out[next(iter(sig))].add(int(f.link_b[link]))
        return {c: sorted(v) for c, v in sorted(out.items())}

    @property
    def _single_component(self) -> bool:
        """True when every live NIC port of the base reaches every other one, under the
        path rule, as one class (one and the same component under ``shortest``)."""
        return self._classes is not None and len(self._classes) <= 1

    @cached_property
    def _updown(self) -> tuple[UpDownIndex, ...]:
        """Up-down reachability of each class's leaves, for fast checks (one up-link table)."""
        links = self.base.up_links
        groups = (
            list(self._classes.values()) if self._classes is not None else [list(self._leaf_ports)]
        )  # no classes (a valley): one index keeps which leaves reached which
        return tuple(UpDownIndex(self.fabric, self.base.obs, g, links) for g in groups)

    def _updown_breaks(self, dead: Sequence[int], cut: Sequence[int]) -> bool:
        """Whether removing switches ``dead`` and cables ``cut`` leaves two leaves of live
        NIC ports that reached each other (up-down) without a route."""
        return any(ix.breaks(dead, cut) for ix in self._updown)

    @property
    def _local(self) -> bool:
        """Whether a case that breaks no route between leaves is local (ports, uplinks and
        flows only): when the NIC ports reach classes, or under up-down always (then the
        leaves' reach stays as it was, and every answer with it)."""
        return self._classes is not None or self.paths == "up-down"

    @cached_property
    def _switch_graph(self) -> tuple[nx.MultiGraph, frozenset[int], frozenset[int]]:
        """Live switch graph, its articulation points, and its bridge links."""
        f = self.fabric
        g = nx.MultiGraph()
        sw = np.flatnonzero(
            np.isin(f.kind, [int(k) for k in COMPUTE_SWITCH_KINDS]) & self.base.up
        ).tolist()
        g.add_nodes_from(sw)
        links = f.links_of_kind(LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
        links = links[self.base.cap[links] > 0]
        for i, a, b in zip(links.tolist(), f.link_a[links].tolist(), f.link_b[links].tolist(),
                           strict=True):  # fmt: skip
            g.add_edge(a, b, key=i)
        simple = nx.Graph(g)  # parallel cables collapse: such a pair is never a bridge
        aps = frozenset(nx.articulation_points(simple))
        bridge_pairs = {frozenset(e) for e in nx.bridges(simple)}
        bridges = frozenset(
            k for a, b, k in g.edges(keys=True)
            if frozenset((a, b)) in bridge_pairs and g.number_of_edges(a, b) == 1
        )  # fmt: skip
        return g, aps, bridges

    @cached_property
    def _ports(self) -> dict[int, dict[int, int]]:
        """NIC -> {port: access cable} for the base's live access ports."""
        f = self.fabric
        out: dict[int, dict[int, int]] = defaultdict(dict)
        links = f.links_of_kind(LinkKind.ACCESS)
        live = links[self.base.cap[links] > 0]
        live = live[self.base.switch_component[f.link_b[live]] >= 0]
        for link, nic, port in zip(live.tolist(), f.link_a[live].tolist(),
                                   f.link_a_port[live].tolist(), strict=True):  # fmt: skip
            out[nic][port] = link
        return out

    @cached_property
    def _leaf_ports(self) -> dict[int, list[tuple[int, int]]]:
        """Leaf -> [(nic, port)] of live access ports."""
        f = self.fabric
        out: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for nic, ports in self._ports.items():
            for port, link in ports.items():
                out[int(f.link_b[link])].append((nic, port))
        return out

    @cached_property
    def _job_of_server(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = defaultdict(list)
        for j, job in enumerate(self.jobs):
            for s in job.servers:
                out[s].append(j)
        return out

    @cached_property
    def _gpu_state(self) -> tuple[dict[int, int], dict[int, int], dict[int, int], dict[int, int]]:
        """Per server: GPUs, base direct-empty GPUs, base pxn-empty GPUs; GPU totals."""
        f = self.fabric
        parent = f.parent
        direct, pxn = self.base.gpu_reach
        servers = f.servers.tolist()
        n_s = dict.fromkeys(servers, 0) | Counter(parent[f.gpus].tolist())
        e_direct = dict.fromkeys(servers, 0) | Counter(
            parent[np.array([g for g, r in direct.items() if not r], dtype=np.int64)].tolist()
        )
        e_pxn = dict.fromkeys(servers, 0) | Counter(
            parent[np.array([g for g, r in pxn.items() if not r], dtype=np.int64)].tolist()
        )
        return n_s, e_direct, e_pxn, {}

    @staticmethod
    def _inter_pairs(total: int, empties: int, per_server: Iterable[tuple[int, int]]) -> int:
        """Cross-server GPU pairs with an empty side (all non-empty sides share one component)."""
        inter = empties * (total - empties) + empties * (empties - 1) // 2
        for n, e in per_server:
            inter -= e * (n - e) + e * (e - 1) // 2
        return inter

    @cached_property
    def _gpu_totals(self) -> tuple[int, int, int]:
        """(GPUs, base GPUs without a direct path, base GPUs without a PXN path)."""
        n_s, e_d, e_p, _ = self._gpu_state
        return sum(n_s.values()), sum(e_d.values()), sum(e_p.values())

    @cached_property
    def _base_pairs(self) -> tuple[int, int, int, int]:
        """(intra-server bad pairs direct, pxn, inter direct, inter pxn) of the base."""
        n_s, e_d, e_p, _ = self._gpu_state
        total = sum(n_s.values())
        inter_d = self._inter_pairs(total, sum(e_d.values()), ((n_s[s], e_d[s]) for s in n_s))
        inter_p = self._inter_pairs(total, sum(e_p.values()), ((n_s[s], e_p[s]) for s in n_s))
        intra_d = self.base.gpu_pairs_disconnected() - inter_d
        intra_p = self.base.gpu_pairs_disconnected(pxn=True) - inter_p
        return intra_d, intra_p, inter_d, inter_p

    @cached_property
    def _uplinks(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per element: the base's live leaf uplink Gb/s, and what ratios divide by."""
        live, full = self.base.leaf_uplinks
        if self.reference is not None:
            full = self.reference.leaf_uplinks[0]
        return live, full

    @cached_property
    def _flows(self) -> npt.NDArray[np.int64]:
        """Per job: its flows between two leaves in the base (all collectives and rails).

        A job whose flows stay on their leaves keeps its bandwidth unless its NICs
        change; one whose flows cross leaves is re-placed by the flow engine
        (:meth:`_busbw_ratio`).
        """
        return np.array([t.cross_leaf_flows for t in self.base.traffic], dtype=np.int64)

    @cached_property
    def _busbw(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per job: base bus bandwidth (GB/s) and what ratios divide by (healthy or reference)."""
        ref = self.reference or self.healthy
        base = np.array([self.base.job_busbw_gbs(j) for j in self.jobs], dtype=np.float64)
        healthy = np.array([ref.job_busbw_gbs(j) for j in self.jobs], dtype=np.float64)
        return base, healthy

    def _min_busbw(self, bw: npt.NDArray[np.float64]) -> float:
        """Min job bus bandwidth ratio of per-job GB/s ``bw``.

        Against the healthy fabric a job with no healthy bandwidth counts 0;
        against a reference, a job lost there is left out.
        """
        _, denom = self._busbw
        has = denom > 0
        if self.reference is not None:
            return float((bw[has] / denom[has]).min()) if has.any() else 1.0
        ratios = np.where(has, bw / np.where(has, denom, 1), 0.0)
        return float(ratios.min()) if ratios.size else 1.0

    @cached_property
    def _storage(self) -> tuple[dict[int, float], dict[int, float]]:
        """Base and healthy (or reference) storage bandwidth per server."""
        f = self.fabric
        ref = self.reference or self.healthy
        base = {s: self.base.storage_gbps(s) for s in f.servers.tolist()}
        healthy = base if ref is self.base else {s: ref.storage_gbps(s) for s in f.servers.tolist()}
        return base, healthy

    @cached_property
    def _storage_share(
        self,
    ) -> tuple[
        dict[int, float],
        dict[int, float],
        dict[int, float],
        dict[int, list[tuple[int, float, int]]],
    ]:
        """Per storage switch: uplink share, live uplinks, demand, (server, member Gb/s, link)."""
        f = self.fabric
        up_live: dict[int, float] = defaultdict(float)
        demand: dict[int, float] = defaultdict(float)
        members: dict[int, list[tuple[int, float, int]]] = defaultdict(list)
        for i in f.links_of_kind(LinkKind.STORAGE).tolist():
            a, b = int(f.link_a[i]), int(f.link_b[i])
            c = float(self.base.cap[i])
            if f.kind[a] == int(Kind.STORAGE_SWITCH):
                up_live[a] += c
            elif c > 0:
                demand[b] += c
                members[b].append((int(f.parent[a]), c, i))
        shares = {sw: min(1.0, up_live[sw] / d) if d else 1.0 for sw, d in demand.items()}
        return shares, up_live, demand, members

    def prepare(self) -> None:
        """Do the one linear pass now (otherwise it happens on the first case)."""
        _ = (
            self._ports, self._leaf_ports, self._gpu_state,
            self._base_pairs, self._gpu_totals, self._leaf_pos, self._base_uplink,
            self._uplinks, self._flows, self._busbw, self._storage, self._base_lost,
            self._classes, self._updown if self.paths == "up-down" else self._switch_graph,
        )  # fmt: skip

    # -- evaluation ----------------------------------------------------------------
    def _splits(self, failures: Sequence[Failure]) -> bool:
        """Does the case split the live switch graph (under ``up-down``: leave two leaves
        with live NIC ports without an up-down path)?"""
        f = self.fabric
        nodes = [x.index for x in failures if x.kind == "element" and self._live_switch(x.index)]
        links = [x.index for x in failures if x.kind != "element"
                 and f.link_kind[x.index] != int(LinkKind.ACCESS)]  # fmt: skip
        if len(nodes) + len(links) == 0:
            return False
        if self.paths == "up-down":
            return self._updown_breaks(nodes, links)
        _, aps, bridges = self._switch_graph
        if len(nodes) + len(links) == 1:
            return bool(nodes and nodes[0] in aps) or bool(links and links[0] in bridges)
        return self._splits_many(nodes, links)

    def _live_switch(self, i: int) -> bool:
        """Whether element ``i`` is a live compute switch of the base."""
        return bool(self.base.up[i]) and int(self.fabric.kind[i]) in _SWITCH_KIND_CODES

    @cached_property
    def _switch_arrays(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                      npt.NDArray[np.int64], npt.NDArray[np.int64],
                                      npt.NDArray[np.int64]]:  # fmt: skip
        """Switch graph as arrays: nodes, edge ends (positions), edge links, base labels."""
        g, _, _ = self._switch_graph
        nodes = np.array(sorted(g.nodes), dtype=np.int64)
        pos = {int(n): i for i, n in enumerate(nodes.tolist())}
        edges = [(pos[a], pos[b], k) for a, b, k in g.edges(keys=True)]
        arr = np.array(edges, dtype=np.int64).reshape(-1, 3)
        labels = components(nodes.size, arr[:, 0], arr[:, 1]).astype(np.int64)
        return nodes, arr[:, 0], arr[:, 1], arr[:, 2], labels

    def _splits_many(self, nodes: Sequence[int], links: Sequence[int]) -> bool:
        """Does removing these switches and cables split any base component?"""
        order, ea, eb, ek, base = self._switch_arrays
        gone = np.isin(order, np.array(nodes, dtype=np.int64))
        keep = ~(gone[ea] | gone[eb] | np.isin(ek, np.array(links, dtype=np.int64)))
        labels = components(order.size, ea[keep], eb[keep])
        rest = ~gone
        before = np.unique(base[rest]).size
        after = np.unique(np.stack([base[rest], labels[rest]]), axis=1).shape[1]
        return bool(after != before)

    def evaluate_singles(self, singles: Sequence[Failure]) -> list[CaseResult]:
        """Evaluate many single failures; the common ones in bulk (numpy), the rest one by one.

        Bulk classes (exactly what :meth:`evaluate` would return for them):
        a live switch-to-switch cable that is not a bridge, when no job flow
        crosses the leaves (only the leaf's uplink ratio moves); and a live
        single-port NIC, or its access cable, on an undamaged server (the NIC is
        cut: its GPUs lose their direct path, the server's multi-server jobs are lost).
        """
        out: list[CaseResult | None] = [None] * len(singles)
        if not self._local or self.bisection:
            return self._one_by_one(singles, out)
        f = self.fabric
        if self.paths == "up-down":

            def split(i: int) -> bool:  # leaves never carry up-down transit traffic
                return f.kind[i] != int(Kind.LEAF) and self._updown_breaks((i,), ())

            def any_breaks(i: int) -> bool:
                return any(ix.breaks_cut(i) for ix in self._updown)

            cut_splits: Callable[[int], bool] = any_breaks
            if len(self._updown) == 1:  # one class of leaves (a connected fabric)
                cut_splits = self._updown[0].breaks_cut
        else:
            _, aps, bridges = self._switch_graph

            def split(i: int) -> bool:
                return i in aps

            def cut_splits(i: int) -> bool:
                return i in bridges

        cables, nics, upper = self._bulk_classes(singles, split, cut_splits)
        self._bulk_cables(singles, cables, out)
        self._bulk_nics(singles, nics, out)
        self._bulk_upper(singles, upper, out)
        return self._one_by_one(singles, out)

    def _bulk_classes(
        self,
        singles: Sequence[Failure],
        split: Callable[[int], bool],
        cut_splits: Callable[[int], bool],
    ) -> tuple[list[int], list[tuple[int, tuple[int, ...], int]], list[int]]:
        """The positions of the bulk cases of :meth:`evaluate_singles`, picked out with numpy:
        switch-to-switch cables, (position, NICs cut, dead leaf) of NIC cuts, spines and cores.
        """
        f = self.fabric
        base = self.base
        cables: list[int] = []
        nics: list[tuple[int, tuple[int, ...], int]] = []
        upper: list[int] = []
        n = len(singles)
        idx = np.fromiter((x.index for x in singles), dtype=np.int64, count=n)
        is_el = np.fromiter((x.kind == "element" for x in singles), dtype=np.bool_, count=n)
        el_at = np.where(is_el, idx, 0)
        ek = np.where(is_el, f.kind[el_at], -1)
        lk = np.full(n, -1, dtype=np.int64)  # live cables (and optics): the cable's kind
        link_at = np.where(is_el, 0, idx)
        if f.n_links:
            live = ~is_el & (base.cap[link_at] > 0)
            lk[live] = f.link_kind[link_at[live]]
        bulk = self._bulk_nic_mask
        if self._single_component:
            cut = np.flatnonzero(is_el & (ek == int(Kind.NIC)) & bulk[el_at])
            for p, i in zip(cut.tolist(), idx[cut].tolist(), strict=True):
                nics.append((p, (i,), -1))
            if f.n_links:
                acc = np.flatnonzero((lk == int(LinkKind.ACCESS)) & bulk[f.link_a[link_at]])
                for p, i in zip(acc.tolist(), f.link_a[idx[acc]].tolist(), strict=True):
                    nics.append((p, (i,), -1))
        if not self._no_flows:
            nics.sort()
            return cables, nics, upper
        sw_links = np.flatnonzero((lk == int(LinkKind.LEAF_SPINE))
                                  | (lk == int(LinkKind.SPINE_CORE)))  # fmt: skip
        for p, i in zip(sw_links.tolist(), idx[sw_links].tolist(), strict=True):
            if not cut_splits(i):
                cables.append(p)
        sw = np.flatnonzero(is_el & np.isin(ek, [int(k) for k in COMPUTE_SWITCH_KINDS])
                            & base.up[el_at])  # fmt: skip
        for p, i, k in zip(sw.tolist(), idx[sw].tolist(), ek[sw].tolist(), strict=True):
            if k != int(Kind.LEAF):
                if not split(i):
                    upper.append(p)
            elif self._single_component and not split(i):
                behind = tuple(sorted({nic for nic, _ in self._leaf_ports.get(i, [])}))
                if all(bulk[nic] for nic in behind):
                    nics.append((p, behind, i))
        nics.sort()
        return cables, nics, upper

    @cached_property
    def _by_nics(self) -> dict[tuple[tuple[int, ...], int], CaseResult]:
        """Bulk NIC cases so far, by (NICs cut, dead leaf)."""
        return {}

    @cached_property
    def _by_cable(self) -> dict[int, CaseResult]:
        """Single cable (or optic) cases evaluated one by one so far, by cable."""
        return {}

    def _one_by_one(
        self, singles: Sequence[Failure], out: list[CaseResult | None]
    ) -> list[CaseResult]:
        """``out`` with every case still missing evaluated on its own; both optics of a cable
        and the cable itself take the same capacity away, so they are evaluated once."""
        done = self._by_cable
        res: list[CaseResult] = []
        for x, got in zip(singles, out, strict=True):
            r = got
            if r is None and x.kind == "element":
                r = self.evaluate([x])
            elif r is None:
                same = done.get(x.index)
                if same is None:
                    same = done[x.index] = self.evaluate([x])
                r = same
                if same.failures != (x,):
                    self.exact_cases += same.exact  # counted as the case it stands for
                    r = _relabel(same, (x,))
            res.append(r)
        return res

    def _bulk_nic(self, nic: int) -> bool:
        """Whether cutting ``nic`` is a bulk case (:meth:`_bulk_nics`)."""
        return bool(self._bulk_nic_mask[nic])

    @cached_property
    def _bulk_nic_mask(self) -> npt.NDArray[np.bool_]:
        """Per element: whether it is a NIC whose cut is a bulk case (:meth:`_bulk_nics`): a
        live single-port NIC with its one port live, on an undamaged server, whose flows (if
        any job's cross leaves) belong to no multi-server job."""
        f = self.fabric
        out = np.zeros(f.n_elements, dtype=np.bool_)
        nics = f.nics
        if not nics.size:
            return out
        srv = f.parent[nics]
        ports = np.zeros(f.n_elements, dtype=np.int64)
        for nic, live in self._ports.items():
            ports[nic] = len(live)
        one_port = np.array([s.nic_ports == 1 for s in f.node_specs] + [False], dtype=np.bool_)
        spec = f.node_spec_of[nics]
        ok = self.base.up[nics] & (ports[nics] == 1) & one_port[np.where(spec >= 0, spec, -1)]
        damaged = np.zeros(f.n_elements, dtype=np.bool_)
        damaged[list(self.base.damaged_servers)] = True
        ok &= ~damaged[srv]
        if not self._no_flows:
            multi = np.zeros(f.n_elements, dtype=np.bool_)
            for s in self._job_of_server:
                multi[s] = self._multi_server_jobs(s)
            ok &= ~multi[srv]
        out[nics] = ok
        return out

    @cached_property
    def _no_flows(self) -> bool:
        """No flow of any job crosses two leaves in the base."""
        return not self._flows.any()

    def _multi_server_jobs(self, server: int) -> bool:
        """Whether a job of more than one server (one with flows) runs on ``server``."""
        return any(len(self.jobs[j].servers) > 1 for j in self._job_of_server.get(server, []))

    @cached_property
    def _base_metrics(self) -> tuple[int, int, float, float, float]:
        """Base (pairs pxn, pairs direct, uplink ratio, min busbw ratio, storage ratio)."""
        intra_d, intra_p, inter_d, inter_p = self._base_pairs
        _, ratios = self._base_uplink
        return (
            intra_p + inter_p,
            intra_d + inter_d,
            float(ratios.min()) if ratios.size else self._no_uplinks,
            self._min_busbw(self._busbw[0]),
            self._base_storage_ratio if self._storage[0] else 1.0,
        )

    def _bulk_cables(
        self, singles: Sequence[Failure], positions: list[int], out: list[CaseResult | None]
    ) -> None:
        if not positions:
            return
        f = self.fabric
        pairs_p, pairs_d, up_min, bw_min, storage = self._base_metrics
        links = np.array([singles[p].index for p in positions], dtype=np.int64)
        ratio = np.full(links.size, up_min)
        ls = f.link_kind[links] == int(LinkKind.LEAF_SPINE)
        _, ratios = self._base_uplink
        if ls.any() and ratios.size:
            live, full = self._uplinks
            leaf = f.link_a[links[ls]]
            pos = self._leaf_pos_array[leaf]
            m1, m2, arg = self._two_lowest
            excl = np.where(pos == arg, m2, m1)
            new = (live[leaf] - self.base.cap[links[ls]]) / np.where(full[leaf] > 0, full[leaf], 1)
            ratio[ls] = np.minimum(excl, np.where(pos >= 0, new, np.inf))
        for p, r in zip(positions, ratio.tolist(), strict=True):
            out[p] = CaseResult((singles[p],), pairs_p, pairs_d, (), r, bw_min, storage, False)

    def _bulk_upper(
        self, singles: Sequence[Failure], positions: list[int], out: list[CaseResult | None]
    ) -> None:
        """Spines and cores that split nothing: only the leaves' uplink ratios move."""
        if not positions:
            return
        f = self.fabric
        pairs_p, pairs_d, up_min, bw_min, storage = self._base_metrics
        _, ratios = self._base_uplink
        live, full = self._uplinks
        order = np.argsort(ratios, kind="stable")
        ls = int(LinkKind.LEAF_SPINE)
        for p in positions:
            i = singles[p].index
            changed: dict[int, float] = {}
            for link in f.links_at(i).tolist():
                if int(f.link_kind[link]) == ls:
                    leaf = int(f.link_a[link])
                    changed[leaf] = changed.get(leaf, float(live[leaf])) - float(
                        self.base.cap[link]
                    )
            ratio = up_min
            if changed and ratios.size:
                pos = self._leaf_pos
                hit = {pos[leaf] for leaf in changed if leaf in pos}
                rest = next((float(ratios[j]) for j in order.tolist() if j not in hit), np.inf)
                new = min(
                    (v / float(full[leaf]) for leaf, v in changed.items()
                     if leaf in pos and full[leaf] > 0),
                    default=np.inf,
                )  # fmt: skip
                ratio = float(min(rest, new))
            out[p] = CaseResult((singles[p],), pairs_p, pairs_d, (), ratio, bw_min, storage, False)

    @cached_property
    def _nic_tables(
        self,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], dict[int, tuple[str, ...]]]:
        """Per element: a NIC's live GPUs that use it directly, a server's live NICs; per
        server: its multi-server jobs not lost in the base (sorted, each once)."""
        f = self.fabric
        b = self.base
        gpus_on = np.zeros(f.n_elements, dtype=np.int64)
        if b.gpu_nic:
            g = np.fromiter(b.gpu_nic, dtype=np.int64, count=len(b.gpu_nic))
            n = np.fromiter(b.gpu_nic.values(), dtype=np.int64, count=len(b.gpu_nic))
            np.add.at(gpus_on, n[b.up[g]], 1)
        live_nics = np.zeros(f.n_elements, dtype=np.int64)
        if self._ports:
            nics = np.fromiter(self._ports, dtype=np.int64, count=len(self._ports))
            np.add.at(live_nics, f.parent[nics[b.up[nics]]], 1)
        jobs: dict[int, tuple[str, ...]] = {}
        for s, js in self._job_of_server.items():
            jobs[s] = tuple(dict.fromkeys(sorted(
                self.jobs[j].name for j in js
                if len(self.jobs[j].servers) > 1 and self.jobs[j].name not in self._base_lost
            )))  # fmt: skip
        return gpus_on, live_nics, jobs

    @cached_property
    def _gpu_arrays(self) -> tuple[npt.NDArray[np.int64], ...]:
        """:attr:`_gpu_state` per element: a server's GPUs, base GPUs with no direct path,
        with no PXN path."""
        n = self.fabric.n_elements
        out = []
        for table in self._gpu_state[:3]:
            arr = np.zeros(n, dtype=np.int64)
            if table:
                arr[np.fromiter(table, dtype=np.int64, count=len(table))] = np.fromiter(
                    table.values(), dtype=np.int64, count=len(table)
                )
            out.append(arr)
        return tuple(out)

    def _bulk_nics(
        self,
        singles: Sequence[Failure],
        items: list[tuple[int, tuple[int, ...], int]],
        out: list[CaseResult | None],
    ) -> None:
        """Cases that cut whole single-port NICs on undamaged servers: (position, NICs, dead leaf).

        The GPU pairs follow in closed form from how many GPUs of each touched
        server lose their path (see :meth:`_inter_pairs`); the jobs lost are
        the multi-server jobs of the touched servers.  One NIC (or its cable)
        at a time, the usual case, is computed for all such cases at once.
        """
        if not items:
            return
        one = [(p, nics[0]) for p, nics, dead_leaf in items if dead_leaf < 0 and len(nics) == 1]
        if one:
            self._bulk_one_nic(singles, one, out)
        if len(one) < len(items):
            self._bulk_nic_sets(singles, [x for x in items if x[2] >= 0 or len(x[1]) != 1], out)

    def _bulk_one_nic(
        self, singles: Sequence[Failure], items: list[tuple[int, int]], out: list[CaseResult | None]
    ) -> None:
        """The cases of :meth:`_bulk_nics` that cut one NIC (the NIC, or its access cable)."""
        f = self.fabric
        _, _, up_min, bw_min, storage = self._base_metrics
        intra_d, intra_p, inter_d, inter_p = self._base_pairs
        _, ed_base, ep_base = self._gpu_totals
        n_s, e_d, e_p = self._gpu_arrays
        gpus_on, live_nics, jobs = self._nic_tables
        total = self._gpu_totals[0]
        ge = _empty_pairs_v
        pos = [p for p, _ in items]
        nic = np.fromiter((x for _, x in items), dtype=np.int64, count=len(items))
        srv = f.parent[nic].astype(np.int64)
        n, ed, ep = n_s[srv], e_d[srv], e_p[srv]
        new_d = ed + gpus_on[nic]
        new_p = np.where(live_nics[srv] <= 1, n, ep)
        base_d = intra_d + inter_d - _empty_pairs(total, ed_base)
        base_p = intra_p + inter_p - _empty_pairs(total, ep_base)
        pairs_d = base_d + ge(total, ed_base + new_d - ed) + ge(n, ed) - ge(n, new_d)
        pairs_p = base_p + ge(total, ep_base + new_p - ep) + ge(n, ep) - ge(n, new_p)
        ids = f.ids
        why: dict[int, tuple[str, ...]] = {}  # a NIC and its cable alike
        for p, x, s, pp, pd in zip(pos, nic.tolist(), srv.tolist(), pairs_p.tolist(),
                                   pairs_d.tolist(), strict=True):  # fmt: skip
            lost = jobs.get(s, ())
            reasons = why.get(x, ())
            if lost and not reasons:
                reasons = why[x] = tuple(f"{j}: {ids[x]} cut off" for j in lost[:6])
            out[p] = CaseResult((singles[p],), pp, pd, lost, up_min, 0.0 if lost else bw_min,
                                storage, False, None, reasons)  # fmt: skip

    def _bulk_nic_sets(
        self,
        singles: Sequence[Failure],
        items: list[tuple[int, tuple[int, ...], int]],
        out: list[CaseResult | None],
    ) -> None:
        """The other cases of :meth:`_bulk_nics`: a leaf's NICs, say, with the leaf dead."""
        f = self.fabric
        _, _, up_min, bw_min, storage = self._base_metrics
        intra_d, intra_p, inter_d, inter_p = self._base_pairs
        _, ed_base, ep_base = self._gpu_totals
        n_s, e_d, e_p, _ = self._gpu_state
        gpus_on_a, live_nics_a, jobs = self._nic_tables
        gpus_on, live_nics = gpus_on_a.tolist(), live_nics_a.tolist()
        parent = f.parent.tolist()
        total = self._gpu_totals[0]
        ge = _empty_pairs

        def fe(e: int) -> int:
            return ge(total, e)

        seen = self._by_nics
        for p, nics, dead_leaf in items:
            same = seen.get((nics, dead_leaf))
            if same is not None:
                out[p] = _relabel(same, (singles[p],))
                continue
            per_server: dict[int, list[int]] = defaultdict(list)
            for nic in nics:
                per_server[parent[nic]].append(nic)
            ed_new, ep_new = ed_base, ep_base
            delta_d = delta_p = 0
            lost: set[str] = set()
            reasons: list[str] = []
            for s, cut in per_server.items():
                n = n_s[s]
                new_d = e_d[s] + sum(gpus_on[nic] for nic in cut)
                new_p = n if live_nics[s] <= len(cut) else e_p[s]
                ed_new += new_d - e_d[s]
                ep_new += new_p - e_p[s]
                delta_d += ge(n, e_d[s]) - ge(n, new_d)
                delta_p += ge(n, e_p[s]) - ge(n, new_p)
                for j in jobs.get(s, ()):
                    if j not in lost:
                        lost.add(j)
                        reasons.append(f"{j}: {f.ids[cut[0]]} cut off")
            inter_d2 = inter_d - fe(ed_base) + fe(ed_new) + delta_d
            inter_p2 = inter_p - fe(ep_base) + fe(ep_new) + delta_p
            ratio = up_min if dead_leaf < 0 else self._uplink_ratio_without(dead_leaf)
            out[p] = seen[nics, dead_leaf] = CaseResult(
                (singles[p],), intra_p + inter_p2, intra_d + inter_d2, tuple(sorted(lost)),
                ratio, 0.0 if lost else bw_min, storage, False, None, tuple(reasons[:6]),
            )  # fmt: skip

    def evaluate(self, failures: Sequence[Failure]) -> CaseResult:
        f = self.fabric
        fast_kinds = COMPUTE_SWITCH_KINDS | {Kind.NIC, Kind.NODE, Kind.STORAGE_SWITCH,
                                             Kind.STORAGE_NIC}  # fmt: skip
        fast = self._local and all(
            x.kind != "element" or Kind(int(f.kind[x.index])) in fast_kinds for x in failures
        )
        if fast and self._splits(failures):
            fast = False
        if not fast:
            return self.evaluate_exact(failures)
        return self._evaluate_fast(failures)

    def _evaluate_fast(self, failures: Sequence[Failure]) -> CaseResult:
        f = self.fabric
        up = self.base.up
        lost_ports: dict[int, set[int]] = defaultdict(set)
        dead_servers: set[int] = set()
        uplive, _ = self._uplinks
        changed_leaves: dict[int, float] = {}
        dead_leaves: set[int] = set()
        lost_members: set[int] = set()  # storage NIC -> storage switch links lost
        uplink_cut: dict[int, float] = {}  # storage switch -> uplink Gb/s lost
        dead_storage_switches: set[int] = set()
        members = self._storage_share[3]
        s_base, s_healthy = self._storage
        killed = {x.index for x in failures if x.kind == "element"}
        seen_links: set[int] = set()
        switched = False  # a switch or a switch-to-switch cable goes: routes move
        for x in failures:
            i = x.index
            if x.kind != "element":
                # a cable whose end dies in the same case, or the second optic of
                # one cable, changes nothing more
                if i in seen_links or int(f.link_a[i]) in killed or int(f.link_b[i]) in killed:
                    continue
                seen_links.add(i)
            if x.kind == "element":
                k = Kind(int(f.kind[i]))
                if not up[i]:
                    continue
                if k is Kind.LEAF:
                    dead_leaves.add(i)
                    for nic, port in self._leaf_ports.get(i, []):
                        lost_ports[nic].add(port)
                elif k in (Kind.SPINE, Kind.CORE):
                    switched = True
                    for link in f.links_at(i).tolist():
                        if f.link_kind[link] == int(LinkKind.LEAF_SPINE):
                            leaf = f.other_end(link, i)
                            changed_leaves[leaf] = changed_leaves.get(leaf, uplive[leaf]) - float(
                                self.base.cap[link]
                            )
                elif k is Kind.NIC:
                    lost_ports[i].update(self._ports.get(i, {}))
                elif k is Kind.NODE:
                    dead_servers.add(i)
                elif k is Kind.STORAGE_SWITCH:
                    lost_members.update(link for _, _, link in members.get(i, []))
                    dead_storage_switches.add(i)
                elif k is Kind.STORAGE_NIC:
                    for link in f.links_at(i).tolist():
                        if int(f.link_kind[link]) == int(LinkKind.STORAGE):
                            lost_members.add(link)
            else:
                if self.base.cap[i] <= 0:
                    continue
                lk = LinkKind(int(f.link_kind[i]))
                switched = switched or lk in (LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
                if lk is LinkKind.ACCESS:
                    lost_ports[int(f.link_a[i])].add(int(f.link_a_port[i]))
                elif lk is LinkKind.LEAF_SPINE:
                    leaf = int(f.link_a[i])
                    changed_leaves[leaf] = changed_leaves.get(leaf, uplive[leaf]) - float(
                        self.base.cap[i]
                    )
                elif lk is LinkKind.STORAGE:
                    a = int(f.link_a[i])
                    if f.kind[a] == int(Kind.STORAGE_NIC):
                        lost_members.add(i)
                    else:  # a storage switch uplink: every server behind it shares less
                        uplink_cut[a] = uplink_cut.get(a, 0.0) + float(self.base.cap[i])
        storage_hit = self._storage_hits(lost_members, uplink_cut, dead_storage_switches)
        # NICs cut (no live port left) or degraded (a port lost)
        cut: set[int] = set()
        degraded: set[int] = set()
        for nic, ports in lost_ports.items():
            live = set(self._ports.get(nic, {}))
            if not live:
                continue
            if live <= ports:
                cut.add(nic)
            else:
                degraded.add(nic)
        # jobs
        reasons: list[str] = []
        new_lost: set[int] = set()
        for s in dead_servers:
            for j in self._job_of_server.get(s, []):
                new_lost.add(j)
                reasons.append(f"{self.jobs[j].name}: server {f.ids[s]} is down")
        rejudge: dict[tuple[int, int], list[int]] = defaultdict(list)  # (job, rail) -> NICs
        for nic in sorted(cut | degraded):
            s = int(f.parent[nic])
            for j in self._job_of_server.get(s, []):
                job = self.jobs[j]
                if len(job.servers) < 2:
                    continue
                if nic in cut or not tolerant(f, job, nic):
                    if j not in new_lost:
                        reasons.append(f"{job.name}: {f.ids[nic]} cut off")
                    new_lost.add(j)
                elif not self._single_component:  # one class: a live port reaches them all
                    rejudge[j, int(f.rail[nic])].append(nic)
        for (j, rail), nics in rejudge.items():
            if j not in new_lost and not self._rail_meets(j, rail, nics, lost_ports):
                new_lost.add(j)
                reasons.append(f"{self.jobs[j].name}: {f.ids[nics[0]]} cannot reach the job's "
                               f"other NICs on rail {rail}")  # fmt: skip
        lost_names = tuple(
            sorted(self.jobs[j].name for j in new_lost if self.jobs[j].name not in self._base_lost)
        )
        # GPU pairs
        pairs_d, pairs_p = self._case_pairs(cut | degraded, lost_ports, dead_servers)
        # leaf uplinks
        ratio = self._uplink_ratio(changed_leaves, dead_leaves, dead_servers)
        # bus bandwidth
        moved = (
            switched
            or bool(dead_leaves)
            or any(
                self._multi_server_jobs(s)
                for s in {int(f.parent[n]) for n in cut | degraded} | dead_servers
            )
        )  # some flow's path, rate or end changes (lost jobs' flows load links too)
        busbw = self._busbw_ratio(moved, new_lost, failures, degraded, lost_ports)
        # storage
        storage = 1.0
        if storage_hit or dead_servers:
            vals = [
                (storage_hit.get(s, s_base[s]) / s_healthy[s]) if s_healthy[s] else 1.0
                for s in s_base
                if up[s] and s not in dead_servers
            ]
            storage = min(vals, default=1.0)
        elif s_base:
            storage = self._base_storage_ratio
        bis = None
        if self.bisection:
            bis = self._bisection(failures)
        return CaseResult(
            tuple(failures), pairs_p, pairs_d, lost_names, ratio, busbw, storage, False, bis,
            tuple(reasons[:6]),
        )  # fmt: skip

    def _storage_hits(
        self, lost: set[int], uplink_cut: dict[int, float], dead: set[int]
    ) -> dict[int, float]:
        """New storage bond Gb/s of every server behind a storage switch the case touches.

        A switch's uplinks are shared by its live members in proportion, as
        :func:`harness.invariants.storage.storage_bonds` does: fewer members raise
        the others' share.
        """
        if not lost and not uplink_cut:
            return {}
        f = self.fabric
        shares, up_live, demand, members = self._storage_share
        touched = {int(f.link_b[link]) for link in lost} | set(uplink_cut)
        new_share: dict[int, float] = {}
        for sw in touched:
            gone = sum(c for _, c, link in members.get(sw, []) if link in lost)
            d = demand.get(sw, 0.0) - gone
            up = 0.0 if sw in dead else up_live.get(sw, 0.0) - uplink_cut.get(sw, 0.0)
            new_share[sw] = min(1.0, up / d) if d > 0 else 1.0
        s_base = self._storage[0]
        hits: dict[int, float] = {}
        for sw in touched:
            for s, c, link in members.get(sw, []):
                old = c * shares.get(sw, 1.0)
                new = 0.0 if link in lost or up_live.get(sw, 0.0) <= 0 else c * new_share[sw]
                hits[s] = hits.get(s, s_base[s]) - old + new
        return hits

    @cached_property
    def _base_storage_ratio(self) -> float:
        s_base, s_healthy = self._storage
        vals = [s_base[s] / s_healthy[s] for s in s_base if s_healthy[s] and self.base.up[s]]
        return min(vals, default=1.0)

    def _intra_bad(self, server: int) -> int:
        """Base same-server GPU pairs that cannot talk."""
        return intra_bad_pairs(self.base, server)

    @cached_property
    def _base_uplink(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        f = self.fabric
        live, full = self._uplinks
        leaves = f.leaves[self.base.up[f.leaves]]
        leaves = leaves[full[leaves] > 0]
        return leaves, live[leaves] / full[leaves]

    @cached_property
    def _leaf_pos(self) -> dict[int, int]:
        leaves, _ = self._base_uplink
        return {int(x): i for i, x in enumerate(leaves.tolist())}

    @cached_property
    def _leaf_pos_array(self) -> npt.NDArray[np.int64]:
        """:attr:`_leaf_pos` per element (-1: not a leaf there)."""
        leaves, _ = self._base_uplink
        out = np.full(self.fabric.n_elements, -1, dtype=np.int64)
        out[leaves] = np.arange(leaves.size)
        return out

    @cached_property
    def _two_lowest(self) -> tuple[float, float, int]:
        """The base's lowest leaf uplink ratio, the next one (inf: none), and where the lowest
        is (its position in :attr:`_base_uplink`)."""
        _, ratios = self._base_uplink
        order = np.sort(ratios)
        return (
            float(order[0]),
            float(order[1]) if order.size > 1 else np.inf,
            int(np.argmin(ratios)),
        )

    def _uplink_ratio_without(self, leaf: int) -> float:
        """:meth:`_uplink_ratio` with only ``leaf`` dead."""
        leaves, _ = self._base_uplink
        if not leaves.size:
            return self._no_uplinks
        at = self._leaf_pos.get(leaf)
        low, second, where = self._two_lowest
        if at is None:
            return low
        if leaves.size == 1:
            return self._no_uplinks
        return second if at == where else low

    def _uplink_ratio(
        self, changed: dict[int, float], dead: set[int], dead_servers: set[int]
    ) -> float:
        leaves, ratios = self._base_uplink
        if not leaves.size:
            return self._no_uplinks
        if not changed and not dead:
            return float(ratios.min())
        _, full = self._uplinks
        r = ratios.copy()
        pos = self._leaf_pos
        for leaf, live in changed.items():
            if leaf in pos:
                r[pos[leaf]] = live / full[leaf]
        keep = np.ones(r.size, dtype=bool)
        for leaf in dead:
            if leaf in pos:
                keep[pos[leaf]] = False
        return float(r[keep].min()) if keep.any() else self._no_uplinks

    def _busbw_ratio(
        self,
        moved: bool,
        lost: set[int],
        failures: Sequence[Failure],
        degraded: set[int] = frozenset(),  # type: ignore[assignment]
        lost_ports: dict[int, set[int]] | None = None,
    ) -> float:
        """Min bus bandwidth ratio of a fast case: the base's, but for the jobs it loses and
        those running on a NIC that lost a port (``degraded``).

        When some job's flows cross leaves and the case ``moved`` something
        they may use (a switch, a switch-to-switch cable, a NIC or server of
        a job), the flows are placed again on the case's fabric (static and
        hashed routes depend on which cables are live; lost jobs' flows load
        the links too), exactly as the full analysis does.  When no flow crosses leaves, jobs share
        no link and only the flows of the degraded NICs are evaluated again
        (:class:`~harness.invariants.leaf_flows.LeafLocalFlows`).
        """
        if not self.jobs:
            return 1.0
        base, _ = self._busbw
        f = self.fabric
        hit = sorted({
            j for n in degraded for j in self._job_of_server.get(int(f.parent[n]), [])
            if j not in lost and base[j] > 0 and len(self.jobs[j].servers) > 1
        })  # fmt: skip
        if moved and self._flows.any():
            a = self._case_analysis(failures)
            return self._min_busbw(np.array([
                0.0 if j in lost or base[j] <= 0 else bandwidth.job_busbw_gbs(
                    a, job, a.job_traffic(job), intra=a.intra_gbs)
                for j, job in enumerate(self.jobs)
            ], dtype=np.float64))  # fmt: skip
        bw = base.copy()
        for j in lost:
            bw[j] = 0.0
        for j in hit:
            bw[j] = self._local_busbw(j, degraded, lost_ports or {})
        return self._min_busbw(bw)

    def _local_busbw(self, j: int, degraded: set[int], lost_ports: dict[int, set[int]]) -> float:
        """Job ``j``'s bus bandwidth (GB/s) once ``degraded`` NICs lost ``lost_ports`` (no flow
        of any job crosses leaves): as :func:`harness.invariants.bandwidth.job_busbw_gbs`."""
        f = self.fabric
        servers = set(self.jobs[j].servers)
        mine = [n for n in degraded if int(f.parent[n]) in servers]
        rates = {n: self._case_rate(n, lost_ports[n]) for n in mine}
        slots = {n: {max(p, 1) - 1 for p in lost_ports[n]} for n in mine}
        per = self._local_flows(j).busbw(rates, slots)
        return float(min(min(per.values(), default=np.inf), self._nvlink_gbs[j]))

    def _local_flows(self, j: int) -> LeafLocalFlows:
        got = self._local_cache.get(j)
        if got is None:
            got = self._local_cache[j] = LeafLocalFlows(
                self.base.network, self.jobs[j], self.forwarding
            )
        return got

    @cached_property
    def _local_cache(self) -> dict[int, LeafLocalFlows]:
        return {}

    @cached_property
    def _nvlink_gbs(self) -> list[float]:
        """Per job: its GPUs' least one-way bandwidth inside their server (GB/s; 0: none)."""
        b = self.base
        return [
            min((b.intra_gbs(g) for s in job.servers for g in b.parts(s, Kind.GPU)), default=0.0)
            for job in self.jobs
        ]

    @cached_property
    def _nic_terms(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per element: a NIC's live port Gb/s and PCIe path Gb/s in the base."""
        return nic_rate_terms(self.fabric, self.base.obs, self.base.switch_component)

    def _case_rate(self, nic: int, lost: set[int]) -> float:
        """A live NIC's rate (GB/s) once it lost the ports ``lost``, as the full analysis
        computes it (its live ports' Gb/s summed in cable order)."""
        ports = 0.0
        for port, link in sorted(self._ports.get(nic, {}).items(), key=lambda pl: pl[1]):
            if port not in lost:
                ports += float(self.base.cap[link])
        _, path = self._nic_terms
        return float(nic_rate(np.array([ports]), path[nic : nic + 1])[0])

    def _case_ports(self, nic: int, lost_ports: dict[int, set[int]]) -> dict[int, Signature]:
        """A NIC's live ports and their signatures once the case took ``lost_ports``."""
        ports = self.base.nic_ports.get(nic, {})
        lost = lost_ports.get(nic)
        return {p: sig for p, sig in ports.items() if p not in lost} if lost else ports

    def _case_comps(self, nic: int, lost_ports: dict[int, set[int]]) -> Signature:
        if nic not in lost_ports:
            return self.base.nic_comps(nic)
        return frozenset().union(*self._case_ports(nic, lost_ports).values())

    @cached_property
    def _rail_sigs(self) -> dict[tuple[int, int], Counter[Signature]]:
        """(job, rail) -> how many of the job's NICs on that rail reach each signature."""
        f = self.fabric
        b = self.base
        out: dict[tuple[int, int], Counter[Signature]] = defaultdict(Counter)
        for j, job in enumerate(self.jobs):
            for s in job.servers:
                if b.up[s]:
                    for n in b.parts(s, Kind.NIC):
                        out[j, int(f.rail[n])][b.nic_comps(n)] += 1
        return out

    def _rail_meets(
        self, j: int, rail: int, nics: Sequence[int], lost_ports: dict[int, set[int]]
    ) -> bool:
        """Whether the job's NICs on ``rail`` still all reach each other once the tolerant
        ``nics`` lost ports (the job was whole in the base): what
        :func:`harness.invariants.verdicts.judge` checks of a NIC that keeps a live port."""
        sigs = self._rail_sigs[j, rail].copy()
        for n in nics:
            sigs[self.base.nic_comps(n)] -= 1
            sigs[self._case_comps(n, lost_ports)] += 1
        keys = [k for k, v in sigs.items() if v > 0]
        return all(a & b for i, a in enumerate(keys) for b in keys[i + 1 :])

    @cached_property
    def _reach_counts(self) -> tuple[Counter[Signature], Counter[Signature]]:
        """How many GPUs reach each set of classes in the base: directly, with PXN."""
        direct, pxn = self.base.gpu_reach
        return Counter(direct.values()), Counter(pxn.values())

    def _case_pairs(
        self, nics: set[int], lost_ports: dict[int, set[int]], dead_servers: set[int]
    ) -> tuple[int, int]:
        """GPU pairs that cannot talk (direct, with PXN) once ``nics`` lost ``lost_ports``
        and ``dead_servers`` died: the base's, redone for the servers they touch."""
        f = self.fabric
        intra_d, intra_p, inter_d, inter_p = self._base_pairs
        touched = sorted({int(f.parent[n]) for n in nics} | dead_servers)
        if not touched:
            return intra_d + inter_d, intra_p + inter_p
        counts: list[Counter[Signature]] | None = None
        terms = [0, 0]
        empty: Signature = frozenset()
        for s in touched:
            sv = self._server_reach(s)
            n = len(sv.gpus)
            if s in dead_servers:
                new = ([empty] * n, [empty] * n)
                intra_new = n * (n - 1) // 2
            else:
                d = list(sv.direct)
                for i, own in enumerate(sv.nics):
                    if any(x in lost_ports for x in own):
                        d[i] = empty.union(*(self._case_comps(x, lost_ports) for x in own))
                if d == sv.direct:
                    continue
                p = [empty] * n
                for group in sv.groups:
                    union = empty.union(*(d[i] for i in group))
                    for i in group:
                        p[i] = union
                new = (d, p)
                intra_new = sv.intra
            if counts is None:
                counts = [c.copy() for c in self._reach_counts]
            for k, old in enumerate((sv.direct, sv.pxn)):
                for o, w in zip(old, new[k], strict=True):
                    if o != w:
                        counts[k][o] -= 1
                        counts[k][w] += 1
                terms[k] += server_pairs_term(intra_new, new[k]) - sv.terms[k]
        if counts is None:
            return intra_d + inter_d, intra_p + inter_p
        base_cross = self._base_cross
        pairs_d = intra_d + inter_d - base_cross[0] + cross_bad_pairs(counts[0]) + terms[0]
        pairs_p = intra_p + inter_p - base_cross[1] + cross_bad_pairs(counts[1]) + terms[1]
        return pairs_d, pairs_p

    def _server_reach(self, server: int) -> _ServerReach:
        got = self._server_cache.get(server)
        if got is None:
            b = self.base
            gpus = b.parts(server, Kind.GPU)
            at = {g: i for i, g in enumerate(gpus)}
            direct, pxn = b.gpu_reach
            d = [direct[g] for g in gpus]
            p = [pxn[g] for g in gpus]
            intra = self._intra_bad(server)
            got = self._server_cache[server] = _ServerReach(
                gpus, [tuple(b.gpu_nics(g)) for g in gpus], d, p,
                [[at[g] for g in group] for group in b.nvlink_groups(server)], intra,
                (server_pairs_term(intra, d), server_pairs_term(intra, p)),
            )  # fmt: skip
        return got

    @cached_property
    def _server_cache(self) -> dict[int, _ServerReach]:
        return {}

    @cached_property
    def _base_cross(self) -> tuple[int, int]:
        return cross_bad_pairs(self._reach_counts[0]), cross_bad_pairs(self._reach_counts[1])

    def _case_analysis(self, failures: Sequence[Failure]) -> Analysis:
        state = self.state
        for x in failures:
            state = state.inject(x.to_fault(self.fabric))
        return self._analysis(state)

    def _bisection(self, failures: Sequence[Failure]) -> float:
        return self._bisection_ratio(self._case_analysis(failures))

    def _bisection_ratio(self, a: Analysis) -> float:
        base = (self.reference or self.healthy).bisection_gbps
        return a.bisection_gbps / base if base else 0.0

    def _leaf_uplink_ratio(self, a: Analysis) -> float:
        """:meth:`Analysis.leaf_uplink_ratio` of ``a``, divided by this evaluator's reference."""
        f = self.fabric
        live = a.leaf_uplinks[0]
        _, denom = self._uplinks
        leaves = f.leaves[a.up[f.leaves]]
        has = leaves[denom[leaves] > 0]
        return float((live[has] / denom[has]).min()) if has.size else self._no_uplinks

    @property
    def _no_uplinks(self) -> float:
        """The uplink ratio with no leaf to judge: 0 of healthy; 1 of a reference (nothing lost)."""
        return 0.0 if self.reference is None else 1.0

    def evaluate_exact(self, failures: Sequence[Failure]) -> CaseResult:
        """The same answer by the full analysis (slow path, and the tests' oracle)."""
        self.exact_cases += 1
        f = self.fabric
        a = self._case_analysis(failures)
        lost = tuple(sorted(set(a.jobs_lost()) - self._base_lost))
        busbw = self._min_busbw(np.array([a.job_busbw_gbs(j) for j in self.jobs], dtype=np.float64))
        s_denom = self._storage[1]
        s_vals = []
        for s in f.servers.tolist():
            h = s_denom[s]
            if h and a.up[s]:
                s_vals.append(a.storage_gbps(s) / h)
        reasons = tuple(
            f"{v.name}: {v.reasons[0]}" for v in a.verdicts if v.lost and v.name in lost
        )[:6]
        bis = None
        if self.bisection and f.n_sus >= 2:
            bis = self._bisection_ratio(a)
        return CaseResult(
            tuple(failures),
            a.gpu_pairs_disconnected(pxn=True),
            a.gpu_pairs_disconnected(),
            lost,
            self._leaf_uplink_ratio(a),
            busbw,
            min(s_vals, default=1.0),
            True,
            bis,
            reasons,
        )
