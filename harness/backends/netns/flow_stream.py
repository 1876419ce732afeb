"""Flow groups kept running in the background and read at once: a drill's ``flow`` probe.

:class:`~harness.backends.netns.flows.Flows` runs a group for a window and
returns when it is over, which would hold a drill's clock (and its next
action) for the window.  A *stream* starts a group's iperf3 servers and
clients once (launched held and recorded in the ledger in one write before any
runs, as :mod:`~harness.backends.netns.flows` does) with a test as long as
:data:`STREAM_S`, the servers reporting every :data:`INTERVAL_S` with
``--forceflush``; a look reads each server's newest complete ``[SUM]``
interval from its log without waiting: the rate its receiver got over the last
half second, in fabric units.  A stream runs through faults (a stalled TCP
connection reports intervals of 0 bits/s, and moves again when its path is
back); it is ended by PID when the backend closes, or when a look finds one
of its processes gone (an iperf3 server ends after 120 s without data, a client
that cannot connect in 3 s): then the group is started again at once, and reads
0 until its new servers report (only a group's first start is waited for, so a
look never holds the drill for long).

A look lags the fabric by up to one interval plus the flush, which a drill
allows for before it calls a disagreement a mismatch.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from harness.backends.measurement import Flow
from harness.backends.measurement import FlowGroup
from harness.backends.netns.flows import Flows
from harness.backends.netns.flows import end_held
from harness.backends.netns.flows import streams
from harness.backends.netns.spawn import Held
from harness.backends.netns.spawn import Launch
from harness.backends.netns.spawn import spawn_held_many
from harness.errors import BackendError

INTERVAL_S = 0.5  # the servers' report interval: a look's resolution
STREAM_S = 3600  # a stream's iperf3 test length (it is ended by PID long before)
FIRST_REPORT_S = 10.0  # a new stream's first interval: connecting, then one interval
_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_SUM = re.compile(
    r"^\[SUM\]\s+(?P<start>[\d.]+)-(?P<end>[\d.]+)\s+sec\s+[\d.]+\s+\w?Bytes\s+"
    r"(?P<rate>[\d.]+)\s+(?P<unit>[KMGT]?)bits/sec\s*$"
)


def last_interval(text: str) -> tuple[float, float] | None:
    """The newest complete interval of an iperf3 server's text report: (its end in seconds
    since the test started, bits per second); the final summary lines are not intervals.

    >>> log = '''[SUM]   0.00-0.50   sec  12.0 MBytes   201 Mbits/sec
    ... [SUM]   0.50-1.00   sec  0.00 Bytes  0.00 bits/sec
    ... [SUM]   0.00-1.00   sec  12.0 MBytes   100 Mbits/sec                  receiver
    ... '''
    >>> last_interval(log)
    (1.0, 0.0)
    >>> last_interval("[SUM]   0.00-0.50   sec  1.19 GBytes  20.4 Gbits/sec\\n")
    (0.5, 20400000000.0)
    >>> last_interval("Server listening on 20001") is None
    True
    """
    got = None
    for line in text.splitlines():
        m = _SUM.match(line)
        if m is not None:
            got = (float(m["end"]), float(m["rate"]) * _UNITS[m["unit"]])
    return got


@dataclass
class Stream:
    """One group's flows running: their launches (servers, then clients) and logs."""

    group: FlowGroup
    held: list[Held] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)  # each flow's server report

    def alive(self) -> bool:
        """Whether every process of the group still runs."""
        return all(h.proc.poll() is None for h in self.held)

    def stop(self) -> None:
        """End every process of the group by PID (idempotent)."""
        end_held(self.held)
        self.held = []


class FlowStreams:
    """The streams of one emulation, by group name: started at a group's first look."""

    def __init__(self, flows: Flows) -> None:
        self.flows = flows
        self.running: dict[str, Stream] = {}
        self.started: set[str] = set()  # the groups started once (their first report waited)

    def look(self, groups: tuple[FlowGroup, ...]) -> tuple[Flow, ...]:
        """Each group's flows as they run now: the rate over each receiver's last interval
        (a group seen for the first time is started, and its first interval waited for)."""
        out: list[Flow] = []
        for g in groups:
            s = self.running.get(g.name)
            if s is not None and (s.group != g or not s.alive()):
                s.stop()
                s = None
            if s is None:
                first = g.name not in self.started
                s = self.running[g.name] = self._start(g)
                self.started.add(g.name)
                if first:  # a restarted group reads 0 until it reports: a look never waits
                    self._first_report(s)
            scale = self.flows.emu.scale
            for (src, dst), log in zip(g.pairs, s.logs, strict=True):
                got = last_interval(log.read_text(errors="replace"))
                bps = got[1] if got is not None else 0.0
                out.append(Flow(g.name, src, dst, bps / scale / 1e9, INTERVAL_S))
        return tuple(out)

    def close(self) -> None:
        """End every stream (idempotent)."""
        for s in self.running.values():
            s.stop()
        self.running.clear()
        self.started.clear()

    def _first_report(self, s: Stream) -> None:
        deadline = time.monotonic() + FIRST_REPORT_S
        while not all(p.exists() and last_interval(p.read_text(errors="replace")) for p in s.logs):
            if not s.alive() or time.monotonic() > deadline:
                s.stop()
                msg = (f"netns: the iperf3 flows of {s.group.name!r} did not report within "
                       f"{FIRST_REPORT_S:g} s")  # fmt: skip
                raise BackendError(msg)
            time.sleep(0.05)

    def _start(self, g: FlowGroup) -> Stream:
        f = self.flows
        run = f.next_run()
        per_flow = streams(len(g.pairs))
        servers: list[Launch] = []
        clients: list[Launch] = []
        what: list[str] = []
        ports: list[int] = []
        for k, (src, dst) in enumerate(g.pairs):
            ns, addr = f._endpoint(dst)
            port = f._ports.next()
            serve = ("iperf3", "--server", "--one-off", "--bind", addr, "--port", str(port),
                     "--interval", str(INTERVAL_S), "--forceflush", "--format", "m")  # fmt: skip
            servers.append(Launch(ns, serve, f.dir / f"{run}.{k}.stream.server.log"))
            what.append(f"iperf3 server {dst}:{port} (stream)")
            ports.append(port)
            ns, bind = f._endpoint(src)
            client = ("iperf3", "--client", addr, "--bind", bind, "--port", str(port),
                      "--time", str(STREAM_S), "--parallel", str(per_flow),
                      "--interval", "0", "--connect-timeout", "3000")  # fmt: skip
            clients.append(Launch(ns, client, f.dir / f"{run}.{k}.stream.client.log"))
        what += [f"iperf3 client {src} -> {dst} (stream)" for src, dst in g.pairs]
        launches = servers + clients
        s = Stream(g, logs=[x.out for x in servers])
        try:
            s.held = spawn_held_many(launches, f._record(launches, what))
            n = len(ports)
            f._listen([h.go() for h in s.held[:n]], ports)
            for h in s.held[n:]:
                h.go()
        except BaseException:
            s.stop()
            raise
        return s
