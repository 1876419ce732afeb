"""Processes a run starts: zombies are dead, our children stop at once, and `harness clean`
ends only the processes that are still what the ledger recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.ledger import Ledger
from harness.backends.ledger import teardown_entries
from harness.backends.processes import Tracked
from harness.backends.processes import check_tracked
from harness.backends.processes import kill_process
from harness.backends.processes import process_alive
from harness.backends.processes import process_info
from harness.backends.processes import process_start_ticks
from harness.backends.processes import tracked


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A child that sleeps until it is ended (and is reaped, whatever the test did)."""
    p = subprocess.Popen(["sleep", "100"])
    try:
        yield p
    finally:
        p.kill()
        p.wait()


def _wait_exited(pid: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        info = process_info(pid)
        if info is None or info.exited:
            return
        time.sleep(0.005)
    pytest.fail(f"process {pid} did not exit")


def test_kill_process_on_our_own_child_returns_at_once(
    sleeper: subprocess.Popen[bytes],
) -> None:
    t0 = time.monotonic()
    assert kill_process(sleeper.pid, process_start_ticks(sleeper.pid))
    took = time.monotonic() - t0
    assert took < 0.5, f"kill_process took {took:.2f} s"
    # the child was not reaped behind Popen's back: its exit status is still the signal
    assert sleeper.wait(timeout=5) == -signal.SIGTERM


def test_a_zombie_is_dead(sleeper: subprocess.Popen[bytes]) -> None:
    ticks = process_start_ticks(sleeper.pid)
    assert ticks is not None
    assert process_alive(sleeper.pid, ticks)
    os.kill(sleeper.pid, signal.SIGTERM)
    _wait_exited(sleeper.pid)
    info = process_info(sleeper.pid)
    assert info is not None
    assert info.state == "Z"  # not reaped yet: still in /proc
    assert not process_alive(sleeper.pid, ticks)
    assert not kill_process(sleeper.pid, ticks)  # nothing to end


def test_a_child_ignoring_sigterm_is_killed_after_the_timeout() -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print(1, flush=True); time.sleep(100)"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert p.stdout is not None
        assert p.stdout.readline()
        t0 = time.monotonic()
        ticks = process_start_ticks(p.pid)
        assert ticks is not None
        assert kill_process(p.pid, ticks, timeout=0.2)
        assert not process_alive(p.pid, ticks)  # gone when it returns (clean promises that)
        assert p.wait(timeout=5) == -signal.SIGKILL
        assert time.monotonic() - t0 < 2
    finally:
        p.kill()
        p.wait()
        if p.stdout is not None:
            p.stdout.close()


def test_a_tracked_process_is_recognised_by_its_command_line_and_parent(
    sleeper: subprocess.Popen[bytes],
) -> None:
    data = tracked(sleeper.pid, "a sleeper")
    assert data["cmdline"] == ["sleep", "100"]
    assert data["parent"] == {"pid": os.getpid(), "start_ticks": process_start_ticks(os.getpid())}
    assert check_tracked(sleeper.pid, data).verdict is Tracked.MINE
    # a launcher recorded before its exec: the program it execs is its own too
    launcher = {**data, "cmdline": ["python", "spawn.py", "--", "sleep", "100"]}
    assert check_tracked(sleeper.pid, launcher).verdict is Tracked.NOT_MINE
    assert check_tracked(sleeper.pid, {**launcher, "execs": ["sleep", "100"]}).verdict is (
        Tracked.MINE
    )
    # a reused PID (another start time) is not the process recorded: gone, never signalled
    reused = {**data, "start_ticks": data["start_ticks"] - 1}
    assert check_tracked(sleeper.pid, reused).verdict is Tracked.GONE


@pytest.mark.parametrize(
    ("forge", "why"),
    [
        (lambda d: {**d, "cmdline": ["zebra", "-N", "x"]}, "command line is 'sleep 100'"),
        (lambda d: {k: v for k, v in d.items() if k != "cmdline"}, "no command line"),
        (lambda d: {**d, "cmdline": []}, "no command line"),
        (lambda d: {k: v for k, v in d.items() if k != "start_ticks"}, "no start time"),
        (lambda d: {k: v for k, v in d.items() if k != "parent"}, "no parent"),
        # started by a process that still runs, but not its parent: not the one started
        (
            lambda d: {**d, "parent": {"pid": 1, "start_ticks": process_start_ticks(1)}},
            "its parent is",
        ),
        # a parent that started after it cannot have started it
        (
            lambda d: {**d, "parent": {"pid": 99, "start_ticks": d["start_ticks"] + 1}},
            "started before its recorded parent",
        ),
    ],
)
def test_what_does_not_identify_the_process_is_refused(
    sleeper: subprocess.Popen[bytes], forge: object, why: str
) -> None:
    assert callable(forge)
    check = check_tracked(sleeper.pid, forge(tracked(sleeper.pid, "a sleeper")))
    assert check.verdict is Tracked.NOT_MINE
    assert why in check.why


def _dead_run(root: Path) -> Ledger:
    """A run whose owner has exited (so `harness clean` takes it on)."""
    env = {**os.environ, "HARNESS_STATE_DIR": str(root)}
    code = "from harness.backends.ledger import Ledger; print(Ledger.create('test').run_id)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return Ledger(out.stdout.strip(), root)


def test_clean_refuses_forged_process_entries_and_ends_the_real_one(tmp_path: Path) -> None:
    root = tmp_path / "state"
    run = _dead_run(root)
    foreign = subprocess.Popen(["sleep", "101"])  # not the run's: it must survive
    ours = subprocess.Popen(["sleep", "102"])
    try:
        real = tracked(foreign.pid, "forged")
        run.record("process", str(foreign.pid), **{**real, "cmdline": ["zebra"]})
        run.record("process", str(foreign.pid), start_ticks=real["start_ticks"], what="bare")
        run.record("process", str(foreign.pid), **{**real, "start_ticks": 7})  # reused PID
        run.record("process", "../1", **real)
        run.record("process", str(ours.pid), **tracked(ours.pid, "the run's own"))
        env = {**os.environ, "HARNESS_STATE_DIR": str(root)}
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "harness", "clean"],
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
        took = time.monotonic() - t0
        assert done.returncode == 3, done.stderr  # a ledger that asked for more is reported
        assert foreign.poll() is None, "a process the run did not start was ended"
        assert ours.wait(timeout=5) == -signal.SIGTERM
        assert took < 5, f"clean took {took:.1f} s"
        refusals = [x for x in done.stderr.splitlines() if "refus" in x]
        assert len(refusals) == 3, done.stderr  # each once, the reused PID is simply gone
        assert "refused ledger entry: process '../1' is not a PID" in refusals[0]
        assert f"refusing process {foreign.pid} (forged)" in refusals[1]
        assert "its command line is 'sleep 101'" in refusals[1]
        assert "(bare)" in refusals[2]
        assert "no command line" in refusals[2]
        assert not run.dir.exists()
    finally:
        for p in (foreign, ours):
            p.kill()
            p.wait()


def test_teardown_notes_its_refusals_in_the_ledger(
    sleeper: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    run = Ledger.create("test", root=tmp_path / "state")
    run.record("process", str(sleeper.pid), **{**tracked(sleeper.pid, "x"), "cmdline": ["y"]})
    assert teardown_entries(run) == []
    assert len(run.refused) == 1
    assert f"process {sleeper.pid} (x)" in run.refused[0]
    assert sleeper.poll() is None
    run.release()
