"""A real ``harness run`` subprocess to signal at chosen points, and the host compared after.

:class:`Run` starts ``python -m harness run ... --backend B`` as a user does, with
``HARNESS_STATE_DIR`` set to a test's own ledger root, reads its stderr on a
thread (so a test waits on a line, never on a blind sleep) and follows its
ledger while it runs: the run id, the namespaces' inodes, the processes it
recorded.  :class:`HostState` is what the host has that a run could leave
behind; :func:`assert_restored` checks, without ``harness clean``, that the run
left none of it: no namespace, mount, root link, nft table or process of it,
the sysctls it raised back, its ledger gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.backends.ledger import HOST_STATE
from harness.backends.ledger import read_sysctl
from harness.backends.netns import nsutil
from harness.backends.netns.teardown import processes_in_netns
from harness.backends.processes import process_info
from harness.backends.run_claims import NETNS_RUN_DIR
from harness.backends.signals import WAIT_MESSAGE

#: The host-wide sysctls a netns run raises (neighbour tables for its many peers).
SYSCTLS = (
    "net.ipv4.neigh.default.gc_thresh2",
    "net.ipv4.neigh.default.gc_thresh3",
    "net.ipv6.neigh.default.gc_thresh2",
    "net.ipv6.neigh.default.gc_thresh3",
)


def _nft_tables() -> frozenset[str]:
    try:
        out = subprocess.run(
            ["nft", "list", "tables"], capture_output=True, text=True, check=False
        ).stdout
    except FileNotFoundError:
        return frozenset()
    return frozenset(out.splitlines())


def _netns_mounts() -> frozenset[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return frozenset(x.split()[4] for x in lines if str(NETNS_RUN_DIR) in x)


def _host_table() -> dict[str, Any]:
    try:
        table: dict[str, Any] = json.loads((HOST_STATE / "sysctl.json").read_text())
    except FileNotFoundError:
        return {}
    return table


#: Two servers of one rail NIC each on two leaves of rail 0 (so flows cross the spine):
#: the smallest fabric a signal test can break.
TWO_LEAVES = textwrap.dedent(
    """\
    name: two-leaves
    description: two servers on two leaves of one rail, and one spine
    tiers: 2
    nodes:
      - {id: n1, model: a800, overrides: {rails: 1, storage_nics: 0}}
      - {id: n2, model: a800, overrides: {rails: 1, storage_nics: 0}}
    switches:
      - {id: leaf-a, kind: leaf, rail: 0, ports: 8}
      - {id: leaf-b, kind: leaf, rail: 0, ports: 8}
      - {id: spine1, kind: spine, ports: 8}
    links:
      - {a: n1/nic0, b: leaf-a, kind: access, gbps: 200}
      - {a: n2/nic0, b: leaf-b, kind: access, gbps: 200}
      - {a: leaf-a, b: spine1, kind: leaf-spine, gbps: 100, a_port: 5, count: 2}
      - {a: leaf-b, b: spine1, kind: leaf-spine, gbps: 100, a_port: 5, count: 2}
    """
)


@dataclass(frozen=True)
class HostState:
    """What a run can leave on the host: namespaces, links, mounts, nft tables, sysctls."""

    namespaces: frozenset[str]
    root_links: frozenset[str]
    mounts: frozenset[str]
    nft_tables: frozenset[str]
    sysctls: dict[str, str]
    held: dict[str, Any]  # the host-wide table of raised sysctls (other runs may hold them)

    @classmethod
    def now(cls) -> HostState:
        return cls(
            frozenset(nsutil.list_netns()),
            frozenset(os.listdir("/sys/class/net")),
            _netns_mounts(),
            _nft_tables(),
            {k: read_sysctl(k) for k in SYSCTLS},
            _host_table(),
        )


class Run:
    """``python -m harness ARGS`` (``run SCENARIO --backend B``, ``emulate up F``) in a child
    with ``HARNESS_STATE_DIR=state``, followed as it runs."""

    def __init__(self, state: Path, *args: str) -> None:
        self.state = state
        env = {**os.environ, "HARNESS_STATE_DIR": str(state)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.stderr: list[str] = []
        self._seen = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.run_id = ""
        self.inodes: set[int] = set()
        self.processes: set[tuple[int, int | None]] = set()  # (pid, start ticks) recorded

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._seen:
                self.stderr.append(line.rstrip("\n"))
                self._seen.notify_all()
        with self._seen:
            self._seen.notify_all()

    # -- following it -------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        """The run's ledger entries so far (and what they say of its namespaces, processes)."""
        if not self.run_id:
            dirs = [p for p in self.state.glob("h*") if p.is_dir()] if self.state.exists() else []
            if not dirs:
                return []
            self.run_id = dirs[0].name
        try:
            text = (self.state / self.run_id / "ledger.jsonl").read_text()
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:  # being written
                break
        for e in out:
            if e["kind"] == "netns-created":
                self.inodes.add(int(e["inode"]))
            elif e["kind"] == "process":
                self.processes.add((int(e["name"]), e.get("start_ticks")))
        return out

    def wait_for(self, what: str, done: Callable[[], bool], timeout: float = 60.0) -> None:
        """Poll ``done`` (reading the ledger each time) until it holds; fail if the run ends."""
        deadline = time.monotonic() + timeout
        while True:
            self.entries()
            if done():
                return
            if self.proc.poll() is not None:
                msg = f"the run ended ({self.proc.returncode}) before {what}:\n" + self.err()
                raise AssertionError(msg)
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout:g} s:\n" + self.err())
            time.sleep(0.02)

    def wait_entry(self, kind: str, count: int = 1) -> None:
        """Until the ledger holds ``count`` entries of ``kind``."""
        self.wait_for(
            f"{count} ledger entries {kind}",
            lambda: sum(e["kind"] == kind for e in self.entries()) >= count,
        )

    def in_namespaces(self, program: str) -> bool:
        """Whether a ``program`` process runs in one of the run's namespaces now."""
        for pid, _ in processes_in_netns(self.inodes):
            try:
                exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if exe.decode(errors="replace").endswith(program):
                return True
        return False

    def wait_stderr(self, text: str, count: int = 1, timeout: float = 60.0) -> None:
        """Until ``text`` is on ``count`` stderr lines (the run printed it)."""
        deadline = time.monotonic() + timeout
        with self._seen:
            while sum(text in line for line in self.stderr) < count:
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    msg = f"{count} x {text!r} not on stderr:\n" + "\n".join(self.stderr)
                    raise AssertionError(msg)
                self._seen.wait(min(left, 0.1))

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def finish(self, timeout: float = 120.0) -> int:
        """The exit code (the run killed and the test failed if it does not end in time)."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the run did not end in {timeout:g} s:\n" + self.err()) from None
        self.close()
        return rc

    def close(self) -> None:
        """Its pipes closed (the stderr reader done)."""
        self._reader.join(5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    def err(self) -> str:
        return "\n".join(self.stderr)

    def waits(self) -> int:
        """How many times the run said it was cleaning up (one per signal)."""
        return sum(WAIT_MESSAGE in line for line in self.stderr)


def processes_naming(root: Path) -> list[tuple[int, str]]:
    """(PID, command line) of every process whose command line names a path under ``root``
    (ibsim's net file, OpenSM's config: what a run of that ledger root started)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(str(root) in a for a in argv):
            out.append((int(proc.name), " ".join(argv)))
    return out


def _alive(pid: int, ticks: int | None) -> bool:
    """Whether the process recorded still runs (a zombie does not: an orphan of a detached
    emulation waits for PID 1 to reap it)."""
    info = process_info(pid)
    return info is not None and not info.exited and (ticks is None or info.start_ticks == ticks)


def assert_restored(before: HostState, run: Run) -> None:
    """The run left nothing: checked against ``before`` without ``harness clean``."""
    rid = run.run_id
    assert rid, "the run never wrote a ledger"
    after = HostState.now()
    assert not {n for n in after.namespaces if n.startswith(f"{rid}-")}, "namespaces left"
    assert not {m for m in after.mounts if f"/{rid}-" in m}, "netns mounts left"
    assert not [t for t in after.nft_tables - before.nft_tables if rid in t], "nft tables left"
    new_links = after.root_links - before.root_links
    assert not {x for x in new_links if not x.startswith(("veth", "docker", "br-"))}, new_links
    assert not processes_in_netns(run.inodes), "processes left in the run's namespaces"
    left = [pid for pid, ticks in run.processes if _alive(pid, ticks)]
    assert not left, f"recorded processes still running: {left}"
    named = processes_naming(run.state)
    assert not named, f"processes of the run still running: {named}"
    assert not (run.state / rid).exists(), "the run's ledger is left"
    table = _host_table()
    for key in SYSCTLS:
        holders = table.get(key, {}).get("holders", [])
        assert not [h for h in holders if h.startswith(str(run.state))], f"{key} still held"
        if holders:
            continue  # another run (not this test's) holds it raised
        was = before.held.get(key)
        expected = was["original"] if was else before.sysctls[key]
        assert read_sysctl(key) == expected, f"{key} not restored"


def clean_up_after(run: Run) -> None:
    """After a test (passed or not): the child ended, and what its ledger names removed by
    ``harness clean --include-emulations`` on the test's own ledger root (nothing when the
    run cleaned up; an ``emulate up`` that finished before its signal, when it did not)."""
    if run.proc.poll() is None:
        run.proc.kill()
        run.proc.wait()
    run.close()
    if not any(p.is_dir() for p in run.state.glob("h*")):
        return  # no ledger left: nothing for clean to do
    env = {**os.environ, "HARNESS_STATE_DIR": str(run.state)}
    subprocess.run([sys.executable, "-m", "harness", "clean", "--include-emulations"],
                   env=env, check=True, capture_output=True)  # fmt: skip


def run_on_two_leaves(tmp_path: Path, scenario: str, backend: str) -> Run:
    """``harness run`` of ``scenario`` (on :data:`TWO_LEAVES`) on ``backend``, a root of its own."""
    (tmp_path / "two-leaves.yaml").write_text(TWO_LEAVES)
    path = tmp_path / "exit-paths.yaml"
    path.write_text(scenario)
    return Run(tmp_path / "state", "run", str(path), "--backend", backend)
