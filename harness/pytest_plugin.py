"""Scenario files as pytest items (edge layer: a thin shell over the runner).

Enabled by the repository's root ``conftest.py``
(``pytest_plugins = ["harness.pytest_plugin"]``); elsewhere pass
``-p harness.pytest_plugin``.  Modelled on pytest's
``doc/en/example/nonpython/conftest.py``.

Which files are collected
    Every ``*.yaml`` / ``*.yml`` file below a directory named ``scenarios``
    (anywhere under the rootdir, e.g. ``scenarios/seed/spines.yaml``).  Other
    YAML files are left alone, so keep fabric files outside ``scenarios/``
    (the reference's ``file: ../fabrics/lab.yaml``).

What an item is
    One scenario: ``scenarios/spines.yaml::one-spine-left``.  A file that does
    not load is one collection error that lists every problem as
    ``FILE:LINE:COLUMN: message``, without a traceback.

Options (group ``harness``)
    ``--backend NAME``: where to run (default ``model``).  A scenario whose
    ``backends:`` list excludes it is skipped, with the reason.

A failed expectation is reported as plain text (the steps' story, then
expected vs observed, detail and file:line for each failed expectation); bad
input found while running (a selector that matches nothing) as its located
problems; an environment failure as one line.  pytest's own ``--junitxml``
works as for any test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import pytest

from harness.backends import available_backends
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.reporting.text import explain
from harness.reporting.text import failure_message
from harness.reproducer import ENV_SAVE
from harness.runner import ScenarioResult
from harness.runner import run_scenario
from harness.scenario.load import load_file
from harness.scenario.model import Scenario

if TYPE_CHECKING:
    # Types only: pytest does not export the return type of ``repr_failure``.
    from _pytest._code.code import TerminalRepr
    from _pytest._code.code import TracebackStyle

SCENARIO_DIR = "scenarios"
SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class HarnessState:
    """Per-run state, kept in ``config.stash`` (not in globals or config attributes)."""

    backend: str


STATE_KEY = pytest.StashKey[HarnessState]()
SAVED_ENV_KEY = pytest.StashKey[str | None]()


class ScenarioFailed(Exception):
    """An expectation did not hold (a result of the fabric under test)."""

    def __init__(self, result: ScenarioResult) -> None:
        self.result = result
        super().__init__(f"scenario {result.name} failed")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "harness scenarios")
    group.addoption(
        "--backend",
        choices=available_backends(),
        default="model",
        help="backend that runs the scenario files (default: model)",
    )
    group.addoption(
        "--save-reproducer",
        metavar="DIR",
        default=None,
        help="write the scenario file that reproduces a property-test failure "
        "(harness.stateful) to DIR; the same as HARNESS_SAVE_REPRODUCER=DIR",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[STATE_KEY] = HarnessState(backend=config.getoption("backend"))
    directory = config.getoption("save_reproducer")
    if directory:
        # The state machines run inside hypothesis, out of reach of fixtures; the
        # environment variable is their documented channel.  Restored at unconfigure.
        config.stash[SAVED_ENV_KEY] = os.environ.get(ENV_SAVE)
        os.environ[ENV_SAVE] = str(Path(directory).resolve())


def pytest_unconfigure(config: pytest.Config) -> None:
    if SAVED_ENV_KEY in config.stash:
        old = config.stash[SAVED_ENV_KEY]
        if old is None:
            os.environ.pop(ENV_SAVE, None)
        else:
            os.environ[ENV_SAVE] = old


def is_scenario_file(path: Path, rootpath: Path) -> bool:
    """A ``*.yaml``/``*.yml`` file below a directory named ``scenarios``."""
    if path.suffix not in SUFFIXES:
        return False
    try:
        parts = path.relative_to(rootpath).parts[:-1]
    except ValueError:
        parts = path.parts[:-1]
    return SCENARIO_DIR in parts


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    if is_scenario_file(file_path, parent.config.rootpath):
        file: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
        return file
    return None


class ScenarioFile(pytest.File):
    """A scenario file: one item per scenario in it."""

    def collect(self) -> Iterator[ScenarioItem]:
        backend = self.config.stash[STATE_KEY].backend
        for scenario in load_file(self.path):
            item: ScenarioItem = ScenarioItem.from_parent(
                self, name=scenario.name, scenario=scenario
            )
            if backend not in scenario.backends:
                # A mark, not pytest.skip() in runtest: the report then points
                # at the scenario (reportinfo), not at this plugin.
                backends = ", ".join(scenario.backends)
                reason = f"scenario runs on {backends}, not on --backend {backend}"
                item.add_marker(pytest.mark.skip(reason=reason))
            yield item

    def repr_failure(  # type: ignore[override]  # as pytest's own Collector.repr_failure
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, ScenarioError):
            return f"bad scenario file:\n{excinfo.value}"
        return super().repr_failure(excinfo)


class ScenarioItem(pytest.Item):
    """One scenario, run on the backend chosen with ``--backend``."""

    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def runtest(self) -> None:
        result = run_scenario(self.scenario, self.config.stash[STATE_KEY].backend)
        if result.status == "skipped":  # the backend cannot inject this scenario's faults
            pytest.skip(result.error)
        if not result.passed:
            raise ScenarioFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        err = excinfo.value
        if isinstance(err, ScenarioFailed):
            # The first line is what ``-r`` summaries and JUnit messages show.
            return f"{failure_message(err.result)}\n{explain(err.result)}"
        if isinstance(err, ScenarioError):
            return f"bad input in scenario {self.scenario.name}:\n{err}"
        if isinstance(err, BackendError):
            return f"environment error (not the scenario, not the fabric): {err}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        # pytest counts lines from 0 here; Location counts from 1.
        return self.path, max(self.scenario.where.line - 1, 0), f"scenario: {self.name}"
