"""The ``harness risk --report DIR`` page: before and after a change, side by side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.jobs import Job
from harness.reporting.html.drawing import draw
from harness.reporting.html.figures import risk_margin
from harness.reporting.html.marks import Marks
from harness.reporting.html.page import ReportDir
from harness.reporting.html.page import pct
from harness.reporting.html.page import write_page
from harness.risk import Margin
from harness.risk import RiskReport
from harness.risk import StateSummary

TOP = 20


def _measures(before: StateSummary, after: StateSummary) -> list[dict[str, Any]]:
    rows = (
        ("jobs lost", len(before.jobs_lost), len(after.jobs_lost), True),
        ("NICs cut off", before.nics_cut, after.nics_cut, True),
        ("GPUs cut off (PXN allowed)", before.gpus_cut, after.gpus_cut, True),
        ("GPU pairs that cannot talk", before.gpu_pairs_disconnected,
         after.gpu_pairs_disconnected, True),
        ("min job bus bandwidth", before.bandwidth, after.bandwidth, False),
        ("min leaf uplink capacity", before.uplink, after.uplink, False),
        ("bisection bandwidth", before.bisection, after.bisection, False),
        ("min storage bandwidth", before.storage, after.storage, False),
    )  # fmt: skip
    out = []
    for name, b, a, is_count in rows:
        worse = (
            (a or 0) > (b or 0)
            if is_count
            else (a if a is not None else 1) < (b if b is not None else 1) - 1e-12
        )
        fmt = (lambda v: f"{v:,}") if is_count else pct
        out.append({"name": name, "before": fmt(b), "after": fmt(a), "worse": worse})
    return out


def _reasons(summary: StateSummary) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in summary.reasons:
        job, _, why = line.partition(": ")
        out.setdefault(job, []).append(why)
    return out


def lost_jobs(report: RiskReport) -> list[dict[str, Any]]:
    """Every job lost after the change: by the change, or already before it."""
    before = set(report.before.jobs_lost)
    reasons = _reasons(report.after)
    rows = [
        {
            "job": job,
            "when": "already lost before the change" if job in before else "lost by the change",
            "new": job not in before,
            "reasons": reasons.get(job, []),
        }
        for job in report.after.jobs_lost
    ]
    rows.sort(key=lambda r: (not r["new"], r["job"]))
    return rows


def _margin_rows(after: Margin | None, before: Margin | None) -> list[dict[str, Any]]:
    if after is None:
        return []
    b = {k: n for k, n, _ in (before.by_category if before else ())}
    return [
        {"category": k, "after": n, "before": b.get(k, 0), "of": t, "worse": n > b.get(k, 0)}
        for k, n, t in after.by_category
    ]


def write_risk_report(report: RiskReport, jobs: Sequence[Job], directory: Path) -> Path:
    """Write the risk report into ``directory``; return the page's path."""
    out = ReportDir(directory)
    out.prepare()
    f = report.fabric
    state_marks = Marks.from_faults(f, [(a, "state") for a in report.state])
    after_marks = Marks.from_faults(
        f, [*((a, "state") for a in report.state), *((a, "change") for a in report.change)]
    )
    before_d = draw(f, state_marks.with_lost(jobs, report.before.jobs_lost))
    after_d = draw(f, after_marks.with_lost(jobs, report.after.jobs_lost))
    out.svg("fabric-before.svg", before_d, f"{f.name} before the change")
    out.svg("fabric-after.svg", after_d, f"{f.name} after the change")
    margin_png = risk_margin(report, out.path("margin.png"))
    if margin_png is None:
        out.files.pop()
    change = [a.describe(f) for a in report.change]
    ma = report.margin_after
    context = {
        "kind": "risk",
        "title": f"risk: {'; '.join(change)} on {f.name}",
        "subtitle": f"{len(jobs)} job(s); budget " + ", ".join(r.describe() for r in report.rules),
        "verdict": "ok" if report.ok else "bad",
        "r": report,
        "fabric": f,
        "change": change,
        "state": [a.describe(f) for a in report.state],
        "budget": [r.describe() for r in report.rules],
        "measures": _measures(report.before, report.after),
        "lost": lost_jobs(report),
        "margin_rows": _margin_rows(ma, report.margin_before),
        "breaking": [
            {
                "failure": c.label(f),
                "category": c.category(f),
                "breaks": ", ".join(rules),
                "jobs_lost": ", ".join(c.jobs_lost[:6]) + (" ..." if len(c.jobs_lost) > 6 else ""),
                "bw": pct(c.min_busbw_ratio),
                "uplink": pct(c.leaf_uplink_ratio),
            }
            for c, rules in (ma.breaking[:TOP] if ma else ())
        ],
        "breaking_total": len(ma.breaking) if ma else 0,
        "before_drawing": before_d,
        "after_drawing": after_d,
        "marks": after_marks.rows(f),
        "margin_png": margin_png.name if margin_png else None,
        "has_state": bool(report.state),
    }
    return write_page(out, "risk.html.j2", context)
