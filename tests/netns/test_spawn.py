"""Programs launched held as a group: all recorded in one write before any runs, or none runs."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from harness.backends.ledger import Entry
from harness.backends.ledger import Ledger
from harness.backends.netns import spawn
from harness.backends.netns.spawn import Launch
from harness.backends.netns.spawn import spawn_held_many
from harness.backends.processes import Tracked
from harness.backends.processes import check_tracked
from harness.backends.processes import tracked


def _launches(tmp_path: Path, n: int) -> list[Launch]:
    return [
        Launch(None, ("/bin/sh", "-c", f"echo ran {k}"), tmp_path / f"{k}.out") for k in range(n)
    ]


def test_a_group_is_recorded_in_one_write_while_every_launcher_is_held(tmp_path: Path) -> None:
    led = Ledger.create("test", root=tmp_path / "state")
    launches = _launches(tmp_path, 3)
    writes: list[int] = []

    def record(pids: list[int]) -> None:
        # every launcher is still held: the launcher's command line, nothing run yet (read as
        # tracked() reads it: /proc/PID/cmdline is empty until the kernel has set the arguments)
        assert all(tracked(p, "held")["cmdline"][3].endswith("spawn.py") for p in pids)
        assert all(x.out.read_bytes() == b"" for x in launches)
        writes.append(len(pids))
        led.record_many([
            Entry("process", str(p), tracked(p, "test", x.argv))
            for p, x in zip(pids, launches, strict=True)
        ])  # fmt: skip

    try:
        held = spawn_held_many(launches, record)
        assert writes == [3]  # one ledger write (one fsync) for the whole group
        entries = led.entries("process")
        assert [e.name for e in entries] == [str(h.proc.pid) for h in held]
        assert all(check_tracked(int(e.name), e.data).verdict is Tracked.MINE for e in entries)
        assert [h.go().wait(timeout=10) for h in held] == [0, 0, 0]
        assert [x.out.read_text() for x in launches] == [f"ran {k}\n" for k in range(3)]
    finally:
        led.release()


def test_a_group_whose_record_fails_never_runs(tmp_path: Path) -> None:
    launches = _launches(tmp_path, 3)
    pids: list[int] = []

    def record(got: list[int]) -> None:
        pids.extend(got)
        msg = "the ledger's disk is full"
        raise OSError(msg)

    with pytest.raises(OSError, match="disk is full"):
        spawn_held_many(launches, record)
    assert len(pids) == 3
    for pid in pids:  # each launcher read end-of-file, exited and was reaped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert all(x.out.read_bytes() == b"" for x in launches)  # nothing ran


def test_the_launchers_sigterm_is_the_hosts() -> None:
    assert spawn.SIGTERM == signal.SIGTERM  # the launcher does not import signal
