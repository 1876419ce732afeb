"""Faults and jobs from YAML list files: state files, ``--change @FILE``, jobs files.

* a state file is a YAML list of faults in the scenario syntax
  (``- kill: su02/leaf-r1``), checked with file:line:column errors;
* a jobs file is a YAML list of jobs (``- {name: train, nodes: su01/*}``).

A live topology dump given as the state is turned into faults by the audit
(:func:`harness.planning.audit.faults.faults_from_audit`), not here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.faults.fault import Fault
from harness.inputs.yaml import parse_list_items

T = TypeVar("T")


def _parse_items_at(
    path: Path | str, what: str, example: str, parse: Callable[[Any], T]
) -> list[tuple[T, int]]:
    return parse_list_items(path, what, example, parse)


def _parse_items(path: Path | str, what: str, example: str, parse: Callable[[Any], T]) -> list[T]:
    return [item for item, _ in _parse_items_at(path, what, example, parse)]


_FAULT_EXAMPLE = "- kill: su02/leaf-r1"


def load_state_file(path: Path | str, fabric: Fabric | None = None) -> list[Fault]:
    """Faults already present, from a YAML list (every problem reported at once).

    With ``fabric``, every fault is also resolved against it, so a selector that
    matches nothing is reported at its line of the state file.
    """
    faults = _parse_items(path, "state", _FAULT_EXAMPLE, Fault.parse)
    if fabric is not None:
        problems: list[Problem] = []
        for fault in faults:
            try:
                fault.resolve(fabric)
            except ScenarioError as err:
                problems.extend(err.problems)
        if problems:
            raise ScenarioError(problems)
    return faults


def load_fault_file(path: Path | str, what: str = "state") -> list[tuple[Fault, int]]:
    """The faults of a YAML list file (a state file, ``--change @FILE``) with their lines.

    Each fault carries its :class:`~harness.errors.Origin` too.
    """
    return _parse_items_at(path, what, _FAULT_EXAMPLE, Fault.parse)


def load_jobs(value: str, fabric: Fabric | None = None) -> list[JobSpec]:
    """``per-su`` or a YAML file listing jobs in the scenario syntax.

    With ``fabric``, the jobs are also resolved against it (problems located
    in the jobs file).
    """
    if value == "per-su":
        return [JobSpec(per_su=True)]
    jobs = _parse_items(value, "jobs", "- {name: train, nodes: su01/*}", JobSpec.parse)
    if fabric is not None:
        resolve_jobs(jobs, fabric)
    return jobs
