"""Run scenarios on a backend (the one place that sequences faults and checks).

Faults are injected like a transaction: every applied fault is reverted, in
reverse order, in ``finally``; a revert error is reported and the original
error re-raised.  Progress and results go to :class:`RunObserver` objects, never
to ``print``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from harness.backends import make_backend
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.model_measure import predict_measurements
from harness.backends.protocol import Backend
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import foreign_reroute
from harness.fabric.routing import resolve
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import Timeline
from harness.invariants.timeline import after_change
from harness.invariants.timeline import cut_off
from harness.invariants.timeline import traffic_of
from harness.observations.compare import agree
from harness.observations.compare import disagreements
from harness.observations.jobs import JOB_OBSERVATIONS
from harness.observations.observation import Context
from harness.observations.observation import MeasureInput
from harness.observations.observation import PlanInput
from harness.observations.plans import MeasureOptions
from harness.observations.plans import connectivity_plan
from harness.observations.plans import island_plan
from harness.observations.registry import OBSERVATIONS
from harness.observations.registry import measure
from harness.observations.registry import observe
from harness.observations.registry import plan_for
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import Location
from harness.scenario.model import RestartStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from harness.scenario.model import WaitStep
from harness.scenario.prepare import located
from harness.scenario.prepare import prepare
from harness.scenario.prepare import restore_choice
from harness.words import plural

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExpectResult:
    """One expectation at one step: what the model predicted, what was measured, the verdict.

    ``observed`` is the value judged: the measurement when there is one
    (``measured_by`` names the backend), else the prediction.  ``mismatch``:
    prediction and measurement disagree -- a finding whatever the expectation
    says, so ``status`` is then ``mismatch``.
    """

    observation: str
    expected: str
    observed: Any
    passed: bool  # the expectation held on ``observed``
    detail: str = ""
    involved: tuple[str, ...] = ()
    where: Location = field(default_factory=Location)
    predicted: Any = None
    measured: Any = None
    measured_by: str = ""  # the backend that measured it; "" = prediction only
    mismatch: bool = False
    measured_detail: str = ""  # what the measurement showed (``detail``: the model's why)

    @property
    def status(self) -> str:
        """``passed``, ``failed`` or ``mismatch``."""
        if self.mismatch:
            return "mismatch"
        return "passed" if self.passed else "failed"

    def to_dict(self) -> dict[str, Any]:
        return {
            "observation": self.observation,
            "expected": self.expected,
            "observed": _jsonable(self.observed),
            "passed": self.passed,
            "status": self.status,
            "predicted": _jsonable(self.predicted),
            "measured": _jsonable(self.measured) if self.measured_by else None,
            "measured_by": self.measured_by or None,
            "detail": self.detail,
            "measured_detail": self.measured_detail,
            "involved": list(self.involved),
            "where": str(self.where),
        }


@dataclass(frozen=True, slots=True)
class StepResult:
    kind: str  # inject | restore | expect | wait | restart | fabric
    text: str  # what was done, in plain words
    story: tuple[str, ...] = ()  # what survived and what was lost
    expectations: tuple[ExpectResult, ...] = ()
    where: Location = field(default_factory=Location)
    settle_s: float | None = None  # how long the backend took to converge after this step
    plan: str = ""  # what was measured (expect steps)
    notes: tuple[str, ...] = ()  # what the backend saw besides the plan (Measurements.notes)

    @property
    def passed(self) -> bool:
        return all(e.status == "passed" for e in self.expectations)

    @property
    def mismatches(self) -> list[ExpectResult]:
        return [e for e in self.expectations if e.mismatch]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "story": list(self.story),
            "where": str(self.where),
            "settle_s": None if self.settle_s is None else round(self.settle_s, 4),
            "plan": self.plan,
            "notes": list(self.notes),
            "predicted": {e.observation: _jsonable(e.predicted) for e in self.expectations},
            "measured": {
                e.observation: _jsonable(e.measured) for e in self.expectations if e.measured_by
            },
            "mismatches": len(self.mismatches),
            "expectations": [e.to_dict() for e in self.expectations],
        }


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    name: str
    path: str
    backend: str
    status: str  # passed | failed | mismatch | error | skipped
    steps: tuple[StepResult, ...] = ()
    error: str = ""  # bad input (error) or why it did not run (skipped)
    seconds: float = 0.0
    description: str = ""
    tags: tuple[str, ...] = ()
    fabric: str = ""
    routing: Routing = DEFAULT_ROUTING  # how the backend routed the fabric

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failures(self) -> list[ExpectResult]:
        """Expectations that failed or whose measurement disagreed with the prediction."""
        return [e for s in self.steps for e in s.expectations if e.status != "passed"]

    @property
    def mismatches(self) -> list[ExpectResult]:
        return [e for s in self.steps for e in s.mismatches]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "backend": self.backend,
            "status": self.status,
            "seconds": round(self.seconds, 4),
            "fabric": self.fabric,
            "routing": self.routing.to_dict(),
            "error": self.error,
            "mismatches": len(self.mismatches),
            "steps": [s.to_dict() for s in self.steps],
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


class RunObserver(Protocol):
    """Receives run events (reporting lives in :mod:`harness.reporting`)."""

    def scenario_started(self, scenario: Scenario, backend: str) -> None: ...

    def step_finished(self, scenario: Scenario, step: StepResult) -> None: ...

    def scenario_finished(self, result: ScenarioResult) -> None: ...


def _job_story(a: Analysis, timeline: Timeline) -> list[str]:
    """The jobs' fates on the clock: crashed, stalled, rerouted, or all running."""
    fates = timeline.fates
    lost = [f.name for f in fates if f.lost]
    stalled = [f.name for f in fates if f.state == "stalled"]
    lines = []
    for names, what in ((lost, "lost"), (stalled, "stalled")):
        if names:
            listed = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
            lines.append(f"{what} {len(names)} of {plural(len(fates), 'job')}: {listed}")
    if not lines:
        n = len(fates)
        lines.append(f"all {n} jobs survive" if n > 1 else "the job survives")
    notes = [f"  {f.describe()}" for f in fates if f.lost or f.state == "stalled" or f.rerouted_s]
    return lines + notes[:5]


def story(
    fabric: Fabric, a: Analysis, healthy: Analysis, timeline: Timeline | None = None
) -> tuple[str, ...]:
    """What survived and what was lost, in plain words."""
    lines = []
    lost = [v for v in a.verdicts if v.lost]
    if a.jobs and timeline is not None:
        lines.extend(_job_story(a, timeline))
    elif a.jobs:
        if lost:
            names = ", ".join(v.name for v in lost[:8]) + (" ..." if len(lost) > 8 else "")
            lines.append(f"lost {len(lost)} of {plural(len(a.jobs), 'job')}: {names}")
            lines.extend(f"  {v.name}: {v.reasons[0]}" for v in lost[:4])
        else:
            n = len(a.jobs)
            lines.append(f"all {n} jobs survive" if n > 1 else "the job survives")
    bad = a.gpu_pairs_disconnected()
    bad_pxn = a.gpu_pairs_disconnected(pxn=True)
    if bad == 0:
        lines.append("every GPU pair can still talk")
    else:
        isl = a.islands()
        lines.append(
            f"{plural(bad, 'GPU pair')} cannot talk ({bad_pxn:,} with PXN); "
            f"{plural(len(isl), 'NIC island')}, largest {plural(isl[0].nics if isl else 0, 'NIC')}"
        )
    iso = a.nics_isolated()
    if iso:
        lines.append(f"{plural(iso, 'NIC')} cut off from the fabric")
    ratio = a.leaf_uplink_ratio()
    if ratio < 1.0 - 1e-12:
        lines.append(f"worst leaf keeps {ratio:.1%} of its uplink capacity")
    if fabric.n_sus >= 2:
        base = healthy.bisection_gbps
        if base and a.bisection_gbps < base - 1e-9:
            lines.append(f"bisection bandwidth {a.bisection_gbps / base:.1%} of healthy")
    if a.jobs:
        gone = set(a.jobs_lost()) | set(timeline.lost() if timeline is not None else ())
        ratios = [(a.job_busbw_ratio(j), j.name) for j in a.jobs if j.name not in gone]
        worst = min(ratios, default=None)
        if worst and worst[0] < 1.0 - 1e-12:
            lines.append(f"slowest surviving job {worst[1]} at {worst[0]:.1%} of its bus bandwidth")
    return tuple(lines)


class _Run:
    """The state of one scenario run: the runner's own fault state (the prediction),
    the backend (the measurements) and what has been applied."""

    def __init__(
        self,
        scenario: Scenario,
        backend: Backend,
        fabric: Fabric,
        jobs: tuple[Job, ...],
        options: MeasureOptions,
        *,
        routing: Routing = DEFAULT_ROUTING,
    ) -> None:
        self.scenario = scenario
        self.backend = backend
        self.fabric = fabric
        self.jobs = jobs
        self.options = options
        self.forwarding = routing.forwarding_model
        self.measures = backend.capabilities.measurements
        self.ctx = Context(scenario.checkpoint)
        self.applied: list[tuple[str | None, AppliedFault]] = []
        self.state = FaultState.healthy(fabric)
        self.paths = routing.paths
        self.healthy = Analysis(
            fabric, Observation.from_state(self.state), jobs, forwarding=self.forwarding,
            paths=self.paths,
        )  # fmt: skip
        self.baseline = Measurements(backend.name)
        self._current: Analysis | None = self.healthy
        self.reroute_s = routing.reroute
        self.uses = traffic_of(fabric, jobs)
        self.timeline = Timeline.start(jobs)

    def analysis(self) -> Analysis:
        if self._current is None:
            self._current = Analysis(
                self.fabric, Observation.from_state(self.state), self.jobs, healthy=self.healthy,
                forwarding=self.forwarding, paths=self.paths,
            )  # fmt: skip
        return self._current

    def _changed(self, applied: AppliedFault | None = None) -> float:
        self._current = None
        settle = self.backend.settle(self.options.settle_timeout)
        self.timeline = after_change(self.timeline, self.analysis(), applied, self.reroute_s,
                                     self.uses)  # fmt: skip
        return settle

    # -- what to measure ---------------------------------------------------------------
    def _part(self, e: Expectation, a: Analysis) -> MeasurePlan | None:
        """What to measure for one expectation (``None``: the backend cannot measure it)."""
        try:
            part = plan_for(e.observation, PlanInput(a, dict(e.args), self.options))
        except ScenarioError as err:
            raise _located(err, e.where) from None
        if part is None or part.empty or not part.kinds <= self.measures:
            return None
        return part

    def _measure(self, plan: MeasurePlan) -> Measurements:
        m = self.backend.measure(plan)
        missing = m.missing(plan)
        if missing:
            more = f" (+{len(missing) - 3} more)" if len(missing) > 3 else ""
            msg = (
                f"backend {self.backend.name} did not measure what it was asked: "
                + "; ".join(missing[:3]) + more
            )  # fmt: skip
            raise BackendError(msg)
        return m

    def preflight(self) -> None:
        """Measure the healthy fabric; refuse it if it is not what the description says."""
        self.backend.settle(self.options.settle_timeout)
        plan = MeasurePlan()
        if "probes" in self.measures:  # every NIC, and a sample of pairs on every rail
            plan = island_plan(self.healthy, self.options) | connectivity_plan(
                self.healthy, self.options, cross_rail=False
            )
        for step in self.scenario.steps:
            if isinstance(step, ExpectStep):
                for e in step.expectations:
                    part = self._part(e, self.healthy)
                    plan = plan if part is None else plan | part
        if plan.empty:
            return
        measured = self._measure(plan)
        bad = disagreements(predict_measurements(self.healthy, plan), measured)
        if bad:
            msg = (
                f"preflight on backend {self.backend.name}: the healthy fabric "
                f"{self.fabric.name} does not match its description: " + "; ".join(bad)
            )
            raise BackendError(msg)
        self.baseline = measured

    # -- steps -------------------------------------------------------------------------
    def inject(self, step: InjectStep, applied: AppliedFault) -> StepResult:
        self.applied.append((step.name, applied))  # recorded before it is done
        self.backend.inject(applied)
        self.state = self.state.inject(applied)
        settle = self._changed(applied)
        text = applied.describe(self.fabric)
        told = story(self.fabric, self.analysis(), self.healthy, self.timeline)
        return StepResult("inject", text, told, where=step.where, settle_s=settle)

    def restore(self, step: RestoreStep) -> StepResult:
        try:
            at = restore_choice([n for n, _ in self.applied], step.target)
        except ScenarioError as err:
            raise _located(err, step.where) from None
        chosen = [self.applied[i] for i in at]
        for i in at:  # newest first, so earlier positions stay valid
            self.backend.revert(self.applied[i][1])
            self.state = self.state.revert(self.applied[i][1])
            del self.applied[i]
        settle = self._changed()
        text = "; ".join(a.describe_restore(self.fabric) for _, a in chosen)
        told = story(self.fabric, self.analysis(), self.healthy, self.timeline)
        return StepResult("restore", text, told, where=step.where, settle_s=settle)

    def wait(self, step: WaitStep) -> StepResult:
        self.backend.wait(step.seconds)
        self.timeline = self.timeline.after(step.seconds, cut_off(self.analysis())[0])
        crashed = [f for f in self.timeline.fates if f.lost]
        return StepResult("wait", f"waited {step.seconds:g} s (t={self.timeline.now:g} s)",
                          tuple(f.describe() for f in crashed), where=step.where)  # fmt: skip

    def restart(self, step: RestartStep) -> StepResult:
        names = [f.name for f in self.timeline.fates
                 if f.lost and step.target in ("all", f.name)]  # fmt: skip
        self.backend.restart(names)
        self.timeline = self.timeline.restarted(names, cut_off(self.analysis())[0])
        back = [n for n in names if not self.timeline.fate(n).lost]
        still = [n for n in names if self.timeline.fate(n).lost]
        text = f"restarted {', '.join(back) or 'no job'}"
        if still:
            text += f"; {', '.join(still)} cannot be placed yet (its NICs cannot reach each other)"
        return StepResult("restart", text, where=step.where)

    def expect(self, step: ExpectStep) -> StepResult:
        a = self.analysis()
        if any(e.observation in JOB_OBSERVATIONS for e in step.expectations):
            self.timeline = self.timeline.observed()  # watched for their timeout
        parts = [self._part(e, a) for e in step.expectations]
        plan = MeasurePlan()
        for part in parts:
            plan = plan if part is None else plan | part
        measured = self._measure(plan) if not plan.empty else None
        results = [self._judge(e, a, part, measured) for e, part in zip(step.expectations, parts,
                                                                       strict=True)]  # fmt: skip
        ok = sum(r.status == "passed" for r in results)
        bad = sum(r.mismatch for r in results)
        text = f"checked {ok}/{plural(len(results), 'expectation')}"
        if bad:
            text += f"; {bad} measured otherwise than predicted"
        return StepResult("expect", text, expectations=tuple(results), where=step.where,
                          plan="" if plan.empty else plan.describe(),
                          notes=measured.notes if measured is not None else ())  # fmt: skip

    def _judge(
        self, e: Expectation, a: Analysis, part: MeasurePlan | None, m: Measurements | None
    ) -> ExpectResult:
        args = dict(e.args)
        try:
            ctx = dataclasses.replace(self.ctx, fates=self.timeline.fates)
            predicted = observe(e.observation, a, ctx, args)
        except ScenarioError as err:
            raise _located(err, e.where) from None
        got = None
        if part is not None and m is not None:
            got = measure(e.observation, MeasureInput(m, self.baseline, part, self.fabric, args))
        if got is None:
            return ExpectResult(e.describe(), e.expect.describe(), predicted.value,
                                e.expect.check(predicted.value), predicted.detail,
                                predicted.involved, e.where, predicted.value)  # fmt: skip
        definition = OBSERVATIONS[e.observation].measure
        same = definition.agrees(predicted.value, got) if definition is not None else (
            agree(predicted.value, got.value, 0.0))  # fmt: skip
        return ExpectResult(
            e.describe(), e.expect.describe(), got.value, e.expect.check(got.value),
            predicted.detail, tuple(dict.fromkeys((*got.involved, *predicted.involved))),
            e.where, predicted.value, got.value, self.backend.name, not same, got.detail,
        )  # fmt: skip

    def revert_all(self) -> None:
        first: BaseException | None = None
        while self.applied:
            _, applied = self.applied.pop()
            try:
                self.backend.revert(applied)
            except Exception as err:  # log, keep reverting, re-raise the first
                log.exception("revert of %s failed", applied.fault.describe())
                first = first or err
        if first is not None:
            raise first


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


def _located(err: ScenarioError, where: Location) -> ScenarioError:
    """The error with ``where`` for every problem that does not already name a file."""
    return type(err)(located(err, where))


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
    route = resolve(scenario.routing, routing)
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
        run = _Run(scenario, be, fabric, prepared.jobs, opts, routing=route)
        try:
            run.preflight()
            for prepared_step in prepared.steps:
                step = prepared_step.step
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
