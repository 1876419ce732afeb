"""A drill stopped by a signal rolls back every applied fault, journals ``aborted``, and
ignores (and reports) a second signal during the rollback.

A real subprocess runs a drill on a model backend paced in real time (its ``wait``
sleeps; its ``revert`` takes 0.4 s, so the second signal lands inside the rollback).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.drill.conftest import drill_text

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    from harness.backends.model import ModelBackend
    from harness.backends.signals import Stopped, cleanup_on_signals
    from harness.run.drill.runner import run_drill
    from harness.scenario.drill_prepare import prepare_drill
    from harness.scenario.load import load_file

    class Paced(ModelBackend):
        name = "paced-model"

        def wait(self, seconds):
            time.sleep(seconds)
            super().wait(seconds)

        def revert(self, fault):
            time.sleep(0.4)
            super().revert(fault)

    (s,) = load_file(Path(sys.argv[1]))
    pd = prepare_drill(s)
    backend = Paced()
    try:
        with cleanup_on_signals():
            run_drill(pd, backend, routing=pd.prepared.routing, journal_dir=Path(sys.argv[2]))
    except KeyboardInterrupt:
        print("healthy" if backend.state.is_healthy else "left applied", flush=True)
        sys.exit(130)
    except Stopped as err:
        print("healthy" if backend.state.is_healthy else "left applied", flush=True)
        sys.exit(err.code)
    print("ended", flush=True)
""")

BODY = """\
time_limit: 1m
probes: [{name: rate, probe: job_rate, job: train, every: 100ms}]
timeline:
  - {at: 0s, inject: {drain: spine-01}, hold: 30s, as: a}
  - {at: 200ms, inject: {kill: spine-02}, hold: 30s, as: b}
"""


def _lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _wait_for(path: Path, pred: object, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(pred(r) for r in _lines(path)):  # type: ignore[operator]
            return
        time.sleep(0.02)
    msg = f"the journal {path} never showed what the test waits for"
    raise AssertionError(msg)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143),
                                              (signal.SIGHUP, 129)])  # fmt: skip
def test_a_signal_after_the_injects_rolls_back_everything(
    tmp_path: Path, signum: int, code: int
) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(drill_text(BODY))
    (tmp_path / "run.py").write_text(SCRIPT)
    j = tmp_path / "j"
    env = {**os.environ, "HARNESS_STATE_DIR": str(tmp_path / "state"), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(tmp_path / "run.py"), str(f), str(j)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip
    try:
        _wait_for(j / "journal.jsonl", lambda r: r.get("label") == "b" and r["type"] == "event")
        proc.send_signal(signum)
        _wait_for(j / "journal.jsonl", lambda r: r.get("action") == "rollback")
        proc.send_signal(signum)  # during the rollback: reported, ignored
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err
    assert out.split() == ["healthy"]
    assert err.count("cleaning up, please wait") >= 2  # the first signal and the ignored one
    doc = json.loads((j / "journal.json").read_text())
    assert doc["status"] == "aborted"
    name = signal.Signals(signum).name
    assert doc["reason"] == f"interrupted by {name}"
    undone = [(r["label"], r["status"]) for r in doc["rollback"]]
    assert undone == [("b", "rolled back"), ("a", "rolled back")]
