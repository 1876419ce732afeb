"""Bulk kernels of NIC cuts and leaf cases: whole single-port NICs cut on undamaged servers.

A NIC (or its access cable) cut, or a leaf that splits nothing dying with the
NICs behind it: the GPU pairs follow in closed form from how many GPUs of each
touched server lose their path, the jobs lost are the touched servers'
multi-server jobs.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from harness.planning.sweep.flows import FlowDelta
from harness.planning.sweep.flows import member
from harness.planning.sweep.pairs import empty_pairs
from harness.planning.sweep.pairs import empty_pairs_v
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure
from harness.planning.sweep.records import relabel

if TYPE_CHECKING:
    from harness.planning.sweep.evaluator import CaseEvaluator


def bulk_nics(
    ev: CaseEvaluator,
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
        bulk_one_nic(ev, singles, one, out)
    if len(one) < len(items):
        bulk_nic_sets(ev, singles, [x for x in items if x[2] >= 0 or len(x[1]) != 1], out)


def _busbw(
    ev: CaseEvaluator, failure: Failure, nics: Sequence[int], lost: Sequence[str]
) -> tuple[float, str]:
    """The surviving jobs' least bus bandwidth ratio, and its job, once ``failure`` cut the
    ``nics`` (whole), losing the ``lost`` jobs.  The cut NICs' flows leave the links they
    loaded (the lost jobs' other flows stay: the planning view), so a job sharing an
    overloaded link with them speeds up: then the case's bandwidth is recomputed
    (:meth:`~harness.planning.sweep.local.LocalPath.case_busbw_without`: the flows it
    moves where :class:`~harness.planning.sweep.flows.FlowDelta` covers the fabric, else
    the full analysis).  When no group found a link those flows used over capacity in any
    draw (or no flow crosses leaves), every other share stays 1 and the others keep the
    base's bandwidth."""
    if ev._no_flows:
        return ev._busbw_without(lost)
    engine = ev._flow_delta  # its draws place the base's flows on any fabric
    tight = _TIGHT.get(engine)
    if tight is None:
        tight = _TIGHT[engine] = _tight_nics(engine)
    if not tight[np.array(nics, dtype=np.int64)].any():
        return ev._busbw_without(lost)
    return ev.case_busbw_without((failure,), lost)


_TIGHT: weakref.WeakKeyDictionary[FlowDelta, npt.NDArray[np.bool_]]
_TIGHT = weakref.WeakKeyDictionary()


def _tight_nics(engine: FlowDelta) -> npt.NDArray[np.bool_]:
    """Per element: a NIC with a flow on a link (or pool) that some group finds over
    capacity in some draw of the base (a share below 1): cutting it may speed other jobs
    up.  On a link no group finds over capacity every share is 1, and taking flows off
    it (each a positive load) leaves them 1."""
    fl = engine.fl
    tight_flow = np.zeros(fl.src.size, dtype=np.bool_)
    for d in engine.draws:
        over = d.total.max(axis=0, initial=0.0) > engine.res.capacity(d.res_ids)
        rows, cols = np.nonzero(d.paths >= 0)
        pos, _ = member(d.res_ids, d.paths[rows, cols])
        tight_flow[rows[over[pos]]] = True
    out = np.zeros(engine.net.fabric.n_elements, dtype=np.bool_)
    live = tight_flow & (fl.leaf_a >= 0)
    out[fl.src[live]] = True
    out[fl.dst[live]] = True
    return out


def bulk_one_nic(
    ev: CaseEvaluator,
    singles: Sequence[Failure],
    items: list[tuple[int, int]],
    out: list[CaseResult | None],
) -> None:
    """The cases of :func:`bulk_nics` that cut one NIC (the NIC, or its access cable)."""
    f = ev.fabric
    _, _, up_min, bw_min, storage = ev._base_metrics
    intra_d, intra_p, inter_d, inter_p = ev._base_pairs
    _, ed_base, ep_base = ev._gpu_totals
    n_s, e_d, e_p = ev._gpu_arrays
    gpus_on, live_nics, jobs = ev._nic_tables
    total = ev._gpu_totals[0]
    ge = empty_pairs_v
    pos = [p for p, _ in items]
    nic = np.fromiter((x for _, x in items), dtype=np.int64, count=len(items))
    srv = f.parent[nic].astype(np.int64)
    n, ed, ep = n_s[srv], e_d[srv], e_p[srv]
    new_d = ed + gpus_on[nic]
    new_p = np.where(live_nics[srv] <= 1, n, ep)
    base_d = intra_d + inter_d - empty_pairs(total, ed_base)
    base_p = intra_p + inter_p - empty_pairs(total, ep_base)
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
        bw, slowest = _busbw(ev, singles[p], (x,), lost) if lost else (bw_min, ev._base_slowest)
        out[p] = CaseResult((singles[p],), pp, pd, lost, up_min, bw, storage, False, None,
                            reasons, slowest)  # fmt: skip


def bulk_nic_sets(
    ev: CaseEvaluator,
    singles: Sequence[Failure],
    items: list[tuple[int, tuple[int, ...], int]],
    out: list[CaseResult | None],
) -> None:
    """The other cases of :func:`bulk_nics`: a leaf's NICs, say, with the leaf dead."""
    f = ev.fabric
    _, _, up_min, bw_min, storage = ev._base_metrics
    intra_d, intra_p, inter_d, inter_p = ev._base_pairs
    _, ed_base, ep_base = ev._gpu_totals
    n_s, e_d, e_p, _ = ev._gpu_state
    gpus_on_a, live_nics_a, jobs = ev._nic_tables
    gpus_on, live_nics = gpus_on_a.tolist(), live_nics_a.tolist()
    parent = f.parent.tolist()
    total = ev._gpu_totals[0]
    ge = empty_pairs

    def fe(e: int) -> int:
        return ge(total, e)

    seen = ev._by_nics
    for p, nics, dead_leaf in items:
        same = seen.get((nics, dead_leaf))
        if same is not None:
            out[p] = relabel(same, (singles[p],))
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
        ratio = up_min if dead_leaf < 0 else ev._uplink_ratio_without(dead_leaf)
        names = tuple(sorted(lost))
        bw, slowest = (_busbw(ev, singles[p], nics, names) if lost
                       else (bw_min, ev._base_slowest))  # fmt: skip
        out[p] = seen[nics, dead_leaf] = CaseResult(
            (singles[p],), intra_p + inter_p2, intra_d + inter_d2, names,
            ratio, bw, storage, False, None, tuple(reasons[:6]), slowest,
        )  # fmt: skip
