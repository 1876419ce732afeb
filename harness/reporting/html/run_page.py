"""The ``harness run --report DIR`` page: per scenario the story, the verdicts and the
fabric after every step that changed it.

The fault state after each step comes from :func:`harness.scenario.prepare.prepare`,
the same resolution the runner executes (injects resolved, restores played against
what was applied by then), so the drawings show exactly what the run did.  Faults
applied by earlier steps are drawn as the state, the fault of the step as the
change; lost jobs' servers are marked as the model analyses that state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.reporting.html.drawing import draw
from harness.reporting.html.marks import Marks
from harness.reporting.html.page import ReportDir
from harness.reporting.html.page import write_page
from harness.reporting.outcome import RunReport
from harness.run.results import ExpectResult
from harness.run.results import ScenarioResult
from harness.scenario.model import Scenario
from harness.scenario.prepare import Prepared
from harness.scenario.prepare import prepare


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "(none)"
    return str(value)


def _expectation(e: ExpectResult) -> dict[str, Any]:
    """One expectation's row: on an emulated backend the prediction beside the measurement."""
    return {
        "observation": e.observation,
        "expected": e.expected,
        "observed": _value(e.observed),
        "predicted": _value(e.predicted),
        "measured": _value(e.measured) if e.measured_by else "",
        "measured_by": e.measured_by,
        "status": e.status,
        "passed": e.passed and not e.mismatch,
        "detail": e.detail,
        "measured_detail": e.measured_detail,
        "where": str(e.where),
    }


def _prepared(scenario: Scenario | None) -> Prepared | None:
    if scenario is None:
        return None
    try:
        return prepare(scenario)
    except HarnessError:  # the run reported it as an error result already
        return None


def _step_views(result: ScenarioResult, prepared: Prepared | None) -> list[dict[str, Any]]:
    """Each step of a result with its verdicts and, if it changed the fabric, a drawing."""
    views: list[dict[str, Any]] = []
    fabric = prepared.fabric if prepared else None
    active: dict[int, AppliedFault] = {}  # position of the inject -> its fault
    pstep = list(prepared.steps) if prepared and fabric is not None else []
    healthy = Analysis(fabric, Observation.from_state(FaultState.healthy(fabric)),
                       prepared.jobs, routing=prepared.routing,
                       ) if prepared and fabric is not None else None  # fmt: skip
    for pos, step in enumerate(result.steps):
        view: dict[str, Any] = {
            "kind": step.kind,
            "text": step.text,
            "story": list(step.story),
            "where": str(step.where),
            "clock": step.clock_text,
            "clock_note": step.clock_note,
            "expectations": [_expectation(e) for e in step.expectations],
            "drawing": None,
            "healthy_again": False,
        }
        if fabric is not None and healthy is not None and pos < len(pstep):
            ps = pstep[pos]
            changed = False
            if ps.applied is not None:
                active[pos] = ps.applied
                changed = True
            for r in ps.reverts:
                active.pop(r, None)
                changed = True
            if changed and active:
                state = FaultState(fabric, tuple(active.values()))
                marks = Marks.from_faults(
                    fabric, [(a, "change" if p == pos else "state") for p, a in active.items()]
                )
                a = Analysis(fabric, Observation.from_state(state), prepared.jobs if prepared
                             else (), healthy=healthy, routing=healthy.routing)  # fmt: skip
                view["drawing"] = draw(fabric, marks.with_lost(a.jobs, a.jobs_lost()))
            elif changed:
                view["healthy_again"] = True
        views.append(view)
    return views


def _find(scenarios: Sequence[Scenario], result: ScenarioResult) -> Scenario | None:
    for s in scenarios:
        if s.name == result.name and s.where.path == result.path:
            return s
    return None


def write_run_report(report: RunReport, scenarios: Sequence[Scenario], directory: Path) -> Path:
    """Write the run report into ``directory``; return the page's path.

    ``scenarios`` are the scenarios that ran (matched to the results by name and
    file); a result without one (a file that did not load) shows its error only.
    """
    out = ReportDir(directory)
    out.prepare()
    entries = []
    for k, result in enumerate(report.results):
        scenario = _find(scenarios, result)
        steps = _step_views(result, _prepared(scenario))
        drawings = [s for s in steps if s["drawing"] is not None]
        entries.append({
            "anchor": f"s{k + 1}",
            "r": result,
            "steps": steps,
            "failed": [e for s in steps for e in s["expectations"] if e["status"] == "failed"],
            "checked": sum(len(s["expectations"]) for s in steps),
            "measured": any(x["measured_by"] for s in steps for x in s["expectations"]),
            "mismatches": sum(x["status"] == "mismatch" for s in steps for x in s["expectations"]),
            "drawings": len(drawings),
            "backend_note": "" if result.backend == "model" else (
                "drawn as the model predicts the state (the backend measured the verdicts)"
            ),
        })  # fmt: skip
    verdict = (
        "error" if report.errors else "failed" if report.failed or report.mismatched else "passed"
    )
    context = {
        "kind": "run",
        "title": f"run: {report.passed} of {report.total} scenarios passed"
        + (f", {report.mismatches} measured otherwise than predicted" if report.mismatches else ""),
        "subtitle": f"backend {report.backend}; {report.seconds:.2f} s",
        "verdict": verdict,
        "report": report,
        "entries": entries,
        "show_state": True,
    }
    return write_page(out, "run.html.j2", context)
