"""The gloo fork server is in the ledger before it runs, like every process of a run."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from harness.backends.ledger import Ledger
from harness.backends.netns.job_runs import start_fork_server
from harness.backends.processes import Tracked
from harness.backends.processes import check_tracked
from harness.backends.processes import kill_process
from harness.backends.processes import process_cmdline


def test_the_fork_server_is_recorded_while_it_is_still_held(tmp_path: Path) -> None:
    led = Ledger.create("test", root=tmp_path / "state")
    server = start_fork_server(led, tmp_path / "server.log")
    pid = server.proc.pid
    try:
        [entry] = led.entries("process")
        assert entry.name == str(pid)
        assert entry.data["what"] == "gloo fork server"
        # written while the launcher held it, before it ran anything of its own
        assert entry.data["cmdline"][3].endswith("spawn.py")
        assert entry.data["execs"][1:3] == ["-m", "harness.backends.netns.job_worker"]
        deadline = time.monotonic() + 10
        while process_cmdline(pid) != entry.data["execs"]:
            assert time.monotonic() < deadline, process_cmdline(pid)
            time.sleep(0.005)
        # it runs the program recorded: `harness clean` would end it
        assert check_tracked(pid, entry.data).verdict is Tracked.MINE
    finally:
        kill_process(pid, server.start_ticks)
        server.proc.wait()
        server.commands.close()
        server.replies.close()
        led.release()


def test_a_fork_server_that_cannot_be_recorded_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    led = Ledger.create("test", root=tmp_path / "state")
    held: list[int] = []
    started: list[subprocess.Popen[bytes]] = []

    class Popen(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(subprocess, "Popen", Popen)

    def refuse(pid: int, what: str, execs: object = None) -> int | None:
        held.append(pid)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(led, "track_process", refuse)
    with pytest.raises(OSError, match="No space left"):
        start_fork_server(led, tmp_path / "server.log")
    [launcher] = started
    assert held == [launcher.pid]
    # the launcher, told nothing, exited at once (and was reaped) without exec'ing anything
    assert launcher.returncode == 1
    assert led.entries("process") == []
    led.release()
