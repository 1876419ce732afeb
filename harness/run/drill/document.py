"""A drill run as a document: ``journal.json`` and ``harness drill --json`` (run stage, pure).

:func:`predicted_half` is what a replay on the model must reproduce exactly:
the resolved events, each action's prediction (job fates, settle, the guard's
verdict) and every probe's predicted series.
"""

from __future__ import annotations

from typing import Any

from harness.run.drill.results import DrillResult
from harness.scenario.drill_model import Drill
from harness.scenario.drill_prepare import PreparedDrill


def canonical(drill: Drill) -> dict[str, Any]:
    """The drill as the runner understood it (durations in seconds, defaults filled in)."""
    return {
        "time_limit_s": drill.time_limit_s, "baseline_s": drill.baseline_s,
        "recover_within_s": drill.recover_within_s, "guard": drill.guard,
        "probes": [{"name": p.name, "kind": p.kind, "args": dict(p.args), "mode": p.mode,
                    "every_s": p.every_s, "fail_after": p.fail_after,
                    "tolerance": p.tolerance.describe() if p.tolerance else None}
                   for p in drill.probes],
        "abort": [r.describe() for r in drill.abort],
        "timeline": [{"fault": e.fault.describe(), "hold_s": e.hold_s, "as": e.name,
                      "at_s": e.at_s, "after": e.after, "wait_s": e.wait_s,
                      "every_s": e.every_s, "for_s": e.for_s} for e in drill.timeline],
        "expect": [f"{e.describe()} {e.expect.describe()}" for e in drill.expect],
    }  # fmt: skip


def journal_document(
    result: DrillResult,
    pd: PreparedDrill,
    run_id: str,
    versions: dict[str, str | None],
    source_text: str = "",
) -> dict[str, Any]:
    """Everything a drill run journals at its end."""
    fabric = pd.prepared.fabric
    assert fabric is not None
    resolved = [{"t": r.event.at_s, "action": r.event.action, "label": r.event.label,
                 "fault": r.applied.describe(fabric), "selector": r.event.fault.describe(),
                 "targets": [fabric.ids[i] for i in r.applied.elements][:50]}
                for r in pd.events]  # fmt: skip
    return {
        "run": run_id, "name": result.name, "path": result.path, "backend": result.backend,
        "dry_run": result.dry_run, "routing": result.routing, "versions": versions,
        "status": result.status, "reason": result.reason, "mismatches": result.mismatches,
        "recovered_s": result.recovered_s, "duration_s": result.duration_s,
        "drill": canonical(pd.drill), "resolved": resolved, "fabric": fabric.name,
        "jobs": [j.name for j in pd.prepared.jobs],
        "events": [e.to_json() for e in result.events],
        "rollback": [e.to_json() for e in result.rollback],
        "probes": [p.to_json() for p in result.probes],
        "expectations": [{"observation": e.observation, "expected": e.expected,
                          "observed": e.observed, "predicted": e.predicted,
                          "measured": e.measured, "passed": e.passed, "mismatch": e.mismatch}
                         for e in result.expectations],
        "fates": list(result.fates), "source": source_text,
        "jobs_observed": [{"check": text, "mismatch": bad} for text, bad in result.job_checks],
        "crashes": [{"job": j, "predicted_s": p, "observed_s": o} for j, p, o in result.crashes],
        "abort": None if result.abort is None else {"t": result.abort[0],
                                                    "reason": result.abort[1]},
    }  # fmt: skip


def predicted_half(doc: dict[str, Any], *, probes: bool = True) -> dict[str, Any]:
    """The part of a journal the model alone decides (a replay must give it again); without
    ``probes`` (an emulated run, sampled when the wall clock allowed) the probes' series are
    left out."""
    if not probes:
        return {k: v for k, v in predicted_half(doc).items() if k != "probes"}
    return {
        "resolved": doc.get("resolved", []),
        "events": [{k: e.get(k) for k in ("planned_s", "action", "label", "fault", "status",
                                          "predicted", "guard")}
                   for e in doc.get("events", [])],
        "probes": [{"name": p["name"], "predicted": [(s["t"], s["predicted"])
                                                     for s in p["samples"]]}
                   for p in doc.get("probes", [])],
        "expectations": [(e["observation"], e["predicted"]) for e in doc.get("expectations", [])],
        "fates": doc.get("fates", []),
    }  # fmt: skip
