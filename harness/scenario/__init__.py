"""Scenarios: the frozen model, the YAML loader, the JSON Schema, fabric references.

Modules:

``discover``      Scenario files on disk: which files a list of paths names (directories
                  searched).
``drill_check``   The ``drill:`` section of a scenario, checked and located (pure).
``drill_events``  A drill's timeline expanded into concrete, timed events (pure).
``drill_model``   Drills as frozen dataclasses: a scenario's ``drill:`` section.
``drill_prepare`` Prepare a drill: its timeline expanded and every event's fault resolved.
``drill_schema``  The JSON Schema of a scenario's ``drill:`` section.
``expectations``  Scenario expectations: each ``observation: expectation`` of an ``expect:``
                  step, checked.
``load``          Scenario files -> scenarios: a YAML file read, checked and turned into frozen
                  dataclasses.
``model``         Scenarios as frozen dataclasses.
``prepare``       Prepare a scenario: everything ``run`` checks before it injects anything.
``schema``        JSON Schema (draft 2020-12) of scenario files, for editors; writes both
                  committed schemas.
``select``        Scenarios chosen by name and tag: the ``-k EXPR`` name filter (as pytest's)
                  and ``--tag``.
``step_schema``   JSON Schema of scenario steps: faults and their selectors, expectations of
                  observations.
``steps``         Scenario steps: each inject, restore, expect, wait and restart step, checked
                  and located.
``validate``      Check scenarios without running them: what ``harness validate`` reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.scenario.discover import discover
    from harness.scenario.load import load_file
    from harness.scenario.model import Scenario

#: Each re-exported name and the module that holds it, imported on first use (PEP 562):
#: importing one module of the package does not import the others.
_EXPORTS: dict[str, str] = {
    "Scenario": "harness.scenario.model",
    "discover": "harness.scenario.discover",
    "load_file": "harness.scenario.load",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = ["Scenario", "discover", "load_file"]
