"""``harness emulate down`` with nothing up is bad input: exit 2, one line saying what to do.

A real ``python -m harness`` subprocess on a ledger root of the test's own (the
signals' exit codes are tested on real runs: tests/netns/test_exit_paths.py,
tests/ibsim/test_exit_paths.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _harness(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HARNESS_STATE_DIR": str(tmp_path / "state")}
    return subprocess.Popen(
        [sys.executable, "-m", "harness", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def test_emulate_down_with_nothing_up_is_bad_input(tmp_path: Path) -> None:
    proc = _harness(tmp_path, "emulate", "down", "fabrics/tiny-explicit.yaml")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert err.splitlines() == [
        "error: no emulation of 'tiny-explicit' is up: nothing to take down (see "
        "`harness emulate status` for what is up; `harness emulate up FABRIC` brings one up)"
    ]
    assert out == ""
