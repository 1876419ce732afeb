"""Suite-wide test conventions.

``@pytest.mark.needs_tools(*commands, install="...")`` marks a test that needs programs a
fresh machine may lack (ibsim, OpenSM, ...).  Where one of them is not on ``PATH``:

* on a developer machine the test is skipped, and the skip reason names the missing
  programs and the command that installs them (``pytest -ra`` lists it);
* in CI (environment variable ``CI`` set to ``true`` or ``1``, as ``.ci/run`` and every
  common CI service do) the test FAILS with the same message: CI installs these tools,
  so a missing one is a broken CI image, never a reason to pass by not running.

``@pytest.mark.privileged`` tests (network namespaces) need root: run as another user
they are skipped the same way, and fail in CI.

Hypothesis runs without its per-example deadline: timing is not a property (these
machines are shared and noisy; speed is measured in ``benchmarks/``), so a slow example
under load is never a failure.  Everything else of hypothesis's defaults holds.

``@pytest.mark.alone`` tests measure bandwidth with real TCP on the shared cores, where
another test's emulation would steal what they measure: under ``pytest -n N`` every other
test waits while one runs (a shared/exclusive lock in the run's base temporary directory,
with a turnstile so that a waiting ``alone`` test is not starved).  Without xdist tests
run one at a time anyway.

README.md ("Development") lists which tests need what.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import shutil
import sys
from collections.abc import Generator
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

settings.register_profile("harness", deadline=None)
settings.load_profile("harness")


def in_ci() -> bool:
    """True where ``CI`` is ``true``/``1`` (GitHub Actions, GitLab, ``.ci/run``)."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def _cannot_run(message: str) -> None:
    """Skip on a developer machine; fail in CI, which must run every test."""
    if in_ci():
        pytest.fail(f"{message} (CI=true: CI must provide it, the test may not skip)")
    pytest.skip(f"{message} (runs in CI)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs_tools"):
        missing = [tool for tool in mark.args if shutil.which(tool) is None]
        if not missing:
            continue
        install = mark.kwargs.get("install", "")
        how = f"; install with: {install}" if install else ""
        _cannot_run(f"needs {', '.join(missing)} on PATH{how}")
    if item.get_closest_marker("privileged") is not None and os.geteuid() != 0:
        _cannot_run("needs root (network namespaces): run pytest as root")


@contextlib.contextmanager
def _flocked(path: Path, how: int) -> Iterator[None]:
    with open(path, "a+") as fh:
        fcntl.flock(fh, how)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def _turn(config: pytest.Config, alone: bool) -> Iterator[None]:
    """Hold the run's test lock: exclusive for an ``alone`` test, shared for the others."""
    basetemp = getattr(config.option, "basetemp", None)
    if os.environ.get("PYTEST_XDIST_WORKER") is None or not basetemp:
        yield  # one test at a time already
        return
    root = Path(basetemp).parent  # the controller's base temporary directory, one per run
    turnstile = root / "alone.turnstile"
    lock = root / "alone.lock"
    with open(lock, "a+") as fh:
        with _flocked(turnstile, fcntl.LOCK_EX):  # a waiting alone test blocks newcomers
            fcntl.flock(fh, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None]:
    """Setup, call and teardown of every test inside the run's test lock (see ``alone``)."""
    with _turn(item.config, item.get_closest_marker("alone") is not None):
        yield


def _doc_blocks() -> ModuleType:
    """tests/docs/doc_blocks.py, imported from its path (this conftest loads first)."""
    path = Path(__file__).parent / "docs" / "doc_blocks.py"
    spec = importlib.util.spec_from_file_location("doc_blocks_for_summary", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a run that included the doc-example tests, say which blocks were not run."""
    ran = any(
        getattr(report, "nodeid", "").startswith("tests/docs/test_doc_examples.py::")
        for reports in terminalreporter.stats.values()
        for report in reports
    )
    if not ran:
        return
    blocks = _doc_blocks().all_blocks()
    executed = sum(1 for b in blocks if b.executed)
    not_run = [b for b in blocks if b.not_run is not None]
    terminalreporter.write_sep("-", "doc examples")
    terminalreporter.write_line(
        f"{executed} code blocks of README.md and docs/*.md executed, {len(not_run)} not run"
    )
    for b in not_run:
        terminalreporter.write_line(f"  not run: {b.where}: {b.not_run}")
