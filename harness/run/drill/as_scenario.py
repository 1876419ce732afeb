"""A drill run where a scenario run is expected (``harness run``, the pytest plugin): the
drill's result as a :class:`~harness.run.results.ScenarioResult` (run stage).

Each action becomes a step (its line and the model's job fates), the probes'
verdicts and the final expectations an ``expect`` step, so a drill file in
``scenarios/`` runs, passes and fails as the other scenarios do.
"""

from __future__ import annotations

from harness.backends.protocol import Backend
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.observations.plans import MeasureOptions
from harness.run.drill.halt import HaltLever
from harness.run.drill.results import DrillResult
from harness.run.drill.results import EventRecord
from harness.run.drill.runner import drill_unsupported
from harness.run.drill.runner import run_drill
from harness.run.results import ExpectResult
from harness.run.results import ScenarioResult
from harness.run.results import StepResult
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.model import Scenario

_STATUS = {"passed": "passed", "failed": "failed", "aborted": "failed", "mismatch": "mismatch",
           "error": "error"}  # fmt: skip


def _step(e: EventRecord) -> StepResult:
    kind = "restore" if e.action in ("restore", "rollback") else "inject"
    text = f"t={e.actual_s:g} s {e.action} {e.fault}: {e.status}"
    if e.guard.startswith("refused"):
        text += f" ({e.guard})"
    return StepResult(kind, text, e.predicted, settle_s=e.settle_s,
                      clock=(e.actual_s, e.actual_s))  # fmt: skip


def as_scenario_result(
    scenario: Scenario, r: DrillResult, seconds: float, routing: Routing
) -> ScenarioResult:
    """``r`` as a scenario result."""
    judged = tuple(
        ExpectResult(f"probe {p.name}", p.describe, p.verdict, p.verdict != "failed", p.why,
                     where=scenario.where)
        for p in r.probes
    )  # fmt: skip
    outcome = ExpectResult("drill", f"ends {scenario.drill.outcome if scenario.drill else ''}",
                           r.status, r.ok, r.reason, where=scenario.where)  # fmt: skip
    steps = [_step(e) for e in (*r.events, *r.rollback)]
    end = steps[-1].clock[1] if steps else 0.0
    steps.append(StepResult("expect", f"drill {r.status}", r.fates,
                            (*judged, *r.expectations, outcome), clock=(end, end)))  # fmt: skip
    status = _STATUS[r.status]
    return ScenarioResult(scenario.name, scenario.where.path, r.backend, status, tuple(steps),
                          r.reason if status == "error" else "", seconds,
                          scenario.description, scenario.tags, scenario.fabric.describe(),
                          routing)  # fmt: skip


def run_drill_scenario(
    scenario: Scenario,
    backend: Backend,
    options: MeasureOptions,
    routing: RoutingOverride | None,
    seconds: float = 0.0,
) -> ScenarioResult:
    """Run ``scenario``'s drill on ``backend`` as ``harness run`` runs a scenario."""
    pd = prepare_drill(scenario)
    route = pd.prepared.routing.merged(routing) if routing is not None else pd.prepared.routing
    why = drill_unsupported(pd, backend)
    if why is not None:
        return ScenarioResult(scenario.name, scenario.where.path, backend.name, "skipped",
                              error=why, description=scenario.description, tags=scenario.tags,
                              fabric=scenario.fabric.describe(), routing=route)  # fmt: skip
    r = run_drill(pd, backend, routing=route, options=options, lever=HaltLever())
    return as_scenario_result(scenario, r, seconds + r.duration_s, route)
