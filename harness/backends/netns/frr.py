"""FRR daemons in the emulation's namespaces: started, recorded, stopped by PID.

Each daemon (``zebra``, ``bgpd``, optionally ``bfdd``) of a switch namespace
runs with paths of its own under the run's ledger directory
(``<run>/frr/<namespace>/``): configuration, pid file, zserv socket, vty
sockets (``--vty_socket``), log, and ``-N <namespace name>`` (a run-unique
path space).  FRR 8.4 also writes crash buffers to a hard-coded
``/var/tmp/frr/<daemon>.<pid>`` and makes ``/var/run/frr/<pathspace>``; a
daemon killed with SIGKILL leaves both behind.  So every daemon runs in a
private mount namespace in which ``/var/tmp`` is its own directory and
``/run`` a directory of its own inside it: whatever FRR writes lands under the
run directory, which goes with the run (``Ledger.release``), even after a
SIGKILL of the daemon or of the runner.

A daemon is recorded in the ledger *before* it runs: the harness forks, writes
the child's PID (and start time, so a reused PID is never mistaken for it) to
the ledger, and only then lets the child enter the namespace and ``exec`` the
daemon (the PID stays the same through ``exec``).  Daemons run in the
foreground (no ``-d``), as children of the harness, and are ended by PID.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import pwd
import signal
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.backends.ledger import Ledger
from harness.backends.processes import process_alive
from harness.errors import BackendError

FRR_DIR = Path("/usr/lib/frr")
FRR_USER = "frr"
VTYSH = "vtysh"
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
START_TIMEOUT_S = 20.0
VTYSH_TIMEOUT_S = 30.0

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_void_p]  # fmt: skip
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]


def frr_unavailable() -> str | None:
    """Why FRR cannot run here (``None``: it can)."""
    for daemon in ("zebra", "bgpd", "bfdd"):
        if not (FRR_DIR / daemon).is_file():
            return f"needs FRR ({FRR_DIR / daemon} is missing: apt-get install frr)"
    try:
        pwd.getpwnam(FRR_USER)
    except KeyError:
        return f"needs the {FRR_USER!r} user that the frr package creates (apt-get install frr)"
    from shutil import which

    if which(VTYSH) is None:
        return "needs vtysh (apt-get install frr)"
    return None


@dataclass(frozen=True, slots=True)
class Daemon:
    """One running FRR daemon: which, where, its PID and start time."""

    name: str  # zebra | bgpd | bfdd
    namespace: str  # the network namespace's name
    pid: int
    start_ticks: int

    def alive(self) -> bool:
        """Whether the daemon is still the process that was started."""
        return process_alive(self.pid, self.start_ticks)

    def signal(self, signum: int) -> None:
        """Send ``signum`` if the process is still the one started (never a reused PID)."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def pss_kb(self) -> int:
        """Proportional set size (kB): its share of the memory it maps."""
        try:
            text = Path(f"/proc/{self.pid}/smaps_rollup").read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
        return 0


class SwitchDir:
    """The files of one switch's daemons (``<run>/frr/<namespace>/``)."""

    def __init__(self, root: Path, namespace: str) -> None:
        self.namespace = namespace
        self.path = root / namespace
        self.vty = self.path / "vty"

    def make(self, configs: dict[str, str]) -> None:
        """Create the directory (owned by the frr user, as FRR drops to it) and the configs.

        Each directory and file is made new (an existing one, a symlink above all,
        is an error) and handed to the frr user by its descriptor or without
        following symlinks: root never writes or chowns through a path the frr
        user could have planted.
        """
        user = pwd.getpwnam(FRR_USER)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for d in (self.path, self.vty, self.path / "run", self.path / "run" / "frr"):
            d.mkdir(mode=0o750)
            os.chown(d, user.pw_uid, user.pw_gid, follow_symlinks=False)
        for daemon, text in configs.items():
            fd = open_output(self.path / f"{daemon}.conf", new=True)
            try:
                os.fchown(fd, user.pw_uid, user.pw_gid)
                os.write(fd, text.encode())
            finally:
                os.close(fd)

    def argv(self, daemon: str) -> list[str]:
        """The daemon's command line, with paths as it sees them (``/var/tmp`` = this dir)."""
        inside = Path("/var/tmp")
        argv = [
            str(FRR_DIR / daemon),
            "-N", self.namespace,
            "-P", "0",  # no TCP vty
            "-f", str(inside / f"{daemon}.conf"),
            "-i", str(inside / f"{daemon}.pid"),
            "-z", str(inside / "zserv.api"),
            "--vty_socket", str(inside / "vty"),
            "--log", f"file:{inside / f'{daemon}.log'}",
        ]  # fmt: skip
        if daemon == "bfdd":
            argv += ["--bfdctl", str(inside / "bfdd.sock")]
        return argv


def open_output(path: Path, *, new: bool = False) -> int:
    """Open a file of a daemon's directory (which the frr user can write) for root to write.

    Never through a symlink (``O_NOFOLLOW``), never a FIFO or device, never a
    file with another name elsewhere (a hard link): any of these is an
    ``OSError`` naming the path.  ``new``: the file must not exist yet
    (``O_EXCL``); else it is appended to.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_EXCL if new else os.O_APPEND
    try:
        fd = os.open(path, flags, 0o640)
    except OSError as err:
        if err.errno == errno.ELOOP:
            msg = f"{path} is a symlink: refusing to write through it"
            raise OSError(err.errno, msg) from err
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        msg = f"{path} is not a plain file of its own: refusing to write to it"
        raise OSError(errno.EPERM, msg)
    os.set_blocking(fd, True)
    return fd


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int) -> None:
    rc = _libc.mount(
        src.encode() if src else None, target.encode(), fstype.encode() if fstype else None,
        flags, None,
    )  # fmt: skip
    _check(rc, f"mount {src} on {target}")


def _child(gate: int, netns_fd: int, where: Path, argv: list[str], log: Path) -> None:
    """In the forked child: wait for the gate, enter the namespaces, exec the daemon."""
    code = 127
    try:
        if os.read(gate, 1) != b"g":  # the parent died before recording us: never run
            os._exit(0)
        out = open_output(log)  # before /run moves; never through a symlink the frr user left
        null = os.open(os.devnull, os.O_RDONLY)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # Python ignores it; a daemon must not
        _check(_libc.setns(netns_fd, CLONE_NEWNET), "setns")
        _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        _mount(str(where), "/var/tmp", None, MS_BIND)
        _mount(str(where / "run"), "/run", None, MS_BIND)
        # /sys of this network namespace, as `ip netns exec` gives
        if _libc.umount2(b"/sys", MNT_DETACH) == 0:
            _mount("sysfs", "/sys", "sysfs", 0)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.closerange(3, 1 << 16)
        os.execv(argv[0], argv)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.write(2, f"harness: cannot start {argv[0]}: {err}\n".encode())
    os._exit(code)


def spawn(ledger: Ledger, switch: SwitchDir, daemon: str, netns_fd: int) -> Daemon:
    """Start one daemon of ``switch`` inside ``netns_fd``, recorded in the ledger first."""
    argv = switch.argv(daemon)
    log = switch.path / f"{daemon}.out"
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child execs or exits
        os.close(w)
        _child(r, netns_fd, switch.path, argv, log)
    os.close(r)
    try:
        start = ledger.track_process(pid, f"{daemon} in {switch.namespace}", argv)
        if start is None:
            msg = f"{daemon} for {switch.namespace} exited before it was recorded"
            raise BackendError(msg)
        os.write(w, b"g")
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        raise
    finally:
        os.close(w)
    return Daemon(daemon, switch.namespace, pid, start)


def wait_started(switch: SwitchDir, daemons: Sequence[Daemon], timeout: float) -> None:
    """Wait until each daemon has opened its vty socket; an early exit is an error."""
    deadline = time.monotonic() + timeout
    for d in daemons:
        sock = switch.vty / f"{d.name}.vty"
        while not sock.exists():
            reaped = reap(d)
            if reaped is not None or not d.alive():
                tail = _tail(switch.path / f"{d.name}.out") or _tail(switch.path / f"{d.name}.log")
                msg = f"FRR {d.name} in {d.namespace} exited at start ({reaped}): {tail}"
                raise BackendError(msg)
            if time.monotonic() > deadline:
                msg = f"FRR {d.name} in {d.namespace} did not open {sock} in {timeout:g} s"
                raise BackendError(msg)
            time.sleep(0.01)


def reap(d: Daemon) -> int | None:
    """The exit status if the daemon (our child) has ended, else None; never blocks."""
    try:
        pid, status = os.waitpid(d.pid, os.WNOHANG)
    except ChildProcessError:
        return -1  # not our child (any more): already reaped
    return status if pid == d.pid else None


def stop(daemons: Sequence[Daemon], timeout: float = 5.0) -> None:
    """End daemons by PID (SIGKILL: the namespaces go with them) and reap them."""
    for d in daemons:
        d.signal(signal.SIGKILL)
    deadline = time.monotonic() + timeout
    for d in daemons:
        while reap(d) is None and time.monotonic() < deadline:
            time.sleep(0.005)


def _tail(path: Path, lines: int = 3) -> str:
    """The last lines of a daemon's file (never read through a symlink: root would show
    whatever it points to)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        text = fh.read(1 << 20).decode(errors="replace")
    return " | ".join(text.strip().splitlines()[-lines:])


def vtysh(
    switch: SwitchDir,
    commands: Sequence[str],
    *,
    timeout: float = VTYSH_TIMEOUT_S,
    daemon: str | None = None,
) -> str:
    """Run vtysh commands against one switch's daemons (or only ``daemon``) through their
    vty sockets.

    vtysh runs in the sockets' directory and is given ``.``: a socket's address is at most
    107 bytes, and ``<state root>/<run>/frr/<namespace>/vty/bfdd.vty`` under a deep state
    root (a pytest worker's temporary directory) is longer -- vtysh then connected to no
    daemon at all."""
    argv = [VTYSH, "--vty_socket", ".", *(["-d", daemon] if daemon else [])]
    for c in commands:
        argv += ["-c", c]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False,
                              cwd=switch.vty)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as err:
        msg = f"vtysh on {switch.namespace} failed"
        raise BackendError(msg, err) from err
    if done.returncode != 0:
        msg = f"vtysh on {switch.namespace} ({'; '.join(commands)}) failed: "
        raise BackendError(msg + (done.stderr.strip() or done.stdout.strip()))
    return done.stdout
