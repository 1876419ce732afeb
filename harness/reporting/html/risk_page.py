"""The ``harness risk --report DIR`` page: before and after a change, side by side."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.fabric.jobs import Job
from harness.observations.budget import ASSUMED_JOBS_NOTE
from harness.observations.budget import describe_budget
from harness.observations.state_summary import StateSummary
from harness.planning.risk import RiskReport
from harness.reporting.changes import CHANGE
from harness.reporting.changes import Wording
from harness.reporting.html.busbw import figure_rows
from harness.reporting.html.drawing import draw
from harness.reporting.html.figures import risk_margin
from harness.reporting.html.marks import Marks
from harness.reporting.html.page import ReportDir
from harness.reporting.html.page import pct
from harness.reporting.html.page import write_page

TOP = 20


def _signed(n: int) -> str:
    return f"+{n:,}" if n >= 0 else f"{n:,}"


def measures(r: RiskReport, words: Wording) -> list[dict[str, Any]]:
    """The before / after / added table (as ``harness risk`` prints it)."""
    b, a, d = r.before, r.after, r.added
    counts: tuple[tuple[str, Callable[[StateSummary], int]], ...] = (
        ("jobs lost (running jobs that die)", lambda s: len(s.jobs_lost)),
        ("jobs unplaceable (could not start now)", lambda s: len(s.jobs_unplaceable)),
        ("NICs cut off", lambda s: s.nics_cut),
        ("GPUs cut off (PXN allowed)", lambda s: s.gpus_cut),
        ("GPU pairs that cannot talk", lambda s: s.gpu_pairs_disconnected),
    )
    ratios: tuple[tuple[str, Callable[[StateSummary], float | None]], ...] = (
        ("min bus bandwidth of surviving jobs", lambda s: s.bandwidth),
        ("min leaf uplink capacity", lambda s: s.uplink),
        ("bisection bandwidth", lambda s: s.bisection),
        ("min storage bandwidth", lambda s: s.storage),
    )
    out = [
        {"name": name, "before": f"{fn(b):,}", "after": f"{fn(a):,}", "added": _signed(fn(d)),
         "worse": fn(d) > 0}
        for name, fn in counts
    ]  # fmt: skip
    for name, rfn in ratios:
        rel = rfn(d)
        out.append({
            "name": name, "before": pct(rfn(b)), "after": pct(rfn(a)),
            "added": "-" if rel is None else f"{rel:.1%} of {words.before}",
            "worse": rel is not None and rel < 1.0 - 1e-12,
        })  # fmt: skip
    bw = next(m for m in out if m["name"] == "min bus bandwidth of surviving jobs")
    for col, s in (("before", b), ("after", a), ("added", d)):
        if s.bandwidth_job:
            bw[col] = f"{bw[col]} ({s.bandwidth_job})"
    return out


def lost_jobs(r: RiskReport, words: Wording) -> list[dict[str, Any]]:
    """Every job lost after the change: by the change first, then those already lost."""
    rows = [
        {"job": job, "when": f"lost by {words.subject}", "new": True,
         "reasons": list(r.after.reasons_of(job))}
        for job in r.added.jobs_lost
    ]  # fmt: skip
    rows += [
        {"job": job, "when": f"already lost before {words.subject}", "new": False,
         "reasons": list(why)}
        for job, why in r.already_lost
    ]  # fmt: skip
    return rows


def margin_rows(r: RiskReport) -> list[dict[str, Any]]:
    """The N+1 table of a risk report as template rows."""
    return [
        {"category": m.category, "before": f"{m.before:,} of {m.before_of:,}",
         "after": f"{m.after:,} of {m.after_of:,}", "added": _signed(m.added),
         "worse": m.added > 0}
        for m in r.margin_rows()
    ]  # fmt: skip


def risk_context(
    r: RiskReport, jobs: Sequence[Job], out: ReportDir, words: Wording = CHANGE
) -> dict[str, Any]:
    """What ``risk_body.html.j2`` shows of a risk report; writes its drawings and figure."""
    f = r.fabric
    state_marks = Marks.from_faults(f, [(a, "state") for a in r.state])
    after_marks = Marks.from_faults(
        f, [*((a, "state") for a in r.state), *((a, "change") for a in r.change)]
    )
    before_d = draw(f, state_marks.with_lost(jobs, r.before.jobs_lost))
    after_d = draw(f, after_marks.with_lost(jobs, r.after.jobs_lost))
    out.svg("fabric-before.svg", before_d, f"{f.name}: {words.before}")
    out.svg("fabric-after.svg", after_d, f"{f.name}: {words.after}")
    margin_png = risk_margin(r, out.path("margin.png"))
    if margin_png is None:
        out.files.pop()
    added = r.margin_added
    return {
        "r": r,
        "words": words,
        "change": [a.describe(f) for a in r.change],
        "state": [a.describe(f) for a in r.state],
        "budget_rule": describe_budget(r.rules, words.subject),
        "jobs_note": ASSUMED_JOBS_NOTE if r.jobs_assumed else None,
        "cut_lines": r.cut.lines() if r.cut is not None else [],
        "relative": [x.describe() for x in r.rules if not x.absolute],
        "absolute": [x.describe() for x in r.rules if x.absolute],
        "measures": measures(r, words),
        "busbw": figure_rows([(words.before, r.before.figures), (words.after, r.after.figures)]),
        "lost": lost_jobs(r, words),
        "margin_rows": margin_rows(r),
        "breaking": [
            {
                "failure": c.label(f),
                "category": c.category(f),
                "breaks": ", ".join(rules),
                "jobs_lost": ", ".join(c.jobs_lost[:6]) + (" ..." if len(c.jobs_lost) > 6 else ""),
                "bw": pct(c.min_busbw_ratio) + (f" ({c.busbw_job})" if c.busbw_job else ""),
                "pairs": f"{c.pairs_disconnected:,}",
                "uplink": pct(c.leaf_uplink_ratio),
            }
            for c, rules in added[:TOP]
        ],
        "breaking_total": len(added),
        "before_drawing": before_d,
        "after_drawing": after_d,
        "marks": after_marks.rows(f),
        "margin_png": margin_png.name if margin_png else None,
        "has_state": bool(r.state),
    }


def write_risk_report(report: RiskReport, jobs: Sequence[Job], directory: Path) -> Path:
    """Write the risk report into ``directory``; return the page's path."""
    out = ReportDir(directory)
    out.prepare()
    f = report.fabric
    change = [a.describe(f) for a in report.change]
    context = {
        **risk_context(report, jobs, out),
        "kind": "risk",
        "title": f"risk: {'; '.join(change)} on {f.name}",
        "subtitle": f"{len(jobs)} job(s); budget " + ", ".join(r.describe() for r in report.rules),
        "verdict": "ok" if report.ok else "bad",
        "fabric": f,
    }
    return write_page(out, "risk.html.j2", context)
