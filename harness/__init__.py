"""harness: break GPU-cluster networks on purpose, safely, and prove what survives.

The public API, re-exported from the modules that hold it::

    from harness import preset, Fault, FaultState, Observation, Analysis

The pipeline, one package a stage, imports pointing down (docs/architecture.md):
:mod:`harness.inputs` -> :mod:`harness.fabric` -> :mod:`harness.faults` ->
:mod:`harness.invariants` -> :mod:`harness.backends` (realize, measure) ->
:mod:`harness.observations` (predict, plan, judge) -> :mod:`harness.scenario` ->
:mod:`harness.run` -> :mod:`harness.planning` -> :mod:`harness.reporting` ->
:mod:`harness.cli`; the CLI and the pytest plugin are thin shells over them.

Modules:

``__main__``       ``python -m harness``: the same command line as ``harness``.
``errors``         Errors, grouped by whose fault they are (no side effects).
``pytest_plugin``  Scenario files as pytest items (a thin shell over the run stage, as the CLI
                   is).
``words``          Counted nouns in plain English (pure).
``backends/``      Backends: one module (or package) each, all behind
                   :class:`~harness.backends.protocol.Backend`.
``cli/``           The ``harness`` command: its parser, its table of commands, and the exit
                   codes.
``exporters/``     Exporters: a fabric written out for other tools (containerlab, GraphML,
                   ibsim, Slurm).
``fabric/``        The fabric description: model, builder, node templates, generators, presets.
``faults/``        Faults: what breaks (the fault kinds, the selectors that name their targets,
                   the --change text, saved fault states).
``importers/``     Importers: fabrics read from real dumps (or one server's topology).
``inputs/``        Inputs, the first stage: every file and value the harness reads goes through
                   here.
``invariants/``    The invariants of a fabric under faults, one pure module per concern.
``observations/``  Observations: what a scenario can look at, predicted from the model and
                   measured on a backend, and judged.
``planning/``      Planning: questions asked of a fabric before a change (risk, failure sweeps,
                   audits against a design).
``reporting/``     Reporting: observers and writers over run results.
``run/``           Running scenarios: a run session over a backend, step by step, with
                   predictions beside measurements.
``scenario/``      Scenarios: the frozen model, the YAML loader, the JSON Schema, fabric
                   references.
``search/``        Property search: hypothesis strategies over fabrics and faults, stateful
                   tests, and reproducers for what they find.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.backends import Backend
    from harness.backends import ModelBackend
    from harness.errors import BackendError
    from harness.errors import FabricDesignError
    from harness.errors import HarnessError
    from harness.errors import InvariantViolation
    from harness.errors import ScenarioError
    from harness.fabric import PRESETS
    from harness.fabric import Fabric
    from harness.fabric import FabricBuilder
    from harness.fabric import Kind
    from harness.fabric import LinkKind
    from harness.fabric import dual_tor
    from harness.fabric import preset
    from harness.fabric import three_tier
    from harness.fabric import two_tier
    from harness.fabric.jobs import CheckpointSpec
    from harness.fabric.jobs import Job
    from harness.fabric.jobs import JobSpec
    from harness.fabric.jobs import resolve_jobs
    from harness.faults.fault import Fault
    from harness.faults.fault import FaultKind
    from harness.faults.fault import FaultState
    from harness.faults.selectors import Domain
    from harness.faults.selectors import select
    from harness.invariants.analysis import Analysis
    from harness.invariants.analysis import JobVerdict
    from harness.invariants.state import Observation
    from harness.observations.expect import Expect
    from harness.observations.observation import Context
    from harness.observations.registry import OBSERVATIONS
    from harness.observations.registry import observe
    from harness.run.results import ScenarioResult
    from harness.run.scenario import run_scenario

__version__ = "0.1.0"

#: Each public name and the module that holds it, imported on first use (PEP 562) so
#: that ``import harness`` (and with it every ``harness`` command's start) pays for
#: numpy, scipy and networkx only when a name that needs them is used.
_EXPORTS: dict[str, str] = {
    "Analysis": "harness.invariants.analysis",
    "Backend": "harness.backends",
    "BackendError": "harness.errors",
    "CheckpointSpec": "harness.fabric.jobs",
    "Context": "harness.observations.observation",
    "Domain": "harness.faults.selectors",
    "Expect": "harness.observations.expect",
    "Fabric": "harness.fabric",
    "FabricBuilder": "harness.fabric",
    "FabricDesignError": "harness.errors",
    "Fault": "harness.faults.fault",
    "FaultKind": "harness.faults.fault",
    "FaultState": "harness.faults.fault",
    "HarnessError": "harness.errors",
    "InvariantViolation": "harness.errors",
    "Job": "harness.fabric.jobs",
    "JobSpec": "harness.fabric.jobs",
    "JobVerdict": "harness.invariants.analysis",
    "Kind": "harness.fabric",
    "LinkKind": "harness.fabric",
    "ModelBackend": "harness.backends",
    "OBSERVATIONS": "harness.observations.registry",
    "Observation": "harness.invariants.state",
    "PRESETS": "harness.fabric",
    "ScenarioError": "harness.errors",
    "ScenarioResult": "harness.run.results",
    "dual_tor": "harness.fabric",
    "observe": "harness.observations.registry",
    "preset": "harness.fabric",
    "resolve_jobs": "harness.fabric.jobs",
    "run_scenario": "harness.run.scenario",
    "select": "harness.faults.selectors",
    "three_tier": "harness.fabric",
    "two_tier": "harness.fabric",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


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
