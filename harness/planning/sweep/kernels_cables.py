"""Bulk kernel of switch-to-switch cable cuts: every such single case at once, with numpy.

A live leaf-spine or spine-core cable that is no bridge, when no job's flow
crosses leaves, changes only the uplink ratio of its leaf; when flows cross
leaves (two tiers, static or ecmp), the bus bandwidth of the flows it moves
comes from :func:`~harness.planning.sweep.flow_cuts.cut_busbw`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from harness.fabric.model import LinkKind
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure

if TYPE_CHECKING:
    from harness.planning.sweep.evaluator import CaseEvaluator


def bulk_cables(
    ev: CaseEvaluator,
    singles: Sequence[Failure],
    positions: list[int],
    out: list[CaseResult | None],
) -> None:
    """Fill ``out`` at ``positions`` with the single switch-to-switch cable cuts, all at once."""
    if not positions:
        return
    f = ev.fabric
    pairs_p, pairs_d, up_min, bw_min, storage = ev._base_metrics
    links = np.array([singles[p].index for p in positions], dtype=np.int64)
    ratio = np.full(links.size, up_min)
    ls = f.link_kind[links] == int(LinkKind.LEAF_SPINE)
    _, ratios = ev._base_uplink
    if ls.any() and ratios.size:
        live, full = ev._uplinks
        leaf = f.link_a[links[ls]]
        pos = ev._leaf_pos_array[leaf]
        m1, m2, arg = ev._two_lowest
        excl = np.where(pos == arg, m2, m1)
        new = (live[leaf] - ev.base.cap[links[ls]]) / np.where(full[leaf] > 0, full[leaf], 1)
        ratio[ls] = np.minimum(excl, np.where(pos >= 0, new, np.inf))
    bw = np.full(links.size, bw_min)
    slowest = [ev._base_slowest] * links.size
    if not ev._no_flows:  # leaf-spine cuts that move job flows (see _bulk_classes)
        bw, slowest = ev._cut_busbw(links)
    for p, r, b, job in zip(positions, ratio.tolist(), bw.tolist(), slowest, strict=True):
        out[p] = CaseResult((singles[p],), pairs_p, pairs_d, (), r, b, storage, False,
                            busbw_job=job)  # fmt: skip
