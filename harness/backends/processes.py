"""Processes a run starts: who they are in /proc, whether they live, how they are ended.

A process is named by its PID *and* its start time (clock ticks since boot,
field 22 of ``/proc/PID/stat``), so a reused PID is never taken for it.  A
zombie (exited, not yet reaped by its parent) is dead: it can take no signal
and runs nothing, so :func:`kill_process` returns as soon as the process has
exited instead of waiting for its parent to reap it.  Nothing here reaps a
child: the object that started it (a ``subprocess.Popen``, whose ``wait()``
would otherwise see ``ECHILD`` and report exit status 0) keeps its exit status.

:func:`tracked` is what the ledger writes for a process it is told of (PID,
start time, command line, the program it will ``exec``, its parent) and
:func:`check_tracked` is what ``harness clean`` asks before it ends one: a
process is ended only when it is still the one recorded; an entry that names
a live process which is not what was recorded (another command line, another
parent, no command line at all) is refused and reported, never signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

#: ``/proc/PID/stat`` states of a process that has exited (zombie, dead).
_EXITED = frozenset("ZX")


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """What /proc says about one process now."""

    pid: int
    state: str  # R, S, D, Z (zombie), ...
    ppid: int
    start_ticks: int

    @property
    def exited(self) -> bool:
        """Whether it has exited (a zombie waiting for its parent, or dead)."""
        return self.state in _EXITED


def process_info(pid: int) -> ProcessInfo | None:
    """State, parent and start time of ``pid``; None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # the command may contain spaces and parentheses: fields start after the last ')'
    rest = stat[stat.rindex(")") + 2 :].split()
    return ProcessInfo(pid, rest[0], int(rest[1]), int(rest[19]))


def process_start_ticks(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot, None if it is gone."""
    info = process_info(pid)
    return None if info is None else info.start_ticks


def process_alive(pid: int, start_ticks: int) -> bool:
    """True when ``pid`` is still the process that started at ``start_ticks`` and has not
    exited (a zombie is dead)."""
    info = process_info(pid)
    return info is not None and info.start_ticks == start_ticks and not info.exited


def process_cmdline(pid: int) -> list[str] | None:
    """The command line of ``pid`` (its ``argv``), None if it is gone or has none (a zombie,
    a kernel thread)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    if not raw:
        return None
    return [a.decode(errors="surrogateescape") for a in raw.rstrip(b"\0").split(b"\0")]


def process_alive_owner(owner: Mapping[str, Any]) -> bool:
    """Whether the process an owner record names still runs (the same process, not a reused PID)."""
    start = owner.get("start_ticks")
    return start is not None and process_alive(int(owner["pid"]), int(start))


KILL_WAIT_S = 5.0  # how long a SIGKILLed process is given to exit before kill_process returns


def kill_process(pid: int, start_ticks: int | None, timeout: float = 3.0) -> bool:
    """SIGTERM then SIGKILL one process, only if it is still the one recorded.

    Returns as soon as the process has exited (a zombie counts: its parent reaps
    it), SIGKILLs it after ``timeout`` seconds and then waits, up to
    :data:`KILL_WAIT_S`, until it has exited (a SIGKILL takes effect only when
    the process next runs: a busy host can leave it alive for a moment, and a
    caller such as ``harness clean`` promises it is gone); False if it was
    already gone.
    """
    if start_ticks is None or not process_alive(pid, start_ticks):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    pause = 0.001
    while time.monotonic() < deadline:
        if not process_alive(pid, start_ticks):
            return True
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
    if process_alive(pid, start_ticks):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + KILL_WAIT_S
        while process_alive(pid, start_ticks) and time.monotonic() < deadline:
            time.sleep(0.01)
    return True


# -- what the ledger records of a process, and the check before it is ended ---------------


def tracked(pid: int, what: str, execs: Sequence[str] | None = None) -> dict[str, Any]:
    """The ledger data of a process this run started: start time, command line, parent.

    ``execs`` is the command line of the program the process will ``exec`` (a
    launcher held until it is recorded); either command line is the process's own.
    """
    info = process_info(pid)
    data: dict[str, Any] = {
        "start_ticks": None if info is None else info.start_ticks,
        "what": what,
        "cmdline": None if info is None else _settled_cmdline(pid, info.start_ticks),
    }
    if execs is not None:
        data["execs"] = list(execs)
    if info is not None:
        data["parent"] = {"pid": info.ppid, "start_ticks": process_start_ticks(info.ppid)}
    return data


def _settled_cmdline(pid: int, start_ticks: int, wait: float = 1.0) -> list[str] | None:
    """The command line of a live process, once it has one.

    ``Popen`` returns as soon as ``exec`` closes the child's close-on-exec pipe,
    which the kernel does before it has set the new program's arguments: read
    then, ``/proc/PID/cmdline`` is empty (seen under load), and a ledger entry
    without a command line is one a teardown must refuse.
    """
    deadline = time.monotonic() + wait
    while True:
        cmdline = process_cmdline(pid)
        if cmdline is not None or time.monotonic() > deadline:
            return cmdline
        if not process_alive(pid, start_ticks):
            return None
        time.sleep(0.001)


class Tracked(Enum):
    """What a recorded process is now."""

    GONE = "gone"  # exited, or its PID belongs to a process started since
    MINE = "mine"  # still the process recorded: end it
    NOT_MINE = "not mine"  # a live process that is not what was recorded: refuse it


@dataclass(frozen=True, slots=True)
class Check:
    """The verdict on one recorded process, and why."""

    verdict: Tracked
    why: str = ""


def check_tracked(pid: int, data: Mapping[str, Any]) -> Check:
    """Whether ``pid`` is still the process recorded with ``data`` (by :func:`tracked`).

    ``NOT_MINE`` when the ledger lacks what identifies a process (start time,
    command line, parent), or the live process at that PID and start time has
    another command line, or another parent than the one it was started by
    while that one still runs, or started before it.
    """
    start = data.get("start_ticks")
    if not isinstance(start, int) or isinstance(start, bool):
        return Check(Tracked.NOT_MINE, "the ledger gives no start time")
    info = process_info(pid)
    if info is None or info.start_ticks != start or info.exited:
        return Check(Tracked.GONE)
    recorded = [c for c in (data.get("cmdline"), data.get("execs")) if _argv(c)]
    if not recorded:
        return Check(Tracked.NOT_MINE, "the ledger gives no command line")
    now = process_cmdline(pid)
    if now not in recorded:
        shown = " ".join(now or ["(none)"])
        return Check(Tracked.NOT_MINE, f"its command line is {shown!r}, not the one recorded")
    parent = data.get("parent")
    if not isinstance(parent, Mapping) or not all(
        isinstance(parent.get(k), int) for k in ("pid", "start_ticks")
    ):
        return Check(Tracked.NOT_MINE, "the ledger gives no parent")
    ppid, pticks = int(parent["pid"]), int(parent["start_ticks"])
    if start < pticks:
        return Check(Tracked.NOT_MINE, f"it started before its recorded parent {ppid}")
    if info.ppid != ppid and process_alive(ppid, pticks):
        # a process changes parent only when its parent ends (it is then re-parented)
        return Check(Tracked.NOT_MINE, f"its parent is {info.ppid}, not {ppid} which started it")
    return Check(Tracked.MINE)


def _argv(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(a, str) for a in value)
