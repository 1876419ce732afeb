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
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind
from harness.invariants.analysis import Analysis
from harness.invariants.routed_links import RoutedLinks
from harness.invariants.routed_links import draw_note
from harness.invariants.routed_links import routed_links

JobState = Literal["running", "stalled", "crashed"]


# Faults that take a path away and so need the control plane to reroute.
_REROUTED = frozenset({FaultKind.KILL, FaultKind.CUT, FaultKind.OPTIC})
# Losing one of these under a running job is an uncorrectable error.
_IN_NODE = frozenset({Kind.GPU, Kind.NVSWITCH})
_CUT_OFF = "its NICs cannot reach each other"

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
    reason: str = ""
    rerouted_s: float = 0.0  # the last reroute stall it lived through

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
            return (f"{self.name} running (stalled {_s(self.rerouted_s)} s while the fabric "
                    f"rerouted, within its timeout of {_s(self.timeout)} s)")  # fmt: skip
        return f"{self.name} running"

    def crash(self, at: float, reason: str) -> JobFate:
        """The job crashed at ``at`` for ``reason``."""
        return dataclasses.replace(self, state="crashed", since=at, reason=reason)


@dataclass(frozen=True, slots=True)
class Timeline:
    """The clock and every job's fate; each method returns the next timeline."""

    now: float
    fates: tuple[JobFate, ...]

    @classmethod
    def start(cls, jobs: Sequence[Job]) -> Timeline:
        """The timeline at t=0 with every job running."""
        return cls(0.0, tuple(JobFate(j.name, j.timeout) for j in jobs))

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
        return Timeline(now, tuple(self._timed_out(f, now) for f in self.fates))

    def changed(
        self,
        cut_off: Collection[str],
        why: Mapping[str, str] | None = None,
        stalls: Mapping[str, float] | None = None,
        crashes: Mapping[str, str] | None = None,
    ) -> Timeline:
        """The fault state changed now: ``cut_off`` jobs cannot reach their peers,
        ``stalls`` says how long each other job waits for the reroute, ``crashes``
        which crash at once (and why)."""
        why, stalls, crashes = why or {}, stalls or {}, crashes or {}
        return Timeline(self.now, tuple(
            self._change_one(f, f.name in cut_off, why, stalls, crashes) for f in self.fates
        ))  # fmt: skip

    def _change_one(
        self,
        f: JobFate,
        is_cut_off: bool,
        why: Mapping[str, str],
        stalls: Mapping[str, float],
        crashes: Mapping[str, str],
    ) -> JobFate:
        if f.state == "crashed":
            return f
        if f.name in crashes:
            return f.crash(self.now, crashes[f.name])
        if is_cut_off:
            if f.state == "stalled":
                return f  # the cut-off goes on
            return dataclasses.replace(f, state="stalled", since=self.now,
                                       reason=why.get(f.name, _CUT_OFF))  # fmt: skip
        back = dataclasses.replace(f, state="running", since=0.0, reason="", rerouted_s=0.0)
        stall = stalls.get(f.name, 0.0)
        if stall > 0 and stall_crashes(stall, f.timeout):
            return back.crash(self.now + f.timeout,
                              f"the reroute takes {_s(stall)} s, as long as its timeout "
                              f"({_s(f.timeout)} s) or longer")  # fmt: skip
        return dataclasses.replace(back, rerouted_s=stall) if stall > 0 else back

    def observed(self) -> Timeline:
        """The jobs are watched for their timeout: a stalled job is seen to crash.

        The clock moves on to the moment the last job seen to crash crashed (a
        job stalled since ``s`` at ``s + timeout``; one a reroute crashes, at its
        change + timeout); it does not move when no job crashes in the watch.
        """
        fates = tuple(self._timed_out(f, math.inf) for f in self.fates)
        ends = [f.since for f in fates if f.lost]
        return Timeline(max([self.now, *ends]), fates)

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
        return Timeline(self.now, tuple(
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
    """How long ``applied`` stalls ``job`` while the control plane reroutes (0: not at all)."""
    if applied.fault.kind not in _REROUTED or reroute_s <= 0:
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
    reroute_s: float,
    uses: Mapping[str, frozenset[int]],
) -> Timeline:
    """``t`` after the fault state became ``a``'s (by injecting ``applied``, or a restore)."""
    names, why = cut_off(a)
    stalls: dict[str, float] = {}
    crashes: dict[str, str] = {}
    if applied is not None:
        for job in a.jobs:
            stalls[job.name] = reroute_stall(a.fabric, applied, uses.get(job.name, frozenset()),
                                             reroute_s)  # fmt: skip
            crash = in_node_crash(a.fabric, applied, job)
            if crash is not None:
                crashes[job.name] = crash
    return t.changed(names, why, stalls, crashes)


def traffic_of(a: Analysis, jobs: Sequence[Job] | None = None) -> dict[str, frozenset[int]]:
    """:func:`traffic_links` of every job of ``jobs`` (default: ``a``'s), by name: the routes of
    ``a``'s state, which a failure from that state stalls."""
    return {name: r.links for name, r in routed_of(a, jobs).items()}


# -- a change applied at once, as a pre-change risk check sees it -------------------------
def crashed_by_change(
    before: Analysis, after: Analysis, change: Sequence[AppliedFault], reroute_s: float
) -> dict[str, str]:
    """The jobs running before ``change`` that it crashes though they stay connected.

    The jobs that can run before the change (connected in ``before``'s state)
    live through all of ``change`` at once: each fault that takes away a path
    their traffic uses stalls them for ``reroute_s`` (a drain never does), and
    a GPU, NVSwitch or NVLink lost under them crashes them.  A job cut off in
    ``after`` is left out: the connectivity verdict already loses it.  Returns
    each crashed job with why.
    """
    running = [j for j in before.jobs if j.name not in set(before.jobs_lost())]
    if not running or not change:
        return {}
    routed = routed_of(before, running)
    uses = {name: r.links for name, r in routed.items()}
    stalls = {j.name: max(reroute_stall(before.fabric, a, uses[j.name], reroute_s)
                          for a in change) for j in running}  # fmt: skip
    crashes: dict[str, str] = {}
    for j in running:
        why = next(filter(None, (in_node_crash(before.fabric, a, j) for a in change)), None)
        if why is not None:
            crashes[j.name] = why
    gone, _ = cut_off(after)
    t = Timeline.start(running).changed(gone, stalls=stalls, crashes=crashes).observed()
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
