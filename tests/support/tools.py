"""Gating of tests on what the machine has: programs on ``PATH`` and root.

``@pytest.mark.needs_tools(*commands, install="...")`` marks a test that needs programs a
fresh machine may lack (ibsim, OpenSM, ...).  Where one of them is not on ``PATH``:

* on a developer machine the test is skipped, and the skip reason names the missing
  programs and the command that installs them (``pytest -ra`` lists it);
* in CI (environment variable ``CI`` set to ``true`` or ``1``, as ``.ci/run`` and every
  common CI service do) the test FAILS with the same message: CI installs these tools,
  so a missing one is a broken CI image, never a reason to pass by not running.

``@pytest.mark.privileged`` tests (network namespaces) need root: run as another user
they are skipped the same way, and fail in CI.

A plugin of the suite, registered in the root ``conftest.py``.  README.md ("Development")
lists which tests need what.
"""

from __future__ import annotations

import os
import shutil

import pytest


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
