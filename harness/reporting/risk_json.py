"""The risk report as JSON: before, after and added, for the change and for its N+1 margin.

What ``harness risk --json`` writes (:func:`to_json`); a job's traffic as
:func:`traffic_json` gives it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from harness.invariants.figures import slowest
from harness.invariants.traffic import JobTraffic
from harness.observations.budget import ASSUMED_JOBS_NOTE
from harness.observations.budget import describe_budget
from harness.observations.state_summary import StateSummary
from harness.planning.margin import Margin
from harness.planning.risk import RiskReport
from harness.planning.sweep.records import CaseResult


def traffic_json(t: JobTraffic, uplink_ratio: float) -> dict[str, Any]:
    """A job's traffic as JSON: per collective its expected bus bandwidth (ecmp: the mean
    over the hash draws), the worst draw, its line rate (no link shared), what paces it."""
    worst = t.worst
    return {
        "forwarding": t.forwarding,
        "collectives": {
            c.collective: {
                "expected_busbw_gbs": _gbs(c.busbw_gbs),
                "worst_draw_busbw_gbs": _gbs(c.worst_gbs),
                "line_rate_gbs": _gbs(c.line_gbs),
                "bottleneck": c.bottleneck,
            }
            for c in t.collectives
        },
        "worst_collective": worst.collective if worst is not None else None,
        "cross_leaf_flows": t.cross_leaf_flows,
        "uplink_ratio": round(uplink_ratio, 6),
        "pod_pair_gbps": t.pod_pair_gbps,
    }


def _gbs(x: float) -> float | None:
    return round(x, 6) if math.isfinite(x) else None  # a one-server job has no flows


def _ratio(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def to_json(report: RiskReport) -> dict[str, Any]:
    """The report as JSON: before, after and added explicitly, for the change and for N+1."""
    f = report.fabric

    def summary(s: StateSummary) -> dict[str, Any]:
        return {
            "jobs_lost": list(s.jobs_lost),
            "jobs_unplaceable": list(s.jobs_unplaceable),
            "reasons": list(s.reasons),
            "nics_cut": s.nics_cut,
            "gpus_cut": s.gpus_cut,
            "gpu_pairs_disconnected": s.gpu_pairs_disconnected,
            "min_job_busbw_ratio": round(s.bandwidth, 6),  # over the jobs that survive
            "min_job_busbw_job": s.bandwidth_job or None,
            "job_busbw_ratio": {k: round(v, 6) for k, v in s.job_bandwidth},
            "leaf_uplink_ratio": round(s.uplink, 6),
            "bisection_ratio": _ratio(s.bisection),
            "storage_ratio": round(s.storage, 6),
            "job_traffic": {name: traffic_json(t, up) for name, t, up in s.traffic},
            # per job, and the slowest surviving job: expected bus bandwidth against the
            # job's line rate and against the same fabric healthy (same forwarding)
            "job_busbw_figures": {x.job: x.to_json() for x in s.figures},
            "slowest_job_busbw": None if (w := slowest(s.figures)) is None else w.to_json(),
        }

    def cases(items: Sequence[tuple[CaseResult, tuple[str, ...]]]) -> list[dict[str, Any]]:
        return [
            {
                "failure": c.label(f),
                "category": c.category(f),
                "breaks": list(rules),
                "jobs_lost": list(c.jobs_lost),
                "jobs_unplaceable": list(c.unplaceable),
                "jobs_crashed": list(c.crashed),
                "gpu_pairs_disconnected": c.pairs_disconnected,
                "min_busbw_ratio": round(c.min_busbw_ratio, 6),
                "min_busbw_job": c.busbw_job or None,
                "leaf_uplink_ratio": round(c.leaf_uplink_ratio, 6),
            }
            for c, rules in items[:50]
        ]

    def margin(m: Margin | None) -> dict[str, Any] | None:
        if m is None:
            return None
        return {
            "cases": m.cases,
            "breaking": len(m.breaking),
            "by_category": {k: {"breaking": n, "of": t} for k, n, t in m.by_category},
            "top": cases(report.ranked(m.breaking)),
        }

    rows = report.margin_rows()
    return {
        "fabric": f.name,
        "ok": report.ok,
        "routing": report.routing.to_dict(),
        "budget": [r.describe() for r in report.rules],
        "budget_rule": describe_budget(report.rules),
        "jobs_assumed": report.jobs_assumed,
        "jobs_note": ASSUMED_JOBS_NOTE if report.jobs_assumed else None,
        "require_margin": report.require_margin,
        "change": [a.describe(f) for a in report.change],
        "state": [a.describe(f) for a in report.state],
        "already_lost": [{"job": j, "reasons": list(why)} for j, why in report.already_lost],
        "before": summary(report.before),
        "after": summary(report.after),
        "added": summary(report.added),
        "budget_broken_by_change": list(report.broken_after),
        "gpu_pairs_cut": None
        if report.cut is None
        else {
            "pairs": report.added.gpu_pairs_disconnected,
            "summary": report.cut.lines(),
            "groups": [
                {"a": g.a, "a_gpus": g.a_gpus, "b": g.b, "b_gpus": g.b_gpus, "pairs": g.pairs}
                for g in report.cut.groups
            ],
        },
        "margin": None
        if report.margin_after is None
        else {
            "by_category": {
                r.category: {
                    "before": {"breaking": r.before, "of": r.before_of},
                    "after": {"breaking": r.after, "of": r.after_of},
                    "added": r.added,
                }
                for r in rows
            },
            "added": len(report.margin_added),
            "blocking": len(report.margin_blocking),
            "top_added": cases(report.margin_added),
        },
        "margin_after": margin(report.margin_after),
        "margin_before": margin(report.margin_before),
        "seconds": round(report.seconds, 4),
    }
