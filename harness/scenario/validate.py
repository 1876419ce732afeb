"""Check scenarios without running them: what ``harness validate`` reports (scenario stage, pure).

Every scenario that loaded is :func:`~harness.scenario.prepare.prepare`-d (the
fabric built, jobs, selectors, restores and expectation arguments resolved),
the very step ``harness run`` takes before it injects anything, so both reject
a file with the same message.  Files that did not load keep their loader
problems.  :meth:`Validation.to_dict` is the ``--json`` document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ScenarioError
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.model import Scenario
from harness.scenario.prepare import prepare


@dataclass(frozen=True, slots=True)
class Invalid:
    """A file that did not load (``scenario`` empty) or a scenario that did not prepare."""

    path: str
    scenario: str
    error: ScenarioError


@dataclass(frozen=True, slots=True)
class Validation:
    """What ``harness validate`` found: the files, the scenarios that loaded, what is invalid."""

    files: tuple[str, ...]
    scenarios: tuple[str, ...]  # names of the scenarios that loaded
    invalid: tuple[Invalid, ...]

    @property
    def ok(self) -> bool:
        """Whether everything loaded and prepared."""
        return not self.invalid

    @property
    def problems(self) -> int:
        """How many problems were found, in all."""
        return sum(len(i.error.problems) for i in self.invalid)

    @property
    def bad_files(self) -> int:
        """How many files have a problem."""
        return len({i.path for i in self.invalid})

    def to_dict(self) -> dict[str, Any]:
        """The result as ``harness validate --json`` prints it."""
        return {
            "valid": self.ok,
            "files": list(self.files),
            "scenarios": list(self.scenarios),
            "problems": [
                {
                    "path": p.path or i.path,
                    "line": p.line,
                    "column": p.column,
                    "key": p.key,
                    "scenario": i.scenario or None,
                    "message": p.message,
                    "text": str(p),
                }
                for i in self.invalid
                for p in i.error.problems
            ],
        }


def validate(
    files: Sequence[Path],
    scenarios: Sequence[Scenario],
    load_errors: Sequence[tuple[Path, ScenarioError]] = (),
) -> Validation:
    """Prepare every scenario; gather the load errors and every scenario's problems."""
    invalid = [Invalid(str(path), "", err) for path, err in load_errors]
    for s in scenarios:
        try:
            if s.drill is not None:  # its events' faults and its probes too
                prepare_drill(s)
            else:
                prepare(s)
        except ScenarioError as err:
            invalid.append(Invalid(s.where.path, s.name, err))
    return Validation(
        tuple(str(f) for f in files), tuple(s.name for s in scenarios), tuple(invalid)
    )
