"""The netns backend on the backend protocol: apply, inject, settle, measure, close.

It measures, never predicts: probes are real ICMP echoes between the rail NICs
(:mod:`~harness.backends.netns.probe`), traced paths are TTL-limited echoes
answered by the switches, link states come from the kernel
(flags, carrier and the shaped tbf rate, reported in the fabric's units at the
run's scale factor), one-way losses are counted with numbered datagrams
(:mod:`~harness.backends.netns.loss`).  While a link is flaky the probes are
retried until a reachable pair's chance of failing every round is below one in
a million (a few lost echoes are loss, not unreachability).  The control
plane is the scenario's ``routing:``:
``sm`` re-sweeps the tables after each change, a failure's ``reroute``
seconds after it (until then the traffic toward what died is lost, see
:mod:`~harness.backends.netns.faults`); ``bgp`` runs FRR on every switch
(:mod:`~harness.backends.netns.bgp`)
and :meth:`settle` waits until every switch's kernel FIB holds the converged
routes.  Either way :meth:`settle` reports how long the fabric took.  Jobs are
real torch.distributed/gloo jobs, one rank per server namespace and one process
group per rail (:mod:`~harness.backends.netns.job_runs`, when torch is
installed); flows are iperf3 runs between the rail NICs
(:mod:`~harness.backends.netns.flows`, when iperf3 is).

Options come from the environment, so that ``harness run --backend netns`` needs
no new flags: ``HARNESS_NETNS_SCALE`` (default 0.001: 200 Gb/s -> 200 Mb/s);
BFD under ``routing: bgp`` is the scenario's ``routing: {bfd: ...}``
(:mod:`harness.fabric.routing`).  ``sweep_delay`` (a constructor argument, for
benchmarks) overrides the scenario's ``reroute`` as the ``sm`` sweep delay.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Sequence

from harness.backends.measurement import Flow
from harness.backends.measurement import JobRun
from harness.backends.measurement import LinkLoss
from harness.backends.measurement import LinkState
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import Probe
from harness.backends.measurement import TracedPath
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.faults import SUPPORTED_ELEMENTS
from harness.backends.netns.faults import SUPPORTED_FAULTS
from harness.backends.netns.faults import FaultEngine
from harness.backends.netns.flow_stream import FlowStreams
from harness.backends.netns.flows import Flows
from harness.backends.netns.flows import iperf3_unavailable
from harness.backends.netns.frr import frr_unavailable
from harness.backends.netns.job_runs import GlooJobs
from harness.backends.netns.job_runs import torch_unavailable
from harness.backends.netns.loss import one_way_loss
from harness.backends.netns.nft import nft_unavailable
from harness.backends.netns.plan import DEFAULT_SCALE
from harness.backends.netns.probe import PROBE_WAIT_S
from harness.backends.netns.probe import probe
from harness.backends.netns.probe import trace
from harness.backends.protocol import Capabilities
from harness.backends.signals import ClosesOnSignals
from harness.backends.signals import cleaning_up
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.invariants.outage import bgp_sessions
from harness.invariants.outage import hang_s

REALIZED_LINKS = frozenset(
    k.label for k in (LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE, LinkKind.STORAGE)
)


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        msg = f"{name}={raw!r} is not a number"
        raise ScenarioError(msg) from None


#: A reachable pair's probe fails every round with at most this chance (on flaky links).
PROBE_MISS = 1e-6
PROBE_ROUNDS_MAX = 20


def probe_rounds(worst_loss: float) -> int:
    """Probe rounds such that a reachable pair fails them all with at most :data:`PROBE_MISS`.

    An echo and its reply cross the lossy links at most once each way, so a
    round fails with at most ``1 - (1 - worst)^2``.

    >>> probe_rounds(0.0), probe_rounds(0.05), probe_rounds(0.2)
    (3, 6, 14)
    """
    if worst_loss <= 0:
        return 3
    miss = 1.0 - (1.0 - min(worst_loss, 0.99)) ** 2
    return min(PROBE_ROUNDS_MAX, max(3, math.ceil(math.log(PROBE_MISS) / math.log(miss))))


#: bgp: seconds the fabric may take to converge before the real jobs start (seed-a800: ~37 s)
JOB_START_CONVERGE_S = 120.0


class NetnsBackend(ClosesOnSignals):
    """A fabric in network namespaces, routed by the harness (``sm``) or by FRR (``bgp``)."""

    name = "netns"
    capabilities = Capabilities(
        SUPPORTED_FAULTS,
        SUPPORTED_ELEMENTS,
        REALIZED_LINKS,
        frozenset({"probes", "paths", "links", "losses"}),
    )

    def __init__(
        self,
        *,
        scale: float | None = None,
        sweep_delay: float | None = None,
    ) -> None:
        self.scale = (
            scale if scale is not None else _env_float("HARNESS_NETNS_SCALE", DEFAULT_SCALE)
        )
        self.sweep_delay = sweep_delay  # None: the routing's reroute
        controls = {"sm"} | ({"bgp"} if frr_unavailable() is None else set())
        # probes, paths and links always; jobs with torch installed, flows with iperf3
        kinds = set(type(self).capabilities.measurements)
        kinds |= {"jobs"} if torch_unavailable() is None else set()
        kinds |= {"flows", "traffic"} if iperf3_unavailable() is None else set()
        # flaky links and hung switches are nftables tables
        faults = SUPPORTED_FAULTS - ({"flaky", "hang"} if nft_unavailable() is not None else set())
        self.capabilities = dataclasses.replace(
            type(self).capabilities, faults=faults, routing=frozenset(controls),
            measurements=frozenset(kinds),
        )  # fmt: skip
        self.emu: Emulation | None = None
        self.engine: FaultEngine | None = None
        self.jobs: tuple[Job, ...] = ()
        self.routing = DEFAULT_ROUTING
        self._settle_s = 0.0
        self._gloo: GlooJobs | None = None
        self._flows: Flows | None = None
        self._streams: FlowStreams | None = None
        self._changed_at: float | None = None

    # -- life cycle ------------------------------------------------------------------------
    def apply(
        self, fabric: Fabric, jobs: Sequence[Job] = (), *, routing: Routing = DEFAULT_ROUTING
    ) -> None:
        """Realize the fabric as namespaces (see :class:`~harness.backends.protocol.Backend`).

        The same fabric with the same control plane keeps the namespaces up (the faults must be
        reverted first) and restarts the jobs only if they changed; anything else tears the
        emulation down and builds it again.
        """
        self.routing = routing
        same = self.emu is not None and self.emu.fabric is fabric
        if (
            same
            and self.emu is not None
            and self.emu.control == routing.control
            and self.emu.bfd_setting == routing.bfd
            and self.emu.routing.hold == routing.hold
            and self.engine is not None
        ):
            if self.engine.effects:
                msg = "netns: apply() while faults are injected; revert them first"
                raise BackendError(msg)
            self.engine.sweep_delay = self._sweep_delay(routing)
            self.engine.hang_delay = hang_s(routing, bgp_sessions(fabric))
            if self._streams is not None:  # a run's background flows are its own
                self._streams.close()
            if tuple(jobs) != self.jobs:
                self._start_jobs(tuple(jobs))
            return
        if routing.control not in self.capabilities.routing:
            msg = f"netns cannot run routing control {routing.control}: {frr_unavailable()}"
            raise BackendError(msg)
        self.close()
        self.emu = Emulation(fabric, scale=self.scale, routing=routing)
        self.emu.up()
        self.engine = FaultEngine(self.emu, sweep_delay=self._sweep_delay(routing),
                                  hang_delay=hang_s(routing, bgp_sessions(fabric)))  # fmt: skip
        if jobs and self.emu.bgp is not None:
            # the ranks connect over the routes BGP installs: a rank that finds no route
            # yet fails at once (ENETUNREACH), so the job starts on the converged fabric
            self.engine.settle(JOB_START_CONVERGE_S)
        self._start_jobs(tuple(jobs))

    def _sweep_delay(self, routing: Routing) -> float:
        """sm: seconds from a failure to the subnet manager's sweep (the routing's reroute)."""
        return routing.reroute if self.sweep_delay is None else self.sweep_delay

    def _start_jobs(self, jobs: tuple[Job, ...]) -> None:
        """(Re)start the real jobs; without torch they stay in the model (prediction only)."""
        if self._gloo is not None:
            self._gloo.close()
            self._gloo = None
        self.jobs = jobs
        if jobs and self.emu is not None and torch_unavailable() is None:
            self._gloo = GlooJobs(self.emu, jobs)
            self._gloo.start()

    def _engine(self) -> FaultEngine:
        if self.engine is None:
            msg = "netns backend: apply(fabric) first"
            raise BackendError(msg)
        return self.engine

    def inject(self, fault: AppliedFault) -> None:
        """Inject the fault on the namespaces (see :class:`~harness.backends.protocol.Backend`)."""
        self._engine().inject(fault)
        self._changed_at = time.monotonic()

    def revert(self, fault: AppliedFault) -> None:
        """Revert the fault on the namespaces (see :class:`~harness.backends.protocol.Backend`)."""
        self._engine().revert(fault)
        self._changed_at = time.monotonic()

    def wait(self, seconds: float) -> None:
        """Real time passes (the fabric and whatever runs on it carry on)."""
        time.sleep(seconds)

    def restart(self, jobs: Sequence[str]) -> None:
        """Start the named jobs that crashed again (a crashed job stays down until then)."""
        if self._gloo is not None:
            self._gloo.restart(jobs)

    def settle(self, timeout: float) -> float:
        """Re-sweep the routes and report how long it took (a crashed job stays crashed)."""
        self._settle_s = self._engine().settle(timeout)
        return self._settle_s

    def close(self) -> None:
        """Stop the jobs, then take every namespace down (no SIGINT/SIGTERM/SIGHUP cuts it
        short: one that arrives meanwhile is raised after, see :func:`cleaning_up`)."""
        with cleaning_up():
            try:
                if self._streams is not None:
                    self._streams.close()
                if self._gloo is not None:
                    self._gloo.close()
            finally:
                self._streams = None
                self._gloo = None
                self._flows = None
                if self.emu is not None:
                    self.emu.down()
                self.emu = None
                self.engine = None

    # -- measuring ------------------------------------------------------------------------------
    def measure(self, plan: MeasurePlan) -> Measurements:
        """Ping, trace, run flows and read links and jobs on the namespaces."""
        engine = self._engine()
        emu = engine.emu
        f = emu.fabric
        unsupported = plan.kinds - self.capabilities.measurements
        if unsupported:
            msg = f"netns cannot measure {', '.join(sorted(unsupported))}"
            raise BackendError(msg)
        probes: tuple[Probe, ...] = ()
        if plan.probes:
            idx = f.index
            pairs = [(idx[a], idx[b]) for a, b in plan.probes]
            wait = PROBE_WAIT_S if plan.probe_wait_s is None else plan.probe_wait_s
            got = probe(emu, pairs, timeout=wait, rounds=probe_rounds(engine.worst_loss()))
            probes = tuple(
                Probe(f.ids[p.src], f.ids[p.dst], p.ok, p.rtt_ms if p.ok else None) for p in got
            )
        paths = []
        for a, b in plan.paths:
            for _ in range(max(3, probe_rounds(engine.worst_loss()))):  # a lost answer: again
                t = trace(emu, f.index[a], f.index[b])
                if t.complete:
                    break
            paths.append(TracedPath(a, b, tuple(f.ids[h] for h in t.hops), t.complete))
        jobs = self._jobs(plan)
        return Measurements(
            self.name,
            probes=probes,
            paths=tuple(paths),
            flows=self._run_flows(plan),
            jobs=jobs,
            links=self._links(plan.links),
            losses=self._losses(plan.losses),
            settle_s=self._settle_s,
            scale=self.scale,
        )

    def _jobs(self, plan: MeasurePlan) -> tuple[JobRun, ...]:
        if not plan.jobs:
            return ()
        if self._gloo is None:
            msg = "netns: jobs were asked for but none was applied (apply(fabric, jobs))"
            raise BackendError(msg)
        if plan.job_now:
            return tuple(self._gloo.peek(plan.jobs))
        return tuple(self._gloo.measure(plan.jobs, plan.job_seconds, self._changed_at))

    def _run_flows(self, plan: MeasurePlan) -> tuple[Flow, ...]:
        """The flow groups, then each collective's flows (``traffic``), a group at a time."""
        groups = (*plan.flows, *plan.traffic)
        if not groups:
            return ()
        if self._flows is None:
            self._flows = Flows(self._engine().emu)
        if plan.flow_now and plan.flows:  # kept running, read at once (a drill's probe)
            if self._streams is None:
                self._streams = FlowStreams(self._flows)
            streamed = self._streams.look(plan.flows)
            windowed = self._flows.run_all(plan.traffic, plan.flow_seconds) if plan.traffic else ()
            return (*streamed, *windowed)
        return self._flows.run_all(groups, plan.flow_seconds)

    def _losses(self, wanted: Sequence[tuple[str, str]]) -> tuple[LinkLoss, ...]:
        emu = self._engine().emu
        f = emu.fabric
        out = []
        for lid, sender in wanted:
            i = f.link_index[lid]
            w = emu.built.wire_of_link.get(i)
            if w is None:
                msg = f"netns does not realize {lid} (GPUs, NVLink and PCIe stay in the model)"
                raise BackendError(msg)
            end = 0 if int(f.link_a[i]) == f.index[sender] else 1
            loss, sent = one_way_loss(emu, w, end)
            out.append(LinkLoss(lid, sender, loss, sent))
        return tuple(out)

    def _links(self, link_ids: Sequence[str]) -> tuple[LinkState, ...]:
        if not link_ids:
            return ()
        emu = self._engine().emu
        plan = emu.built
        f = emu.fabric
        wires = []
        for lid in link_ids:
            w = plan.wire_of_link.get(f.link_index[lid])
            if w is None:
                msg = f"netns does not realize {lid} (GPUs, NVLink and PCIe stay in the model)"
                raise BackendError(msg)
            wires.append(w)
        nss = {emu.port(w, e).ns for w in wires for e in (0, 1)}
        flags = emu.link_flags(nss)
        rates = {ns: emu.qdisc_rates(ns) for ns in nss}
        out = []
        hung = self._engine().dropping
        for lid, w in zip(link_ids, wires, strict=True):
            up = all(emu.carrier(w, flags))
            a, b = emu.port(w, 0), emu.port(w, 1)
            bps = min(rates[a.ns].get(a.ifindex, 0), rates[b.ns].get(b.ifindex, 0))
            if a.ns in hung or b.ns in hung:  # carrier, but its hung end forwards nothing
                bps = 0
            gbps = round(bps / self.scale / 1e9, 6) if up else 0.0
            out.append(LinkState(lid, up, gbps))
        return tuple(out)
