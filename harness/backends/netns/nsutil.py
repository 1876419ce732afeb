"""Network namespaces made in-process (``unshare``/``setns``/bind mount), as iproute2 does.

``ip netns add`` is one process per namespace and pyroute2's ``netns.create`` a
helper process each; a fabric of 260 namespaces built that way spends most of its
time forking.  Here the calling thread ``unshare``\\ s a new network namespace,
bind-mounts it on ``/run/netns/NAME`` (so ``ip netns exec NAME`` works), keeps a
file descriptor for it and returns to the namespace it came from.  Sockets opened
while the thread is inside a namespace stay bound to it.

Only the calling thread changes namespace; :func:`entered` always returns to the
original one, even on error.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from harness.errors import BackendError

NETNS_RUN_DIR = Path("/run/netns")
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

    def create(self, name: str) -> int:
        """Create ``/run/netns/NAME`` and return a descriptor of the new namespace.

        Refuses an existing name: a namespace the harness did not create is never reused.
        """
        if not self._prepared:
            _prepare_run_dir()
            self._prepared = True
        path = NETNS_RUN_DIR / name
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o444))
        except FileExistsError:
            msg = f"network namespace {name!r} already exists and is not this run's; refusing it"
            raise BackendError(msg) from None
        try:
            _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
            try:
                _mount("/proc/thread-self/ns/net", str(path), "none", MS_BIND)
                fd = current_netns_fd()
            finally:
                setns(self._home)
        except OSError as err:
            with contextlib.suppress(OSError):
                path.unlink()
            msg = f"cannot create network namespace {name!r}"
            raise BackendError(msg, err) from err
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


def delete_netns(name: str) -> bool:
    """Unmount and remove ``/run/netns/NAME``; False if it was not there."""
    path = NETNS_RUN_DIR / name
    if not path.exists():
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
