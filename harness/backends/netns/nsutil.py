"""Network namespaces made in-process (``unshare``/``setns``/bind mount), as iproute2 does.

``ip netns add`` is one process per namespace and pyroute2's ``netns.create`` a
helper process each; a fabric of 260 namespaces built that way spends most of its
time forking.  Here the calling thread ``unshare``\\ s a new network namespace,
bind-mounts it on ``/run/netns/NAME`` (so ``ip netns exec NAME`` works), keeps a
file descriptor for it and returns to the namespace it came from.  Sockets opened
while the thread is inside a namespace stay bound to it.

Only the calling thread changes namespace; :func:`entered` always returns to the
original one, even on error.

A name is claimed with an empty placeholder file (``O_EXCL``: an existing name is
refused), the namespace is made, its inode handed to the caller's ``record`` (the
ledger) and only then is it bind-mounted on the name.  So every namespace a run has
mounted is in its ledger with its inode; what a crash can leave without one is the
placeholder, a plain file, which :func:`inspect` tells apart (``stale``) as it does
the file an interrupted :func:`delete_netns` leaves (unmounted, not yet unlinked).
Names are never joined onto ``/run/netns`` unchecked (:func:`netns_path`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import stat
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.backends.run_claims import NETNS_RUN_DIR
from harness.errors import BackendError

CLONE_NEWNET = 0x40000000
MS_BIND = 4096
MS_REC = 16384
MS_SHARED = 1 << 20
MNT_DETACH = 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_void_p,
]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]


_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


def netns_path(name: str) -> Path:
    """``/run/netns/NAME`` for a name of letters, digits and dashes (BackendError otherwise)."""
    if _NAME_RE.fullmatch(name) is None or len(name) > 200:
        msg = f"{name!r} is not a namespace name the harness makes (a-z, 0-9 and '-')"
        raise BackendError(msg)
    return NETNS_RUN_DIR / name


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str, target: str, fstype: str, flags: int) -> None:
    rc = _libc.mount(src.encode(), target.encode(), fstype.encode(), flags, None)
    _check(rc, f"mount {src} on {target}")


def setns(fd: int) -> None:
    """Move the calling thread into the network namespace ``fd`` refers to."""
    _check(_libc.setns(fd, CLONE_NEWNET), "setns")


def current_netns_fd() -> int:
    """A new descriptor of the calling thread's network namespace."""
    return os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)


def netns_inode(fd_or_path: int | str | Path) -> int:
    """The namespace's inode number (what ``/proc/PID/ns/net`` links show)."""
    return os.stat(fd_or_path).st_ino


def _prepare_run_dir() -> None:
    """Make ``/run/netns`` a shared mount point, as ``ip netns add`` does."""
    NETNS_RUN_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    try:
        _mount("none", str(NETNS_RUN_DIR), "none", MS_SHARED | MS_REC)
    except OSError as err:
        if err.errno != errno.EINVAL:
            raise
        _mount(str(NETNS_RUN_DIR), str(NETNS_RUN_DIR), "none", MS_BIND | MS_REC)
        _mount("none", str(NETNS_RUN_DIR), "none", MS_SHARED | MS_REC)


class Namespaces:
    """Creates and deletes named network namespaces from this thread."""

    def __init__(self) -> None:
        self._home = current_netns_fd()
        self._prepared = False

    @property
    def home(self) -> int:
        """A descriptor of the namespace this object was made in (the root one for the CLI)."""
        return self._home

    def create(self, name: str, record: Callable[[int], None] | None = None) -> int:
        """Create ``/run/netns/NAME`` and return a descriptor of the new namespace.

        Refuses an existing name: a namespace the harness did not create is never reused.
        ``record`` gets the new namespace's inode before it is mounted on the name; if it
        raises, nothing is mounted and the placeholder is removed.
        """
        path = netns_path(name)
        if not self._prepared:
            _prepare_run_dir()
            self._prepared = True
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444))
        except FileExistsError:
            msg = f"network namespace {name!r} already exists and is not this run's; refusing it"
            raise BackendError(msg) from None
        mounted = False
        try:
            _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
            try:
                fd = current_netns_fd()
                try:
                    if record is not None:
                        record(netns_inode(fd))
                    _mount("/proc/thread-self/ns/net", str(path), "none", MS_BIND)
                    mounted = True
                except BaseException:
                    os.close(fd)
                    raise
            finally:
                setns(self._home)
        except BaseException as err:
            if not mounted:
                with contextlib.suppress(OSError):
                    path.unlink()
            if isinstance(err, OSError):
                msg = f"cannot create network namespace {name!r}"
                raise BackendError(msg, err) from err
            raise
        return fd

    @contextlib.contextmanager
    def entered(self, fd: int) -> Iterator[None]:
        """Run the block inside namespace ``fd``, then come back."""
        setns(fd)
        try:
            yield
        finally:
            setns(self._home)

    def close(self) -> None:
        """Close the descriptor of the home namespace (the one this object was made in)."""
        with contextlib.suppress(OSError):
            os.close(self._home)


@dataclass(frozen=True, slots=True)
class NetnsFile:
    """What ``/run/netns/NAME`` is now: ``absent``, ``netns`` (a mounted namespace, with
    its inode), ``stale`` (a plain empty file on /run/netns itself: a placeholder or an
    interrupted delete) or ``other`` (anything else: never touched)."""

    state: str
    inode: int = 0


def inspect(name: str) -> NetnsFile:
    """Look at ``/run/netns/NAME`` without following a symbolic link."""
    path = netns_path(name)
    try:
        st = os.lstat(path)
        here = os.lstat(NETNS_RUN_DIR)
        nsfs = os.stat("/proc/self/ns/net").st_dev
    except FileNotFoundError:
        return NetnsFile("absent")
    if st.st_dev == nsfs:
        return NetnsFile("netns", st.st_ino)
    if stat.S_ISREG(st.st_mode) and st.st_size == 0 and st.st_dev == here.st_dev:
        return NetnsFile("stale", st.st_ino)
    return NetnsFile("other", st.st_ino)


def remove_stale(name: str) -> bool:
    """Unlink ``/run/netns/NAME`` if it is still a stale plain file; whether it was."""
    if inspect(name).state != "stale":
        return False
    with contextlib.suppress(FileNotFoundError):
        netns_path(name).unlink()
    return True


def netns_holders(inode: int) -> list[str]:
    """What still holds the namespace ``inode`` (processes in it, descriptors of it, mounts
    of it in this mount namespace); empty when it is gone as far as /proc shows."""
    link = f"net:[{inode}]"
    nsfs = os.stat("/proc/self/ns/net").st_dev
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as fh:
        out += [f"mount {line.split()[4]}" for line in fh if line.split()[3] == link]
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{entry.name}/ns/net") == link:
                out.append(f"process {entry.name} (in it)")
                continue
        try:
            fds = os.listdir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{entry.name}/fd/{fd}"
            with contextlib.suppress(OSError):
                if os.readlink(path).startswith(_NOT_NSFS):
                    continue
                st = os.stat(path)  # the open file itself (a magic link: no path lookup)
                if st.st_dev == nsfs and st.st_ino == inode:
                    out.append(f"process {entry.name} (descriptor {fd})")
                    break
    return out


_NOT_NSFS = ("socket:", "pipe:", "anon_inode:", "/dev/", "/proc/", "/sys/")


def delete_netns(name: str) -> bool:
    """Unmount and remove ``/run/netns/NAME``; False if it was not there."""
    path = netns_path(name)
    if not os.path.lexists(path):
        return False
    rc = _libc.umount2(str(path).encode(), MNT_DETACH)
    if rc != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):
        err = ctypes.get_errno()
        msg = f"cannot unmount network namespace {name!r}"
        raise BackendError(msg, OSError(err, os.strerror(err)))
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return True


def list_netns() -> set[str]:
    """Names under ``/run/netns`` (what ``ip netns list`` shows)."""
    try:
        return {p.name for p in NETNS_RUN_DIR.iterdir()}
    except FileNotFoundError:
        return set()
