"""The sweep's case evaluator: many small failure cases against one base state, fast.

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
   only the flows the case moves are placed again, from the base's placement
   (:mod:`.flows`; every leaf-spine cut at once, :mod:`.flow_cuts`), or on
   fabrics and failures it does not cover the whole case (:mod:`.local`); the
   common single failures are evaluated in bulk with numpy
   (:mod:`.kernels_cables`, :mod:`.kernels_switches`, :mod:`.kernels_nics`);
3. a case that does split a class (an articulation point, a bridge, or for
   pairs a 2-cut), or a base whose NIC ports reach several classes at once
   (a valley, say), is evaluated by the full
   :class:`~harness.invariants.analysis.Analysis` (``exact`` path), so results are
   always exact; the row says which path ran (:mod:`.exact`).

What the one pass keeps of the base is in :mod:`.base` (and, for the GPU
pairs, :mod:`.pairs`); the case records in :mod:`.records`.

The tests compare both paths case by case (``tests/planning/test_sweep.py`` on
every case of small fabrics, ``tests/properties/test_prop_sweep.py`` on drawn
fabrics, faults, jobs, path rules, forwarding models and the bisection).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import numpy.typing as npt

from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants.topology import components
from harness.planning.sweep.exact import ExactPath
from harness.planning.sweep.kernels_cables import bulk_cables
from harness.planning.sweep.kernels_nics import bulk_nics
from harness.planning.sweep.kernels_switches import bulk_upper
from harness.planning.sweep.local import LocalPath
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure
from harness.planning.sweep.records import relabel

_SWITCH_KIND_CODES = frozenset(int(k) for k in COMPUTE_SWITCH_KINDS)


class CaseEvaluator(LocalPath, ExactPath):
    """Evaluate failure cases on top of a base fault state.

    The ratios of a case (job bus bandwidth, leaf uplinks, storage, bisection)
    are taken against the healthy fabric, or against ``reference`` when one is
    given (e.g. the state before a change): then a job lost in the reference,
    a leaf with no live uplink there, or a server without storage there is left
    out of the minimum, since a case cannot take from it what is already gone.
    """

    def prepare(self) -> None:
        """Do the one linear pass now (otherwise it happens on the first case)."""
        _ = (
            self._ports, self._leaf_ports, self._gpu_state,
            self._base_pairs, self._gpu_totals, self._leaf_pos, self._base_uplink,
            self._uplinks, self._flows, self._busbw, self._storage, self._base_lost,
            self._classes, self._updown if self.paths == "up-down" else self._switch_graph,
        )  # fmt: skip

    def evaluate(self, failures: Sequence[Failure]) -> CaseResult:
        """Evaluate one case, on the local fast path when it can, else by the full analysis."""
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

    def evaluate_singles(self, singles: Sequence[Failure]) -> list[CaseResult]:
        """Evaluate many single failures; the common ones in bulk (numpy), the rest one by one.

        Bulk classes (exactly what :meth:`evaluate` would return for them):
        a live switch-to-switch cable that is not a bridge, when no job flow
        crosses the leaves (only the leaf's uplink ratio moves), or a live
        leaf-spine cable that splits nothing when flows do, on a two-tier
        fabric (the flows it moves, or under adaptive forwarding the pools it
        shrinks, for all such cables at once, :mod:`.flow_cuts`); a leaf that splits
        nothing, with the
        NICs behind it (as for one NIC, below); and a live
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
        bulk_cables(self, singles, cables, out)
        bulk_nics(self, singles, nics, out)
        bulk_upper(self, singles, upper, out)
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
            if self._bulk_cuts:  # leaf-spine cuts: the flows they move, all at once
                ls = np.flatnonzero(lk == int(LinkKind.LEAF_SPINE))
                cables.extend(p for p, i in zip(ls.tolist(), idx[ls].tolist(), strict=True)
                              if not cut_splits(i))  # fmt: skip
            leaves = np.flatnonzero(is_el & (ek == int(Kind.LEAF)) & base.up[el_at])
            for p, i in zip(leaves.tolist(), idx[leaves].tolist(), strict=True):
                self._bulk_leaf(p, i, split, nics)  # its flows are its NICs' (no transit)
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
            else:
                self._bulk_leaf(p, i, split, nics)
        nics.sort()
        return cables, nics, upper

    def _bulk_leaf(
        self,
        p: int,
        leaf: int,
        split: Callable[[int], bool],
        nics: list[tuple[int, tuple[int, ...], int]],
    ) -> None:
        """Add the case at position ``p``, leaf ``leaf`` dead, to the bulk NIC cases when it
        splits nothing and every NIC behind it is a bulk one."""
        if self._single_component and not split(leaf):
            bulk = self._bulk_nic_mask
            behind = tuple(sorted({nic for nic, _ in self._leaf_ports.get(leaf, [])}))
            if all(bulk[nic] for nic in behind):
                nics.append((p, behind, leaf))

    @property
    def _bulk_cuts(self) -> bool:
        """Whether leaf-spine cuts that move job flows are a bulk case (:mod:`.flow_cuts`)."""
        f = self.fabric
        return f.tiers == 2 and int(self.base.network.access[1][0]) == 1

    def _bulk_nic(self, nic: int) -> bool:
        """Whether cutting ``nic`` is a bulk case (:func:`.kernels_nics.bulk_nics`)."""
        return bool(self._bulk_nic_mask[nic])

    @cached_property
    def _bulk_nic_mask(self) -> npt.NDArray[np.bool_]:
        """Per element: whether it is a NIC whose cut is a bulk case (:func:`.bulk_nics`):
        a live single-port NIC with its one port live, on an undamaged server.  Its flows, if
        any, belong to the server's multi-server jobs, which the cut loses (their bandwidth
        0, so the least ratio 0 whatever the others' flows do); without such a job it has
        none and every job keeps its bandwidth.  Not when one of those jobs is lost already
        (its flows still load the links, and the cut takes them off) or has no bandwidth
        to lose."""
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
        if not self._no_flows:  # a job lost already (or with no bandwidth to lose) keeps
            # loading the links with its flows: cutting them may speed others up
            _, denom = self._busbw
            kept = np.zeros(f.n_elements, dtype=np.bool_)
            for s, js in self._job_of_server.items():
                kept[s] = any(
                    len(self.jobs[j].servers) > 1
                    and (self.jobs[j].name in self._base_lost or denom[j] <= 0)
                    for j in js
                )  # fmt: skip
            ok &= ~kept[srv]
        out[nics] = ok
        return out

    @cached_property
    def _base_slowest(self) -> str:
        """The surviving job with the base's lowest bus bandwidth ratio ("" when none)."""
        return self._min_busbw(self._busbw[0])[1]

    @cached_property
    def _base_metrics(self) -> tuple[int, int, float, float, float]:
        """Base (pairs pxn, pairs direct, uplink ratio, min busbw ratio, storage ratio)."""
        intra_d, intra_p, inter_d, inter_p = self._base_pairs
        _, ratios = self._base_uplink
        return (
            intra_p + inter_p,
            intra_d + inter_d,
            float(ratios.min()) if ratios.size else self._no_uplinks,
            self._min_busbw(self._busbw[0])[0],
            self._base_storage_ratio if self._storage[0] else 1.0,
        )

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
    def _by_nics(self) -> dict[tuple[tuple[int, ...], int], CaseResult]:
        """Bulk NIC cases so far, by (NICs cut, dead leaf)."""
        return {}

    @cached_property
    def _by_nic(self) -> dict[int, tuple[float, str]]:
        """Single NIC cut cases so far (the NIC, its access cable or an access optic): the
        surviving jobs' least bus bandwidth ratio and its job, by NIC."""
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
                    r = relabel(same, (x,))
            res.append(r)
        return res

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
