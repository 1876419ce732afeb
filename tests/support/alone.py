"""The ``alone`` lock: under ``pytest -n N`` no other test runs while an ``alone`` test does.

``@pytest.mark.alone`` tests measure bandwidth with real TCP on the shared cores, where
another test's emulation would steal what they measure: under ``pytest -n N`` every other
test waits while one runs (a shared/exclusive lock in the run's base temporary directory,
with a turnstile so that a waiting ``alone`` test is not starved).  Without xdist tests
run one at a time anyway.

A plugin of the suite, registered in the root ``conftest.py``
(``tests/suite/test_alone.py`` runs it in a real ``pytest -n 2`` session).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Generator
from collections.abc import Iterator
from pathlib import Path

import pytest


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
