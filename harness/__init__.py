"""harness: break GPU-cluster networks on purpose, safely, and prove what survives.

The public API, re-exported from the modules that hold it::

    from harness import preset, Fault, FaultState, Observation, Analysis

Layers: :mod:`harness.fabric` (immutable description) -> :mod:`harness.faults`
(what breaks) -> backends (:mod:`harness.backends`, realize and observe) ->
:mod:`harness.analysis` / :mod:`harness.checks` (pure invariants) ->
:mod:`harness.runner` (scenarios), :mod:`harness.sweep`, :mod:`harness.risk`;
the CLI (:mod:`harness.cli`) and the pytest plugin are thin shells over them.
"""

from __future__ import annotations

from harness.analysis import Analysis
from harness.analysis import JobVerdict
from harness.backends import Backend
from harness.backends import ModelBackend
from harness.checks import OBSERVATIONS
from harness.checks import CheckpointSpec
from harness.checks import Context
from harness.checks import observe
from harness.errors import BackendError
from harness.errors import FabricDesignError
from harness.errors import HarnessError
from harness.errors import InvariantViolation
from harness.errors import ScenarioError
from harness.expect import Expect
from harness.fabric import PRESETS
from harness.fabric import Fabric
from harness.fabric import FabricBuilder
from harness.fabric import Kind
from harness.fabric import LinkKind
from harness.fabric import dual_tor
from harness.fabric import preset
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.faults import Fault
from harness.faults import FaultKind
from harness.faults import FaultState
from harness.jobs import Job
from harness.jobs import JobSpec
from harness.jobs import resolve_jobs
from harness.observation import Observation
from harness.runner import ScenarioResult
from harness.runner import run_scenario
from harness.selectors import Domain
from harness.selectors import select

__version__ = "0.1.0"

__all__ = [
    "OBSERVATIONS",
    "PRESETS",
    "Analysis",
    "Backend",
    "BackendError",
    "CheckpointSpec",
    "Context",
    "Domain",
    "Expect",
    "Fabric",
    "FabricBuilder",
    "FabricDesignError",
    "Fault",
    "FaultKind",
    "FaultState",
    "HarnessError",
    "InvariantViolation",
    "Job",
    "JobSpec",
    "JobVerdict",
    "Kind",
    "LinkKind",
    "ModelBackend",
    "Observation",
    "ScenarioError",
    "ScenarioResult",
    "dual_tor",
    "observe",
    "preset",
    "resolve_jobs",
    "run_scenario",
    "select",
    "three_tier",
    "two_tier",
]
