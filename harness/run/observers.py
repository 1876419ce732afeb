"""What watches a run: the :class:`RunObserver` protocol, told when a scenario starts, when
each step is done and when the scenario finishes (reporting lives in :mod:`harness.reporting`).
"""

from __future__ import annotations

from typing import Protocol

from harness.run.results import ScenarioResult
from harness.run.results import StepResult
from harness.scenario.model import Scenario


class RunObserver(Protocol):
    """Receives run events (reporting lives in :mod:`harness.reporting`)."""

    def scenario_started(self, scenario: Scenario, backend: str) -> None:
        """Called before the scenario's first step, with the backend's name."""
        ...

    def step_finished(self, scenario: Scenario, step: StepResult) -> None:
        """Called after each step, with its result."""
        ...

    def scenario_finished(self, result: ScenarioResult) -> None:
        """Called once the scenario has a result (whatever its status)."""
        ...
