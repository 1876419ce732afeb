"""The ``harness sweep --report DIR`` page: impact by category, worst cases, base state."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.budget import ASSUMED_JOBS_NOTE
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.run import SweepResult
from harness.reporting.html.busbw import figure_rows
from harness.reporting.html.drawing import Drawing
from harness.reporting.html.drawing import draw
from harness.reporting.html.figures import pair_matrix
from harness.reporting.html.figures import sweep_impact
from harness.reporting.html.marks import Marks
from harness.reporting.html.page import ReportDir
from harness.reporting.html.page import pct
from harness.reporting.html.page import write_page

TOP = 20


def base_state(result: SweepResult) -> FaultState:
    """The state every case of the sweep starts from (its ``--state`` faults)."""
    return result.spec.base_state(result.fabric)


def base_lost(result: SweepResult, state: FaultState) -> list[str]:
    """Jobs already lost in the base state (counted as lost, not in any case's bandwidth)."""
    if state.is_healthy or not result.jobs:
        return []
    return Analysis(
        result.fabric, Observation.from_state(state), result.jobs, routing=result.spec.routing
    ).jobs_lost()


def _of_line(result: SweepResult, c: CaseResult) -> str:
    """``; 60.4% of line rate``: the case's slowest job against its line rate ("": unknown)."""
    line = result.vs_line_rate(c)
    return "" if line is None else f"; {line:.1%} of line rate"


def _categories(result: SweepResult) -> list[dict[str, Any]]:
    f = result.fabric
    groups: dict[str, list[CaseResult]] = {}
    for c in result.cases:
        groups.setdefault(c.category(f), []).append(c)
    rows = []
    for cat, cases in sorted(groups.items(), key=lambda kv: (" + " in kv[0], kv[0])):
        bw = [c.min_busbw_ratio for c in cases]
        rows.append({
            "category": cat,
            "cases": len(cases),
            "disconnecting": sum(1 for c in cases if c.pairs_disconnected),
            "job_losing": sum(1 for c in cases if c.jobs_lost),
            "max_lost": max(len(c.jobs_lost) for c in cases),
            "median_bw": pct(statistics.median(bw)),
            "worst_bw": pct(min(bw)),
            "worst_uplink": pct(min(c.leaf_uplink_ratio for c in cases)),
        })  # fmt: skip
    return rows


def _case_drawing(result: SweepResult, state: FaultState, lost: Sequence[str],
                  case: CaseResult) -> Drawing:  # fmt: skip
    f = result.fabric
    faults = [(a, "state") for a in state.applied]
    faults += [(x.to_fault(f), "change") for x in case.failures]
    marks = Marks.from_faults(f, faults)
    return draw(f, marks.with_lost(result.jobs, [*lost, *case.jobs_lost]))


def write_sweep_report(result: SweepResult, directory: Path, *, jobs_assumed: bool = False) -> Path:
    """Write the sweep report into ``directory``; return the page's path."""
    out = ReportDir(directory)
    out.prepare()
    f = result.fabric
    state = base_state(result)
    lost = base_lost(result, state)
    base = draw(f, Marks.from_faults(f, [(a, "state") for a in state.applied])
                .with_lost(result.jobs, lost))  # fmt: skip
    out.svg("fabric-base.svg", base, f"{f.name}: the base state of the sweep")
    ranked = result.ranked()
    worst = ranked[0] if ranked else None
    worst_d = _case_drawing(result, state, lost, worst) if worst else None
    if worst_d is not None and worst is not None:
        out.svg("fabric-worst.svg", worst_d, f"{f.name}: the worst case, {worst.label(f)}")
    impact = sweep_impact(result, out.path("impact.png"), base_lost=lost)
    matrix = pair_matrix(result, out.path("pairs.png"), base_lost=lost)
    if matrix is None:
        out.files.pop()
    spec = result.spec
    context = {
        "kind": "sweep",
        "title": f"sweep: {f.name}, depth {spec.depth}",
        "subtitle": f"elements {', '.join(spec.categories)}; {len(result.jobs)} job(s)",
        "verdict": "bad" if result.job_losing else "ok",
        "r": result,
        "fabric": f,
        "spec": spec,
        "state": [a.describe(f) for a in state.applied],
        "base_lost": lost,
        "categories": _categories(result),
        "groups": len(result.groups()),
        "jobs_note": ASSUMED_JOBS_NOTE if jobs_assumed else None,
        "busbw": figure_rows([("base state", result.figures)]),
        "worst": [
            {
                "case": g.describe(),
                "category": c.category(f),
                "gpus_lost": f"{g.gpus_lost:,}",
                "jobs_lost": ", ".join(c.jobs_lost[:6])
                + (" ..." if len(c.jobs_lost) > 6 else "")
                + (" (each case its own)" if g.count > 1 and c.jobs_lost else ""),
                "unplaceable": f"{len(c.unplaceable):,}",
                "pairs": f"{c.pairs_disconnected:,}",
                "bw": pct(c.min_busbw_ratio)
                + (f" ({c.busbw_job}{_of_line(result, c)})" if c.busbw_job else ""),
                "uplink": pct(c.leaf_uplink_ratio),
                "storage": pct(c.storage_ratio),
                "reasons": "; ".join(c.reasons[:3]),
                "exact": c.exact,
            }
            for g in result.groups()[:TOP]
            for c in (g.first,)
        ],
        "base_drawing": base,
        "worst_drawing": worst_d,
        "worst_label": worst.label(f) if worst else "",
        "impact_png": impact.name,
        "matrix_png": matrix.name if matrix else None,
    }
    return write_page(out, "sweep.html.j2", context)
