"""The ledger: what a run created on the host, written down before it is created.

Every real backend (network namespaces, daemons, processes, sysctls, files)
records each object here *before* making it, under a run-unique id, in
``STATE_ROOT/<run-id>/ledger.jsonl`` (``/run/harness`` by default: a tmpfs, so
the ledger vanishes with the namespaces on reboot; ``HARNESS_STATE_DIR``
overrides it).  The run's owner (PID and its start time, so a reused PID is
not mistaken for it) is in ``owner.json``.

:func:`clean` removes what runs whose owner is gone left behind -- after an
exception, SIGTERM, or SIGKILL of the runner -- and nothing else: it works only
from ledger entries, never from name patterns, and it leaves live runs alone.

Host-wide settings (the root namespace's neighbour-table limits, shared by all
namespaces) are raised by :meth:`Ledger.raise_sysctl`: the original value and
the runs holding it are kept once for the host in ``/run/harness-host/sysctl.json``
(whatever the ledger root), and the original is restored when the last holder ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
import logging
import os
import secrets
import shutil
import string
import time
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from harness.backends.processes import Check
from harness.backends.processes import Tracked
from harness.backends.processes import check_tracked
from harness.backends.processes import kill_process
from harness.backends.processes import process_alive
from harness.backends.processes import process_alive_owner
from harness.backends.processes import process_start_ticks
from harness.backends.processes import tracked
from harness.errors import BackendError

log = logging.getLogger(__name__)

RUN_ID_ALPHABET = string.ascii_lowercase + string.digits
RUN_ID_LENGTH = 5  # "h" + 5 chars: 60 million ids, 6 chars before the namespace suffix


def state_root() -> Path:
    """Where run ledgers live (``HARNESS_STATE_DIR`` or ``/run/harness``)."""
    return Path(os.environ.get("HARNESS_STATE_DIR", "/run/harness"))


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(root / "lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _sysctl_path(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def read_sysctl(key: str) -> str:
    """Read a host sysctl (``net.ipv4.ip_forward``) from /proc/sys."""
    return _sysctl_path(key).read_text().strip()


def write_sysctl(key: str, value: str | int) -> None:
    """Write a host sysctl through /proc/sys."""
    _sysctl_path(key).write_text(f"{value}\n")


@dataclass(frozen=True, slots=True)
class Entry:
    """One ledger line: an object of a kind (``netns``, ``process``, ``sysctl``...)."""

    kind: str
    name: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """The entry as one JSON line."""
        return json.dumps({"kind": self.kind, "name": self.name, **self.data}, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> Entry:
        """Read an entry back from its JSON line."""
        raw = json.loads(line)
        return cls(str(raw.pop("kind")), str(raw.pop("name")), raw)


class Ledger:
    """The ledger of one run.  Make one with :meth:`create`."""

    def __init__(self, run_id: str, root: Path) -> None:
        self.run_id = run_id
        self.root = root
        self.dir = root / run_id
        self._path = self.dir / "ledger.jsonl"

    @classmethod
    def create(cls, purpose: str, *, root: Path | None = None, **info: Any) -> Ledger:
        """A new run with a fresh run-unique id, owned by this process."""
        root = root or state_root()
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        for _ in range(100):
            run_id = "h" + "".join(secrets.choice(RUN_ID_ALPHABET) for _ in range(RUN_ID_LENGTH))
            try:
                (root / run_id).mkdir(mode=0o700)
            except FileExistsError:
                continue
            ledger = cls(run_id, root)
            ledger._write_owner(purpose, info)
            return ledger
        msg = f"cannot allocate a run id under {root}"
        raise BackendError(msg)

    def _write_owner(self, purpose: str, info: dict[str, Any]) -> None:
        pid = os.getpid()
        owner = {
            "pid": pid,
            "start_ticks": process_start_ticks(pid),
            "purpose": purpose,
            "created": time.time(),
            "detached": False,
            **info,
        }
        tmp = self.dir / "owner.json.tmp"
        tmp.write_text(json.dumps(owner, sort_keys=True))
        tmp.replace(self.dir / "owner.json")

    def owner(self) -> dict[str, Any]:
        """The run's owner record (owner.json): PID, start time, purpose..."""
        data: dict[str, Any] = json.loads((self.dir / "owner.json").read_text())
        return data

    def detach(self, **info: Any) -> None:
        """Mark the run as deliberately left running (``harness emulate up``)."""
        owner = {**self.owner(), **info, "detached": True}
        tmp = self.dir / "owner.json.tmp"
        tmp.write_text(json.dumps(owner, sort_keys=True))
        tmp.replace(self.dir / "owner.json")

    # -- entries -----------------------------------------------------------
    def record(self, kind: str, name: str, **data: Any) -> None:
        """Write one entry (flushed and synced) before the object is made."""
        self.record_many([Entry(kind, name, data)])

    def record_many(self, entries: list[Entry]) -> None:
        """Append entries in one write, synced before the objects are made."""
        if not entries:
            return
        text = "".join(e.to_json() + "\n" for e in entries)
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, text.encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self, kind: str | None = None) -> list[Entry]:
        """The recorded entries, of one kind or all, in the order written."""
        try:
            lines = self._path.read_text().splitlines()
        except FileNotFoundError:
            return []
        out = [Entry.from_json(line) for line in lines if line.strip()]
        return [e for e in out if kind is None or e.kind == kind]

    def names(self, kind: str) -> set[str]:
        """The names of every recorded object of a kind."""
        return {e.name for e in self.entries(kind)}

    def owns(self, kind: str, name: str) -> bool:
        """Whether this run recorded the object ``name`` of ``kind``."""
        return name in self.names(kind)

    def refuse_unowned(self, kind: str, name: str) -> None:
        """Raise unless this run recorded ``name`` (never act on the host's own objects)."""
        if not self.owns(kind, name):
            msg = (
                f"refusing to touch {kind} {name!r}: run {self.run_id} did not create it "
                "(the harness only acts on objects in its own ledger)"
            )
            raise BackendError(msg)

    def track_process(self, pid: int, what: str, execs: Sequence[str] | None = None) -> int | None:
        """Record a process this run started, before it runs what it is for; its start time.

        The entry holds its start time (no reused PID is ever signalled), its command
        line, ``execs`` (the command line it will ``exec``, for a launcher held until it
        is recorded) and its parent: ``harness clean`` ends it only while it is still
        that process (:func:`~harness.backends.processes.check_tracked`).
        """
        data = tracked(pid, what, execs)
        self.record("process", str(pid), **data)
        start: int | None = data["start_ticks"]
        return start

    # -- host-wide settings -----------------------------------------------------
    def raise_sysctl(self, key: str, minimum: int) -> None:
        """Raise a host sysctl to at least ``minimum`` for this run (restored by the last run).

        The original value and the runs holding the setting are kept in one
        host-wide place (:data:`HOST_STATE`), whatever ``HARNESS_STATE_DIR`` says:
        runs with different ledger roots share the host's sysctls.
        """
        self.record("sysctl", key)
        with _locked(HOST_STATE):
            table = _read_host(HOST_STATE)
            current = read_sysctl(key)
            entry = table.setdefault(key, {"original": current, "holders": []})
            if str(self.dir) not in entry["holders"]:
                entry["holders"].append(str(self.dir))
            _write_host(HOST_STATE, table)
            if int(current) < minimum:
                write_sysctl(key, minimum)

    def release(self) -> None:
        """The run is over and everything it made is gone: restore sysctls, drop its directory."""
        with _locked(self.root):
            shutil.rmtree(self.dir, ignore_errors=True)
        release_sysctls(self.dir)


HOST_STATE = Path("/run/harness-host")  # host-wide: shared by every ledger root


def _read_host(root: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((root / "sysctl.json").read_text())
    except FileNotFoundError:
        return {}
    return data


def _write_host(root: Path, table: dict[str, Any]) -> None:
    path = root / "sysctl.json"
    if not table:
        path.unlink(missing_ok=True)
        return
    tmp = root / "sysctl.json.tmp"
    tmp.write_text(json.dumps(table, sort_keys=True))
    tmp.replace(path)


def release_sysctls(run_dir: Path) -> None:
    """Drop ``run_dir`` (and runs whose directory is gone) as holders; restore unheld keys."""
    with _locked(HOST_STATE):
        table = _read_host(HOST_STATE)
        for key in list(table):
            entry = table[key]
            entry["holders"] = [
                h for h in entry["holders"] if h != str(run_dir) and Path(h).is_dir()
            ]
            if not entry["holders"]:
                with contextlib.suppress(OSError):
                    write_sysctl(key, entry["original"])
                del table[key]
        _write_host(HOST_STATE, table)


def run_ids(root: Path | None = None) -> list[str]:
    """The ids of the runs with a ledger under ``root`` (default the state root), sorted."""
    root = root or state_root()
    try:
        return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "owner.json").exists())
    except FileNotFoundError:
        return []


def run_is_live(ledger: Ledger) -> bool:
    """The owner still runs, or the run was detached on purpose (``emulate up``)."""
    try:
        owner = ledger.owner()
    except (FileNotFoundError, json.JSONDecodeError):
        return False
    if owner.get("detached"):
        return True
    start = owner.get("start_ticks")
    return start is not None and process_alive(int(owner["pid"]), int(start))


@dataclass(slots=True)
class CleanReport:
    """What :func:`clean` removed, per run, and which runs it left alone because they live."""

    removed: dict[str, list[str]] = field(default_factory=dict)
    live: list[str] = field(default_factory=list)

    @property
    def anything(self) -> bool:
        """Whether anything was removed."""
        return any(self.removed.values())


def clean(*, root: Path | None = None, include_detached: bool = False) -> CleanReport:
    """Remove what dead runs left behind (ledger-driven); live runs are left alone."""
    root = root or state_root()
    report = CleanReport()
    for rid in run_ids(root):
        ledger = Ledger(rid, root)
        owner = _safe_owner(ledger)
        if run_is_live(ledger) and not (include_detached and owner.get("detached")):
            report.live.append(rid)
            continue
        if owner.get("detached") and process_alive_owner(owner):
            report.live.append(rid)  # an emulate-up process still holds it
            continue
        report.removed[rid] = teardown_entries(ledger)
        ledger.release()
    return report


def _safe_owner(ledger: Ledger) -> dict[str, Any]:
    try:
        return ledger.owner()
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


#: Who removes each kind of ledger entry that is not a process: the module (imported only
#: when a ledger holds such entries) whose ``teardown(ledger)`` removes them.  The ledger
#: itself knows processes, sysctls and files; a backend that creates other objects adds
#: its kinds here.
TEARDOWNS: dict[str, str] = {"netns": "harness.backends.netns.teardown"}


def teardown_entries(ledger: Ledger, refused: list[str] | None = None) -> list[str]:
    """Remove every object a ledger lists, processes first; returns what was removed.

    The recorded processes are ended first (by PID and start time), each only
    while it is still the process recorded (its command line and parent); an
    entry naming a live process that is not is refused: logged as a warning,
    appended to ``refused`` when given, and the process left alone.  Then each backend's
    :data:`TEARDOWNS` module removes its objects (the netns backend: the run's own
    namespaces, whatever still runs inside them, and what lived in them).
    """
    removed: list[str] = []
    for e in ledger.entries("process"):
        check = _check_process(e)
        if check.verdict is Tracked.NOT_MINE:
            why = (
                f"refusing process {e.name} ({e.data.get('what', '?')}) of run {ledger.run_id}: "
                f"{check.why}; it is not what the run started, so it is left alone"
            )
            log.warning("%s", why)
            if refused is not None:
                refused.append(why)
        elif check.verdict is Tracked.MINE and kill_process(int(e.name), e.data.get("start_ticks")):
            removed.append(f"process {e.name} ({e.data.get('what', '')})")
    for kind, module in TEARDOWNS.items():
        if ledger.entries(kind):
            removed += importlib.import_module(module).teardown(ledger)
    return removed


def _check_process(e: Entry) -> Check:
    if not e.name.isdigit() or not 0 < int(e.name) < 1 << 22:
        return Check(Tracked.NOT_MINE, "its name is not a PID")
    return check_tracked(int(e.name), e.data)
