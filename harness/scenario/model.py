"""Scenarios as frozen dataclasses (scenario stage, pure).

The loader (:mod:`harness.scenario.load`) turns YAML into these; the runner
(:mod:`harness.run.scenario`) executes them on a backend.  Every piece keeps the
:class:`~harness.inputs.location.Location` it came from, so results and errors can name file:line.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import JobSpec
from harness.fabric.resolve import FabricRef
from harness.fabric.routing import RoutingOverride
from harness.faults.fault import Fault
from harness.inputs.location import Location
from harness.observations.expect import Expect
from harness.scenario.drill_model import Drill


@dataclass(frozen=True, slots=True)
class InjectStep:
    """``inject: FAULT`` (named with ``as:`` for a later restore)."""

    fault: Fault
    name: str | None = None
    where: Location = Location()


@dataclass(frozen=True, slots=True)
class RestoreStep:
    """``restore: NAME`` (or ``all``, ``last``): faults injected earlier are undone."""

    target: str  # a step name, "all" or "last"
    where: Location = Location()


@dataclass(frozen=True, slots=True)
class Expectation:
    """One expectation: an observation, its arguments and what its value must be."""

    observation: str
    expect: Expect
    args: tuple[tuple[str, Any], ...] = ()
    where: Location = Location()

    def describe(self) -> str:
        """The observation with its arguments (``node_nic_gbs(node=su01/node01)``)."""
        args = ", ".join(f"{k}={v}" for k, v in self.args)
        return f"{self.observation}({args})" if args else self.observation


@dataclass(frozen=True, slots=True)
class ExpectStep:
    """``expect: {OBSERVATION: EXPECTATION, ...}``: checked against the prediction and measured."""

    expectations: tuple[Expectation, ...]
    where: Location = Location()


@dataclass(frozen=True, slots=True)
class WaitStep:
    """``wait: 40s``: the clock moves on (an emulated backend waits for real)."""

    seconds: float
    where: Location = Location()


@dataclass(frozen=True, slots=True)
class RestartStep:
    """``restart: JOB`` (or ``all``): crashed jobs start again, where they can be placed."""

    target: str  # a job name or "all"
    where: Location = Location()


Step = InjectStep | RestoreStep | ExpectStep | WaitStep | RestartStep


@dataclass(frozen=True, slots=True)
class Scenario:
    """One scenario: a fabric, its jobs and the steps that break it and check what survives."""

    name: str
    description: str
    fabric: FabricRef
    steps: tuple[Step, ...]
    jobs: tuple[JobSpec, ...] = ()
    tags: tuple[str, ...] = ()
    backends: tuple[str, ...] = ("model",)
    checkpoint: CheckpointSpec | None = None
    expect_fabric_error: str | None = None
    routing: RoutingOverride = field(default_factory=RoutingOverride)  # its ``routing:``
    drill: Drill | None = None  # its ``drill:`` (harness drill runs it; steps may be empty)
    where: Location = field(default_factory=Location)
