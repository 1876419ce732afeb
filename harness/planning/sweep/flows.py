"""Job bandwidth of a case from the flows it moves: the flow engine's answer, recomputed locally.

When some job's flows cross leaves, a case that moves anything they use (a
switch, a switch-to-switch cable, a job's NIC) used to be placed again from
scratch: a full :class:`~harness.invariants.analysis.Analysis` of the case's
fabric, tens of milliseconds each.  :class:`FlowDelta` places the base's
flows once (:func:`~harness.invariants.traffic._place`,
:func:`~harness.invariants.forwarding.flow_paths`) and, per case, computes
only what the case changes, with the same arithmetic as the flow engine:

1. the flows that die (an end's NIC loses its port: the NIC, its access
   cable or optic, its leaf) and those whose route changes (static and
   ``ecmp`` tables: every flow leaving or entering a leaf that lost an
   uplink, the d-mod-k or hash pick made again over the case's live
   uplinks and down cables; ``adaptive`` pools: a cut leaf-spine cable can
   change which spines reach which leaf, so every leaf's pools
   (:mod:`harness.invariants.adaptive`) and every cross-leaf flow's pools are
   made again on the case's fabric and evaluated in full, without placing
   the flows again; a case that cuts no leaf-spine cable moves no pool);
2. the links and pools those flows left or took, and the pools whose
   capacity changed: their load is summed again from the flows on them, in
   the flow engine's order (so the sums are the same floating-point
   numbers), shared out as :func:`~harness.invariants.traffic._evaluate`
   shares it;
3. the rate of every flow on them, and each collective's slowest flow.

A link the moved flows only leave, whose every offered load was below its
capacity by more than any rounding in the base, keeps every share on it at
exactly 1: it is not summed again.  It answers two-tier fabrics whose NICs
have one port slot, for failures of leaves, spines, NICs and compute cables
or optics (:meth:`FlowDelta.applies`: every N+1 failure of ``harness risk``
and of the default sweep); anything else goes the full way.  Every
leaf-spine cut at once: :mod:`.flow_cuts`.  Exact:
``tests/properties/test_prop_flow_delta.py`` compares it with the full
analysis (``==``) on drawn fabrics, faults, jobs, forwarding models and cases.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import numpy.typing as npt

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import Forwarding
from harness.invariants.collectives import COLLECTIVE_ORDER
from harness.invariants.ecmp import _mix
from harness.invariants.forwarding import PATH_RESOURCES
from harness.invariants.forwarding import Resources
from harness.invariants.forwarding import flow_paths
from harness.invariants.network import Network
from harness.invariants.traffic import ECMP_DRAWS
from harness.invariants.traffic import _place
from harness.planning.sweep.records import Failure

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
_WIRING = ("server_row", "rail_nics", "access", "uplinks", "downlinks", "pods", "port_number")
_LEAF, _SPINE, _NIC = int(Kind.LEAF), int(Kind.SPINE), int(Kind.NIC)
_ACCESS, _LEAF_SPINE = int(LinkKind.ACCESS), int(LinkKind.LEAF_SPINE)


def member(table: IntArray, x: IntArray) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """Where each of ``x`` is in the sorted ``table``, and whether it is there."""
    pos = np.searchsorted(table, x)
    if not table.size:
        return pos, np.zeros(x.size, dtype=np.bool_)
    return pos, (pos < table.size) & (table[np.minimum(pos, table.size - 1)] == x)


class _Draw:
    """One routing draw of the base (one for static and adaptive, one per hash for ecmp)."""

    def __init__(self, engine: FlowDelta, seed: int) -> None:
        net, fl = engine.net, engine.fl
        self.paths = flow_paths(net, fl, engine.res, engine.forwarding, seed)
        n = fl.src.size
        if engine.forwarding == "static":
            self.key_up = self.key_down = fl.key
        else:
            base = (fl.src * np.int64(1_000_003) + fl.dst) * np.int64(8) + fl.slot
            self.key_up = _mix(base ^ _mix(np.full(n, 2 * seed + 1, dtype=np.int64)))
            self.key_down = _mix(base ^ _mix(np.full(n, 2 * seed + 2, dtype=np.int64)))
        # resource -> its flows (ascending), and each flow's share of each path resource
        rows, cols = np.nonzero(self.paths >= 0)
        ids = self.paths[rows, cols]
        order = np.lexsort((rows, ids))
        self.res_ids, starts = np.unique(ids[order], return_index=True)
        self.res_ptr = np.r_[starts, order.size].astype(np.int64)
        self.res_flows = rows[order].astype(np.int64)
        self.res_cols = cols[order].astype(np.int64)
        share, value = engine.evaluate(engine.net, self.paths, rows, cols, ids)
        self.share = share
        self.value = value
        self.best = engine._best(value)
        # resources whose every group's offered load is below capacity by more than any
        # rounding: taking flows off them leaves every share on them at exactly 1
        uniq, inv = np.unique(ids, return_inverse=True)
        load = np.zeros((engine.groups, uniq.size))
        np.add.at(load, (engine.fl.group[rows], inv.reshape(-1)), engine.gbps[rows])
        per_job = load.reshape(len(engine.jobs), engine.nc, uniq.size)
        heaviest = per_job.max(axis=1)
        total = per_job + (heaviest.sum(axis=0)[None, :] - heaviest)[:, None, :]
        cap = engine.res.capacity(uniq)
        self.total = total.reshape(engine.groups, uniq.size)  # (group, resource of res_ids)
        room = total.max(axis=(0, 1)) <= cap * (1 - 1e-9)
        self.slack = room if uniq.size else np.zeros(0, dtype=np.bool_)

    def flows_on(self, resources: IntArray) -> tuple[IntArray, IntArray, IntArray]:
        """(flow, column, resource) of the base's flows on ``resources``."""
        pos, found = member(self.res_ids, resources)
        pos = pos[found]
        if not pos.size:
            e = np.zeros(0, dtype=np.int64)
            return e, e, e
        lo, hi = self.res_ptr[pos], self.res_ptr[pos + 1]
        lens = hi - lo
        at = np.repeat(lo - np.r_[0, np.cumsum(lens)[:-1]], lens) + np.arange(int(lens.sum()))
        return self.res_flows[at], self.res_cols[at], np.repeat(self.res_ids[pos], lens)


class FlowDelta:
    """The base's flows placed once; per case, the bus bandwidth of every job (see module)."""

    def __init__(self, net: Network, jobs: Sequence[Job], forwarding: Forwarding) -> None:
        self.net = net
        self.jobs = tuple(jobs)
        self.forwarding: Forwarding = forwarding
        self.fl = _place(net, self.jobs)
        self.res = Resources(net)
        self.nc = len(COLLECTIVE_ORDER)
        self.groups = len(self.jobs) * self.nc
        self.gbps = self.fl.gbps

    @staticmethod
    def applies(fabric: Fabric, net: Network, failures: Sequence[Failure]) -> bool:
        """Whether the engine answers these failures on this fabric (else the full way)."""
        if fabric.tiers != 2 or int(net.access[1][0]) != 1:
            return False
        for x in failures:
            if x.kind == "element":
                if int(fabric.kind[x.index]) not in (_LEAF, _SPINE, _NIC):
                    return False
            elif int(fabric.link_kind[x.index]) not in (_ACCESS, _LEAF_SPINE):
                return False
        return True

    @cached_property
    def draws(self) -> tuple[_Draw, ...]:
        """The base's routing draws (placed and evaluated once)."""
        n = ECMP_DRAWS if self.forwarding == "ecmp" else 1
        return tuple(_Draw(self, seed) for seed in range(n))

    @cached_property
    def _uplink_table(self) -> tuple[IntArray, IntArray]:
        """Leaf -> row; (row, k) -> its k-th uplink in port order (-1 padded)."""
        f = self.net.fabric
        ups = self.net.uplinks
        row = np.full(f.n_elements, -1, dtype=np.int64)
        width = max((u.size for u in ups.values()), default=1)
        table = np.full((max(len(ups), 1), width), -1, dtype=np.int64)
        for r, (leaf, links) in enumerate(sorted(ups.items())):
            row[leaf] = r
            table[r, : links.size] = links
        return row, table

    @cached_property
    def _down_table(self) -> tuple[IntArray, IntArray, IntArray]:
        """Spine -> row, leaf -> column; (row, column, m) -> the m-th cable between them."""
        f = self.net.fabric
        downs = self.net.downlinks
        spines = sorted({s for s, _ in downs})
        leaves = sorted({x for _, x in downs})
        srow = np.full(f.n_elements, -1, dtype=np.int64)
        lcol = np.full(f.n_elements, -1, dtype=np.int64)
        srow[spines] = np.arange(len(spines))
        lcol[leaves] = np.arange(len(leaves))
        width = max((d.size for d in downs.values()), default=1)
        table = np.full((max(len(spines), 1), max(len(leaves), 1), width), -1, dtype=np.int64)
        for (s, leaf), links in downs.items():
            table[srow[s], lcol[leaf], : links.size] = links
        return srow, lcol, table

    def evaluate(
        self, net: Network, paths: IntArray, rows: IntArray, cols: IntArray, ids: IntArray
    ) -> tuple[FloatArray, FloatArray]:
        """Per flow: its share on each path column, and its rate at full scale (as
        :func:`harness.invariants.traffic._evaluate`), for the paths ``paths``."""
        fl = self.fl
        share = np.ones(paths.shape)
        if rows.size:
            ratio, inv = self._ratios(net, rows, ids, self.gbps)
            share[rows, cols] = ratio[fl.group[rows], inv]
        value = fl.demand * fl.scale
        value = value * share.min(axis=1)
        return share, np.where(paths[:, 0] == -2, 0.0, value)

    def _ratios(
        self, net: Network, rows: IntArray, ids: IntArray, gbps: FloatArray
    ) -> tuple[FloatArray, IntArray]:
        """(group, resource) -> min(1, capacity / offered), over the resources of ``ids``
        (rows ascending per resource, as the flow engine sums them); and each entry's column."""
        fl = self.fl
        uniq, inv = np.unique(ids, return_inverse=True)
        load = np.zeros((self.groups, uniq.size))
        np.add.at(load, (fl.group[rows], inv), gbps[rows])
        per_job = load.reshape(len(self.jobs), self.nc, uniq.size)
        heaviest = per_job.max(axis=1)
        others = heaviest.sum(axis=0)[None, :] - heaviest
        total = per_job + others[:, None, :]
        cap = Resources(net).capacity(uniq)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(total > 0, np.minimum(1.0, cap[None, None, :] / total), 1.0)
        return ratio.reshape(self.groups, uniq.size), inv.reshape(-1)

    def _case_net(self, dead: IntArray, cut: IntArray) -> Network:
        """The base network with elements ``dead`` down and links ``cut`` at 0 (wiring reused)."""
        base = self.net
        up = base.up.copy()
        up[dead] = False
        cap = base.cap.copy()
        cap[cut] = 0.0
        net = Network(base.fabric, up, cap, base.nic_rate)
        kept = vars(base)
        vars(net).update({k: kept[k] for k in _WIRING if k in kept})
        f = base.fabric
        ls, spine_row, leaf_col, shape = self._link_tables
        # what Network computes of the live state, from the link tables read once
        vars(net)["leaf_up_gbps"] = np.bincount(
            f.link_a[ls], weights=cap[ls], minlength=f.n_elements
        ).astype(np.float64)
        vars(net)["pod_up_gbps"] = np.zeros(1, dtype=np.float64)  # two tiers: no core uplink
        live = ls[cap[ls] > 0]
        reaches = np.zeros(shape, dtype=bool)
        reaches[spine_row[f.link_b[live]], leaf_col[f.link_a[live]]] = True
        vars(net)["spine_reaches"] = (spine_row, leaf_col, reaches)
        return net

    @cached_property
    def _link_tables(self) -> tuple[IntArray, IntArray, IntArray, tuple[int, int]]:
        """The leaf-spine cables, and :attr:`Network.spine_reaches`'s rows, columns and shape."""
        spine_row, leaf_col, reaches = self.net.spine_reaches
        ls = self.net.fabric.links_of_kind(LinkKind.LEAF_SPINE).astype(np.int64)
        return ls, spine_row, leaf_col, (int(reaches.shape[0]), int(reaches.shape[1]))

    @cached_property
    def _flows_of(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """CSR tables: NIC -> the live flows it sends or takes; leaf -> live cross-leaf flows
        leaving or entering it (pointers by element, then flow indices ascending)."""
        f = self.net.fabric
        fl = self.fl
        live = np.flatnonzero(fl.leaf_a >= 0)

        def csr(owner: IntArray, flows: IntArray) -> tuple[IntArray, IntArray]:
            order = np.lexsort((flows, owner))
            counts = np.bincount(owner, minlength=f.n_elements)
            return np.r_[0, np.cumsum(counts)].astype(np.int64), flows[order].astype(np.int64)

        nic_ptr, nic_flows = csr(np.concatenate([fl.src[live], fl.dst[live]]),
                                 np.concatenate([live, live]))  # fmt: skip
        cross = live[fl.leaf_a[live] != fl.leaf_b[live]]
        leaf_ptr, leaf_flows = csr(np.concatenate([fl.leaf_a[cross], fl.leaf_b[cross]]),
                                   np.concatenate([cross, cross]))  # fmt: skip
        return nic_ptr, nic_flows, leaf_ptr, leaf_flows

    @cached_property
    def _parallel_live(self) -> npt.NDArray[np.bool_]:
        """Per link: a leaf-spine cable with another live cable between the same two switches."""
        net = self.net
        out = np.zeros(net.fabric.n_links, dtype=np.bool_)
        for links in net.downlinks.values():
            live = links[net.cap[links] > 0]
            if live.size > 1:
                out[links] = True
        return out

    @cached_property
    def _group_order(self) -> tuple[IntArray, IntArray, IntArray]:
        """The groups that have flows, the flows ordered by group, where each group starts."""
        group = self.fl.group
        order = np.argsort(group, kind="stable")
        present = np.unique(group)
        return present, order, np.searchsorted(group[order], present).astype(np.int64)

    @cached_property
    def _leaf_uplinks(self) -> tuple[IntArray, IntArray]:
        """CSR: leaf -> its leaf-spine cables, in the order Network sums a leaf's uplinks."""
        f = self.net.fabric
        ls = self._link_tables[0]
        owner = f.link_a[ls].astype(np.int64)
        order = np.argsort(owner, kind="stable")
        counts = np.bincount(owner, minlength=f.n_elements)
        return np.r_[0, np.cumsum(counts)].astype(np.int64), ls[order]

    @cached_property
    def _memo(self) -> dict[tuple[tuple[int, ...], tuple[int, ...]], FloatArray]:
        """Answers so far, by (NICs whose flows die, uplinks cut): a NIC, its cable and its
        optics take the same flows away."""
        return {}

    def busbw(self, failures: Sequence[Failure], nvlink: Sequence[float]) -> FloatArray:
        """Per job: its bus bandwidth (GB/s) with ``failures`` on top of the base, as
        :func:`harness.invariants.bandwidth.job_busbw_gbs` of the case's full analysis gives
        it (``nvlink``: each job's GPUs' least one-way bandwidth inside their server)."""
        f = self.net.fabric
        dead_el = [x.index for x in failures if x.kind == "element"]
        parts = [np.array([x.index for x in failures if x.kind != "element"], dtype=np.int64)]
        parts += [f.links_at(i).astype(np.int64) for i in dead_el]
        cut = np.unique(np.concatenate(parts))
        cut = cut[self.net.cap[cut] > 0]
        kinds = f.link_kind[cut]
        dead_nics = np.unique(np.concatenate([
            f.link_a[cut[kinds == _ACCESS]].astype(np.int64),
            np.array([i for i in dead_el if int(f.kind[i]) == _NIC], dtype=np.int64),
        ]))  # fmt: skip
        cut_up = cut[kinds == _LEAF_SPINE]
        key = (tuple(dead_nics.tolist()), tuple(cut_up.tolist()))
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = self._fabric_busbw(dead_nics, cut_up, cut, dead_el)
        out = np.zeros(len(self.jobs))
        for j, job in enumerate(self.jobs):
            nv = float(nvlink[j])
            if len(job.servers) < 2:
                out[j] = nv if np.isfinite(nv) else 0.0
            else:
                out[j] = float(min(float(got[j]), nv))
        return out

    def _fabric_busbw(
        self, dead_nics: IntArray, cut_up: IntArray, cut: IntArray, dead_el: list[int]
    ) -> FloatArray:
        """Per job: its worst collective's expected bus bandwidth on the case's fabric."""
        f = self.net.fabric
        nic_ptr, nic_flows, leaf_ptr, leaf_flows = self._flows_of

        def gather(ptr: IntArray, flows: IntArray, owners: IntArray) -> IntArray:
            if not owners.size:
                return np.zeros(0, dtype=np.int64)
            return np.unique(np.concatenate([flows[ptr[o] : ptr[o + 1]] for o in owners.tolist()]))

        dies = gather(nic_ptr, nic_flows, dead_nics)
        moved = np.zeros(0, dtype=np.int64)
        pools = np.zeros(0, dtype=np.int64)
        hit_leaves = np.unique(f.link_a[cut_up]).astype(np.int64)
        if hit_leaves.size:
            if self.forwarding == "adaptive":
                case = self._case_net(np.array(dead_el, dtype=np.int64), cut)
                return self._adaptive_busbw(case, dies)
            moved = np.setdiff1d(gather(leaf_ptr, leaf_flows, hit_leaves), dies)
        changed = np.union1d(dies, moved)
        nets: list[Network] = []

        def net() -> Network:  # built when a share must be computed again
            if not nets:
                nets.append(self._case_net(np.array(dead_el, dtype=np.int64), cut))
            return nets[0]

        values = [self._draw_values(d, net, changed, moved, pools) for d in self.draws]
        expected = np.stack(values).mean(axis=0) * f.rails
        out = np.full(len(self.jobs), np.inf)
        for j, job in enumerate(self.jobs):
            out[j] = min((float(expected[j * self.nc + COLLECTIVE_ORDER.index(c)])
                          for c in job.collectives), default=float("inf"))  # fmt: skip
        return out

    def _adaptive_busbw(self, net: Network, dies: IntArray) -> FloatArray:
        """Per job, under adaptive forwarding: its worst collective's bus bandwidth on ``net``
        (the base's flows, ``dies`` without a path), every pool made again and evaluated."""
        paths = flow_paths(net, self.fl, Resources(net), "adaptive", 0)
        paths[dies] = -1
        paths[dies, 0] = -2
        rows, cols = np.nonzero(paths >= 0)
        _, value = self.evaluate(net, paths, rows, cols, paths[rows, cols])
        expected = np.stack([self._best(value)]).mean(axis=0) * net.fabric.rails
        out = np.full(len(self.jobs), np.inf)
        for j, job in enumerate(self.jobs):
            out[j] = min((float(expected[j * self.nc + COLLECTIVE_ORDER.index(c)])
                          for c in job.collectives), default=float("inf"))  # fmt: skip
        return out

    def _draw_values(
        self,
        d: _Draw,
        case_net: Callable[[], Network],
        changed: IntArray,
        moved: IntArray,
        pools: IntArray,
    ) -> FloatArray:
        """Per group: the slowest flow's rate at full scale in one draw, for the case."""
        fl = self.fl
        mark = np.zeros(fl.src.size, dtype=np.bool_)
        mark[moved] = True
        repathed = mark[changed]
        new_paths = np.full((changed.size, PATH_RESOURCES), -1, dtype=np.int64)
        new_paths[~repathed, 0] = -2  # the flows that die: no path
        if moved.size:
            new_paths[repathed] = self._repath(d, case_net(), changed[repathed])
        old_res = d.paths[changed]
        left, took = old_res[old_res >= 0], new_paths[new_paths >= 0]
        at, _ = member(d.res_ids, left)  # a link only left, with room to spare: unchanged
        left = left[~d.slack[at] | np.isin(left, took)]
        touched = np.unique(np.concatenate([left, took, pools]))
        gone = changed[new_paths[:, 0] == -2]  # died, or no route left
        if not moved.size and not pools.size and self._slack(d, touched):
            best = d.best.copy()  # every share stays 1: only the dead flows' groups change
            best[np.unique(self.fl.group[gone])] = 0.0
            return best
        value = d.value.copy()
        if touched.size:
            mark[changed] = True
            k_on, c_on, r_on = d.flows_on(touched)
            keep = ~mark[k_on]
            k_on, c_on, r_on = k_on[keep], c_on[keep], r_on[keep]
            n_rows, n_cols = np.nonzero(new_paths >= 0)
            k_all = np.concatenate([k_on, changed[n_rows]])
            c_all = np.concatenate([c_on, n_cols])
            r_all = np.concatenate([r_on, new_paths[n_rows, n_cols]])
            order = np.argsort(k_all, kind="stable")  # the flow engine sums flows in order
            k_all, c_all, r_all = k_all[order], c_all[order], r_all[order]
            ratio, inv = self._ratios(case_net(), k_all, r_all, self.gbps)
            flows, row_of = np.unique(k_all, return_inverse=True)
            share = d.share[flows].copy()
            share[mark[flows]] = 1.0
            share[row_of.reshape(-1), c_all] = ratio[fl.group[k_all], inv]
            v = fl.demand[flows] * fl.scale[flows]
            value[flows] = v * share.min(axis=1)
        value[gone] = 0.0
        return self._best(value)

    @staticmethod
    def _slack(d: _Draw, touched: IntArray) -> bool:
        """Whether every resource of ``touched`` had room to spare in the base (see _Draw)."""
        pos, found = member(d.res_ids, touched)
        return bool(found.all() and d.slack[pos].all())

    def _best(self, value: FloatArray) -> FloatArray:
        best = np.full(self.groups, np.inf)
        np.minimum.at(best, self.fl.group, value)
        return best

    def _repath(self, d: _Draw, net: Network, rows: IntArray) -> IntArray:
        """The paths of cross-leaf flows ``rows`` on the case's fabric (:func:`repath`)."""
        return repath(self, d, net, rows)


def repath(
    engine: FlowDelta,
    d: _Draw,
    net: Network,
    rows: IntArray,
    *,
    gone_up: npt.NDArray[np.bool_] | None = None,
    gone_down: IntArray | None = None,
) -> IntArray:
    """The paths of cross-leaf flows ``rows`` on ``net`` (two tiers), as
    :func:`~harness.invariants.forwarding.flow_paths` picks them: d-mod-k (static) or hashed
    (ecmp) over the live uplinks to a live spine that reaches the destination leaf, then down
    over that spine's live cables to it.  ``gone_up`` (per row and uplink) and ``gone_down``
    (per row) take cables away from ``net`` for each row (the batched cuts of
    :mod:`.flow_cuts`, all on the base's network)."""
    f = net.fabric
    fl = engine.fl
    out = np.full((rows.size, PATH_RESOURCES), -1, dtype=np.int64)
    if not rows.size:
        return out
    la, lb = fl.leaf_a[rows], fl.leaf_b[rows]
    urow, utab = engine._uplink_table
    cand = utab[np.maximum(urow[la], 0)]
    cand[urow[la] < 0] = -1
    safe = np.maximum(cand, 0)
    spine = f.link_b[safe]
    srow, lcol, dtab = engine._down_table
    s_row, l_col, reaches = net.spine_reaches
    valid = (cand >= 0) & (net.cap[safe] > 0) & net.up[spine]
    valid &= reaches[s_row[spine], l_col[lb][:, None]]  # as flow_paths indexes it
    if gone_up is not None:
        valid &= ~gone_up
    count = valid.sum(axis=1)
    ok = count > 0
    out[~ok, 0] = -2
    pick = d.key_up[rows][ok] % count[ok]
    idx = np.argmax(np.cumsum(valid[ok], axis=1) > pick[:, None], axis=1)
    up = cand[ok][np.arange(idx.size), idx]
    out[ok, 0] = 2 * up
    downs = dtab[srow[f.link_b[up]], lcol[lb[ok]]]
    dvalid = (downs >= 0) & (net.cap[np.maximum(downs, 0)] > 0)
    if gone_down is not None:
        dvalid &= downs != gone_down[ok][:, None]
    dcount = dvalid.sum(axis=1)
    dpick = d.key_down[rows][ok] % np.maximum(dcount, 1)
    didx = np.argmax(np.cumsum(dvalid, axis=1) > dpick[:, None], axis=1)
    out[ok, 1] = 2 * downs[np.arange(didx.size), didx] + 1
    return out
