"""The results of a run: each expectation's verdict beside its prediction and measurement,
each step's, and each scenario's, with their JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.inputs.location import Location
from harness.invariants.timeline import seconds_text


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
        """The expectation's result as a JSON-ready dict."""
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
    """What one step did: its words, what survived and was lost, and its expectations' results."""

    kind: str  # inject | restore | expect | wait | restart | fabric
    text: str  # what was done, in plain words
    story: tuple[str, ...] = ()  # what survived and what was lost
    expectations: tuple[ExpectResult, ...] = ()
    where: Location = field(default_factory=Location)
    settle_s: float | None = None  # how long the backend took to converge after this step
    plan: str = ""  # what was measured (expect steps)
    notes: tuple[str, ...] = ()  # what the backend saw besides the plan (Measurements.notes)
    clock: tuple[float, float] = (0.0, 0.0)  # the scenario clock before and after it, seconds
    clock_note: str = ""  # why the clock moved, when a step other than a wait moved it

    @property
    def clock_text(self) -> str:
        """The scenario clock before and after the step: ``t=10 s -> 44.36 s``."""
        return f"t={seconds_text(self.clock[0])} s -> {seconds_text(self.clock[1])} s"

    @property
    def passed(self) -> bool:
        """Whether every expectation of the step passed (a step without one passes)."""
        return all(e.status == "passed" for e in self.expectations)

    @property
    def mismatches(self) -> list[ExpectResult]:
        """The expectations whose measurement disagreed with the prediction."""
        return [e for e in self.expectations if e.mismatch]

    def to_dict(self) -> dict[str, Any]:
        """The step's result as a JSON-ready dict, predictions and measurements by observation."""
        return {
            "kind": self.kind,
            "text": self.text,
            "story": list(self.story),
            "where": str(self.where),
            "settle_s": None if self.settle_s is None else round(self.settle_s, 4),
            "clock": {
                "before_s": round(self.clock[0], 9),
                "after_s": round(self.clock[1], 9),
                "moved_s": round(self.clock[1] - self.clock[0], 9),
                "why": self.clock_note,
            },
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
    """The result of one scenario on one backend: its status, its steps and why it stopped."""

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
        """Whether the scenario passed."""
        return self.status == "passed"

    @property
    def failures(self) -> list[ExpectResult]:
        """Expectations that failed or whose measurement disagreed with the prediction."""
        return [e for s in self.steps for e in s.expectations if e.status != "passed"]

    @property
    def mismatches(self) -> list[ExpectResult]:
        """Every step's mismatched expectations, in step order."""
        return [e for s in self.steps for e in s.mismatches]

    def to_dict(self) -> dict[str, Any]:
        """The scenario's result as a JSON-ready dict."""
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
