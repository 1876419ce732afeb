"""Run scenarios on a backend (the one place that sequences faults and checks).

Faults are injected like a transaction: every applied fault is reverted, in
reverse order, in ``finally``; a revert error is reported and the original
error re-raised.  Progress and results go to :class:`RunObserver` objects, never
to ``print``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from harness.analysis import Analysis
from harness.backends import make_backend
from harness.backends.protocol import Backend
from harness.checks import Context
from harness.checks import observe
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.faults import AppliedFault
from harness.jobs import Job
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import Location
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from harness.scenario.prepare import located
from harness.scenario.prepare import prepare
from harness.scenario.prepare import restore_choice
from harness.words import plural

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExpectResult:
    observation: str
    expected: str
    observed: Any
    passed: bool
    detail: str = ""
    involved: tuple[str, ...] = ()
    where: Location = field(default_factory=Location)


@dataclass(frozen=True, slots=True)
class StepResult:
    kind: str  # inject | restore | expect | fabric
    text: str  # what was done, in plain words
    story: tuple[str, ...] = ()  # what survived and what was lost
    expectations: tuple[ExpectResult, ...] = ()
    where: Location = field(default_factory=Location)

    @property
    def passed(self) -> bool:
        return all(e.passed for e in self.expectations)


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    name: str
    path: str
    backend: str
    status: str  # passed | failed | error
    steps: tuple[StepResult, ...] = ()
    error: str = ""
    seconds: float = 0.0
    description: str = ""
    tags: tuple[str, ...] = ()
    fabric: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failures(self) -> list[ExpectResult]:
        return [e for s in self.steps for e in s.expectations if not e.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "backend": self.backend,
            "status": self.status,
            "seconds": round(self.seconds, 4),
            "fabric": self.fabric,
            "error": self.error,
            "steps": [
                {
                    "kind": s.kind,
                    "text": s.text,
                    "story": list(s.story),
                    "where": str(s.where),
                    "expectations": [
                        {
                            "observation": e.observation,
                            "expected": e.expected,
                            "observed": _jsonable(e.observed),
                            "passed": e.passed,
                            "detail": e.detail,
                            "involved": list(e.involved),
                            "where": str(e.where),
                        }
                        for e in s.expectations
                    ],
                }
                for s in self.steps
            ],
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


def story(fabric: Fabric, a: Analysis, healthy: Analysis) -> tuple[str, ...]:
    """What survived and what was lost, in plain words."""
    lines = []
    lost = [v for v in a.verdicts if v.lost]
    if a.jobs:
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
        ratios = [(a.job_busbw_ratio(j), j.name) for j in a.jobs if j.name not in a.jobs_lost()]
        worst = min(ratios, default=None)
        if worst and worst[0] < 1.0 - 1e-12:
            lines.append(f"slowest surviving job {worst[1]} at {worst[0]:.1%} of its bus bandwidth")
    return tuple(lines)


class _Run:
    """The state of one scenario run (one RunContext instead of threaded arguments)."""

    def __init__(self, scenario: Scenario, backend: Backend, fabric: Fabric, jobs: tuple[Job, ...]):
        self.scenario = scenario
        self.backend = backend
        self.fabric = fabric
        self.jobs = jobs
        self.ctx = Context(scenario.checkpoint)
        self.applied: list[tuple[str | None, AppliedFault]] = []
        self.healthy = Analysis(fabric, backend.observe(), jobs)
        self._current: Analysis | None = self.healthy

    def analysis(self) -> Analysis:
        if self._current is None:
            self._current = Analysis(
                self.fabric, self.backend.observe(), self.jobs, healthy=self.healthy
            )
        return self._current

    def inject(self, step: InjectStep, applied: AppliedFault) -> StepResult:
        self.applied.append((step.name, applied))  # recorded before it is done
        self.backend.inject(applied)
        self._current = None
        text = applied.describe(self.fabric)
        return StepResult("inject", text, story(self.fabric, self.analysis(), self.healthy),
                          where=step.where)  # fmt: skip

    def restore(self, step: RestoreStep) -> StepResult:
        try:
            at = restore_choice([n for n, _ in self.applied], step.target)
        except ScenarioError as err:
            raise _located(err, step.where) from None
        chosen = [self.applied[i] for i in at]
        for i in at:  # newest first, so earlier positions stay valid
            self.backend.revert(self.applied[i][1])
            del self.applied[i]
        self._current = None
        text = "; ".join(a.describe_restore(self.fabric) for _, a in chosen)
        return StepResult("restore", text, story(self.fabric, self.analysis(), self.healthy),
                          where=step.where)  # fmt: skip

    def expect(self, step: ExpectStep) -> StepResult:
        a = self.analysis()
        results = []
        for e in step.expectations:
            try:
                got = observe(e.observation, a, self.ctx, dict(e.args))
            except ScenarioError as err:
                raise _located(err, e.where) from None
            results.append(
                ExpectResult(
                    e.describe(),
                    e.expect.describe(),
                    got.value,
                    e.expect.check(got.value),
                    got.detail,
                    got.involved,
                    e.where,
                )
            )
        ok = sum(r.passed for r in results)
        return StepResult("expect", f"checked {ok}/{plural(len(results), 'expectation')}",
                          expectations=tuple(results), where=step.where)  # fmt: skip

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


def _located(err: ScenarioError, where: Location) -> ScenarioError:
    """The error with ``where`` for every problem that does not already name a file."""
    return type(err)(located(err, where))


def run_scenario(
    scenario: Scenario,
    backend: str | Backend = "model",
    observers: Sequence[RunObserver] = (),
) -> ScenarioResult:
    """Run one scenario; bad input raises :class:`ScenarioError`, failures are results."""
    name = backend if isinstance(backend, str) else backend.name
    for o in observers:
        o.scenario_started(scenario, name)
    start = time.perf_counter()
    steps: list[StepResult] = []

    def done(status: str, error: str = "") -> ScenarioResult:
        result = ScenarioResult(
            scenario.name, scenario.where.path, name, status, tuple(steps), error,
            time.perf_counter() - start, scenario.description, scenario.tags,
            scenario.fabric.describe(),
        )  # fmt: skip
        for o in observers:
            o.scenario_finished(result)
        return result

    # Bad input (every problem at once) before anything is injected, as `harness validate`.
    prepared = prepare(scenario)
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
    with be:
        be.apply(fabric)
        run = _Run(scenario, be, fabric, prepared.jobs)
        try:
            for prepared_step in prepared.steps:
                step = prepared_step.step
                if isinstance(step, InjectStep):
                    assert prepared_step.applied is not None  # prepare raises otherwise
                    result = run.inject(step, prepared_step.applied)
                elif isinstance(step, RestoreStep):
                    result = run.restore(step)
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
    failed = any(not s.passed for s in steps)
    return done("failed" if failed else "passed")
