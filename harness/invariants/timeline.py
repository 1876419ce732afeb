"""Time and history: what a running job lives through (invariants stage, pure).

The fault state says what is broken *now*; a training job also remembers what
happened *before*.  A collective that stalls as long as the job's timeout
(NCCL's IB retry window, :func:`harness.fabric.jobs.nccl_ib_timeout_s`) makes the job
crash, and a crashed job stays crashed after the fault is repaired, until it
is restarted.  :class:`Timeline` keeps that history on a clock:

* **the crash rule** (:func:`stall_crashes`, the one statement of it): a job whose
  collectives stall for at least its timeout crashes; a stall *equal* to the
  timeout crashes it, a shorter one is survived.  Durations are compared to
  the nanosecond (:data:`CLOCK_RESOLUTION_S`), so a clock summed from waits
  meets a timeout written with the same digits whatever binary floating
  point makes of the sum;
* a step takes no time, except ``wait: 40s``, which moves the clock, and an
  ``expect`` that watches the jobs (below);
* a job is **cut off** while the fault state leaves its NICs unable to reach
  each other (the model's job verdict).  A cut-off that lasts as long as the
  job's timeout crashes it at ``start + timeout``; one repaired sooner (a
  flap) is survived.  Observing the jobs (an ``expect`` step that looks at
  them) watches them for their timeout, as a measurement does: a job cut off
  at that moment is seen to crash, and the clock moves on to when the last
  job it sees crash crashed (:meth:`Timeline.observed`; it does not move when
  no job is stalled);
* a fault that takes away a path the job's traffic uses while the job stays
  connected (a spine killed under a cross-SU job) stalls it for the control
  plane's **reroute delay** (the subnet manager's sweep, the BGP hold timer or
  BFD): a ``kill``, ``cut`` or ``optic`` does; a ``drain`` does not (it is
  routed around before its links go), nor a ``degrade`` (nothing is lost).  A
  reroute as slow as the timeout crashes the job;
* a **hung** switch (``hang``: links up, nothing forwarded) stalls the jobs whose
  traffic crossed it until the control plane notices and reroutes
  (:mod:`~harness.invariants.outage`: the BGP hold timer without BFD,
  three BFD intervals with it, the subnet manager's next sweep under ``sm``; then
  the ``reroute``), usually far longer than a kill, whose ports go down at once;
  its restore is a reboot, which carries traffic ``link_up`` later (the sessions
  come back) for the jobs it had cut off;
* **overlapping reroutes**: a subnet manager (``control: sm``) sweeps one change
  at a time, so a failure while a sweep is under way waits for it: its routes
  are in at ``max(failure, previous reroute's end) + reroute``
  (:meth:`Timeline.reroute_window`), and the jobs whose traffic crossed it stall
  until then.  Failures at one instant (or while a queued sweep has not started)
  are in one sweep: a heavy sweep reads the whole subnet.  BGP reconverges each
  session on its own (a withdrawal is processed as it arrives, no fabric-wide
  sweep): under ``bgp`` every reroute
  takes ``reroute`` from its own failure.  A job still stalled by one reroute
  when the next one hits it stalls on without a break, from the first stall's
  start to the last one's end.  A repair's bring-up (below) is not queued
  with them (``link_up`` is not split into training and the sweep after it);
* **a repair takes** ``link_up`` **to carry traffic** (link training and the
  subnet manager's sweep, or the BGP session and its routes): a job the fault
  had cut off resumes only ``link_up`` after the ``restore`` of a ``kill``,
  ``cut`` or ``optic``, so its stall is the outage plus ``link_up`` and a flap
  as long as its timeout minus ``link_up`` crashes it.  A job a reroute had
  already moved off the failed link (it stayed connected) pays nothing for the
  repair: the routes do move back onto the repaired link, but only once it is
  up, while the path they leave still works (no stall);
* losing an NVSwitch, NVLink or GPU of a running job's server crashes it at
  once (an uncorrectable NVLink error: degraded NVLink modes apply only when a
  job starts);
* ``restart: JOB`` (or ``all``) starts crashed jobs again where they can be
  placed (their NICs reach each other, on every rail) at that moment: a
  scheduler's node health check does not place a job on a server whose HCA
  port is down, though PXN would let NCCL start on its other NICs.

*Lost* (the running job crashed) is not *unplaceable* (a new job on those
servers cannot start now): after a repair a crashed job is lost but placeable.

>>> from harness.fabric.jobs import Job
>>> t = Timeline.start([Job("j", (0, 1), timeout=10.0)])
>>> t = t.changed(cut_off={"j"})                  # a cable cut under the job
>>> t.fates[0].state
'stalled'
>>> t = t.after(3.0, cut_off={"j"}).changed(cut_off=set())   # repaired 3 s later
>>> t.fates[0].state, t.now                       # a flap within the timeout: survived
('running', 3.0)
>>> t = t.changed(cut_off={"j"}).observed()      # cut again and watched
>>> t.fates[0].describe()
'j crashed at t=13 s: its NICs cannot reach each other for its timeout (10 s)'
>>> t.now                                         # the watch moved the clock
13.0
>>> t.changed(cut_off=set()).fates[0].state      # repaired: still crashed
'crashed'
>>> t.changed(cut_off=set()).restarted({"j"}).fates[0].state
'running'
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind
from harness.invariants.analysis import Analysis
from harness.invariants.outage import STALLING
from harness.invariants.outage import outage_s
from harness.invariants.outage import stall_cause
from harness.invariants.routed_links import RoutedLinks
from harness.invariants.routed_links import draw_note
from harness.invariants.routed_links import routed_links

JobState = Literal["running", "stalled", "crashed"]


#: The faults whose restore brings links or sessions back: traffic only ``link_up`` later.
BROUGHT_UP = STALLING
# Losing one of these under a running job is an uncorrectable error.
_IN_NODE = frozenset({Kind.GPU, Kind.NVSWITCH})
_CUT_OFF = "its NICs cannot reach each other"
_REROUTING = "while the fabric rerouted"

#: The clock's resolution: durations closer than half of it are equal (the crash rule).
CLOCK_RESOLUTION_S = 1e-9


def stall_crashes(stall_s: float, timeout_s: float) -> bool:
    """The crash rule: a job whose collectives stall ``stall_s`` seconds crashes iff the stall
    lasts at least its ``timeout_s`` (NCCL gives up when its retry window has run out).

    Equality crashes: a stall as long as the timeout is not survived.  The two
    are compared to the nanosecond (:data:`CLOCK_RESOLUTION_S`): a stall within
    half a nanosecond of the timeout counts as equal to it.  Every judgement of
    a stall against a timeout -- the timeline's cut-offs and reroutes, the risk
    check's N+1 margin (:func:`reroute_fragile`), ibsim's measured stalls --
    calls this function.

    >>> stall_crashes(10.0, 10.0), stall_crashes(9.999, 10.0), stall_crashes(10.001, 10.0)
    (True, False, True)
    >>> stall_crashes(0.3 - 0.1, 0.2)        # 0.19999999999999998: equal to the nanosecond
    True
    >>> stall_crashes(math.inf, 34.36), stall_crashes(0.0, 0.0)
    (True, True)
    """
    return stall_s >= timeout_s - CLOCK_RESOLUTION_S / 2


def seconds_text(seconds: float) -> str:
    """Seconds for people, as every clock reading and stall is written: four significant
    digits below 1000 s, tenths above (never an exponent).

    >>> [seconds_text(x) for x in (0.0, 0.54, 34.359738368, 144.3597, 0.0005, 12345.67, 3600.0)]
    ['0', '0.54', '34.36', '144.4', '0.0005', '12345.7', '3600']
    """
    if abs(seconds) < 1000:
        return f"{seconds:.4g}"
    return f"{seconds:.1f}".removesuffix(".0")


_s = seconds_text


@dataclass(frozen=True, slots=True)
class JobFate:
    """A job at one moment: running, stalled (cut off since ``since``) or crashed."""

    name: str
    timeout: float
    state: JobState = "running"
    since: float = 0.0  # stalled: when the cut-off began; crashed: when it crashed
    reason: str = ""  # stalled/crashed: why; running after a bounded stall: what it waited for
    rerouted_s: float = 0.0  # the last bounded stall it lived through (from ``since``)

    @property
    def lost(self) -> bool:
        """The running job crashed."""
        return self.state == "crashed"

    @property
    def crashed_at(self) -> float | None:
        """When the job crashed (None unless it did)."""
        return self.since if self.state == "crashed" else None

    def describe(self) -> str:
        """The job's fate in words (``train crashed at t=5 s: ...``)."""
        if self.state == "crashed":
            return f"{self.name} crashed at t={_s(self.since)} s: {self.reason}"
        if self.state == "stalled":
            return (f"{self.name} stalled since t={_s(self.since)} s ({self.reason}); it crashes "
                    f"at t={_s(self.since + self.timeout)} s unless repaired")  # fmt: skip
        if self.rerouted_s:
            return (f"{self.name} running (stalled {_s(self.rerouted_s)} s "
                    f"{self.reason or _REROUTING}, within its timeout of "
                    f"{_s(self.timeout)} s)")  # fmt: skip
        return f"{self.name} running"

    def stalled_until(self) -> float:
        """When a running job's bounded stall (a reroute, a link coming up) ends (0: none)."""
        return self.since + self.rerouted_s if self.state == "running" and self.rerouted_s else 0.0

    def crash(self, at: float, reason: str) -> JobFate:
        """The job crashed at ``at`` for ``reason``."""
        return dataclasses.replace(self, state="crashed", since=at, reason=reason)


@dataclass(frozen=True, slots=True)
class _Change:
    """One change of the fault state, as :meth:`Timeline.changed` applies it to each job."""

    cut_off: frozenset[str]
    why: Mapping[str, str]
    stalls: Mapping[str, float]
    crashes: Mapping[str, str]
    link_up_s: float
    queued_s: float
    cause: str = ""  # what the stall waits for ("" : the reroute)


@dataclass(frozen=True, slots=True)
class Timeline:
    """The clock and every job's fate; each method returns the next timeline."""

    now: float
    fates: tuple[JobFate, ...]
    sweep_start: float = 0.0  # the subnet manager's last sweep (serial reroutes): its start
    sweep_end: float = 0.0  # and when its routes are in

    @classmethod
    def start(cls, jobs: Sequence[Job]) -> Timeline:
        """The timeline at t=0 with every job running."""
        return cls(0.0, tuple(JobFate(j.name, j.timeout) for j in jobs))

    def reroute_window(self, reroute_s: float, serial: bool) -> tuple[float, float]:
        """The sweep that routes around a failure now: (its start, when its routes are in).

        Without ``serial`` reroutes (BGP), ``reroute_s`` from now.  A subnet manager
        (``serial``) sweeps one change at a time and each sweep reads the whole
        subnet: a failure at the instant a sweep starts (or before a queued one
        starts) is in that sweep; one while a sweep is under way waits for it, and
        its sweep ends at ``max(now, previous end) + reroute_s``.

        >>> busy = Timeline(0.5, (), sweep_start=0.0, sweep_end=1.0)
        >>> busy.reroute_window(1.0, serial=True), busy.reroute_window(1.0, serial=False)
        ((1.0, 2.0), (0.5, 1.5))
        >>> Timeline(0.0, (), sweep_start=0.0, sweep_end=1.0).reroute_window(1.0, True)
        (0.0, 1.0)
        """
        if not serial or self.now >= self.sweep_end:
            return self.now, self.now + reroute_s
        if self.now <= self.sweep_start:  # the sweep has not read the subnet yet
            return self.sweep_start, self.sweep_end
        return self.sweep_end, self.sweep_end + reroute_s

    def fate(self, name: str) -> JobFate:
        """The fate of the named job (KeyError when there is none)."""
        for f in self.fates:
            if f.name == name:
                return f
        raise KeyError(name)

    def lost(self) -> list[str]:
        """The names of the jobs that crashed."""
        return [f.name for f in self.fates if f.lost]

    def _timed_out(self, f: JobFate, until: float) -> JobFate:
        if f.state == "stalled" and stall_crashes(until - f.since, f.timeout):
            return f.crash(f.since + f.timeout, f"{f.reason} for its timeout ({_s(f.timeout)} s)")
        return f

    def after(self, seconds: float, cut_off: Collection[str]) -> Timeline:
        """``seconds`` pass with the fault state unchanged (jobs in ``cut_off`` stay cut off)."""
        now = self.now + seconds
        return dataclasses.replace(
            self, now=now, fates=tuple(self._timed_out(f, now) for f in self.fates)
        )

    def changed(
        self,
        cut_off: Collection[str],
        why: Mapping[str, str] | None = None,
        stalls: Mapping[str, float] | None = None,
        crashes: Mapping[str, str] | None = None,
        *,
        resume_after_s: float = 0.0,
        sweep: tuple[float, float] | None = None,
        queued_s: float = 0.0,
        cause: str = "",
    ) -> Timeline:
        """The fault state changed now: ``cut_off`` jobs cannot reach their peers,
        ``stalls`` says how long from now each other job waits for the reroute,
        ``crashes`` which crash at once (and why).

        ``resume_after_s``: the change repaired a link, which carries traffic only that long
        from now, so a job it reconnects stays stalled until then.  ``sweep``: the
        subnet manager's last sweep now, start and end (None: unchanged);
        ``queued_s``: how long of ``stalls`` this change's reroute waited for a sweep
        under way; ``cause``: what the stalls wait for, in words (default: the reroute).
        """
        c = _Change(frozenset(cut_off), why or {}, stalls or {}, crashes or {}, resume_after_s,
                    queued_s, cause)  # fmt: skip
        fates = tuple(self._change_one(f, c) for f in self.fates)
        start, end = (self.sweep_start, self.sweep_end) if sweep is None else sweep
        return Timeline(self.now, fates, start, end)

    def _change_one(self, f: JobFate, c: _Change) -> JobFate:
        if f.state == "crashed":
            return f
        if f.name in c.crashes:
            return f.crash(self.now, c.crashes[f.name])
        ongoing = f.stalled_until() > self.now  # still waiting for an earlier reroute
        if f.name in c.cut_off:
            if f.state == "stalled":
                return f  # the cut-off goes on
            since, why = f.since if ongoing else self.now, c.why.get(f.name, _CUT_OFF)
            return dataclasses.replace(f, state="stalled", since=since, reason=why,
                                       rerouted_s=0.0)  # fmt: skip
        if f.state == "stalled":  # reconnected: by a repair, once the link is up
            return self._resumed(f, c.link_up_s)
        stall = c.stalls.get(f.name, 0.0)
        queued_s = c.queued_s
        if stall <= 0:
            if ongoing:
                return f  # the earlier stall goes on; this change does not touch the job
            return dataclasses.replace(f, since=0.0, reason="", rerouted_s=0.0)
        start = f.since if ongoing else self.now
        lasts = self.now + stall - start
        queued = ""
        if queued_s > 0:
            queued = (f" ({_s(queued_s)} s of it queued behind the subnet manager's sweep under "
                      f"way, then its own {_s(stall - queued_s)} s)")  # fmt: skip
        earlier = f", on top of the stall since t={_s(start)} s" if start < self.now else ""
        waits = c.cause or f"the reroute takes {_s(stall)} s"
        if stall_crashes(lasts, f.timeout):
            total = f": stalled {_s(lasts)} s" if queued or earlier else ""
            return f.crash(start + f.timeout,
                           f"{waits}{queued}{earlier}{total}, as long "
                           f"as its timeout ({_s(f.timeout)} s) or longer")  # fmt: skip
        note = f"{'while ' + c.cause if c.cause else _REROUTING}{queued}{earlier}"
        return dataclasses.replace(f, since=start, reason=note, rerouted_s=lasts)

    def _resumed(self, f: JobFate, link_up_s: float) -> JobFate:
        """A job cut off since ``f.since``, reconnected now: it resumes ``link_up_s`` later."""
        lasts = self.now + link_up_s - f.since
        if link_up_s <= 0:
            return dataclasses.replace(f, state="running", since=0.0, reason="", rerouted_s=0.0)
        if stall_crashes(lasts, f.timeout):
            return f.crash(f.since + f.timeout,
                           f"{f.reason} for {_s(self.now - f.since)} s, and the repaired link "
                           f"carries traffic only {_s(link_up_s)} s later (link_up): stalled "
                           f"{_s(lasts)} s, as long as its timeout ({_s(f.timeout)} s) or "
                           "longer")  # fmt: skip
        up_at = self.now + link_up_s
        note = (f"as it was cut off {_s(self.now - f.since)} s and the repaired link carried "
                f"traffic {_s(link_up_s)} s later (link_up, at t={_s(up_at)} s)")  # fmt: skip
        return dataclasses.replace(f, state="running", reason=note, rerouted_s=lasts)

    def observed(self) -> Timeline:
        """The jobs are watched for their timeout: a stalled job is seen to crash.

        The clock moves on to the moment the last job seen to crash crashed (a
        job stalled since ``s`` at ``s + timeout``; one a reroute crashes, at its
        change + timeout); it does not move when no job crashes in the watch.
        """
        fates = tuple(self._timed_out(f, math.inf) for f in self.fates)
        ends = [f.since for f in fates if f.lost]
        return dataclasses.replace(self, now=max([self.now, *ends]), fates=fates)

    def watch_note(self, after: Timeline) -> str:
        """What watching the jobs did to the clock, from this timeline to ``after``
        (:meth:`observed`): ``""`` when the clock did not move."""
        moved = after.now - self.now
        if moved <= 0:
            return ""
        seen = [f for f in after.fates if f.lost and f.since > self.now]
        timeouts = sorted({f.timeout for f in seen})
        which = " / ".join(f"{_s(t)} s" for t in timeouts)
        names = ", ".join(f.name for f in seen[:4]) + (" ..." if len(seen) > 4 else "")
        return (f"watched the jobs for their {which} timeout: the clock moved {_s(moved)} s, "
                f"until {names} crashed (t={_s(after.now)} s)")  # fmt: skip

    def restarted(self, names: Collection[str], cut_off: Collection[str] = ()) -> Timeline:
        """Crashed jobs in ``names`` start again, unless they cannot be placed now."""
        return dataclasses.replace(self, fates=tuple(
            JobFate(f.name, f.timeout)
            if f.state == "crashed" and f.name in names and f.name not in cut_off else f
            for f in self.fates
        ))  # fmt: skip


# -- what a job's traffic uses ------------------------------------------------------------
def traffic_links(a: Analysis, job: Job) -> frozenset[int]:
    """The cables ``job``'s flows are routed over in ``a``'s state, under ``a``'s forwarding.

    The flows of its collectives as the flow engine places them, on the paths
    the forwarding model gives them (:mod:`harness.invariants.routed_links`):
    under static tables the d-mod-k path of each flow, so a spine's loss
    touches only the jobs whose destinations it carried; under adaptive
    routing every admissible cable of the pools; under ``ecmp`` every cable
    some hash draw puts a flow on.  A job inside one leaf uses only its
    access cables; one on one server, none.
    """
    return routed_links(a.network, [job], a.forwarding)[job.name].links


def routed_of(a: Analysis, jobs: Sequence[Job] | None = None) -> dict[str, RoutedLinks]:
    """The routed cables of ``jobs`` (default: ``a``'s), per draw, by name (cached per state)."""
    chosen = a.jobs if jobs is None else tuple(jobs)
    if not chosen:  # the network (NIC rates and all) is not built for nothing
        return {}
    return routed_links(a.network, chosen, a.forwarding)


def fault_links(fabric: Fabric, applied: AppliedFault) -> frozenset[int]:
    """The links a fault takes down: its own, and every link of what it kills."""
    out = {link for link, factor in zip(applied.links, applied.factors, strict=False)
           if factor <= 0}  # fmt: skip
    if not applied.factors:
        out |= set(applied.links)
    for e in applied.elements:
        out |= set(fabric.links_at(e).tolist())
    return frozenset(out)


def reroute_stall(
    fabric: Fabric, applied: AppliedFault, uses: frozenset[int], reroute_s: float
) -> float:
    """How long ``applied`` stalls a job whose traffic crosses the links ``uses`` while the
    control plane routes around it, ``reroute_s`` (:func:`outage_s`; 0: not at all)."""
    if applied.fault.kind not in STALLING or reroute_s <= 0:
        return 0.0
    return reroute_s if fault_links(fabric, applied) & uses else 0.0


def in_node_crash(fabric: Fabric, applied: AppliedFault, job: Job) -> str | None:
    """Why ``applied`` crashes a running job at once (an NVLink error), or ``None``."""
    f = fabric
    servers = set(job.servers)
    if applied.fault.kind in (FaultKind.KILL, FaultKind.DRAIN):
        for e in applied.elements:
            if Kind(int(f.kind[e])) in _IN_NODE and int(f.parent[e]) in servers:
                return f"{Kind(int(f.kind[e])).label} {f.ids[e]} lost under the running job"
    if applied.fault.kind in (FaultKind.CUT, FaultKind.DEGRADE, FaultKind.KILL):
        for link in applied.links:
            if f.link_kind[link] != int(LinkKind.NVLINK):
                continue
            a = int(f.link_a[link])
            owner = int(f.parent[a]) if f.parent[a] >= 0 else int(f.parent[int(f.link_b[link])])
            if owner in servers:
                return f"NVLink {f.link_ids[link]} lost under the running job"
    return None


# -- a fault state change, as the model sees it --------------------------------------------
def cut_off(a: Analysis) -> tuple[frozenset[str], dict[str, str]]:
    """The jobs whose NICs cannot reach each other in ``a``'s fault state, and why."""
    lost = [v for v in a.verdicts if v.lost]
    return frozenset(v.name for v in lost), {v.name: v.reasons[0] for v in lost if v.reasons}


def after_change(
    t: Timeline,
    a: Analysis,
    applied: AppliedFault | None,
    routing: Routing,
    uses: Mapping[str, frozenset[int]],
    *,
    restored: Sequence[AppliedFault] = (),
) -> Timeline:
    """``t`` after the fault state became ``a``'s (by injecting ``applied``, or a restore).

    An injected kill, cut or optic stalls the jobs whose traffic crossed it until
    its reroute is in, a hang until it is noticed and rerouted (:func:`outage_s`;
    :meth:`Timeline.reroute_window`: queued behind the one under way when
    reroutes are ``serial``, as a subnet manager's are).  A restore of
    ``restored`` faults that brings a link back (a kill, cut or optic) or reboots a
    hung switch reconnects the jobs it had cut off ``routing.link_up_s`` later.
    ``routing`` as resolved once: its ``reroute``, ``link_up``, the hang timers and
    whether its reroutes are serial.
    """
    serial = routing.serial_sweeps
    names, why = cut_off(a)
    stalls: dict[str, float] = {}
    crashes: dict[str, str] = {}
    sweep: tuple[float, float] | None = None
    queued = 0.0
    cause = ""
    if applied is not None:
        reroute_s = outage_s(a.fabric, applied, routing)
        cause = stall_cause(a.fabric, applied, routing)
        if reroute_s > 0:
            sweep = t.reroute_window(reroute_s, serial)
            queued = max(0.0, sweep[0] - t.now)
            reroute_s = sweep[1] - t.now  # how long the jobs it hits wait from now
            sweep = sweep if serial else None
        for job in a.jobs:
            stalls[job.name] = reroute_stall(a.fabric, applied, uses.get(job.name, frozenset()),
                                             reroute_s)  # fmt: skip
            crash = in_node_crash(a.fabric, applied, job)
            if crash is not None:
                crashes[job.name] = crash
    up = routing.link_up_s if any(r.fault.kind in BROUGHT_UP for r in restored) else 0.0
    return t.changed(names, why, stalls, crashes, resume_after_s=up, sweep=sweep,
                     queued_s=queued, cause=cause)  # fmt: skip


def traffic_of(a: Analysis, jobs: Sequence[Job] | None = None) -> dict[str, frozenset[int]]:
    """:func:`traffic_links` of every job of ``jobs`` (default: ``a``'s), by name: the routes of
    ``a``'s state, which a failure from that state stalls."""
    return {name: r.links for name, r in routed_of(a, jobs).items()}


# -- a change applied at once, as a pre-change risk check sees it -------------------------
def crashed_by_change(
    before: Analysis, after: Analysis, change: Sequence[AppliedFault], routing: Routing
) -> dict[str, str]:
    """The jobs running before ``change`` that it crashes though they stay connected.

    The jobs that can run before the change (connected in ``before``'s state)
    live through all of ``change`` at once: each fault that takes away a path
    their traffic uses stalls them until ``routing`` has routed around it
    (:func:`outage_s`: the reroute; a hang's detection first; a drain never does), and
    a GPU, NVSwitch or NVLink lost under them crashes them.  A job cut off in
    ``after`` is left out: the connectivity verdict already loses it.  Returns
    each crashed job with why.
    """
    running = [j for j in before.jobs if j.name not in set(before.jobs_lost())]
    if not running or not change:
        return {}
    routed = routed_of(before, running)
    uses = {name: r.links for name, r in routed.items()}
    fab = before.fabric
    stalls = {j.name: max(reroute_stall(fab, a, uses[j.name], outage_s(fab, a, routing))
                          for a in change) for j in running}  # fmt: skip
    worst = {j: next((a for a in change if reroute_stall(fab, a, uses[j], outage_s(fab, a, routing))
                      == stalls[j]), None) for j in stalls if stalls[j] > 0}  # fmt: skip
    causes = {stall_cause(fab, a, routing) for a in worst.values() if a is not None}
    crashes: dict[str, str] = {}
    for j in running:
        why = next(filter(None, (in_node_crash(before.fabric, a, j) for a in change)), None)
        if why is not None:
            crashes[j.name] = why
    gone, _ = cut_off(after)
    cause = causes.pop() if len(causes) == 1 else ""  # one cause (the usual one fault)
    t = Timeline.start(running).changed(gone, stalls=stalls, crashes=crashes,
                                        cause=cause).observed()  # fmt: skip
    taken = frozenset().union(*(fault_links(before.fabric, a) for a in change))
    return {f.name: f.reason + (draw_note(routed[f.name], taken) if f.name in routed else "")
            for f in t.fates if f.lost and f.name not in gone}  # fmt: skip


def reroute_fragile(
    a: Analysis, reroute_s: float, skip: Collection[str] = ()
) -> dict[str, RoutedLinks]:
    """The jobs of ``a`` (not in ``skip``) a reroute of ``reroute_s`` crashes, with the cables
    their flows are routed over in ``a``'s state.

    A job whose timeout is no longer than the control plane's reroute crashes
    when any further kill, cut or optic takes away a cable its routed flows
    cross (under ``ecmp``: in some hash draw; the draws are kept for the note).
    """
    if reroute_s <= 0:
        return {}
    fragile = [j for j in a.jobs if stall_crashes(reroute_s, j.timeout) and j.name not in skip]
    return routed_of(a, fragile) if fragile else {}
