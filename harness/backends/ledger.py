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
(whatever the ledger root), and the original is restored when the last holder ends;
only the keys of :data:`RAISABLE_SYSCTLS` are ever raised or restored.

Run ids are unique on the whole host (:mod:`harness.backends.run_claims`), and a
ledger is believed only after :mod:`harness.backends.ledger_checks` passed it:
its files are the effective user's own and unwritable by others, and each entry
names only what the run may have made; a refused entry is reported
(:attr:`Ledger.refused`) and never acted on.  :func:`clean` reports a ledger it
cannot trust, or whose teardown fails, and goes on with the other runs.
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

from harness.backends import run_claims
from harness.backends.ledger_checks import RUN_ID_RE
from harness.backends.ledger_checks import UntrustedLedger
from harness.backends.ledger_checks import check_private
from harness.backends.ledger_checks import check_root
from harness.backends.ledger_checks import entry_problem
from harness.backends.ledger_checks import read_private
from harness.backends.ledger_checks import sysctl_key_ok
from harness.backends.processes import Tracked
from harness.backends.processes import check_tracked
from harness.backends.processes import kill_process
from harness.backends.processes import process_alive_owner
from harness.backends.processes import process_start_ticks
from harness.backends.processes import tracked
from harness.backends.signals import deferring_signals
from harness.errors import BackendError

log = logging.getLogger(__name__)

RUN_ID_ALPHABET = string.ascii_lowercase + string.digits
RUN_ID_LENGTH = 5  # "h" + 5 chars: 60 million ids, 6 chars before the namespace suffix
DEFAULT_STATE_ROOT = Path("/run/harness")

#: The host sysctls :meth:`Ledger.raise_sysctl` may raise (and so restore): the root
#: namespace's neighbour-table limits.  A ledger or host table naming another is refused.
RAISABLE_SYSCTLS = frozenset(
    f"net.{fam}.neigh.default.gc_thresh{n}" for fam in ("ipv4", "ipv6") for n in (2, 3)
)


def state_root() -> Path:
    """Where run ledgers live (``HARNESS_STATE_DIR`` or ``/run/harness``)."""
    return Path(os.environ.get("HARNESS_STATE_DIR", str(DEFAULT_STATE_ROOT)))


def draw_run_id() -> str:
    """A random run id candidate (``h`` and 5 letters or digits)."""
    return "h" + "".join(secrets.choice(RUN_ID_ALPHABET) for _ in range(RUN_ID_LENGTH))


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(root / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _sysctl_path(key: str) -> Path:
    if not sysctl_key_ok(key, frozenset({key})):
        msg = f"{key!r} is not a sysctl name (dotted words such as net.ipv4.ip_forward)"
        raise BackendError(msg)
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
        self._refused: dict[str, None] = {}  # in the order found, once each

    @property
    def refused(self) -> list[str]:
        """What this ledger asked for and was refused (entries, objects not the run's)."""
        return list(self._refused)

    def refuse(self, why: str) -> None:
        """Note one refusal (reported by ``harness clean``); nothing is done with it."""
        self._refused[why] = None

    @classmethod
    def create(cls, purpose: str, *, root: Path | None = None, **info: Any) -> Ledger:
        """A new run with a fresh run-unique id, owned by this process."""
        root = root or state_root()
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_root(root)
        roots = (root, DEFAULT_STATE_ROOT)
        home = _claims_home(root)
        with _locked(home):  # the id is checked and claimed host-wide, atomically
            for _ in range(100):
                run_id = draw_run_id()
                if run_claims.id_taken(home, run_id, roots):
                    continue
                (root / run_id).mkdir(mode=0o700)
                run_claims.claim(home, run_id, root / run_id)
                break
            else:
                msg = f"cannot allocate a run id unused on this host (under {root})"
                raise BackendError(msg)
        ledger = cls(run_id, root)
        ledger._write_owner(purpose, info)
        return ledger

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
        data: dict[str, Any] = json.loads(read_private(self.dir / "owner.json", "run owner"))
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
        with deferring_signals():  # no signal tears a line
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, text.encode())
                os.fsync(fd)
            finally:
                os.close(fd)

    def entries(self, kind: str | None = None) -> list[Entry]:
        """The recorded entries that pass the checks, of one kind or all, in the order written.

        :class:`UntrustedLedger` when the ledger's files are not this user's own (or can be
        written by others) or a line is not an entry: then none of it may be acted on.
        An entry naming what the run cannot have made is left out and noted in
        :attr:`refused`.
        """
        check_private(self.dir, f"run directory of {self.run_id}", directory=True)
        try:
            text = read_private(self._path, f"ledger of run {self.run_id}")
        except FileNotFoundError:
            return []
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                e = Entry.from_json(line)
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                msg = (
                    f"{self._path} line {n} is not a ledger entry ({err}); nothing of run "
                    f"{self.run_id} was touched: check what it made by hand, then remove "
                    f"{self.dir}"
                )
                raise UntrustedLedger(msg) from None
            why = entry_problem(self.run_id, e.kind, e.name, e.data, RAISABLE_SYSCTLS)
            if why is not None:
                self.refuse(f"refused ledger entry: {why}")
                continue
            if kind is None or e.kind == kind:
                out.append(e)
        return out

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
        runs with different ledger roots share the host's sysctls.  Only the keys of
        :data:`RAISABLE_SYSCTLS` (BackendError for any other).
        """
        if key not in RAISABLE_SYSCTLS:
            msg = f"sysctl {key!r} is not one the harness may raise (add it to RAISABLE_SYSCTLS)"
            raise BackendError(msg)
        self.record("sysctl", key)
        with _locked(HOST_STATE):
            table, _ = _read_host(HOST_STATE)
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
        for why in release_sysctls(self.dir):
            self.refuse(why)
        home = _claims_home(self.root)
        with _locked(home):
            run_claims.release(home, self.run_id)


HOST_STATE = Path("/run/harness-host")  # host-wide: shared by every ledger root


def _host_state_usable() -> bool:
    """Whether this user may use :data:`HOST_STATE` (root always; another user only when
    it is that user's own: then it is a private stand-in, not the host's)."""
    if os.geteuid() == 0:
        return True
    try:
        HOST_STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_private(HOST_STATE, "host state directory", directory=True)
    except (OSError, UntrustedLedger):
        return False
    return True


def _claims_home(root: Path) -> Path:
    """Where run ids are claimed: :data:`HOST_STATE`, shared by every ledger root; a user
    who cannot use it (not root: the ibsim backend, which makes no namespaces and ends
    its processes by PID and start time, never by name) claims them under its own root."""
    return HOST_STATE if _host_state_usable() else root / ".claims"


def _read_host(root: Path) -> tuple[dict[str, Any], list[str]]:
    """The host-wide sysctl table, without the keys it must not hold, and why each went.

    :class:`UntrustedLedger` when the directory or the file are not the euid's own or can
    be written by others (or the file is not JSON): then no sysctl is touched.
    """
    check_private(root, "host state directory", directory=True)
    path = root / "sysctl.json"
    try:
        raw = json.loads(read_private(path, "host sysctl table"))
    except FileNotFoundError:
        return {}, []
    except ValueError as err:
        msg = (
            f"{path} is not a sysctl table ({err}); no sysctl was restored: "
            "check them, then remove it"
        )
        raise UntrustedLedger(msg) from None
    if not isinstance(raw, dict):
        msg = f"{path} is not a sysctl table (a JSON object); no sysctl was restored"
        raise UntrustedLedger(msg)
    table: dict[str, Any] = {}
    refused = []
    for key, entry in raw.items():
        ok = (
            sysctl_key_ok(key, RAISABLE_SYSCTLS)
            and isinstance(entry, dict)
            and isinstance(entry.get("original"), str)
            and entry["original"].isascii()
            and entry["original"].isdigit()
            and isinstance(entry.get("holders"), list)
            and all(isinstance(h, str) for h in entry["holders"])
        )
        if ok:
            table[key] = entry
        else:
            refused.append(
                f"refused host sysctl entry {key!r} in {path}: not a key the harness raises "
                f"({', '.join(sorted(RAISABLE_SYSCTLS))}) with a number to restore"
            )
    return table, refused


def _write_host(root: Path, table: dict[str, Any]) -> None:
    path = root / "sysctl.json"
    if not table:
        path.unlink(missing_ok=True)
        return
    tmp = root / "sysctl.json.tmp"
    tmp.write_text(json.dumps(table, sort_keys=True))
    tmp.replace(path)


def release_sysctls(run_dir: Path) -> list[str]:
    """Drop ``run_dir`` (and runs whose directory is gone) as holders; restore unheld keys.

    Returns what was refused (a host table not to be trusted, keys the harness never
    raises): those are reported and left as they are.  A user who cannot use the host
    state (not root) raised none: nothing to do.
    """
    if not _host_state_usable():
        return []
    with _locked(HOST_STATE):
        try:
            table, refused = _read_host(HOST_STATE)
        except UntrustedLedger as err:
            return [str(err)]
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
    return refused


def run_ids(root: Path | None = None) -> list[str]:
    """The ids of the runs with a ledger under ``root`` (default the state root), sorted.

    Only names a run id can have (``h`` and 5 letters or digits); :func:`strays` lists
    the others.
    """
    return sorted(n for n in _run_dirs(root or state_root()) if RUN_ID_RE.fullmatch(n))


def strays(root: Path | None = None) -> list[str]:
    """Directories with an owner record under ``root`` whose name is no run id (never acted on)."""
    return sorted(n for n in _run_dirs(root or state_root()) if not RUN_ID_RE.fullmatch(n))


def _run_dirs(root: Path) -> list[str]:
    try:
        return [p.name for p in root.iterdir() if p.is_dir() and (p / "owner.json").exists()]
    except FileNotFoundError:
        return []


def run_is_live(ledger: Ledger) -> bool:
    """The owner still runs, or the run was detached on purpose (``emulate up``)."""
    owner = _safe_owner(ledger)
    return bool(owner.get("detached")) or process_alive_owner(owner)


@dataclass(slots=True)
class CleanReport:
    """What :func:`clean` removed, per run, which runs it left alone because they live, what
    it refused (per run: entries and objects not the run's) and the runs (or the state
    root) it could not clean at all, each with the reason and the fix."""

    removed: dict[str, list[str]] = field(default_factory=dict)
    live: list[str] = field(default_factory=list)
    refused: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Nothing was refused and every dead run was cleaned."""
        return not self.failed and not any(self.refused.values())

    @property
    def anything(self) -> bool:
        """Whether anything was removed."""
        return any(self.removed.values())


def clean(*, root: Path | None = None, include_detached: bool = False) -> CleanReport:
    """Remove what dead runs left behind (ledger-driven); live runs are left alone.

    Nothing is done under a state root that fails :func:`~harness.backends.ledger_checks.check_root`
    (reported under the key ``"state root"``).  A run whose ledger cannot be trusted (files
    not the euid's own, a torn line) or whose teardown fails is reported in
    :attr:`CleanReport.failed` and keeps its ledger; the other runs are still cleaned.
    """
    root = root or state_root()
    report = CleanReport()
    if not root.exists():
        return report
    try:
        check_root(root)
    except (UntrustedLedger, OSError) as err:
        report.failed["state root"] = str(err)
        return report
    for name in strays(root):
        report.failed[name] = f"{root / name} is not a run directory (no run id); left alone"
    for rid in run_ids(root):
        ledger = Ledger(rid, root)
        try:
            ledger.entries()  # believed before anything is done with it
            owner = _safe_owner(ledger)
            if run_is_live(ledger) and not (include_detached and owner.get("detached")):
                report.live.append(rid)
                continue
            if owner.get("detached") and process_alive_owner(owner):
                report.live.append(rid)  # an emulate-up process still holds it
                continue
            removed = teardown_entries(ledger)
        except UntrustedLedger as err:
            report.failed[rid] = str(err)
            continue
        except (BackendError, OSError, ValueError) as err:
            report.failed[rid] = (
                f"{err} (its ledger stays in {ledger.dir}: run `harness clean` again once "
                "that is fixed)"
            )
            continue
        report.removed[rid] = removed
        ledger.release()
        report.refused[rid] = ledger.refused
    return report


def _safe_owner(ledger: Ledger) -> dict[str, Any]:
    try:
        return ledger.owner()
    except (OSError, ValueError, BackendError):
        return {}


#: Who removes each kind of ledger entry that is not a process: the module (imported only
#: when a ledger holds such entries) whose ``teardown(ledger)`` removes them.  The ledger
#: itself knows processes, sysctls and files; a backend that creates other objects adds
#: its kinds here.
TEARDOWNS: dict[str, str] = {"netns": "harness.backends.netns.teardown"}


def teardown_entries(ledger: Ledger) -> list[str]:
    """Remove every object a ledger lists, processes first; returns what was removed.

    The recorded processes are ended first (by PID and start time), each only
    while it is still the process recorded (its command line and parent); an
    entry naming a live process that is not is refused: noted in
    :attr:`Ledger.refused` (which ``harness clean`` reports, and :func:`warn_refused`
    logs for the other callers), and the process left alone.  Then each backend's
    :data:`TEARDOWNS` module removes its objects (the netns backend: the run's own
    namespaces, whatever still runs inside them, and what lived in them).
    """
    removed: list[str] = []
    for e in ledger.entries("process"):
        check = check_tracked(int(e.name), e.data)  # a PID: entries() refused the others
        if check.verdict is Tracked.NOT_MINE:
            why = (
                f"refusing process {e.name} ({e.data.get('what', '?')}) of run {ledger.run_id}: "
                f"{check.why}; it is not what the run started, so it is left alone"
            )
            ledger.refuse(why)
        elif check.verdict is Tracked.MINE and kill_process(int(e.name), e.data.get("start_ticks")):
            removed.append(f"process {e.name} ({e.data.get('what', '')})")
    for kind, module in TEARDOWNS.items():
        if ledger.entries(kind):
            removed += importlib.import_module(module).teardown(ledger)
    return removed


def warn_refused(ledger: Ledger) -> None:
    """Log what a ledger refused (for teardowns other than ``harness clean``, which reports it)."""
    for why in ledger.refused:
        log.warning("%s", why)
