"""Bulk kernel of leaf-spine cable cuts when job flows cross leaves: every such case at once.

A live leaf-spine cable that splits nothing, cut on a two-tier fabric under
``static`` or ``ecmp`` forwarding, moves every cross-leaf flow leaving or
entering its leaf (:mod:`.flows`); under ``adaptive`` the cut can change
which spines reach the leaf, so every pool is made again per case (the
``FlowDelta`` adaptive path, one case at a time).  :func:`cut_busbw` does for many such
cuts at once what :meth:`FlowDelta.busbw <harness.planning.sweep.flows.FlowDelta.busbw>`
does for one, in numpy arrays with a case axis: the d-mod-k or hashed pick
made again over the case's live uplinks and down cables, the load of every
link the moved flows left or took summed again from the flows on it (in the
flow engine's order, so the sums are the same floating-point numbers), the
shares, and each collective's slowest flow.  The answers are the full
analysis's (``tests/properties/test_prop_flow_delta.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from harness.invariants.collectives import COLLECTIVE_ORDER
from harness.planning.sweep.flows import member
from harness.planning.sweep.flows import repath

if TYPE_CHECKING:
    from harness.planning.sweep.flows import FlowDelta
    from harness.planning.sweep.flows import _Draw

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def _ranges(ptr: IntArray, owners: IntArray) -> tuple[IntArray, IntArray]:
    """The CSR entries of ``owners`` concatenated: (which owner position, entry index)."""
    lo, hi = ptr[owners], ptr[owners + 1]
    lens = hi - lo
    total = int(lens.sum())
    start = np.r_[0, np.cumsum(lens)[:-1]]
    at = np.repeat(lo - start, lens) + np.arange(total)
    return np.repeat(np.arange(owners.size), lens), at


def cut_busbw(engine: FlowDelta, links: IntArray) -> FloatArray:
    """(case, job): each job's worst collective's expected bus bandwidth (GB/s, before the
    NVLink cap) with the live leaf-spine cable ``links[c]`` cut, for every case ``c``."""
    f = engine.net.fabric
    _, _, leaf_ptr, leaf_flows = engine._flows_of
    leaf = f.link_a[links].astype(np.int64)
    case, at = _ranges(leaf_ptr, leaf)  # by case, then flow: a flow crosses a leaf once
    flow = leaf_flows[at]
    none = np.zeros(0, dtype=np.int64)
    if engine.forwarding == "adaptive":  # the pools of every leaf may change: one by one
        rows = [engine._adaptive_busbw(engine._case_net(none, links[c : c + 1]), none)
                for c in range(links.size)]  # fmt: skip
        return np.array(rows, dtype=np.float64).reshape(links.size, len(engine.jobs))
    values = [
        _draw(engine, d, (case, flow), _cut_paths(engine, d, links, case, flow), links)
        for d in engine.draws
    ]
    return _per_job(engine, values)


def _per_job(engine: FlowDelta, values: list[FloatArray]) -> FloatArray:
    """(case, job): each job's worst collective's expected bus bandwidth over the draws."""
    expected = np.stack(values).mean(axis=0) * engine.net.fabric.rails  # (case, group)
    out = np.full((expected.shape[0], len(engine.jobs)), np.inf)
    nc = engine.nc
    for j, job in enumerate(engine.jobs):
        cols = [j * nc + COLLECTIVE_ORDER.index(c) for c in job.collectives]
        if cols:
            out[:, j] = expected[:, cols].min(axis=1)
    return out


def _repath(
    engine: FlowDelta,
    d: _Draw,
    flow: IntArray,
    *,
    gone_up: npt.NDArray[np.bool_] | None = None,
    gone_down: IntArray | None = None,
) -> IntArray:
    """New paths of the moved flows ``flow``, as ``FlowDelta._repath`` picks them on each
    case's fabric: the base's live uplinks less those the case takes (``gone_up``, per row
    and uplink), and down cables less the row's ``gone_down``."""
    return repath(engine, d, engine.net, flow, gone_up=gone_up, gone_down=gone_down)


def _cut_paths(
    engine: FlowDelta, d: _Draw, links: IntArray, case: IntArray, flow: IntArray
) -> IntArray:
    """New paths of the moved flows with cable ``links[case]`` cut on each row's fabric."""
    f = engine.net.fabric
    fl = engine.fl
    cut = links[case]
    cut_leaf, cut_spine = f.link_a[cut], f.link_b[cut]
    urow, utab = engine._uplink_table
    la, lb = fl.leaf_a[flow], fl.leaf_b[flow]
    cand = utab[np.maximum(urow[la], 0)]
    spine = f.link_b[np.maximum(cand, 0)]
    other = engine._parallel_live[cut]  # another live cable between the cut's spine and leaf
    lost_reach = (lb == cut_leaf) & ~other  # the cut spine no longer reaches the cut leaf
    gone = (cand == cut[:, None]) | (lost_reach[:, None] & (spine == cut_spine[:, None]))
    return _repath(engine, d, flow, gone_up=gone, gone_down=cut)


def _draw(
    engine: FlowDelta,
    d: _Draw,
    moved: tuple[IntArray, IntArray],
    new_paths: IntArray,
    dead: IntArray,
) -> FloatArray:
    """(case, group): the slowest flow's rate at full scale in one draw, the moved flows
    (``case``, ``flow``) on ``new_paths``, the cable ``dead[case]`` at no capacity."""
    fl = engine.fl
    n = fl.src.size
    n_cases = dead.size
    case, flow = moved
    nres = np.int64(2 * engine.net.fabric.n_links + 1)
    # the resources each case touches: what its moved flows left and took
    old = d.paths[flow]
    oc, ocol = np.nonzero(old >= 0)
    nr, ncol = np.nonzero(new_paths >= 0)
    old_keys = case[oc] * nres + old[oc, ocol]
    new_keys = case[nr] * nres + new_paths[nr, ncol]
    # a link the moved flows only left, with room to spare in the base, keeps every share
    # on it at exactly 1 (see _Draw.slack): nothing on it changes
    at, _ = member(d.res_ids, old[oc, ocol])
    keep = ~d.slack[at] | np.isin(old_keys, new_keys)
    keys = np.unique(np.concatenate([old_keys[keep], new_keys]))
    k_case, k_res = keys // nres, keys % nres
    # the base's flows on them, less each case's moved ones
    pos, has = member(d.res_ids, k_res)
    which, at = _ranges(d.res_ptr, pos[has])
    b_case = k_case[has][which]
    b_flow, b_col, b_res = d.res_flows[at], d.res_cols[at], k_res[has][which]
    moved_keys = case * np.int64(n) + flow  # sorted: by case, then flow
    probe = b_case * np.int64(n) + b_flow
    _, is_moved = member(moved_keys, probe)
    b_case, b_flow, b_col, b_res = (x[~is_moved] for x in (b_case, b_flow, b_col, b_res))
    e_case = np.concatenate([b_case, case[nr]])
    e_flow = np.concatenate([b_flow, flow[nr]])
    e_col = np.concatenate([b_col, ncol])
    e_res = np.concatenate([b_res, new_paths[nr, ncol]])
    order = np.lexsort((e_flow, e_case))  # the flow engine sums a link's flows in order
    e_case, e_flow, e_col, e_res = e_case[order], e_flow[order], e_col[order], e_res[order]
    cell = np.searchsorted(keys, e_case * nres + e_res)
    load = np.zeros((engine.groups, keys.size))
    np.add.at(load, (fl.group[e_flow], cell), engine.gbps[e_flow])
    per_job = load.reshape(len(engine.jobs), engine.nc, keys.size)
    heaviest = per_job.max(axis=1)
    others = heaviest.sum(axis=0)[None, :] - heaviest
    total = per_job + others[:, None, :]
    cable = k_res // 2
    cap = engine.net.cap[cable].copy()
    cap[cable == dead[k_case]] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(total > 0, np.minimum(1.0, cap[None, None, :] / total), 1.0)
    ratio = ratio.reshape(engine.groups, keys.size)
    # new rates of every flow on a touched link, per case
    fkeys, row_of = np.unique(e_case * np.int64(n) + e_flow, return_inverse=True)
    f_case, f_flow = fkeys // n, fkeys % n
    share = d.share[f_flow].copy()
    _, f_moved = member(moved_keys, fkeys)
    share[f_moved] = 1.0
    share[row_of.reshape(-1), e_col] = ratio[fl.group[e_flow], cell]
    v = fl.demand[f_flow] * fl.scale[f_flow]
    v = v * share.min(axis=1)
    value = np.broadcast_to(d.value, (n_cases, n)).copy()
    value[f_case, f_flow] = v
    gone = new_paths[:, 0] == -2
    value[case[gone], flow[gone]] = 0.0
    return _least(engine, value)


def _least(engine: FlowDelta, value: FloatArray) -> FloatArray:
    """(case, group): the least of each group's flows' rates (inf: a group with no flow)."""
    n_cases = value.shape[0]
    present, g_order, g_starts = engine._group_order
    best = np.full((n_cases, engine.groups), np.inf)
    if present.size:
        best[:, present] = np.minimum.reduceat(value[:, g_order], g_starts, axis=1)
    return best
