"""One scenario's run: :func:`run_scenario` checks the input, skips what the backend cannot
do, and runs the steps in order over a :class:`~harness.run.session.RunSession` (the one
place that sequences faults and checks).

Faults are injected like a transaction: every applied fault is reverted, in
reverse order, in ``finally``; a revert error is reported and the original
error re-raised.  Progress and results go to :class:`RunObserver` objects, never
to ``print``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Sequence

from harness.backends import make_backend
from harness.backends.protocol import Backend
from harness.fabric.model import Fabric
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import foreign_reroute
from harness.faults.fault import AppliedFault
from harness.observations.plans import MeasureOptions
from harness.run.observers import RunObserver
from harness.run.results import ExpectResult
from harness.run.results import ScenarioResult
from harness.run.results import StepResult
from harness.run.session import RunSession
from harness.scenario.model import InjectStep
from harness.scenario.model import RestartStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from harness.scenario.model import WaitStep
from harness.scenario.prepare import prepare
from harness.scenario.prepare import reported_routing


def unsupported(backend: Backend, faults: Sequence[AppliedFault], fabric: Fabric) -> str | None:
    """Why ``backend`` cannot run these faults (``None``: it can)."""
    caps = backend.capabilities
    for applied in faults:
        why = caps.unsupported(applied, fabric)
        if why is not None:
            return f"not supported on {backend.name}: {why}"
    return None


def unsupported_routing(backend: Backend, routing: Routing) -> str | None:
    """Why ``backend`` cannot route the fabric as asked (``None``: it can)."""
    if routing.control in backend.capabilities.routing:
        return None
    return (
        f"not supported on {backend.name}: routing control {routing.control} (it runs "
        f"{', '.join(sorted(backend.capabilities.routing))})"
    )


def run_scenario(
    scenario: Scenario,
    backend: str | Backend = "model",
    observers: Sequence[RunObserver] = (),
    options: MeasureOptions | None = None,
    routing: RoutingOverride | None = None,
) -> ScenarioResult:
    """Run one scenario; bad input raises :class:`ScenarioError`, failures are results.

    ``routing`` (``harness run --routing``) overrides what the scenario and its
    fabric file state.  A scenario whose faults or routing the backend cannot
    do is ``skipped`` (the reason in ``error``); a healthy fabric that measures
    otherwise than its description stops the run with a :class:`BackendError`
    (preflight).
    """
    name = backend if isinstance(backend, str) else backend.name
    opts = options or MeasureOptions()
    route = reported_routing(scenario, routing)  # until prepare() has read the fabric file
    for o in observers:
        o.scenario_started(scenario, name)
    start = time.perf_counter()
    steps: list[StepResult] = []

    def done(status: str, error: str = "") -> ScenarioResult:
        result = ScenarioResult(
            scenario.name, scenario.where.path, name, status, tuple(steps), error,
            time.perf_counter() - start, scenario.description, scenario.tags,
            scenario.fabric.describe(), route,
        )  # fmt: skip
        for o in observers:
            o.scenario_finished(result)
        return result

    if scenario.drill is not None:  # a campaign in time: the drill runner runs it
        from harness.run.drill.as_scenario import run_drill_scenario

        be = make_backend(backend) if isinstance(backend, str) else backend
        if name not in scenario.backends:
            return done("skipped", f"runs on {', '.join(scenario.backends)}, not on {name}")
        drilled = run_drill_scenario(scenario, be, opts, routing, time.perf_counter() - start)
        for o in observers:
            for done_step in drilled.steps:
                o.step_finished(scenario, done_step)
            o.scenario_finished(drilled)
        return drilled
    # Bad input (every problem at once) before anything is injected, as `harness validate`.
    prepared = prepare(scenario)
    route = prepared.routing.merged(routing) if routing is not None else prepared.routing
    fabric = prepared.fabric
    if fabric is None:
        assert scenario.expect_fabric_error is not None  # prepare raises otherwise
        err = prepared.fabric_error
        ok = scenario.expect_fabric_error.lower() in err.lower()
        res = ExpectResult("fabric_error", f"contains {scenario.expect_fabric_error!r}",
                           err, ok, where=scenario.fabric.where)  # fmt: skip
        steps.append(StepResult("fabric", f"building {scenario.fabric.describe()} failed",
                                (err,), (res,), scenario.fabric.where))  # fmt: skip
        return done("passed" if ok else "failed")
    if scenario.expect_fabric_error is not None:
        res = ExpectResult("fabric_error", f"contains {scenario.expect_fabric_error!r}",
                           "the fabric built", False, where=scenario.fabric.where)  # fmt: skip
        steps.append(StepResult("fabric", f"built {scenario.fabric.describe()}", (), (res,),
                                scenario.fabric.where))  # fmt: skip
        return done("failed")
    be = make_backend(backend) if isinstance(backend, str) else backend
    faults = [p.applied for p in prepared.steps if p.applied is not None]
    why = unsupported(be, faults, fabric) or unsupported_routing(be, route)
    foreign = foreign_reroute(prepared.routing, scenario.routing, route)
    if why is None and foreign is not None:
        why = f"not run with routing control {route.control}: {foreign}"
    if why is not None:
        return done("skipped", why)
    with be:
        be.apply(fabric, prepared.jobs, routing=route)
        run = RunSession(scenario, be, fabric, prepared.jobs, opts, routing=route)
        try:
            run.preflight()
            for prepared_step in prepared.steps:
                step = prepared_step.step
                before = run.timeline.now
                if isinstance(step, InjectStep):
                    assert prepared_step.applied is not None  # prepare raises otherwise
                    result = run.inject(step, prepared_step.applied)
                elif isinstance(step, RestoreStep):
                    result = run.restore(step)
                elif isinstance(step, WaitStep):
                    result = run.wait(step)
                elif isinstance(step, RestartStep):
                    result = run.restart(step)
                else:
                    result = run.expect(step)
                result = dataclasses.replace(result, clock=(before, run.timeline.now))
                steps.append(result)
                for o in observers:
                    o.step_finished(scenario, result)
        except BaseException:
            # revert everything, but let the original error win: revert_all logs its own
            # errors, and raising one here would hide why the run stopped
            with contextlib.suppress(Exception):
                run.revert_all()
            raise
        run.revert_all()
    if any(s.mismatches for s in steps):
        return done("mismatch")
    failed = any(not s.passed for s in steps)
    return done("failed" if failed else "passed")
