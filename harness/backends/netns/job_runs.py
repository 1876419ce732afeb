"""The jobs of a netns run: started with the fabric, watched, restarted, measured.

:class:`GlooJobs` starts one fork server (:mod:`~harness.backends.netns.job_worker`,
recorded in the ledger before it runs: :func:`start_fork_server`) which imports
torch once and forks one rank per server of every job; each rank runs in its
server's namespace with one gloo process group per rail.  Ranks append progress
lines to ``RUN_DIR/jobs/JOB.GEN.rankR.jsonl``.

:meth:`GlooJobs.measure` watches a job for a window: *alive* when every rank
completed iterations in it (the rate is rank 0's iterations per second); when a
rank stalls, it keeps watching until the process-group timeout fires (the job
is then lost, ``ended`` ``timeout`` or ``error``, ``seconds`` from its last
iteration to the failure) or progress resumes (alive).  A job that crashed
stays crashed, whatever is repaired, until :meth:`restart` (a scenario's
``restart:`` step) starts it again.

Every rank is ended by PID on every way out (:meth:`close`, and the ledger's
teardown after a crash): closing the fork server's stdin kills its ranks, and
the kernel kills ranks whose fork server died (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import IO
from typing import Any
from typing import TextIO

from harness.backends.ledger import Ledger
from harness.backends.measurement import JobEnd
from harness.backends.measurement import JobRun
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.emulation import running_ledger
from harness.backends.netns.job_worker import RankConfig
from harness.backends.netns.spawn import Ports
from harness.backends.netns.spawn import spawn_held
from harness.backends.processes import kill_process
from harness.backends.processes import process_alive
from harness.backends.run_claims import NETNS_RUN_DIR
from harness.errors import BackendError
from harness.fabric.jobs import Job
from harness.fabric.model import Kind

DEFAULT_ELEMENTS = 64 * 1024  # float32: 256 KB all-reduced per iteration (64 KB per rail)
STARTUP_S = 120.0  # torch import + fork + rendezvous on a loaded 2-core host
MIN_WINDOW_S = 1.0  # a job is watched at least this long
RECENT_S = 1.0  # alive: every rank moved in the window and lately (not stalling at its end)
MARGIN_S = 5.0  # past the timeout, before a job that neither moves nor fails is called hung
STORE_PORTS = (29500, 29999)  # inside the run's own namespaces: no other run's ports


def torch_unavailable() -> str | None:
    """Why the real job cannot run here (``None``: it can)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return "the gloo job needs torch (pip install 'harness[torch]')"
    return None


@dataclass(frozen=True, slots=True)
class _Line:
    event: str
    t: float
    it: int
    last: float
    detail: str


@dataclass(slots=True)
class _Rank:
    cfg: RankConfig
    pid: int | None = None
    start_ticks: int | None = None

    def lines(self) -> list[_Line]:
        try:
            text = Path(self.cfg.progress).read_text()
        except FileNotFoundError:
            return []
        out = []
        for raw in text.splitlines():
            try:
                d = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a line being written
            out.append(
                _Line(
                    str(d["event"]),
                    float(d["t"]),
                    int(d.get("it", 0)),
                    float(d.get("last", d["t"])),
                    str(d.get("detail", "")),
                )
            )
        return out


@dataclass(frozen=True, slots=True)
class _State:
    """One rank now: iterations done, the time of the last one, how it ended (if it did)."""

    ready: bool
    it: int
    last: float
    ended: _Line | None

    @classmethod
    def of(cls, rank: _Rank) -> _State:
        lines = rank.lines()
        ended = next((x for x in lines if x.event in ("timeout", "error")), None)
        ready = any(x.event in ("ready", "progress") for x in lines)
        prog = [x for x in lines if x.event in ("ready", "progress", "timeout", "error")]
        it = max((x.it for x in prog), default=0)
        last = max((x.last for x in prog), default=0.0)
        return cls(ready, it, last, ended)


@dataclass(slots=True)
class _Job:
    job: Job
    generation: int = 0
    ranks: list[_Rank] = field(default_factory=list)
    started: float = 0.0


@dataclass(frozen=True, slots=True)
class _ForkServer:
    """The running fork server: its process, and its stdin and stdout as text."""

    proc: subprocess.Popen[bytes]
    start_ticks: int | None
    commands: TextIO  # one JSON command a line
    replies: TextIO  # one JSON reply a line


def start_fork_server(ledger: Ledger, log: Path) -> _ForkServer:
    """Start the gloo fork server of ``ledger``'s run, in the ledger before it runs.

    It is launched held (:func:`~harness.backends.netns.spawn.spawn_held`, in the
    caller's namespace): the launcher's PID, command line and the command line
    it will ``exec`` are recorded first, then it is let go.  It does nothing but
    import torch until it is told to start a rank.
    """
    argv = [sys.executable, "-m", "harness.backends.netns.job_worker",
            ledger.run_id, str(ledger.root)]  # fmt: skip
    ticks: list[int | None] = []

    def record(pid: int) -> None:
        ticks.append(ledger.track_process(pid, "gloo fork server", argv))

    with open(log, "ab") as err:
        proc = spawn_held(
            None, argv, record, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
        ).go()
    assert proc.stdin is not None
    assert proc.stdout is not None
    commands = io.TextIOWrapper(proc.stdin, write_through=True)
    return _ForkServer(proc, ticks[0], commands, io.TextIOWrapper(proc.stdout))


class GlooJobs:
    """Real torch.distributed/gloo jobs in a running :class:`Emulation`."""

    def __init__(
        self, emu: Emulation, jobs: Sequence[Job], *, elements: int = DEFAULT_ELEMENTS
    ) -> None:
        self.ledger = running_ledger(emu, "run jobs", torch_unavailable())
        self.emu = emu
        self.elements = elements
        self.dir = self.ledger.dir / "jobs"
        self.jobs = {j.name: _Job(j) for j in jobs}
        self._server: _ForkServer | None = None
        self._ports = Ports(*STORE_PORTS)
        self._peeked: dict[tuple[str, int], list[tuple[float, int]]] = {}  # peek's looks
        for j in jobs:
            self._interfaces(j)  # refuse what the gloo job cannot be, before anything starts

    # -- life cycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the fork server and every job (ranks are forked once torch is imported)."""
        self.ledger.record("file", "jobs")
        self.dir.mkdir(mode=0o700, exist_ok=True)
        self._server = start_fork_server(self.ledger, self.dir / "server.log")
        for j in self.jobs.values():
            self._start(j)

    def _interfaces(self, job: Job) -> list[tuple[str, list[str], str]]:
        """Per server of the job: its namespace path, one interface per rail, rank-0 address."""
        plan = self.emu.built
        f = plan.fabric
        out = []
        for s in job.servers:
            nics = sorted(f.parts_of(s, Kind.NIC).tolist(), key=lambda n: int(f.rail[n]))
            ifaces: list[str] = []
            addr = ""
            for n in nics:
                ports = plan.nic_ports.get(n, [])
                spec = f.node_spec(n)
                if len(ports) > 1 and (job.failover == "port" or spec.nic_lag):
                    msg = (
                        f"netns: job {job.name!r} fails over between NIC ports "
                        f"({'failover: port' if job.failover == 'port' else 'bonded NIC ports'}); "
                        "a gloo process group cannot, so its verdict would not be measured "
                        "honestly: run it on the model backend"
                    )
                    raise BackendError(msg)
                for p in ports:
                    ifaces.append(p.ifname)
                    addr = addr or p.v4
            name = plan.namespaces[plan.ns_of[s]].name
            out.append((str(NETNS_RUN_DIR / name), ifaces, addr))
        return out

    def _start(self, j: _Job) -> None:
        assert self._server is not None
        servers = self._interfaces(j.job)
        port = self._ports.next()
        store = servers[0][2]
        j.ranks = []
        for rank, (netns, ifaces, _) in enumerate(servers):
            stem = self.dir / f"{j.job.name}.{j.generation}.rank{rank}"
            cfg = RankConfig(
                j.job.name, j.generation, rank, len(servers), netns, tuple(ifaces), store,
                port, j.job.timeout, self.elements, f"{stem}.jsonl", f"{stem}.log",
            )  # fmt: skip
            j.ranks.append(_Rank(cfg))
            self._server.commands.write(json.dumps({"op": "start", "rank": cfg.to_json()}) + "\n")
        self._server.commands.flush()
        j.started = time.monotonic()

    def _read_pids(self) -> None:
        """Collect the fork server's replies (one PID per rank started, in order)."""
        waiting = [r for j in self.jobs.values() for r in j.ranks if r.pid is None]
        if not waiting:
            return
        assert self._server is not None
        out: IO[str] = self._server.replies
        while waiting:
            line = out.readline()
            if not line:
                msg = (
                    "netns: the gloo fork server ended "
                    f"(see {self.dir / 'server.log'}): {self._server_log()}"
                )
                raise BackendError(msg)
            reply: dict[str, Any] = json.loads(line)
            if "pid" in reply and "start_ticks" in reply:
                rank = waiting.pop(0)
                rank.pid = int(reply["pid"])
                rank.start_ticks = reply["start_ticks"]

    def _server_log(self) -> str:
        try:
            text = (self.dir / "server.log").read_text(errors="replace").strip()
        except OSError:
            return ""
        return text.splitlines()[-1] if text else ""

    def _stop(self, j: _Job) -> None:
        for r in j.ranks:
            if r.pid is not None:
                kill_process(r.pid, r.start_ticks)

    def restart(self, names: Sequence[str]) -> list[str]:
        """Start the named jobs one of whose ranks ended again; returns their names."""
        self._read_pids()
        again = []
        for name in names:
            j = self.jobs.get(name)
            if j is not None and any(self._ended(r) for r in j.ranks):
                self._stop(j)
                j.generation += 1
                self._start(j)
                again.append(j.job.name)
        return again

    @staticmethod
    def _ended(r: _Rank) -> bool:
        if _State.of(r).ended is not None:
            return True
        return r.pid is not None and (
            r.start_ticks is None or not process_alive(r.pid, r.start_ticks)
        )

    def close(self) -> None:
        """End every rank and the fork server, by PID; idempotent.

        A fork server that has forked every rank asked for ends them itself when
        its stdin closes; one still importing torch is ended at once (the ranks
        it forked die with it: ``PR_SET_PDEATHSIG``, or never started).
        """
        server, self._server = self._server, None
        if server is None:
            return
        proc = server.proc
        ranks = [r for j in self.jobs.values() for r in j.ranks]
        for r in ranks:
            if r.pid is not None:
                kill_process(r.pid, r.start_ticks)
        if proc.poll() is None and any(r.pid is None for r in ranks):
            kill_process(proc.pid, server.start_ticks)
        with contextlib.suppress(OSError):
            server.commands.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_process(proc.pid, server.start_ticks)
            proc.wait()
        server.replies.close()

    # -- measuring --------------------------------------------------------------------------
    def measure(self, names: Sequence[str], seconds: float, since: float | None) -> list[JobRun]:
        """Watch the named jobs for ``seconds`` (at least :data:`MIN_WINDOW_S`), together."""
        self._read_pids()
        unknown = [n for n in names if n not in self.jobs]
        if unknown:
            msg = f"netns: no job named {unknown[0]!r} was applied"
            raise BackendError(msg)
        jobs = [self.jobs[n] for n in names]
        for j in jobs:
            self._wait_started(j)
        t0 = time.monotonic()
        before = {j.job.name: [_State.of(r) for r in j.ranks] for j in jobs}
        time.sleep(max(seconds, MIN_WINDOW_S))
        out = []
        for j in jobs:
            out.append(self._judge(j, before[j.job.name], t0, since))
        return out

    def peek(self, names: Sequence[str]) -> list[JobRun]:
        """The named jobs as they are now, without watching them (a drill samples them
        often): ended; or alive when every rank iterated within the last :data:`RECENT_S`
        (the same rule :meth:`measure` applies at the end of its window), with its rate
        over the looks of at least the last :data:`MIN_WINDOW_S`; or ``running`` but not
        alive while a rank has not moved for that long.  A job still starting is waited
        for, as :meth:`measure` does."""
        self._read_pids()
        out = []
        for n in names:
            if n not in self.jobs:
                msg = f"netns: no job named {n!r} was applied"
                raise BackendError(msg)
            j = self.jobs[n]
            self._wait_started(j)
            now = [_State.of(r) for r in j.ranks]
            t = time.monotonic()
            ended = [s.ended for s in now if s.ended is not None]
            if ended:
                out.append(self._lost(j, ended, None))
                continue
            looks = self._peeked.setdefault((n, j.generation), [])
            looks.append((t, now[0].it))
            while len(looks) > 2 and t - looks[1][0] >= MIN_WINDOW_S:
                looks.pop(0)  # keep the newest look at least MIN_WINDOW_S old
            t0, it0 = looks[0]
            rate = (now[0].it - it0) / (t - t0) if t - t0 >= MIN_WINDOW_S else None
            quiet = t - min(s.last for s in now)
            alive = quiet < RECENT_S
            out.append(
                JobRun(
                    n,
                    alive,
                    round(rate, 3) if rate is not None and alive else None,
                    "running",
                    t - t0,
                    "" if alive else f"a rank has not iterated for {quiet:.1f} s",
                )
            )
        return out

    def _wait_started(self, j: _Job) -> None:
        deadline = j.started + STARTUP_S + j.job.timeout
        while True:
            states = [_State.of(r) for r in j.ranks]
            if all(s.ready or s.ended for s in states) or any(s.ended for s in states):
                return
            dead = [r for r in j.ranks if r.pid is not None and self._ended(r)]
            if dead:
                return
            if time.monotonic() > deadline:
                msg = (
                    f"netns: job {j.job.name} did not start within "
                    f"{STARTUP_S + j.job.timeout:.0f} s (see {self.dir})"
                )
                raise BackendError(msg)
            time.sleep(0.1)

    def _judge(self, j: _Job, before: list[_State], t0: float, since: float | None) -> JobRun:
        name = j.job.name
        limit = j.job.timeout + MARGIN_S
        while True:
            now = [_State.of(r) for r in j.ranks]
            t = time.monotonic()
            ended = [s.ended for s in now if s.ended is not None]
            if ended:
                return self._lost(j, ended, since)
            gone = [r.cfg.rank for r in j.ranks if self._ended(r)]
            if gone:  # a rank writes how it ended before it exits: read again
                ended = [s.ended for r in j.ranks if (s := _State.of(r)).ended is not None]
                if ended:
                    return self._lost(j, ended, since)
                return JobRun(name, False, None, "exited", t - t0,
                              f"rank {gone[0]} exited without a word (see {self.dir})")  # fmt: skip
            moved = all(a.it > b.it for a, b in zip(now, before, strict=True))
            recent = t - min(s.last for s in now) < RECENT_S
            if moved and recent:
                rate = (now[0].it - before[0].it) / max(1e-9, now[0].last - before[0].last)
                return JobRun(name, True, round(rate, 3), "running", t - t0)
            stalled_since = min((s.last for s in now if s.last > 0), default=t0)
            if t - stalled_since > limit:
                return JobRun(name, False, None, "running", t - stalled_since,
                              f"no progress for {t - stalled_since:.1f} s and the process "
                              f"group did not time out (timeout {j.job.timeout:g} s)")  # fmt: skip
            time.sleep(0.1)

    def _lost(self, j: _Job, ended: list[_Line], since: float | None) -> JobRun:
        first = min(ended, key=lambda x: x.t)
        took = first.t - first.last
        kind: JobEnd = "timeout" if first.event == "timeout" else "error"
        after = f", {first.t - since:.1f} s after the change" if since is not None else ""
        why = re.sub(r"\[[^\]]*\.(?:cc|cpp|h):\d+\]\s*", "", first.detail)
        detail = f"{took:.2f} s after its last iteration{after}, timeout {j.job.timeout:g} s: {why}"
        return JobRun(j.job.name, False, None, kind, round(took, 3), detail, ended_at=first.t)
