"""Bulk kernel of spine and core failures: single switches above the leaves
that split nothing.

With no job flow crossing leaves, such a switch only lowers the uplinks of
the leaves it is cabled to.
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


def bulk_upper(
    ev: CaseEvaluator,
    singles: Sequence[Failure],
    positions: list[int],
    out: list[CaseResult | None],
) -> None:
    """Spines and cores that split nothing: only the leaves' uplink ratios move."""
    if not positions:
        return
    f = ev.fabric
    pairs_p, pairs_d, up_min, bw_min, storage = ev._base_metrics
    _, ratios = ev._base_uplink
    live, full = ev._uplinks
    order = np.argsort(ratios, kind="stable")
    ls = int(LinkKind.LEAF_SPINE)
    for p in positions:
        i = singles[p].index
        changed: dict[int, float] = {}
        for link in f.links_at(i).tolist():
            if int(f.link_kind[link]) == ls:
                leaf = int(f.link_a[link])
                changed[leaf] = changed.get(leaf, float(live[leaf])) - float(ev.base.cap[link])
        ratio = up_min
        if changed and ratios.size:
            pos = ev._leaf_pos
            hit = {pos[leaf] for leaf in changed if leaf in pos}
            rest = next((float(ratios[j]) for j in order.tolist() if j not in hit), np.inf)
            new = min(
                (v / float(full[leaf]) for leaf, v in changed.items()
                 if leaf in pos and full[leaf] > 0),
                default=np.inf,
            )  # fmt: skip
            ratio = float(min(rest, new))
        out[p] = CaseResult((singles[p],), pairs_p, pairs_d, (), ratio, bw_min, storage, False,
                            busbw_job=ev._base_slowest)  # fmt: skip
