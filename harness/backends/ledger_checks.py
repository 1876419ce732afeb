"""What a ledger must pass before anything is done with it: who owns its files, what it names.

A ledger tells the harness what to delete and whom to signal, so it is only believed
when nobody but the user running the harness could have written it:

* the state root, every directory above it, the run directory and the ledger files
  are owned by the effective user (root for the netns backend) -- a directory above
  the root may also belong to root -- and no group or other user can write them
  (a sticky directory such as ``/tmp`` is fine above the root: nobody can rename what
  is not theirs in it); none of them is a symbolic link.  :class:`UntrustedLedger`
  otherwise, and nothing of the run is touched;
* every entry names only what the run may have made: a namespace
  ``<run-id>-[a-z0-9-]+`` (never a path: no ``/``, no ``..``), a loss table
  ``<run-id>_loss<N>`` in one of those namespaces, a sysctl from the allow-list of
  :meth:`~harness.backends.ledger.Ledger.raise_sysctl`, a file relative to the run
  directory, a process by its decimal PID.  An entry that does not is refused: it
  is reported and never acted on.

>>> entry_problem("habcde", "netns", "habcde-s01n01", {}, frozenset())
>>> entry_problem("habcde", "netns", "../../etc", {}, frozenset())
"netns name '../../etc' is not of this run (habcde-[a-z0-9-]+)"
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from harness.errors import BackendError

RUN_ID_RE = re.compile(r"h[a-z0-9]{5}")
_NETNS_SUFFIX = r"-[a-z0-9][a-z0-9-]*"
_SYSCTL_RE = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)+")


PID_MAX = 1 << 22  # the kernel's largest pid_max: no PID is this large


class UntrustedLedger(BackendError):
    """A ledger (or a directory holding it) the harness must not believe."""


def _who_can_write(st: os.stat_result) -> str:
    if st.st_mode & 0o022 == 0:
        return ""
    return "its group" if st.st_mode & 0o002 == 0 else "every user"


def check_private(path: Path, what: str, *, directory: bool) -> None:
    """Raise :class:`UntrustedLedger` unless ``path`` is the euid's own, unwritable by others.

    ``path`` must exist (FileNotFoundError otherwise) and not be a symbolic link.
    """
    st = os.lstat(path)
    euid = os.geteuid()
    fix = f"remove it or point HARNESS_STATE_DIR at a directory only uid {euid} can write"
    if stat.S_ISLNK(st.st_mode):
        msg = f"{what} {path} is a symbolic link; refusing it ({fix})"
        raise UntrustedLedger(msg)
    if directory != stat.S_ISDIR(st.st_mode) or not (directory or stat.S_ISREG(st.st_mode)):
        kind = "a directory" if directory else "a regular file"
        msg = f"{what} {path} is not {kind}; refusing it ({fix})"
        raise UntrustedLedger(msg)
    if st.st_uid != euid:
        msg = f"{what} {path} belongs to uid {st.st_uid}, not to uid {euid}; refusing it ({fix})"
        raise UntrustedLedger(msg)
    writer = _who_can_write(st)
    if writer:
        mode = f"{st.st_mode & 0o7777:o}"
        msg = f"{what} {path} can be written by {writer} (mode {mode}); refusing it ({fix})"
        raise UntrustedLedger(msg)


def check_root(root: Path) -> None:
    """The state root itself and every directory above it (see the module docstring)."""
    check_private(root, "state directory", directory=True)
    euid = os.geteuid()
    for parent in Path(os.path.realpath(root)).parents:
        st = os.lstat(parent)
        writer = "" if st.st_mode & stat.S_ISVTX else _who_can_write(st)
        if st.st_uid not in (0, euid) or writer:
            who = writer or f"uid {st.st_uid}"
            msg = (
                f"state directory {root} lies in {parent}, which {who} can change; refusing it "
                f"(point HARNESS_STATE_DIR at a directory whose parents only uid {euid} or root "
                "can write)"
            )
            raise UntrustedLedger(msg)


def read_private(path: Path, what: str) -> str:
    """The text of a file that passed :func:`check_private` (opened without following links)."""
    check_private(path, what, directory=False)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def netns_name_ok(run_id: str, name: str) -> bool:
    """Whether ``name`` can be a namespace of run ``run_id`` (``<run-id>-[a-z0-9-]+``)."""
    return re.fullmatch(re.escape(run_id) + _NETNS_SUFFIX, name) is not None


def sysctl_key_ok(key: str, allowed: frozenset[str]) -> bool:
    """Whether ``key`` is a dotted sysctl name on the allow-list."""
    return _SYSCTL_RE.fullmatch(key) is not None and key in allowed


def entry_problem(
    run_id: str, kind: str, name: str, data: dict[str, Any], sysctls: frozenset[str]
) -> str | None:
    """Why an entry of run ``run_id`` must be refused, or None when it may be acted on."""
    if kind in ("netns", "netns-created"):
        if not netns_name_ok(run_id, name):
            return f"{kind} name {name!r} is not of this run ({run_id}-[a-z0-9-]+)"
        inode = data.get("inode")
        if kind == "netns-created" and (not isinstance(inode, int) or inode <= 0):
            return f"netns-created {name!r} has no inode number (got {inode!r})"
    elif kind == "nft-table":
        if re.fullmatch(re.escape(run_id) + r"_(loss|hang)[0-9]+", name) is None:
            return f"nft table name {name!r} is not of this run ({run_id}_loss<N>, _hang<N>)"
        where = data.get("netns")
        if not isinstance(where, str) or not netns_name_ok(run_id, where):
            return f"nft table {name!r} is in {where!r}, not in a namespace of this run"
    elif kind == "sysctl":
        if not sysctl_key_ok(name, sysctls):
            return f"sysctl {name!r} is not one the harness raises ({', '.join(sorted(sysctls))})"
    elif kind == "file":
        parts = Path(name).parts
        if not parts or name.startswith("/") or ".." in parts or "\x00" in name:
            return f"file {name!r} is not a path inside the run directory"
    elif kind == "process" and not (name.isascii() and name.isdigit() and 1 < int(name) < PID_MAX):
        return f"process {name!r} is not a PID"
    return None
