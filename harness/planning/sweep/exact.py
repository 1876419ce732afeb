"""The exact path of a sweep: a case evaluated by the full analysis of its fault state.

Cases that split a class of leaves (or every case when the base's NIC ports
reach several classes) go here; the tests use it as the oracle of the fast paths.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.invariants.analysis import Analysis
from harness.planning.sweep.base import SweepBase
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure


class ExactPath(SweepBase):
    """Evaluate a case by the full :class:`~harness.invariants.analysis.Analysis`."""

    def _leaf_uplink_ratio(self, a: Analysis) -> float:
        """:meth:`Analysis.leaf_uplink_ratio` of ``a``, divided by this evaluator's reference."""
        f = self.fabric
        live = a.leaf_uplinks[0]
        _, denom = self._uplinks
        leaves = f.leaves[a.up[f.leaves]]
        has = leaves[denom[leaves] > 0]
        return float((live[has] / denom[has]).min()) if has.size else self._no_uplinks

    def evaluate_exact(self, failures: Sequence[Failure]) -> CaseResult:
        """The same answer by the full analysis (slow path, and the tests' oracle)."""
        self.exact_cases += 1
        f = self.fabric
        a = self._case_analysis(failures)
        lost = tuple(sorted(set(a.jobs_lost()) - self._base_lost))
        busbw, slowest = self._min_busbw(
            np.array([a.job_busbw_gbs(j) for j in self.jobs], dtype=np.float64)
        )
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
            slowest,
        )
