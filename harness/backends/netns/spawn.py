"""Start a program inside a network namespace, recorded in the ledger before it runs.

:func:`spawn` starts this file as a script (``python spawn.py NETNS_PATH GO_FD --
ARGV...``: ``os`` and ``ctypes`` only, so it starts in about 10 ms); the
launcher blocks on the ``GO_FD`` pipe while the caller writes the launcher's PID
and start time to the run's ledger, then ``setns()``\\ s into the namespace
(``NETNS_PATH`` ``-``: it stays in the caller's, for a helper of the run such as
the gloo fork server), asks the kernel to SIGTERM it when the caller's thread
dies (``PR_SET_PDEATHSIG``, kept across ``exec``) and ``exec``\\ s the program.
If the caller dies before saying go, the launcher reads end-of-file and exits:
a program that is not in the ledger never runs.
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
SIGTERM = 15  # signal.SIGTERM on Linux: the launcher does not import signal (nor its enum)
NO_NETNS = "-"  # the launcher's NETNS_PATH for a program that stays in the caller's namespace


def die_with_parent(sig: int = SIGTERM) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent thread ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def enter_netns(path: str) -> None:
    """Move the calling thread (the process, if single-threaded) into namespace ``path``."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def _main(args: list[str]) -> int:  # noqa: RET503 (execvp)
    netns_path, go_fd, sep, *argv = args
    if sep != "--" or not argv:
        sys.stderr.write("usage: spawn.py NETNS_PATH GO_FD -- ARGV...\n")
        return 2
    fd = int(go_fd)
    parent = os.getppid()
    die_with_parent()
    if os.read(fd, 1) != b"g" or os.getppid() != parent:
        return 1  # the caller died before recording this process: run nothing
    os.close(fd)
    if netns_path != NO_NETNS:
        enter_netns(netns_path)
    os.execvp(argv[0], argv)  # does not return


if __name__ == "__main__":  # the launcher: it has imported only what is above (~10 ms a start)
    sys.exit(_main(sys.argv[1:]))

# The caller's side.  Below the launcher's exit: each launcher would import these too
# (subprocess, pathlib, typing: 25 ms more a start, and a group starts 50 launchers).
import subprocess  # noqa: E402
from collections.abc import Callable  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import IO  # noqa: E402
from typing import Any  # noqa: E402
from typing import NamedTuple  # noqa: E402


class Ports:
    """TCP ports handed out in turn from ``[low, high]``, inside the run's own namespaces.

    Namespaces are run-unique, so no other run binds there; a new port per use
    keeps a listener clear of the previous one's TIME_WAIT.

    >>> p = Ports(5, 6)
    >>> [p.next() for _ in range(3)]
    [5, 6, 5]
    """

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high
        self._next = low

    def next(self) -> int:
        """The next port, wrapping round to ``low`` after ``high``."""
        port = self._next
        self._next = port + 1 if port < self.high else self.low
        return port


class Held:
    """A launched program held before it runs: :meth:`go` lets it run (once)."""

    def __init__(self, proc: subprocess.Popen[bytes], fd: int) -> None:
        self.proc = proc
        self._fd: int | None = fd

    def go(self) -> subprocess.Popen[bytes]:
        """Let the held program run (once) and return its process."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.write(fd, b"g")
            finally:
                os.close(fd)
        return self.proc

    def drop(self) -> None:
        """Never run it: the launcher reads end-of-file and exits."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def spawn(
    netns_path: str | None,
    argv: Sequence[str],
    record: Any,
    *,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
    stdin: IO[bytes] | int | None = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Run ``argv`` in ``netns_path`` (None: in this namespace); ``record(pid)`` is called
    before it starts.

    ``record`` writes the PID to the ledger; if it raises, the launcher is told
    nothing, reads end-of-file and exits without running ``argv``.
    """
    return spawn_held(netns_path, argv, record, stdout=stdout, stderr=stderr, stdin=stdin).go()


def spawn_held(
    netns_path: str | None,
    argv: Sequence[str],
    record: Any,
    *,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
    stdin: IO[bytes] | int | None = subprocess.DEVNULL,
) -> Held:
    """As :func:`spawn`, but the program waits for :meth:`Held.go` (start several at once)."""
    held = _launch(netns_path, argv, stdout=stdout, stderr=stderr, stdin=stdin)
    try:
        record(held.proc.pid)
    except BaseException:
        _abandon([held])
        raise
    return held


class Launch(NamedTuple):
    """One program to launch held: its namespace (None: this one), argv and output file.

    A named tuple, not a dataclass: every launcher imports this file, and
    ``dataclasses`` would add its imports to each one's start.
    """

    netns_path: str | None
    argv: tuple[str, ...]
    out: Path  # its stdout and stderr, truncated


def spawn_held_many(
    launches: Sequence[Launch], record: Callable[[list[int]], object]
) -> list[Held]:
    """Launch every program held, then ``record`` all their PIDs at once (one ledger write).

    None runs before ``record`` returns: if it (or a launch) raises, every
    launcher is told nothing, reads end-of-file and exits, and is reaped.
    """
    held: list[Held] = []
    try:
        for x in launches:
            with open(x.out, "wb") as fh:
                held.append(_launch(x.netns_path, x.argv, stdout=fh, stderr=subprocess.STDOUT))
        record([h.proc.pid for h in held])
    except BaseException:
        _abandon(held)
        raise
    return held


def _launch(
    netns_path: str | None,
    argv: Sequence[str],
    *,
    stdout: IO[bytes] | int | None,
    stderr: IO[bytes] | int | None,
    stdin: IO[bytes] | int | None = subprocess.DEVNULL,
) -> Held:
    """Start the launcher of ``argv``, blocked until it is told to go."""
    where = netns_path or NO_NETNS
    r, w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(Path(__file__)), where, str(r), "--", *argv],
            pass_fds=(r,),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
        )
    except BaseException:
        os.close(w)
        raise
    finally:
        os.close(r)
    return Held(proc, w)


def _abandon(held: Sequence[Held]) -> None:
    """Never run these: each launcher reads end-of-file and exits at once; reap them."""
    for h in held:
        h.drop()
    for h in held:
        for pipe in (h.proc.stdin, h.proc.stdout, h.proc.stderr):
            if pipe is not None:
                pipe.close()
        h.proc.wait()
