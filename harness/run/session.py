"""The run session: one scenario's run over a backend -- the runner's own fault state (the
prediction), the backend (the measurements), the faults applied -- with the preflight, each
step (inject, restore, wait, restart, expect) and the revert of every applied fault.
"""

from __future__ import annotations

import dataclasses
import logging

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
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultState
from harness.inputs.location import Location
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import Timeline
from harness.invariants.timeline import after_change
from harness.invariants.timeline import cut_off
from harness.invariants.timeline import seconds_text
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
from harness.run.results import ExpectResult
from harness.run.results import StepResult
from harness.run.story import story
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import RestartStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from harness.scenario.model import WaitStep
from harness.scenario.prepare import located
from harness.scenario.prepare import restore_choice
from harness.words import plural

log = logging.getLogger(__name__)


class RunSession:
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
        self.routing = routing  # as resolved once, carried unchanged
        self.measures = backend.capabilities.measurements
        self.ctx = Context(scenario.checkpoint)
        self.applied: list[tuple[str | None, AppliedFault]] = []
        self.state = FaultState.healthy(fabric)
        self.healthy = Analysis(fabric, Observation.from_state(self.state), jobs, routing=routing)
        self.baseline = Measurements(backend.name)
        self._current: Analysis | None = self.healthy
        self.timeline = Timeline.start(jobs)

    def analysis(self) -> Analysis:
        """The analysis of the current fault state (made again only after the state changed)."""
        if self._current is None:
            self._current = Analysis(
                self.fabric, Observation.from_state(self.state), self.jobs, healthy=self.healthy,
                routing=self.routing,
            )  # fmt: skip
        return self._current

    def _changed(
        self,
        applied: AppliedFault | None = None,
        before: Analysis | None = None,
        restored: tuple[AppliedFault, ...] = (),
    ) -> float:
        """Settle the backend and move the jobs' timeline past the change; ``before``: the
        analysis of the state before ``applied`` (the routes its failure stalls);
        ``restored``: what a restore brought back (a repaired link carries traffic only
        ``link_up`` later)."""
        uses = traffic_of(before) if before is not None else {}
        self._current = None
        settle = self.backend.settle(self.options.settle_timeout)
        self.timeline = after_change(self.timeline, self.analysis(), applied, self.routing, uses,
                                     restored=restored)  # fmt: skip
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
        # every NIC, and a sample of pairs on every rail (the model would check itself)
        if "probes" in self.measures and self.backend.name != "model":
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
        """Inject a fault on the backend and in the prediction; the step says what survived."""
        self.applied.append((step.name, applied))  # recorded before it is done
        before = self.analysis()  # a failure stalls the flows whose routes it was on
        self.backend.inject(applied)
        self.state = self.state.inject(applied)
        settle = self._changed(applied, before)
        text = applied.describe(self.fabric)
        told = story(self.fabric, self.analysis(), self.healthy, self.timeline)
        return StepResult("inject", text, told, where=step.where, settle_s=settle)

    def restore(self, step: RestoreStep) -> StepResult:
        """Revert the faults the restore target names, newest first, on both sides."""
        try:
            at = restore_choice([n for n, _ in self.applied], step.target)
        except ScenarioError as err:
            raise _located(err, step.where) from None
        chosen = [self.applied[i] for i in at]
        for i in at:  # newest first, so earlier positions stay valid
            self.backend.revert(self.applied[i][1])
            self.state = self.state.revert(self.applied[i][1])
            del self.applied[i]
        settle = self._changed(restored=tuple(a for _, a in chosen))
        text = "; ".join(a.describe_restore(self.fabric) for _, a in chosen)
        told = story(self.fabric, self.analysis(), self.healthy, self.timeline)
        return StepResult("restore", text, told, where=step.where, settle_s=settle)

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass on the backend and on the jobs' clock (the state unchanged)."""
        if seconds <= 0:
            return
        self.backend.wait(seconds)
        self.timeline = self.timeline.after(seconds, cut_off(self.analysis())[0])

    def catch_up(self, seconds: float) -> None:
        """Move the jobs' clock on by ``seconds`` that already passed on the backend (an
        emulated backend's measurement or settle took them): nothing more is waited."""
        if seconds > 0:
            self.timeline = self.timeline.after(seconds, cut_off(self.analysis())[0])

    def observe_one(self, e: Expectation) -> ExpectResult:
        """Predict one expectation, measure it where the backend can, and judge it, without
        watching the jobs (the clock does not move: a drill's probe samples it)."""
        a = self.analysis()
        part = self._part(e, a)
        measured = self._measure(part) if part is not None else None
        return self._judge(e, a, part, measured)

    def wait(self, step: WaitStep) -> StepResult:
        """Let time pass; the step names the jobs that have crashed by then."""
        self.advance(step.seconds)
        crashed = [f for f in self.timeline.fates if f.lost]
        return StepResult("wait", f"waited {seconds_text(step.seconds)} s",
                          tuple(f.describe() for f in crashed), where=step.where)  # fmt: skip

    def restart(self, step: RestartStep) -> StepResult:
        """Restart the crashed jobs ``step`` names; the step says which cannot be placed yet."""
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
        """Predict each expectation, measure what the backend can, and judge them."""
        a = self.analysis()
        note = ""
        if any(e.observation in JOB_OBSERVATIONS for e in step.expectations):
            watched = self.timeline.observed()  # watched for their timeout: the clock may move
            note, self.timeline = self.timeline.watch_note(watched), watched
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
                          notes=measured.notes if measured is not None else (),
                          clock_note=note)  # fmt: skip

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
        """Revert every fault still applied on the backend, newest first; raise the first error
        after."""
        first: BaseException | None = None
        while self.applied:
            _, applied = self.applied.pop()
            try:
                self.backend.revert(applied)
            except BackendError as err:  # the environment's: said in one line, no traceback
                log.error("revert of %s failed: %s", applied.fault.describe(), err)
                first = first or err
            except Exception as err:  # log, keep reverting, re-raise the first
                log.exception("revert of %s failed", applied.fault.describe())
                first = first or err
        if first is not None:
            raise first


def _located(err: ScenarioError, where: Location) -> ScenarioError:
    """The error with ``where`` for every problem that does not already name a file."""
    return type(err)(located(err, where))
