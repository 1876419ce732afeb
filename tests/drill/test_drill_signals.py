"""A drill stopped by a signal rolls back every applied fault, journals ``aborted``, and
ignores (and reports) a second signal during the rollback.

A real subprocess runs a drill on a model backend paced in real time (its ``wait``
sleeps; its ``revert`` takes 0.4 s, so the second signal lands inside the rollback).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.faults.fault import AppliedFault
from tests.drill.conftest import drill_text

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""\
    import sys, time
    from pathlib import Path
    from harness.backends.model import ModelBackend
    from harness.backends.signals import Stopped, cleanup_on_signals, exit_now
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
        with cleanup_on_signals(then_ignore=True):  # as the harness command: a late one is ignored
            run_drill(pd, backend, routing=pd.prepared.routing, journal_dir=Path(sys.argv[2]))
    except KeyboardInterrupt:
        print("healthy" if backend.state.is_healthy else "left applied", flush=True)
        exit_now(130)  # as the harness command ends: a late signal cannot change the code
    except Stopped as err:
        print("healthy" if backend.state.is_healthy else "left applied", flush=True)
        exit_now(err.code)
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


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """The paced drill running in a subprocess; its journal directory."""
    f = tmp_path / "d.yaml"
    f.write_text(drill_text(BODY))
    (tmp_path / "run.py").write_text(SCRIPT)
    j = tmp_path / "j"
    env = {**os.environ, "HARNESS_STATE_DIR": str(tmp_path / "state"), "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(tmp_path / "run.py"), str(f), str(j)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)  # fmt: skip
    return proc, j


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143),
                                              (signal.SIGHUP, 129)])  # fmt: skip
def test_a_signal_after_the_injects_rolls_back_everything(
    tmp_path: Path, signum: int, code: int
) -> None:
    proc, j = _start(tmp_path)
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


def _applied_not_restored(records: list[dict[str, object]]) -> list[str]:
    """The labels the journal says were being applied, or applied, and not restored before
    the abort, newest first: what the rollback must undo (an inject the signal cut short
    is in it too, as ``action`` without its ``event``)."""
    applied: list[str] = []
    for r in records:
        if r["type"] == "abort":
            break
        if r["type"] == "action" and r.get("action") == "inject":
            applied.append(str(r["label"]))
        elif r["type"] == "event" and r.get("action") == "restore":
            applied.remove(str(r["label"]))
    return applied[::-1]


@pytest.mark.parametrize("draw", range(3))
def test_signals_at_random_points_roll_back_what_was_applied(tmp_path: Path, draw: int) -> None:
    """One to three signals of random kinds: the first at a random moment after the first
    inject (before, between or after the second), the others at random moments of the
    rollback.  Whatever the draw, the drill exits with the first signal's code, journals
    ``aborted`` and rolls back exactly what it had applied (the seed is in every message)."""
    seed = time.time_ns() % 2**32 + draw
    rng = random.Random(seed)
    kinds = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
    first, code = rng.choice(kinds)
    more = [rng.choice(kinds)[0] for _ in range(rng.randint(0, 2))]
    proc, j = _start(tmp_path)
    try:
        _wait_for(j / "journal.jsonl", lambda r: r.get("label") == "a" and r["type"] == "event")
        time.sleep(rng.uniform(0.0, 0.6))  # the second inject comes 0.2 s after the first
        proc.send_signal(first)
        if more:
            _wait_for(j / "journal.jsonl", lambda r: r["type"] in ("rollback", "end"))
        for s in more:
            time.sleep(rng.uniform(0.0, 0.3))  # a revert takes 0.4 s
            if proc.poll() is None:
                proc.send_signal(s)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = (
        f"seed {seed}: {signal.Signals(first).name}, then {[signal.Signals(s).name for s in more]}"
    )
    assert proc.returncode == code, f"{said}\n{err}"
    assert out.split() == ["healthy"], said
    doc = json.loads((j / "journal.json").read_text())
    assert doc["status"] == "aborted", said
    assert doc["reason"] == f"interrupted by {signal.Signals(first).name}", said
    undone = [(r["label"], r["status"]) for r in doc["rollback"]]
    want = _applied_not_restored(_lines(j / "journal.jsonl"))
    assert want, said  # the first inject was in the journal before the signal
    assert [label for label, _ in undone] == want, said
    cut_short = "not applied (its inject was cut short)"
    assert all(st == "rolled back" or (st == cut_short and label == want[0])
               for label, st in undone), said  # fmt: skip


def test_an_inject_cut_short_is_rolled_back_as_not_applied(tmp_path: Path) -> None:
    """A signal inside the second inject, before the backend applied it: the rollback tries
    it first (a real backend may have done half) and records it as not applied, then rolls
    back the first; the journal says ``aborted`` and nothing stays applied."""
    from harness.backends.model import ModelBackend
    from harness.run.drill.runner import run_drill
    from harness.scenario.drill_prepare import prepare_drill
    from tests.drill.conftest import drill

    class CutShort(ModelBackend):
        def inject(self, fault: AppliedFault) -> None:
            if self.state.applied:  # the second one
                raise KeyboardInterrupt
            super().inject(fault)

    pd = prepare_drill(drill(BODY))
    backend = CutShort()
    with pytest.raises(KeyboardInterrupt):
        run_drill(pd, backend, routing=pd.prepared.routing, journal_dir=tmp_path)
    assert backend.state.is_healthy
    doc = json.loads((tmp_path / "journal.json").read_text())
    assert doc["status"] == "aborted"
    assert [(r["label"], r["status"]) for r in doc["rollback"]] == [
        ("b", "not applied (its inject was cut short)"),
        ("a", "rolled back"),
    ]
