"""Bulk flows between server namespaces with iperf3, in the fabric's units.

Every flow of a :class:`~harness.backends.measurement.FlowGroup` runs at once: an
``iperf3 --server --one-off`` in the destination server's namespace bound to
the destination NIC's address, a client in the source server's namespace bound
to the source NIC's address (so the flow leaves on that rail: the namespace's
per-port rules).  A group's servers and clients are all launched held
(:func:`~harness.backends.netns.spawn.spawn_held_many`) and recorded in the
ledger in one write before any runs (one fsync a group, not one a process);
then the servers go, all are awaited listening in one pass, and the clients
are released together; all are ended by PID.  Ports are taken per run from
:data:`PORTS` inside the run's own namespaces, a new one for every flow, so two
flows -- or two runs -- never collide.

Each flow uses several TCP connections (:func:`streams`): the switches hash
ECMP on the 5-tuple, so the streams of one flow spread over the uplinks as the
queue pairs of a NCCL connection do.  A group has :data:`STREAMS_PER_GROUP`
streams in all, 8 to 32 a flow: with 32 a healthy ring's 8 flows got 0.97 of
line rate over a leaf's 4 uplinks, as adaptive routing fills them; with 8,
0.81-0.92 (a hash left one uplink short); a tree's 28 flows at 32 each (896
connections at once) did not all connect in time on 2 cores.  Flows whose
connections were delayed by the others' traffic start late, so a flow's rate is
what its receiver got (the server's intervals: iperf3's default of 1 s, as
only the clients are given :data:`INTERVAL_S`) within the window *every*
flow of the group was running, past a warm-up: the flows' rates then share the
links as the model's fair shares do.  Rates are divided by the run's scale
factor: 200 Mb/s at 1/1000 is 200 Gb/s.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import subprocess
import time
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path

from harness.backends.ledger import Entry
from harness.backends.measurement import Flow
from harness.backends.measurement import FlowGroup
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.emulation import running_ledger
from harness.backends.netns.spawn import Held
from harness.backends.netns.spawn import Launch
from harness.backends.netns.spawn import Ports
from harness.backends.netns.spawn import spawn_held_many
from harness.backends.processes import kill_process
from harness.backends.processes import process_start_ticks
from harness.backends.processes import tracked
from harness.backends.run_claims import NETNS_RUN_DIR
from harness.errors import BackendError

PORTS = (20000, 28999)  # inside the run's namespaces; below the ephemeral range
STREAMS_PER_GROUP = 256
STREAMS = (8, 32)  # per flow, at least and at most
WARMUP_S = 1.0  # after the last flow started, before rates count (TCP slow start)
SLACK_S = 1.5  # tests run longer than asked, so late-starting flows still overlap
INTERVAL_S = 0.1  # the clients' report interval (the servers report at iperf3's 1 s)
LISTEN_TIMEOUT_S = 10.0
ATTEMPTS = 2  # a group whose flows did not run together is run once more
RETRY_SLACK_S = 7.0  # ... with this much more slack: a SYN lost 3 times waits 1 + 2 + 4 s
Series = list[tuple[float, float, float]]  # (start, end, bytes) per receiver interval


def iperf3_unavailable() -> str | None:
    """Why flows cannot be measured here (``None``: they can)."""
    if shutil.which("iperf3") is None:
        return "flows need iperf3 (apt-get install iperf3)"
    return None


def streams(flows: int) -> int:
    """TCP connections per flow in a group of ``flows`` flows.

    >>> streams(4), streams(8), streams(28), streams(56)
    (32, 32, 9, 8)
    """
    lo, hi = STREAMS
    return max(lo, min(hi, STREAMS_PER_GROUP // max(1, flows)))


def _listening(pid: int, port: int) -> bool:
    """Whether process ``pid``'s namespace has a TCP socket listening on ``port``."""
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            return False
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def received(report_text: str, ended: float) -> Series:
    """A flow's receiver intervals on the monotonic clock (empty: the flow could not run).

    The server's intervals are relative to its test start; the test ended when
    the client exited (within the 10 ms the caller polls at), which places them.

    >>> text = json.dumps({"server_output_json": {"intervals": [
    ...     {"sum": {"start": 0, "end": 1, "seconds": 1, "bytes": 10}},
    ...     {"sum": {"start": 1, "end": 2, "seconds": 1, "bytes": 20}}]}})
    >>> received(text, 100.0)
    [(98.0, 99.0, 10.0), (99.0, 100.0, 20.0)]
    """
    try:
        report = json.loads(report_text)
    except json.JSONDecodeError:
        return []
    if "error" in report:
        return []
    intervals = report.get("server_output_json", {}).get("intervals", [])
    sums = [i["sum"] for i in intervals if float(i["sum"]["seconds"]) > 0]
    if not sums:
        return []
    offset = ended - float(sums[-1]["end"])
    return [(offset + float(x["start"]), offset + float(x["end"]), float(x["bytes"])) for x in sums]


class NotTogether(BackendError):
    """The flows of a group did not run at the same time long enough to be measured."""


def common_window(series: Sequence[Series], warmup: float) -> tuple[float, float]:
    """The time every flow that ran was running, from ``warmup`` after the last one started.

    >>> common_window([[(0.0, 5.0, 1.0)], [(1.0, 6.0, 1.0)]], 1.0)
    (2.0, 5.0)

    Too little time together is :class:`NotTogether`, which :meth:`Flows.run`
    answers by running the group again:

    >>> common_window([[(0.0, 2.0, 1.0)], [(1.5, 6.0, 1.0)]], 1.0)
    Traceback (most recent call last):
    ...
    harness.backends.netns.flows.NotTogether: netns: ... long enough (0.00 s in common): ...
    """
    ran = [x for x in series if x]
    if not ran:
        return (0.0, 1.0)
    start = max(x[0][0] for x in ran) + warmup
    end = min(x[-1][1] for x in ran)
    if end - start < 0.5:
        msg = (
            "netns: the iperf3 flows of a group did not run together long enough "
            f"({max(0.0, end - start):.2f} s in common): streams that connected late "
            "(SYNs lost on a flaky link) or a host too busy to start them together"
        )
        raise NotTogether(msg)
    return (start, end)


def rate_in(series: Series, window: tuple[float, float]) -> float:
    """Bits per second a receiver got within ``window`` (intervals counted pro rata).

    >>> rate_in([(0.0, 1.0, 100.0), (1.0, 2.0, 100.0)], (0.5, 1.5))
    800.0
    """
    lo, hi = window
    got = 0.0
    for a, b, n in series:
        overlap = min(b, hi) - max(a, lo)
        if overlap > 0 and b > a:
            got += n * overlap / (b - a)
    return got * 8 / (hi - lo)


def end_held(held: Sequence[Held]) -> None:
    """End launched iperf3 processes: a launcher never told to go exits, the others are
    killed by PID (their start ticks checked) and reaped."""
    for h in held:
        h.drop()
    for h in held:
        if h.proc.poll() is None:
            kill_process(h.proc.pid, process_start_ticks(h.proc.pid))
        with contextlib.suppress(subprocess.TimeoutExpired):
            h.proc.wait(timeout=5)


class Flows:
    """Runs flow groups with iperf3 in an :class:`Emulation`'s server namespaces."""

    def __init__(self, emu: Emulation) -> None:
        self.ledger = running_ledger(emu, "measure flows", iperf3_unavailable())
        self.emu = emu
        self.dir = self.ledger.dir / "flows"
        self._ports = Ports(*PORTS)
        self._runs = 0

    def next_run(self) -> int:
        """Number the next group run (its files' prefix); the first records the flows
        directory in the ledger before it is made."""
        if self._runs == 0:
            self.ledger.record("file", "flows")
            self.dir.mkdir(mode=0o700, exist_ok=True)
        self._runs += 1
        return self._runs

    def _endpoint(self, nic_id: str) -> tuple[str, str]:
        """(namespace path, IPv4 address) of a rail NIC's first port."""
        plan = self.emu.built
        nic = plan.fabric.index.get(nic_id)
        ports = plan.nic_ports.get(nic) if nic is not None else None
        if not ports:
            msg = f"netns: {nic_id!r} is not a rail NIC of the emulated fabric"
            raise BackendError(msg)
        p = ports[0]
        return str(NETNS_RUN_DIR / plan.namespaces[p.ns].name), p.v4

    def _record(
        self, launches: Sequence[Launch], what: Sequence[str]
    ) -> Callable[[list[int]], None]:
        """Record held launchers in the ledger, all in one write (one fsync), before they run."""

        def record(pids: list[int]) -> None:
            self.ledger.record_many([
                Entry("process", str(pid), tracked(pid, w, x.argv))
                for pid, w, x in zip(pids, what, launches, strict=True)
            ])  # fmt: skip

        return record

    def run(self, group: FlowGroup, seconds: float) -> tuple[Flow, ...]:
        """Run every flow of ``group`` at once for ``seconds``; their rates in fabric units.

        A client starts its test once all its streams have connected, so a
        stream whose SYN was lost (a flaky link: 1 s, then 2 s more, per loss)
        or a host too busy to connect them in time can leave the flows too
        little time together.  Such a group is run again, from the start,
        :data:`ATTEMPTS` times at most, each again with :data:`RETRY_SLACK_S`
        more slack; nothing of a failed attempt is kept.
        """
        for attempt in range(ATTEMPTS - 1):
            with contextlib.suppress(NotTogether):
                return self._run_once(group, seconds, SLACK_S + attempt * RETRY_SLACK_S)
        return self._run_once(group, seconds, SLACK_S + (ATTEMPTS - 1) * RETRY_SLACK_S)

    def _run_once(self, group: FlowGroup, seconds: float, slack: float) -> tuple[Flow, ...]:
        if not group.pairs:
            return ()
        self.next_run()
        test_s = math.ceil(max(1.0, seconds) + WARMUP_S + slack)
        per_flow = streams(len(group.pairs))
        launches, what, ports = self._launches(group, test_s, per_flow)
        held: list[Held] = []
        try:
            held = spawn_held_many(launches, self._record(launches, what))
            n = len(ports)  # the servers, then the clients
            self._listen([h.go() for h in held[:n]], ports)
            clients = [h.go() for h in held[n:]]  # all at once: their rates share links
            ended = self._wait(clients, group, test_s + 15.0)
            series = [
                received(x.out.read_text(errors="replace"), end)
                for x, end in zip(launches[n:], ended, strict=True)
            ]
            window = common_window(series, WARMUP_S)
            span = window[1] - window[0]
            return tuple(
                Flow(group.name, src, dst, rate_in(x, window) / self.emu.scale / 1e9, span)
                for (src, dst), x in zip(group.pairs, series, strict=True)
            )
        finally:
            end_held(held)

    def _launches(
        self, group: FlowGroup, test_s: int, per_flow: int
    ) -> tuple[list[Launch], list[str], list[int]]:
        """A one-off server per flow, then each flow's client; what each is; the servers' ports."""
        servers: list[Launch] = []
        clients: list[Launch] = []
        what: list[str] = []
        ports: list[int] = []
        for k, (src, dst) in enumerate(group.pairs):
            ns, addr = self._endpoint(dst)
            port = self._ports.next()
            serve = ("iperf3", "--server", "--one-off", "--json", "--bind", addr,
                     "--port", str(port))  # fmt: skip
            servers.append(Launch(ns, serve, self.dir / f"{self._runs}.{k}.server.log"))
            what.append(f"iperf3 server {dst}:{port}")
            ports.append(port)
            ns, bind = self._endpoint(src)
            client = (
                "iperf3", "--client", addr, "--bind", bind, "--port", str(port),
                "--time", str(test_s), "--parallel", str(per_flow),
                "--interval", str(INTERVAL_S), "--json", "--get-server-output",
                "--connect-timeout", "3000",
            )  # fmt: skip
            clients.append(Launch(ns, client, self.dir / f"{self._runs}.{k}.client.json"))
        what += [f"iperf3 client {src} -> {dst}" for src, dst in group.pairs]
        return servers + clients, what, ports

    @staticmethod
    def _listen(servers: Sequence[subprocess.Popen[bytes]], ports: Sequence[int]) -> None:
        """Wait until every server listens (all polled in one pass), before any client starts."""
        pending = list(zip(servers, ports, strict=True))
        deadline = time.monotonic() + LISTEN_TIMEOUT_S
        while pending := [(p, port) for p, port in pending if not _listening(p.pid, port)]:
            for proc, port in pending:
                if proc.poll() is not None or time.monotonic() > deadline:
                    msg = f"netns: iperf3 server on port {port} did not start"
                    raise BackendError(msg)
            time.sleep(0.02)

    @staticmethod
    def _wait(
        clients: list[subprocess.Popen[bytes]], group: FlowGroup, limit: float
    ) -> list[float]:
        """When each client ended (monotonic seconds): its test's end, to align the flows."""
        ended: list[float | None] = [None] * len(clients)
        deadline = time.monotonic() + limit
        while any(e is None for e in ended):
            now = time.monotonic()
            for i, proc in enumerate(clients):
                if ended[i] is None and proc.poll() is not None:
                    ended[i] = now
            if now > deadline:
                i = next(i for i, e in enumerate(ended) if e is None)
                src, dst = group.pairs[i]
                msg = f"netns: iperf3 {src} -> {dst} did not finish in {limit:.0f} s"
                raise BackendError(msg)
            time.sleep(0.01)
        return [e for e in ended if e is not None]

    def run_all(self, groups: Sequence[FlowGroup], seconds: float) -> tuple[Flow, ...]:
        """Each group in turn (the flows of one group at once)."""
        return tuple(x for g in groups for x in self.run(g, seconds))
