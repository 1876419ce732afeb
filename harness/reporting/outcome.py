"""What one ``harness run`` produced, for the reporters (reporting stage, pure).

The runner returns one :class:`~harness.run.results.ScenarioResult` per scenario; a
:class:`RunReport` gathers them with the scenarios that were skipped (their
``backends:`` list excludes the backend of the run, or the backend cannot inject
their faults) so the console, JSON and JUnit reporters all count the same way.
A scenario whose measurements disagreed with the prediction has the status
``mismatch``; :attr:`RunReport.mismatches` counts the disagreeing expectations.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from harness.run.results import ScenarioResult


@dataclass(frozen=True, slots=True)
class Skipped:
    """A scenario that was not run, and why."""

    name: str
    path: str
    reason: str


@dataclass
class RunReport:
    """The results of one run on one backend, in the order they ran."""

    backend: str
    results: list[ScenarioResult] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        """Scenarios that passed."""
        return sum(r.status == "passed" for r in self.results)

    @property
    def failed(self) -> int:
        """Scenarios that failed."""
        return sum(r.status == "failed" for r in self.results)

    @property
    def mismatched(self) -> int:
        """Scenarios where a measurement disagreed with the prediction."""
        return sum(r.status == "mismatch" for r in self.results)

    @property
    def mismatches(self) -> int:
        """Expectations whose measurement disagreed with the prediction (findings)."""
        return sum(len(r.mismatches) for r in self.results)

    @property
    def errors(self) -> int:
        """Scenarios stopped by bad input (status ``error``)."""
        return sum(r.status == "error" for r in self.results)

    @property
    def total(self) -> int:
        """Scenarios that ran (or were meant to and had bad input); skips not counted."""
        return len(self.results)
