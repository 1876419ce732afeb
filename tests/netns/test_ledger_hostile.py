"""A ledger cannot make the harness touch what a run did not create.

Run ids are unique on the host (a foreign namespace of the id's prefix, another
ledger root's live emulation); a failed ``up()`` removes only what it made; a
forged or torn ledger, a writable or foreign-owned state root are refused and
reported by ``harness clean`` (a real ``python -m harness clean``), which still
cleans the other runs; a stale ``/run/netns`` file of a run is removed.  The
ledgers here are written by hand, their namespaces made with ``ip netns add``.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends import ledger as ledger_mod
from harness.backends import run_claims
from harness.backends.ledger import Ledger
from harness.backends.ledger import release_sysctls
from harness.backends.ledger import run_ids
from harness.backends.netns import nsutil
from harness.backends.netns.emulation import Emulation
from harness.backends.run_claims import NETNS_RUN_DIR
from harness.errors import BackendError
from harness.fabric.fabric_file import load_fabric_file

pytestmark = pytest.mark.privileged

TINY = Path(__file__).parents[2] / "fabrics" / "tiny-explicit.yaml"


# -- helpers ---------------------------------------------------------------------------------------
class Made:
    """Namespaces and processes a test made by hand; whatever is left is removed at the end."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.procs: list[subprocess.Popen[bytes]] = []

    def netns(self, name: str, *, sleeper: bool = False) -> int:
        """``ip netns add NAME`` (and a ``sleep`` inside); the namespace's inode."""
        subprocess.run(["ip", "netns", "add", name], check=True)
        self.names.append(name)
        if sleeper:
            self.procs.append(subprocess.Popen(["ip", "netns", "exec", name, "sleep", "300"]))
        return os.stat(NETNS_RUN_DIR / name).st_ino

    def cleanup(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        for name in self.names:
            if os.path.lexists(NETNS_RUN_DIR / name):
                subprocess.run(["ip", "netns", "del", name], check=False)


@pytest.fixture
def made() -> Iterator[Made]:
    m = Made()
    try:
        yield m
    finally:
        m.cleanup()


def fresh_id() -> str:
    """A run id nothing on the host uses (for a ledger written by hand)."""
    while True:
        rid = ledger_mod.draw_run_id()
        if not run_claims.id_taken(ledger_mod.HOST_STATE, rid, ()):
            return rid


def dead_pid() -> int:
    """The PID of a process that has ended (the owner of a run left behind)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def forge(root: Path, rid: str, lines: list[str]) -> Path:
    """A dead run's ledger under ``root``, written by hand, one line each."""
    root.mkdir(mode=0o700, exist_ok=True)
    d = root / rid
    d.mkdir(mode=0o700)
    owner = {"pid": dead_pid(), "start_ticks": 1, "purpose": "run", "detached": False}
    (d / "owner.json").write_text(json.dumps(owner))
    (d / "ledger.jsonl").write_text("".join(line + "\n" for line in lines))
    return d


def entry(kind: str, name: str, **data: object) -> str:
    return json.dumps({"kind": kind, "name": name, **data})


def harness_clean(root: Path) -> subprocess.CompletedProcess[str]:
    """``python -m harness clean`` as a user runs it, on the ledger root ``root``."""
    env = {**os.environ, "HARNESS_STATE_DIR": str(root)}
    return subprocess.run(
        [sys.executable, "-m", "harness", "clean"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def forced_draws(monkeypatch: pytest.MonkeyPatch, *first: str) -> None:
    """The next run ids drawn are ``first``, then random ones again."""
    queue = list(first)
    real = ledger_mod.draw_run_id
    monkeypatch.setattr(ledger_mod, "draw_run_id", lambda: queue.pop(0) if queue else real())


# -- run ids unique on the host ----------------------------------------------------------------
def test_an_id_whose_prefix_a_foreign_namespace_has_is_never_drawn(
    state_dir: Path, made: Made, monkeypatch: pytest.MonkeyPatch
) -> None:
    rid = fresh_id()
    ino = made.netns(f"{rid}-s01n01", sleeper=True)
    forced_draws(monkeypatch, rid)
    led = Ledger.create("test")
    assert led.run_id != rid
    led.release()
    assert os.stat(NETNS_RUN_DIR / f"{rid}-s01n01").st_ino == ino
    assert made.procs[0].poll() is None  # the sleep inside lives on


def test_another_roots_live_emulation_keeps_its_id_and_its_namespaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rid = fresh_id()
    forced_draws(monkeypatch, rid, rid)
    first = Emulation(load_fabric_file(TINY), root=tmp_path / "root-a")
    first.up()
    try:
        assert first.ledger is not None
        assert first.ledger.run_id == rid
        names = {n.name for n in first.built.namespaces}
        inodes = {n: os.stat(NETNS_RUN_DIR / n).st_ino for n in names}
        second = Ledger.create("test", root=tmp_path / "root-b")  # draws rid first
        assert second.run_id != rid
        second.release()
        assert {n: os.stat(NETNS_RUN_DIR / n).st_ino for n in names} == inodes
    finally:
        first.down()
    assert not [n for n in nsutil.list_netns() if n.startswith(f"{rid}-")]


def test_a_failed_up_removes_only_what_it_created(
    state_dir: Path, made: Made, monkeypatch: pytest.MonkeyPatch
) -> None:
    # someone makes a namespace of the run's name after its id was claimed (the id check
    # cannot see the future): up() refuses it and removes only its own namespaces
    real_create = nsutil.Namespaces.create
    seen: list[str] = []
    foreign: list[str] = []

    def create(
        self: nsutil.Namespaces, name: str, record: Callable[[int], None] | None = None
    ) -> int:
        seen.append(name)
        if len(seen) == 2:
            made.netns(name, sleeper=True)
            foreign.append(name)
        return real_create(self, name, record)

    monkeypatch.setattr(nsutil.Namespaces, "create", create)
    emu = Emulation(load_fabric_file(TINY))
    with pytest.raises(BackendError, match="already exists and is not this run's"):
        emu.up()
    (name,) = foreign
    assert os.path.exists(NETNS_RUN_DIR / name)
    assert made.procs[0].poll() is None
    rid = name.split("-")[0]
    assert [n for n in nsutil.list_netns() if n.startswith(f"{rid}-")] == [name]
    assert run_ids() == []


# -- hostile ledgers -----------------------------------------------------------------------------
def test_forged_entries_are_refused_reported_and_not_touched(
    state_dir: Path, made: Made, tmp_path: Path
) -> None:
    rid = fresh_id()
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    foreign = f"foreign-{rid}"
    made.netns(foreign, sleeper=True)
    squatter = made.netns(f"{rid}-squat")  # the run's prefix, but no inode recorded for it
    wrong = made.netns(f"{rid}-wrong")
    up = "../" * 8
    forge(
        state_dir,
        rid,
        [
            entry("netns", foreign),
            entry("netns", f"{up}{str(victim)[1:]}"),
            entry("netns", f"{rid}-../../x"),
            entry("netns", f"{rid}-squat"),
            entry("netns", f"{rid}-wrong"),
            entry("netns-created", f"{rid}-wrong", inode=wrong + 1),
            entry("nft-table", "filter", netns=f"{rid}-wrong"),
            entry("sysctl", str(victim)),
            entry("sysctl", "net.ipv4.ip_forward"),
            entry("file", f"{up}etc/passwd"),
            entry("process", "-1"),
        ],
    )
    out = harness_clean(state_dir)
    assert out.returncode == 3, out
    assert "Traceback" not in out.stderr
    for what in (
        f"netns name '{foreign}' is not of this run",
        "netns name '../../",
        f"netns name '{rid}-../../x'",
        f"netns {rid}-squat: /run/netns/{rid}-squat is not the namespace run {rid} created "
        "(no inode recorded",
        f"netns {rid}-wrong: /run/netns/{rid}-wrong is not the namespace run {rid} created "
        f"(inode {wrong}, recorded {wrong + 1}",
        "nft table name 'filter' is not of this run",
        f"sysctl '{victim}' is not one the harness raises",
        "sysctl 'net.ipv4.ip_forward' is not one the harness raises",
        "file '../../",
        "process '-1' is not a PID",
    ):
        assert what in out.stderr, (what, out.stderr)
    assert victim.read_text() == "keep me\n"
    assert os.stat(NETNS_RUN_DIR / f"{rid}-squat").st_ino == squatter
    assert os.stat(NETNS_RUN_DIR / f"{rid}-wrong").st_ino == wrong
    assert os.path.exists(NETNS_RUN_DIR / foreign)
    assert made.procs[0].poll() is None  # the process in the foreign namespace lives on
    assert f"run {rid}: removed 0 objects" in out.stdout


@pytest.mark.parametrize("how", ["writable", "foreign-owned", "run-dir-writable", "symlink"])
def test_an_untrusted_state_root_or_run_is_refused_whole(
    tmp_path: Path, made: Made, how: str
) -> None:
    root = tmp_path / "state"
    rid = fresh_id()
    # the worst case: a ledger that names a real namespace of its prefix with its real inode
    ino = made.netns(f"{rid}-a", sleeper=True)
    run = forge(
        root, rid, [entry("netns", f"{rid}-a"), entry("netns-created", f"{rid}-a", inode=ino)]
    )
    if how == "writable":
        root.chmod(0o777)
        expect = f"state directory {root} can be written by every user"
    elif how == "foreign-owned":
        for p in (root, run, run / "owner.json", run / "ledger.jsonl"):
            os.chown(p, 65534, 65534)
        expect = f"state directory {root} belongs to uid 65534, not to uid 0"
    elif how == "run-dir-writable":
        (run / "ledger.jsonl").chmod(0o666)
        expect = f"ledger of run {rid} {run / 'ledger.jsonl'} can be written by every user"
    else:
        (run / "ledger.jsonl").rename(tmp_path / "elsewhere.jsonl")
        (run / "ledger.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
        expect = f"ledger of run {rid} {run / 'ledger.jsonl'} is a symbolic link"
    out = harness_clean(root)
    assert out.returncode == 3, out
    assert expect in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert os.stat(NETNS_RUN_DIR / f"{rid}-a").st_ino == ino
    assert made.procs[0].poll() is None
    assert run.is_dir()


def test_a_torn_ledger_is_skipped_and_the_other_runs_still_cleaned(
    state_dir: Path, made: Made
) -> None:
    torn, good = fresh_id(), fresh_id()
    torn_ino = made.netns(f"{torn}-a")
    good_ino = made.netns(f"{good}-a")
    forge(state_dir, torn, [entry("netns", f"{torn}-a"), '{"kind": "netns-created", "na'])
    forge(
        state_dir,
        good,
        [entry("netns", f"{good}-a"), entry("netns-created", f"{good}-a", inode=good_ino)],
    )
    out = harness_clean(state_dir)
    assert out.returncode == 3, out
    assert "Traceback" not in out.stderr
    assert (
        f"run {torn}: not cleaned: {state_dir / torn / 'ledger.jsonl'} line 2 is not" in out.stderr
    )
    assert f"run {good}: removed 1 objects" in out.stdout
    assert f"  netns {good}-a" in out.stdout
    assert not os.path.lexists(NETNS_RUN_DIR / f"{good}-a")
    assert os.stat(NETNS_RUN_DIR / f"{torn}-a").st_ino == torn_ino
    assert run_ids() == [torn]


def test_stale_netns_files_of_a_run_are_removed(state_dir: Path, made: Made) -> None:
    led = Ledger.create("test")
    rid = led.run_id
    ns = nsutil.Namespaces()
    name, placeholder = f"{rid}-n1", f"{rid}-n2"
    made.names += [name, placeholder]
    led.record("netns", name)
    os.close(ns.create(name, lambda ino: led.record("netns-created", name, inode=ino)))
    ns.close()
    # an interrupted delete: unmounted, not unlinked (what `umount /run/netns/NAME` leaves)
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.umount2(str(NETNS_RUN_DIR / name).encode(), 0) == 0
    # a SIGKILL between the placeholder and the mount: a name recorded, no inode
    led.record("netns", placeholder)
    (NETNS_RUN_DIR / placeholder).touch(mode=0o444)
    assert nsutil.inspect(name).state == nsutil.inspect(placeholder).state == "stale"
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    assert "Peer netns reference is invalid" in listing.stderr + listing.stdout
    (led.dir / "owner.json").write_text(json.dumps({"pid": dead_pid(), "start_ticks": 1}))
    out = harness_clean(state_dir)
    assert out.returncode == 0, out
    assert f"run {rid}: removed 2 objects" in out.stdout
    assert f"  stale /run/netns/{name} (no namespace behind it)" in out.stdout
    assert f"  stale /run/netns/{placeholder} (no namespace behind it)" in out.stdout
    assert not os.path.lexists(NETNS_RUN_DIR / name)
    assert not os.path.lexists(NETNS_RUN_DIR / placeholder)
    assert run_ids() == []


def test_a_table_is_reported_removed_only_when_its_namespace_is_gone(
    state_dir: Path, made: Made
) -> None:
    rid = fresh_id()
    ino = made.netns(f"{rid}-a")
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import os, time; os.open('/run/netns/{rid}-a', os.O_RDONLY); "
         "print(flush=True); time.sleep(300)"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    made.procs.append(holder)
    assert holder.stdout is not None
    holder.stdout.readline()  # it holds the namespace (from the root namespace)
    table = f"{rid}_loss1"
    forge(
        state_dir,
        rid,
        [
            entry("netns", f"{rid}-a"),
            entry("netns-created", f"{rid}-a", inode=ino),
            entry("nft-table", table, netns=f"{rid}-a"),
        ],
    )
    out = harness_clean(state_dir)
    assert out.returncode == 3, out
    assert f"  netns {rid}-a" in out.stdout
    assert f"nft table {table}" not in out.stdout
    assert (
        f"nft table {table}: its namespace {rid}-a is deleted but still held by "
        f"process {holder.pid} (descriptor" in out.stderr
    ), out.stderr


def test_a_forged_host_sysctl_table_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = tmp_path / "host"
    host.mkdir(mode=0o700)
    monkeypatch.setattr(ledger_mod, "HOST_STATE", host)
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    table = {
        str(victim): {"original": "1", "holders": []},
        "kernel.hostname": {"original": "1", "holders": []},
    }
    (host / "sysctl.json").write_text(json.dumps(table))
    refused = release_sysctls(tmp_path / "no-run")
    assert len(refused) == 2
    assert all("not a key the harness raises" in r for r in refused), refused
    assert victim.read_text() == "keep me\n"
    host.chmod(0o770)
    (why,) = release_sysctls(tmp_path / "no-run")
    assert f"host state directory {host} can be written by its group" in why


def test_a_namespace_is_mounted_only_after_its_inode_is_recorded(state_dir: Path) -> None:
    led = Ledger.create("test")
    name = f"{led.run_id}-n1"
    ns = nsutil.Namespaces()
    recorded: list[int] = []

    def fail(inode: int) -> None:  # as a signal or a full disk would, before the mount
        recorded.append(inode)
        raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            ns.create(name, fail)
        assert len(recorded) == 1
        assert not os.path.lexists(NETNS_RUN_DIR / name)  # no mount, no placeholder
        fd = ns.create(name, lambda ino: led.record("netns-created", name, inode=ino))
        os.close(fd)
        assert nsutil.inspect(name) == nsutil.NetnsFile("netns", led.entries()[0].data["inode"])
    finally:
        ns.close()
        nsutil.delete_netns(name)
        led.release()


def test_emulate_status_and_down_report_a_torn_ledger_and_go_on(
    state_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``emulate status`` lists the other runs and ``emulate down`` takes its own down."""
    from harness.backends.netns import session

    torn, good = fresh_id(), fresh_id()
    forge(state_dir, torn, ['{"kind": "netns", "na'])
    d = forge(state_dir, good, [])
    owner = json.loads((d / "owner.json").read_text())
    (d / "owner.json").write_text(json.dumps({**owner, "purpose": "emulate", "fabric": "lab"}))
    states = {r.run_id: r.state for r in session.status(state_dir)}
    assert states[good] == "left behind (harness clean removes it)"
    assert states[torn].startswith("untrusted, left alone: ")
    assert "line 1 is not" in states[torn]
    assert session.down("lab", state_dir) == [good]
    assert f"run {torn}: " in caplog.text
    assert (state_dir / torn).is_dir()  # never acted on
    assert not (state_dir / good).exists()
