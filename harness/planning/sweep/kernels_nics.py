"""Bulk kernels of NIC cuts and leaf cases: whole single-port NICs cut on undamaged servers.

A NIC (or its access cable) cut, or a leaf that splits nothing dying with the
NICs behind it: the GPU pairs follow in closed form from how many GPUs of each
touched server lose their path, the jobs lost are the touched servers'
multi-server jobs, and the survivors keep the base's bandwidth unless the cut
NICs' flows shared a full link with theirs (:func:`survivors`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from harness.planning.sweep.pairs import empty_pairs
from harness.planning.sweep.pairs import empty_pairs_v
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure
from harness.planning.sweep.records import relabel

if TYPE_CHECKING:
    from harness.planning.sweep.evaluator import CaseEvaluator


def survivors(
    ev: CaseEvaluator, failure: Failure, nics: Sequence[int], lost: Sequence[str], bw_min: float
) -> tuple[float, str]:
    """The surviving jobs' least bus bandwidth ratio (and its job) when ``failure`` cuts
    ``nics`` and loses the jobs ``lost``.

    The base's figures with the lost jobs left out, unless the cut NICs' flows
    shared a full resource with other flows (:attr:`~.local.LocalPath._tight_nics`):
    then the others speed up and the case is computed from the flows it moves.
    """
    if not lost:
        return bw_min, ev._base_slowest
    if ev._tight_nics[list(nics)].any():
        return ev.case_busbw_without((failure,), lost)
    return ev._busbw_without(lost)


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
    known = ev._by_nic
    for p, x, s, pp, pd in zip(pos, nic.tolist(), srv.tolist(), pairs_p.tolist(),
                               pairs_d.tolist(), strict=True):  # fmt: skip
        lost = jobs.get(s, ())
        reasons = why.get(x, ())
        if lost and not reasons:
            reasons = why[x] = tuple(f"{j}: {ids[x]} cut off" for j in lost[:6])
        got = known.get(x)
        if got is None:  # the NIC, its cable and its optics move the same flows
            got = known[x] = survivors(ev, singles[p], (x,), lost, bw_min)
        bw, slowest = got
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
        bw, slowest = survivors(ev, singles[p], nics, names, bw_min)
        out[p] = seen[nics, dead_leaf] = CaseResult(
            (singles[p],), intra_p + inter_p2, intra_d + inter_d2, names,
            ratio, bw, storage, False, None, tuple(reasons[:6]), slowest,
        )  # fmt: skip
