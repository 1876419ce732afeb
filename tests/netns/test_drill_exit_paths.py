"""A netns drill stopped from outside rolls back and leaves the host as it was.

A real ``python -m harness drill --backend netns`` subprocess runs the rolling spine
maintenance drill (``scenarios/drill-rolling-spine-maintenance.yaml``, its netns
variant) and is stopped once its first drain is in the journal: by SIGTERM (and a
second SIGTERM during the rollback, which waits for it), or by ``harness halt --all``
(it stops within one probe period).  The journal says ``aborted`` with every applied
fault rolled back, and the host is compared with its state before, without
``harness clean``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.netns.conftest import Host
from tests.support.exit_paths import HostState
from tests.support.exit_paths import Run
from tests.support.exit_paths import assert_restored
from tests.support.exit_paths import clean_up_after

pytestmark = pytest.mark.privileged

REPO = Path(__file__).resolve().parents[2]
DRILL = REPO / "scenarios" / "drill-rolling-spine-maintenance.yaml"


@pytest.fixture
def drill(tmp_path: Path, host: Host) -> Iterator[Run]:
    r = Run(tmp_path / "state", "drill", str(DRILL), "--backend", "netns",
            "--journal", str(tmp_path / "j"))  # fmt: skip
    try:
        yield r
    finally:
        clean_up_after(r)


def _records(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # being written
            break
    return out


def _first_drain(run: Run, journal: Path) -> float:
    """Wait until the first drain is applied (in the journal); when it was seen."""
    run.wait_for("the first drain", lambda: any(
        r.get("type") == "event" and r.get("label") == "s1" for r in _records(journal)),
        timeout=120)  # fmt: skip
    return time.monotonic()


def _journal(tmp_path: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((tmp_path / "j" / "journal.json").read_text())
    return loaded


def test_sigterm_after_the_first_drain_rolls_it_back(drill: Run, tmp_path: Path) -> None:
    """The signal comes at a random moment of the first drain's 3 s hold, the second one at
    a random moment of the rollback (the seed is in the messages)."""
    seed = time.time_ns() % 2**32
    rng = random.Random(seed)
    before = HostState.now()
    _first_drain(drill, tmp_path / "j" / "journal.jsonl")
    time.sleep(rng.uniform(0.0, 2.5))
    drill.signal(signal.SIGTERM)
    drill.wait_stderr("stopping on SIGTERM")
    time.sleep(rng.uniform(0.0, 0.2))
    drill.signal(signal.SIGTERM)  # during the rollback (if not over yet): it waits for it
    assert drill.finish() == 143, f"seed {seed}: {drill.err()}"
    doc = _journal(tmp_path)
    assert doc["status"] == "aborted"
    assert doc["reason"] == "interrupted by SIGTERM"
    assert [(r["label"], r["status"]) for r in doc["rollback"]] == [("s1", "rolled back")]  # type: ignore[index,union-attr]
    assert_restored(before, drill)


def test_halt_all_stops_a_running_drill_within_a_probe_period(drill: Run, tmp_path: Path) -> None:
    before = HostState.now()
    seen = _first_drain(drill, tmp_path / "j" / "journal.jsonl")
    env = {**os.environ, "HARNESS_STATE_DIR": str(drill.state)}
    halt = subprocess.run([sys.executable, "-m", "harness", "halt", "--all"], env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert halt.returncode == 0, halt.stderr
    halted = time.monotonic()
    try:
        assert drill.finish() == 1, drill.err()  # aborted
    finally:
        subprocess.run([sys.executable, "-m", "harness", "halt", "--release"], env=env,
                       capture_output=True, check=True)  # fmt: skip
    doc = _journal(tmp_path)
    assert doc["status"] == "aborted"
    assert doc["reason"] == "halted by harness halt --all"
    abort = next(r for r in _records(tmp_path / "j" / "journal.jsonl") if r["type"] == "abort")
    # the drill looks at the lever at every probe sample (every 0.2 s here): it stopped at
    # most a period, plus the action under way (a drain settles at once), after the halt
    # (both clocks are the host's monotonic clock)
    assert float(abort["monotonic"]) - halted <= 0.2 + 0.5  # type: ignore[arg-type]
    assert halted > seen
    assert [r["label"] for r in doc["rollback"]] == ["s1"]  # type: ignore[index,union-attr]
    assert_restored(before, drill)
