"""Turn what an audit or a state file says into faults on the design (core layer, pure).

* a state file is a YAML list of faults in the scenario syntax
  (``- kill: su02/leaf-r1``), checked with file:line:column errors;
* a live topology dump (``ibnetdiscover``, SimAI, containerlab...) is compared
  with the design (:func:`harness.importers.audit.diff_fabrics`) and every
  difference becomes a fault on the design: a missing switch is killed, a
  missing cable (or one plugged into the wrong rail's leaf) is cut, a cable
  below its design rate is degraded to the live fraction.  Extra switches and
  cables that the design does not have cannot help the design's jobs and are
  reported, not modelled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import TypeVar

import yaml

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.faults import Fault
from harness.jobs import JobSpec
from harness.selectors import Selector

T = TypeVar("T")


def _yaml_list(path: Path, what: str) -> list[tuple[Any, int]]:
    """The items of a YAML list file with their 1-based lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        msg = f"cannot read {what} file: {err.strerror}"
        raise ScenarioError(Problem(msg, str(path))) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        msg = f"not valid YAML: {getattr(err, 'problem', err)}"
        raise ScenarioError(Problem(msg, str(path), line, column)) from None
    if node is None or not isinstance(node, yaml.SequenceNode):
        msg = f"a {what} file is a YAML list, e.g. '- kill: su02/leaf-r1'"
        raise ScenarioError(Problem(msg, str(path), 1, 1))
    items = yaml.safe_load(text)
    return [(item, n.start_mark.line + 1) for item, n in zip(items, node.value, strict=True)]


def _parse_items_at(path: Path, what: str, parse: Callable[[Any], T]) -> list[tuple[T, int]]:
    """Parse every item of a YAML list file, with its line; report every bad item at once."""
    out: list[tuple[T, int]] = []
    problems: list[Problem] = []
    for item, line in _yaml_list(path, what):
        try:
            out.append((parse(item), line))
        except ScenarioError as err:
            problems.extend(Problem(p.message, str(path), line, 1) for p in err.problems)
    if problems:
        raise ScenarioError(problems)
    return out


def _parse_items(path: Path, what: str, parse: Callable[[Any], T]) -> list[T]:
    return [item for item, _ in _parse_items_at(path, what, parse)]


def load_state_file(path: Path) -> list[Fault]:
    """Faults already present, from a YAML list (every problem reported at once)."""
    return _parse_items(path, "state", Fault.parse)


def load_fault_file(path: Path, what: str = "state") -> list[tuple[Fault, int]]:
    """The faults of a YAML list file (a state file, ``--change @FILE``) with their lines."""
    return _parse_items_at(path, what, Fault.parse)


def load_jobs(value: str) -> list[JobSpec]:
    """``per-su`` or a YAML file listing jobs in the scenario syntax."""
    if value == "per-su":
        return [JobSpec(per_su=True)]
    return _parse_items(Path(value), "jobs", JobSpec.parse)


def faults_from_audit(design: Fabric, report: Any) -> tuple[list[Fault], list[str]]:
    """Faults on ``design`` that reproduce an :class:`AuditReport`, and what is not modelled."""
    from harness.faults import FaultKind

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
