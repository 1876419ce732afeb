"""Turn what an audit or a state file says into faults on the design (core layer, pure).

* a state file is a YAML list of faults in the scenario syntax
  (``- kill: su02/leaf-r1``), checked with file:line:column errors;
* a live topology dump (``ibnetdiscover``, SimAI, containerlab...) is compared
  with the design (:func:`harness.planning.audit.diff.diff_fabrics`) and every
  difference becomes a fault on the design: a missing switch is killed, a
  missing cable (or one plugged into the wrong rail's leaf) is cut, a cable
  below its design rate is degraded to the live fraction.  Extra switches and
  cables that the design does not have cannot help the design's jobs and are
  reported, not modelled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

from harness.errors import Origin
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.faults.fault import Fault
from harness.faults.selectors import Selector
from harness.inputs.yaml import read_yaml_list

T = TypeVar("T")


def _parse_items_at(
    path: Path | str, what: str, example: str, parse: Callable[[Any], T]
) -> list[tuple[T, int]]:
    """Parse every item of a YAML list file, with its line; report every bad item at once.

    Every parsed item carries its :class:`~harness.errors.Origin` (file, line,
    column), so problems found later, when it is resolved against a
    fabric, still name the file and the line.
    """
    doc, items = read_yaml_list(path, what, example)
    out: list[tuple[T, int]] = []
    problems: list[Problem] = []
    for i, item in enumerate(items):
        line, column = doc.position((i,))
        origin = Origin(doc.path, line, column)
        try:
            parsed = parse(item)
        except ScenarioError as err:
            problems.extend(origin.locate(err).problems)
            continue
        out.append((dataclasses.replace(parsed, origin=origin), line))  # type: ignore[type-var]
    if problems:
        raise ScenarioError(problems)
    return out


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


def faults_from_audit(design: Fabric, report: Any) -> tuple[list[Fault], list[str]]:
    """Faults on ``design`` that reproduce an :class:`AuditReport`, and what is not modelled."""
    from harness.faults.fault import FaultKind

    faults: list[Fault] = []
    notes: list[str] = []
    for sw in report.missing_switches:
        faults.append(Fault(FaultKind.KILL, Selector(ids=(sw,))))
    for cable in report.missing_links:
        if cable in design.link_index:
            faults.append(Fault(FaultKind.CUT, Selector(ids=(cable,))))
        else:
            notes.append(f"missing link {cable} is not a design cable id; not modelled")
    for d in report.degraded_links:
        if d.design in design.link_index and d.design_gbps > 0:
            fraction = d.live_gbps / d.design_gbps
            if 0 < fraction < 1:
                faults.append(Fault(FaultKind.DEGRADE, Selector(ids=(d.design,)), fraction))
    for w in report.wrong_rail:
        notes.append(
            f"{w.nic} (rail {w.nic_rail}) is cabled to {w.leaf} (rail {w.leaf_rail}); "
            "its design cable counts as missing"
        )
    for sw in report.extra_switches:
        notes.append(f"extra switch {sw} is not in the design; not modelled")
    for cable in report.extra_links:
        notes.append(f"extra link {cable} is not in the design; not modelled")
    # a switch killed and its cables cut: keep both (cutting a dead switch's cable is harmless)
    return faults, notes
