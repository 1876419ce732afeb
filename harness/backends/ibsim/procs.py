"""ibsim and OpenSM as processes the run owns: in the ledger before they run, ended by PID.

A process is started as ``sh -c 'read go; exec "$@"'``: the shell is
spawned, its PID (which ``exec`` hands to the program) and start time are
written to the run's ledger, and only then is it told to go (a line on its
stdin; ``read`` takes no byte past that line, so ibsim's console gets the rest).  So the ledger
names every process before the program runs (a shell that could not be recorded is
ended instead), and ``harness clean`` can end it by PID (and start time, so a reused
PID is never hit) after a crash.  Callers start one inside
:func:`~harness.backends.signals.deferring_signals`, so a signal never lands between
the start and the caller holding the :class:`Owned` it must stop.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from harness.backends.ledger import Ledger
from harness.backends.processes import kill_process
from harness.errors import BackendError

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
_GO = 'read go; exec "$@"'


@dataclass(slots=True)
class Owned:
    """A process this run started: its Popen, PID, start time and log file."""

    what: str
    proc: subprocess.Popen[bytes]
    start_ticks: int | None
    log: Path

    @property
    def pid(self) -> int:
        """The process's PID."""
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the process has not exited yet."""
        return self.proc.poll() is None

    def log_text(self) -> str:
        """The process's log so far (empty before it wrote one)."""
        try:
            return self.log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self, timeout: float = 3.0) -> None:
        """End it by PID (SIGTERM, then SIGKILL), and reap it."""
        if self.proc.poll() is None:
            kill_process(self.pid, self.start_ticks, timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout)
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


def sim_env(sockname: str, *, preload: bool) -> dict[str, str]:
    """The environment of a process talking to this run's ibsim (and no other)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IBSIM_", "SIM_"))}
    env["IBSIM_SOCKNAME"] = sockname
    if preload:
        env["LD_PRELOAD"] = UMAD2SIM
    else:
        env.pop("LD_PRELOAD", None)
    return env


def start_owned(
    ledger: Ledger,
    what: str,
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    log: Path,
    stdin_pipe: bool = False,
) -> Owned:
    """Start ``argv``, recorded in ``ledger`` (PID and start time) before it runs."""
    out = open(log, "ab")  # noqa: SIM115 -- handed to the child, closed below
    try:
        proc = subprocess.Popen(
            ["sh", "-c", _GO, "sh", *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C in a terminal reaches the harness, not them
        )
    finally:
        out.close()
    assert proc.stdin is not None
    try:
        ticks = ledger.track_process(proc.pid, what, argv)
    except BaseException:  # not in the ledger: it never runs (the shell waits for "go")
        proc.kill()
        proc.wait()
        proc.stdin.close()
        raise
    else:
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        if not stdin_pipe:
            proc.stdin.close()
    return Owned(what, proc, ticks, log)


def wait_for(owned: Owned, done: Callable[[str], bool], timeout: float, waiting_for: str) -> float:
    """Poll ``owned``'s log until ``done(log)``; seconds taken.  Raises if it dies or times out."""
    t0 = time.monotonic()
    while True:
        text = owned.log_text()
        if done(text):
            return time.monotonic() - t0
        if not owned.alive():
            msg = f"{owned.what} exited (status {owned.proc.returncode}) before {waiting_for}:\n"
            raise BackendError(msg + _tail(text))
        if time.monotonic() - t0 > timeout:
            msg = f"{owned.what} did not reach {waiting_for} within {timeout:g} s:\n"
            raise BackendError(msg + _tail(text))
        time.sleep(0.02)


def _tail(text: str, n: int = 15) -> str:
    return "\n".join(text.splitlines()[-n:])


#: What an IB tool prints when one of its MADs got no answer in time (a busy simulator).
_MAD_TIMEOUT = ("_do_madrpc failed", "Failed to resolve self", "mad_rpc failed")


def run_tool(
    argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 60.0, tries: int = 3
) -> str:
    """Run one IB tool (``dump_lfts``, ``ibnetdiscover``...) against this run's ibsim.

    Short-lived and waited for in this call; its PID needs no ledger entry
    because it cannot outlive the harness's wait (``timeout`` ends it).  A tool
    whose MAD went unanswered (ibsim busy on a loaded machine: "_do_madrpc
    failed") is run again, up to ``tries`` times in all; any other failure is not.
    """
    attempt = 1
    while True:
        try:
            res = subprocess.run(
                argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                check=False,
            )  # fmt: skip
        except FileNotFoundError as e:
            msg = (
                f"{argv[0]} not found; install infiniband-diags (apt-get install infiniband-diags)"
            )
            raise BackendError(msg) from e
        except subprocess.TimeoutExpired as e:
            msg = f"{' '.join(argv)} took more than {timeout:g} s against ibsim"
            raise BackendError(msg) from e
        if res.returncode == 0:
            return res.stdout
        if attempt == tries or not any(m in res.stderr for m in _MAD_TIMEOUT):
            msg = (
                f"{' '.join(argv)} failed (status {res.returncode}"
                f"{f', try {attempt} of {tries}' if attempt > 1 else ''}): {_tail(res.stderr, 5)}"
            )
            raise BackendError(msg)
        time.sleep(0.2 * attempt)
        attempt += 1


def write_console(owned: Owned, line: str) -> None:
    """Send one command line to ibsim's console (its stdin)."""
    stdin: IO[bytes] | None = owned.proc.stdin
    if stdin is None or not owned.alive():
        msg = f"{owned.what} is not running; cannot send {line!r}"
        raise BackendError(msg)
    stdin.write(line.encode() + b"\n")
    stdin.flush()
