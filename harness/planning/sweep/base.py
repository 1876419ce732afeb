"""The base state of a sweep, analysed once: the tables every case is evaluated against.

:class:`SweepBase` holds the healthy and base analyses and what is read off
them in one pass: the classes of leaves the NIC ports reach, the up-down
indexes (or the switch graph's articulation points and bridges), the live
access ports, the leaves' uplinks, the jobs' flows and bus bandwidth, and the
storage bonds; and the ratios a case's changes give against them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from harness.fabric.jobs import Job
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Forwarding
from harness.fabric.routing import PathRule
from harness.fabric.routing import Routing
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.reach import UpDownIndex
from harness.invariants.state import Observation
from harness.planning.sweep.records import Failure

if TYPE_CHECKING:
    import networkx as nx


class SweepBase:
    """The one-pass tables of a sweep's base state (what every case is compared with)."""

    def __init__(
        self,
        fabric: Fabric,
        jobs: Sequence[Job],
        base: FaultState | None = None,
        *,
        bisection: bool = False,
        reference: Analysis | None = None,
        routing: Routing | None = None,
    ) -> None:
        self.fabric = fabric
        # the routing as resolved once (the reference's when none is given), carried unchanged
        self.routing = routing or (reference.routing if reference else DEFAULT_ROUTING)
        self.forwarding: Forwarding = self.routing.forwarding_model
        self.jobs = tuple(jobs)
        self.state = base or FaultState.healthy(fabric)
        self.bisection = bisection
        self.reference = reference
        self.paths: PathRule = self.routing.paths
        healthy_state = FaultState.healthy(fabric)
        self.healthy = self._analysis(healthy_state, healthy=False)
        # with no faults present the base is the healthy fabric: analyse it once
        self.base = self.healthy if self.state.is_healthy else self._analysis(self.state)
        self.exact_cases = 0
        self._without_cache: dict[tuple[str, ...], tuple[float, str]] = {}

    def _analysis(self, state: FaultState, *, healthy: bool = True) -> Analysis:
        """The full analysis of ``state`` under this evaluator's path rule."""
        ref = self.healthy if healthy else None
        return Analysis(
            self.fabric, Observation.from_state(state), self.jobs, healthy=ref, routing=self.routing
        )

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
        import networkx as nx  # only shortest paths need it: 0.15 s off every other start

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
    def _no_flows(self) -> bool:
        """No flow of any job crosses two leaves in the base."""
        return not self._flows.any()

    def _multi_server_jobs(self, server: int) -> bool:
        """Whether a job of more than one server (one with flows) runs on ``server``."""
        return any(len(self.jobs[j].servers) > 1 for j in self._job_of_server.get(server, []))

    @cached_property
    def _uplinks(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per element: the base's live leaf uplink Gb/s, and what ratios divide by."""
        live, full = self.base.leaf_uplinks
        if self.reference is not None:
            full = self.reference.leaf_uplinks[0]
        return live, full

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

    @property
    def _no_uplinks(self) -> float:
        """The uplink ratio with no leaf to judge: 0 of healthy; 1 of a reference (nothing lost)."""
        return 0.0 if self.reference is None else 1.0

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

    def _min_busbw(self, bw: npt.NDArray[np.float64]) -> tuple[float, str]:
        """Min bus bandwidth ratio over the jobs that survive, of per-job GB/s ``bw``, and the
        job that has it ((1.0, "") when none survives).

        A lost job (``bw`` 0: cut off, or lost in the base) is counted as lost, not as a
        bandwidth of 0; a job with no healthy (or reference) bandwidth was never running.
        """
        least, slowest = self._min_busbw_rows(bw[None, :])
        return float(least[0]), slowest[0]

    def _min_busbw_rows(
        self, bw: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.float64], list[str]]:
        """:meth:`_min_busbw` of every row of ``bw`` (case, job): the ratios and the jobs."""
        _, denom = self._busbw
        rows = bw.shape[0]
        alive = (bw > 0) & (denom > 0)[None, :]
        if not bw.shape[1]:
            return np.ones(rows), [""] * rows
        ratios = np.where(alive, bw / np.where(denom > 0, denom, 1)[None, :], np.inf)
        j = ratios.argmin(axis=1)
        none: npt.NDArray[np.bool_] = ~np.any(alive, axis=1)
        least: npt.NDArray[np.float64] = np.where(none, 1.0, ratios[np.arange(rows), j])
        gone: list[bool] = none.tolist()
        names = ["" if g else self.jobs[k].name for k, g in zip(j.tolist(), gone, strict=True)]
        return least, names

    def _busbw_without(self, lost: Sequence[str]) -> tuple[float, str]:
        """:meth:`_min_busbw` of the base's bandwidth with the jobs ``lost`` gone (a case that
        moves no other job's flow)."""
        key = tuple(lost)
        got = self._without_cache.get(key)
        if got is None:
            base, _ = self._busbw
            gone = set(key)
            bw = np.array([0.0 if job.name in gone else base[j]
                           for j, job in enumerate(self.jobs)], dtype=np.float64)  # fmt: skip
            got = self._without_cache[key] = self._min_busbw(bw)
        return got

    def case_busbw_without(
        self, failures: Sequence[Failure], gone: Sequence[str]
    ) -> tuple[float, str]:
        """:meth:`_min_busbw` of a case by the full analysis, the jobs ``gone`` left out (the
        N+1 margin's jobs crashed by a reroute, when the slowest survivor was one of them)."""
        a = self._case_analysis(failures)
        out = set(gone)
        bw = np.array([0.0 if job.name in out else a.job_busbw_gbs(job) for job in self.jobs],
                      dtype=np.float64)  # fmt: skip
        return self._min_busbw(bw)

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

    @cached_property
    def _base_storage_ratio(self) -> float:
        s_base, s_healthy = self._storage
        vals = [s_base[s] / s_healthy[s] for s in s_base if s_healthy[s] and self.base.up[s]]
        return min(vals, default=1.0)
