"""``harness risk --margin none|1`` and progress that knows its total, as a user runs them.

Real ``python -m harness`` processes on the smallest fabric: ``--margin none``
judges the change alone (no N+1 table, and it says so), contradicting
``--require-margin 1`` is bad input (exit 2), and the first progress line of
a sweep and of an N+1 margin already states how many cases there are.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "fabrics" / "tiny-explicit.yaml")


def harness(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_PROGRESS_INTERVAL": "0", "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "harness", *argv],
        capture_output=True, text=True, check=False, env=env, cwd=ROOT,
    )  # fmt: skip


def test_margin_none_judges_the_change_alone_and_says_so() -> None:
    got = harness("risk", TINY, "--change", "drain spine1", "--margin", "none")
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("WITHIN BUDGET  tiny-explicit: drained spine1")
    assert "N+1" not in got.stdout
    assert "note: --margin none: the change alone is judged" in got.stderr
    assert "N+1 margin:" not in got.stderr  # no case evaluated, no progress line
    with_margin = harness("risk", TINY, "--change", "drain spine1")
    assert with_margin.returncode == 0, with_margin.stderr
    assert "N+1: single further failures" in with_margin.stdout


def test_margin_none_with_require_margin_is_bad_input() -> None:
    got = harness("risk", TINY, "--change", "drain spine1", "--margin", "none",
                  "--require-margin", "1")  # fmt: skip
    assert got.returncode == 2
    assert "--require-margin 1 judges the N+1 margin, which --margin none skips" in got.stderr
    assert "Traceback" not in got.stderr


def test_progress_states_the_total_from_the_first_line() -> None:
    sweep = harness("sweep", TINY)
    assert sweep.returncode == 0, sweep.stderr
    lines = [x for x in sweep.stderr.splitlines() if x.startswith("sweep:")]
    assert lines[0].startswith("sweep: 0 of 15 cases")
    assert lines[-1].startswith("sweep: 15 of 15 cases (100%)")
    risk = harness("risk", TINY, "--change", "drain spine1")
    lines = [x for x in risk.stderr.splitlines() if x.startswith("N+1 margin:")]
    assert lines[0].startswith("N+1 margin: 0 of 62 cases")
    assert lines[-1].startswith("N+1 margin: 62 of 62 cases (100%)")
