"""Scenario files as pytest items (a thin shell over the run stage, as the CLI is).

Installed with the package: ``pip install harness`` registers this module as
the pytest plugin ``harness`` (entry point group ``pytest11``), so any project
whose environment has harness installed collects its scenario files with plain
``pytest``; ``-p no:harness`` switches it off for one run.  Modelled on
pytest's ``doc/en/example/nonpython/conftest.py``.

Which files are collected
    The ini option ``harness_scenarios`` lists globs, relative to the
    directory of the ini file (the rootdir when there is none)::

        [tool.pytest.ini_options]
        harness_scenarios = ["checks/*.yaml", "scenarios/**/*.yaml"]

    ``*``, ``?`` and ``[...]`` match within one path segment, ``**`` matches
    any number of segments (also none).  The default is today's rule: every
    ``*.yaml`` / ``*.yml`` file below a directory named ``scenarios``,
    anywhere (``**/scenarios/**/*.yaml``, ``**/scenarios/**/*.yml``).  Other
    YAML files are left alone, so keep fabric files out of those globs (the
    reference's ``file: ../fabrics/lab.yaml``).  Only files pytest visits are
    considered (its arguments, ``testpaths``, ``norecursedirs``).

What an item is
    One scenario: ``scenarios/spines.yaml::one-spine-left``.  A file that does
    not load is one collection error that lists every problem as
    ``FILE:LINE:COLUMN: message``, without a traceback.

Options (group ``harness``)
    ``--backend NAME``: where to run (default ``model``).  A scenario whose
    ``backends:`` list excludes it is skipped, with the reason.
    ``--save-reproducer DIR``: where property tests (:mod:`harness.search.stateful`)
    write the scenario file that reproduces a failure.

Markers
    A scenario's ``tags:`` are markers of its item, registered as they are collected
    (``--strict-markers`` keeps working): ``pytest -m "spine and not bgp"`` selects.
    Tags named like pytest's own markers (:data:`BUILTIN_MARKERS`) or that are no marker
    name stay tags only.

A failed expectation is reported as plain text (the steps' story, then
expected vs observed, detail and file:line for each failed expectation); bad
input found while running (a selector that matches nothing) as its located
problems; an environment failure as one line.  pytest's own ``--junitxml``
works as for any test.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
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
from harness.run.results import ScenarioResult
from harness.run.scenario import run_scenario
from harness.scenario.load import load_file
from harness.scenario.model import Scenario
from harness.search.reproducer import ENV_SAVE

if TYPE_CHECKING:
    # Types only: pytest does not export the return type of ``repr_failure``.
    from _pytest._code.code import TerminalRepr
    from _pytest._code.code import TracebackStyle

INI_SCENARIOS = "harness_scenarios"
# Today's rule as globs: any YAML file below a directory named ``scenarios``.
DEFAULT_SCENARIO_GLOBS: tuple[str, ...] = ("**/scenarios/**/*.yaml", "**/scenarios/**/*.yml")


@dataclass(frozen=True, slots=True)
class HarnessState:
    """Per-run state, kept in ``config.stash`` (not in globals or config attributes)."""

    backend: str
    scenario_globs: tuple[re.Pattern[str], ...]
    globs_base: Path  # the globs are relative to this directory


STATE_KEY = pytest.StashKey[HarnessState]()
SAVED_ENV_KEY = pytest.StashKey[str | None]()
TAGS_KEY = pytest.StashKey[set[str]]()  # the scenario tags registered as markers


class ScenarioFailed(Exception):
    """An expectation did not hold (a result of the fabric under test)."""

    def __init__(self, result: ScenarioResult) -> None:
        self.result = result
        super().__init__(f"scenario {result.name} failed")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``harness_scenarios`` ini globs and the ``--backend`` and ``--save-reproducer``
    options."""
    parser.addini(
        INI_SCENARIOS,
        type="args",
        default=list(DEFAULT_SCENARIO_GLOBS),
        help="globs (relative to the ini file's directory; ** spans directories) of the "
        "harness scenario files to collect (default: " + " ".join(DEFAULT_SCENARIO_GLOBS) + ")",
    )
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
        "(harness.search.stateful) to DIR; the same as HARNESS_SAVE_REPRODUCER=DIR",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Keep the backend and scenario globs; point HARNESS_SAVE_REPRODUCER at
    ``--save-reproducer``."""
    globs = config.getini(INI_SCENARIOS)
    config.stash[STATE_KEY] = HarnessState(
        backend=config.getoption("backend"),
        scenario_globs=tuple(glob_regex(g) for g in globs),
        globs_base=config.inipath.parent if config.inipath is not None else config.rootpath,
    )
    directory = config.getoption("save_reproducer")
    if directory:
        # The state machines run inside hypothesis, out of reach of fixtures; the
        # environment variable is their documented channel.  Restored at unconfigure.
        config.stash[SAVED_ENV_KEY] = os.environ.get(ENV_SAVE)
        os.environ[ENV_SAVE] = str(Path(directory).resolve())


def pytest_unconfigure(config: pytest.Config) -> None:
    """Restore HARNESS_SAVE_REPRODUCER as it was before ``pytest_configure``."""
    if SAVED_ENV_KEY in config.stash:
        old = config.stash[SAVED_ENV_KEY]
        if old is None:
            os.environ.pop(ENV_SAVE, None)
        else:
            os.environ[ENV_SAVE] = old


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regular expression over ``/``-separated relative paths.

    >>> bool(glob_regex("checks/*.yaml").match("checks/spines.yaml"))
    True
    >>> bool(glob_regex("checks/*.yaml").match("checks/old/spines.yaml"))
    False
    >>> deep = glob_regex("**/scenarios/**/*.yml")
    >>> [bool(deep.match(p)) for p in ("scenarios/a.yml", "x/scenarios/b/c.yml", "a.yml")]
    [True, True, False]
    """
    parts = [p for p in pattern.strip().strip("/").split("/") if p]
    out: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment_regex(part) + ("" if last else "/"))
    return re.compile("".join(out) + r"\Z")


def _segment_regex(part: str) -> str:
    rx, j = "", 0
    while j < len(part):
        c = part[j]
        end = part.find("]", j + 2) if c == "[" else -1
        if c == "*":
            rx += "[^/]*"
        elif c == "?":
            rx += "[^/]"
        elif end != -1:
            body = part[j + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            rx += "[" + body.replace("\\", "\\\\") + "]"
            j = end
        else:
            rx += re.escape(c)
        j += 1
    return rx


def is_scenario_file(
    path: Path, base: Path, globs: Iterable[str | re.Pattern[str]] = DEFAULT_SCENARIO_GLOBS
) -> bool:
    """Whether ``path`` matches one of ``globs``, taken relative to ``base``.

    A file outside ``base`` is matched by its absolute path (so the default
    ``**/scenarios/...`` globs still apply to it).
    """
    try:
        rel = path.relative_to(base).as_posix()
    except ValueError:
        rel = path.as_posix().lstrip("/")
    patterns = (g if isinstance(g, re.Pattern) else glob_regex(g) for g in globs)
    return any(p.match(rel) for p in patterns)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ScenarioFile | None:
    """Collect a scenario file the ini globs match."""
    state = parent.config.stash[STATE_KEY]
    if is_scenario_file(file_path, state.globs_base, state.scenario_globs):
        file: ScenarioFile = ScenarioFile.from_parent(parent, path=file_path)
        return file
    return None


#: A tag usable as a marker name in ``-m`` expressions and the ``markers`` ini lines
#: (``blast-radius``, ``domain-ref-1``); others stay tags (``harness run --tag``) only.
MARKER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

#: pytest's own markers, which mean something to it: a scenario tag of one of these names
#: (``skip``, ``xfail``...) is not made a marker, or tagging would change how it runs.
BUILTIN_MARKERS = frozenset(
    {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings", "tryfirst",
     "trylast"}
)  # fmt: skip


def _mark_with_tag(config: pytest.Config, item: pytest.Item, tag: str) -> None:
    """Mark ``item`` with the scenario tag ``tag``, registered first (so ``pytest -m spine``
    selects and ``--strict-markers`` keeps working; registered as scenarios are collected,
    so ``pytest --markers``, which collects nothing, does not list them)."""
    if tag in BUILTIN_MARKERS or not MARKER_NAME.fullmatch(tag):
        return
    registered = config.stash.setdefault(TAGS_KEY, set())
    if tag not in registered:
        config.addinivalue_line("markers", f"{tag}: harness scenarios tagged {tag}")
        registered.add(tag)
    item.add_marker(getattr(pytest.mark, tag))


class ScenarioFile(pytest.File):
    """A scenario file: one item per scenario in it."""

    def collect(self) -> Iterator[ScenarioItem]:
        """One item per scenario of the file; one that does not run on ``--backend`` is marked
        skip."""
        backend = self.config.stash[STATE_KEY].backend
        for scenario in load_file(self.path):
            item: ScenarioItem = ScenarioItem.from_parent(
                self, name=scenario.name, scenario=scenario
            )
            for tag in scenario.tags:
                _mark_with_tag(self.config, item, tag)
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
        """A bad scenario file as its problems, without a traceback."""
        if isinstance(excinfo.value, ScenarioError):
            return f"bad scenario file:\n{excinfo.value}"
        return super().repr_failure(excinfo)


class ScenarioItem(pytest.Item):
    """One scenario, run on the backend chosen with ``--backend``."""

    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def runtest(self) -> None:
        """Run the scenario on ``--backend``: skip what the backend cannot inject, fail on a
        failure."""
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
        """A failed scenario as its verdict and explanation; bad input and environment errors as
        such."""
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
        """Report the scenario at its line in its file."""
        # pytest counts lines from 0 here; Location counts from 1.
        return self.path, max(self.scenario.where.line - 1, 0), f"scenario: {self.name}"
