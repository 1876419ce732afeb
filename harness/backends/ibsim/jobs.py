"""Running jobs on ibsim, judged from the real tables and the SM's measured routing time.

ibsim carries no packets, so no job runs on it.  What decides whether a running
NCCL job survives a fault is measured all the same: whether OpenSM's tables
route every pair of the job's NICs on each rail (walked hop by hop,
:mod:`.walk`), whether a change took down a cable the tables sent the job's
traffic over, and how long the SM then took to write new tables (the first
console line to its ``SUBNET UP``).  The job's fate follows the model's rule
(:mod:`harness.invariants.timeline`) on the real clock:

* a change that takes down a cable the tables sent a flow of the job's
  collectives over (its ring's and trees' NIC pairs in rank order, on every
  rail, as the model places them), and after which OpenSM routes the job
  again, stalls it for the SM's measured routing time; a stall as long as the
  job's timeout (NCCL's IB retry window) crashes it;
* a change after which the tables route some pair of its NICs no more stalls
  it until a later change routes it again: the repair's stall ends when
  OpenSM has routed over the link again (the ``ReLink`` to its ``SUBNET UP``,
  the link-up the model calls ``routing: link_up``; ibsim has no link
  training, so that is the SM's sweep alone), and the stall's measured length
  against the timeout decides (a flap shorter than the timeout minus that
  link-up is survived);
* a measurement of a job that is still without a route sees it crash: OpenSM
  has routed, nothing changes the tables until the next change, so NCCL's retry
  window runs out (an ``expect`` watches the job for its timeout, as the model's
  does);
* a crashed job stays crashed after the repair, until ``restart()``.

A drain on ibsim is a sequence of single-cable unlinks (ibsim has no
administrative port disable an SM routes around first): each one black-holes
the destinations the tables sent over that cable until OpenSM routes around it,
so each step stalls the jobs it crossed like a one-cable kill -- shorter than
the default timeout by orders of magnitude, longer than a timeout of a few
milliseconds.  The model's drain stalls nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from harness.backends.ibsim.walk import Routes
from harness.backends.measurement import JobRun
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.invariants.collectives import rank_flows
from harness.invariants.timeline import stall_crashes

Cable = frozenset[str]  # the element ids at its two ends

_SOURCE = "judged from OpenSM's tables (ibsim carries no traffic)"


@dataclass(slots=True)
class _Fate:
    """One job's history on the clock (seconds from ``time.monotonic``)."""

    job: Job
    src: npt.NDArray[np.intp]  # NIC element indices: every ordered pair on one rail
    dst: npt.NDArray[np.intp]
    flows: tuple[tuple[int, int], ...] = ()  # the NIC pairs its collectives send over
    stalled_since: float | None = None  # its routes are gone since (a change's start)
    stalled_why: str = ""
    crashed: str = ""  # why it crashed (until restarted)
    crashed_after: float = 0.0  # seconds it was stalled when it crashed
    crashed_at: float | None = None  # when (the clock's), if known
    last_stall: float = 0.0  # the last stall it lived through


def _job_pairs(fabric: Fabric, job: Job) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    servers = set(job.servers)
    nics = [int(n) for n in fabric.nics.tolist() if int(fabric.parent[n]) in servers]
    src: list[int] = []
    dst: list[int] = []
    for a in nics:
        for b in nics:
            if a != b and int(fabric.rail[a]) == int(fabric.rail[b]):
                src.append(a)
                dst.append(b)
    return np.array(src, dtype=np.intp), np.array(dst, dtype=np.intp)


def _flow_pairs(fabric: Fabric, job: Job) -> tuple[tuple[int, int], ...]:
    """The (sender, receiver) NIC pairs of the job's collectives on every rail, as the model
    places them (:func:`~harness.invariants.collectives.rank_flows` over its rank order):
    NCCL sends only over its ring's and trees' edges (every pair for all-to-all)."""
    nic_of: dict[tuple[int, int], int] = {}
    servers = set(job.servers)
    for n in fabric.nics.tolist():
        if int(fabric.parent[n]) in servers and int(fabric.rail[n]) >= 0:
            nic_of[int(fabric.parent[n]), int(fabric.rail[n])] = int(n)
    rails = sorted({r for _, r in nic_of})
    out: dict[tuple[int, int], None] = {}
    for collective in job.collectives:
        src, dst = rank_flows(collective, len(job.servers))
        for a, b in zip(src.tolist(), dst.tolist(), strict=True):
            for r in rails:
                x, y = nic_of.get((job.servers[a], r)), nic_of.get((job.servers[b], r))
                if x is not None and y is not None:
                    out[x, y] = None
    return tuple(out)


class TableJobs:
    """The scenario's jobs, followed across every change of the simulated subnet."""

    def __init__(
        self,
        fabric: Fabric,
        jobs: Sequence[Job],
        routes: Callable[[], Routes],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fabric = fabric
        self._routes = routes
        self._clock = clock
        self.fates = {
            j.name: _Fate(j, *_job_pairs(fabric, j), flows=_flow_pairs(fabric, j)) for j in jobs
        }
        self._crossing: set[str] = set()

    # -- around one change (Simulation.change calls these) -----------------------------
    def before(self, cables: Iterable[Cable], *, up: bool) -> None:
        """Which running jobs the tables send over a cable about to go down."""
        self._crossing = set()
        if up:
            return
        gone = set(cables)
        routes = self._routes()
        for name, fate in self.fates.items():
            if (
                not fate.crashed
                and fate.stalled_since is None
                and self._crosses(routes, fate, gone)
            ):
                self._crossing.add(name)

    def after(self, started: float, routed_s: float, what: str) -> None:
        """The change is in and routed (``routed_s`` after ``started``): stalls and crashes."""
        routes = self._routes()
        done = started + routed_s
        for name, fate in self.fates.items():
            if fate.crashed:
                continue
            broken = self._broken(routes, fate)
            if fate.stalled_since is not None:
                if broken is None:  # routed again: the stall is over
                    self._ended(fate, done - fate.stalled_since, fate.stalled_why)
                continue
            if broken is not None:
                fate.stalled_since, fate.stalled_why = started, f"{broken} after {what}"
            elif name in self._crossing:
                self._ended(fate, routed_s, what)
        self._crossing = set()

    def _ended(self, fate: _Fate, stalled: float, why: str) -> None:
        since = fate.stalled_since
        fate.stalled_since, fate.last_stall = None, stalled
        if stall_crashes(stalled, fate.job.timeout):
            fate.crashed_at = None if since is None else since + fate.job.timeout
            fate.crashed = (
                f"stalled {stalled:.3f} s until OpenSM's new tables ({why}), not shorter than "
                f"its timeout {fate.job.timeout:.4g} s"
            )
            fate.crashed_after = stalled

    # -- what a measurement sees ----------------------------------------------------------
    def run(self, name: str) -> JobRun:
        """The job's run as a measurement sees it: crashed once a stall outlasts its timeout."""
        fate = self.fates[name]
        if not fate.crashed and fate.stalled_since is not None:
            # OpenSM has routed; nothing changes the tables before the next change
            fate.crashed = (
                f"{fate.stalled_why}; OpenSM has routed and nothing changes its tables "
                f"within its timeout {fate.job.timeout:.4g} s"
            )
            fate.crashed_after = fate.job.timeout
            fate.stalled_since = None
        if fate.crashed:
            return JobRun(name, False, ended="timeout", seconds=fate.crashed_after,
                          detail=f"{fate.crashed}; {_SOURCE}")  # fmt: skip
        detail = f"every NIC pair routed; {_SOURCE}"
        if fate.last_stall:
            detail = f"stalled {fate.last_stall:.3f} s by the last reroute it crossed; {detail}"
        return JobRun(name, True, detail=detail)

    def peek(self, name: str) -> JobRun:
        """The job now, without watching it (a drill looks often): crashed once it has had no
        route for its timeout on the clock, not alive while it has none, else alive."""
        fate = self.fates[name]
        now = self._clock()
        since = fate.stalled_since
        if not fate.crashed and since is not None and stall_crashes(now - since, fate.job.timeout):
            fate.crashed = (f"{fate.stalled_why}; no route for its timeout "
                            f"{fate.job.timeout:.4g} s")  # fmt: skip
            fate.crashed_after, fate.crashed_at = fate.job.timeout, since + fate.job.timeout
            fate.stalled_since = None
        if fate.crashed:
            why = f"{fate.crashed}; {_SOURCE}"
            return JobRun(name, False, ended="timeout", seconds=fate.crashed_after, detail=why,
                          ended_at=fate.crashed_at)  # fmt: skip
        if since is not None:
            return JobRun(
                name,
                False,
                None,
                "running",
                now - since,
                f"no route since {now - since:.2f} s ({fate.stalled_why}); {_SOURCE}",
            )
        return JobRun(name, True, detail=f"every NIC pair routed; {_SOURCE}")

    def restart(self, names: Iterable[str]) -> None:
        """Crashed jobs start again where the tables route all their NIC pairs now."""
        routes = self._routes()
        for name in names:
            fate = self.fates[name]
            if fate.crashed and self._broken(routes, fate) is None:
                fate.crashed, fate.crashed_after, fate.last_stall = "", 0.0, 0.0
                fate.crashed_at = None

    # -- the tables -------------------------------------------------------------------------
    def _broken(self, routes: Routes, fate: _Fate) -> str | None:
        """A pair of the job's NICs the tables do not route (None: all routed)."""
        if not len(fate.src):
            return None
        ok = routes.routed_many(fate.src, fate.dst)
        if bool(ok.all()):
            return None
        k = int(np.flatnonzero(~ok)[0])
        a, b = int(fate.src[k]), int(fate.dst[k])
        ids = self.fabric.ids
        return f"no route in the LFTs from {ids[a]} to {ids[b]} (rail {int(self.fabric.rail[a])})"

    def _crosses(self, routes: Routes, fate: _Fate, gone: set[Cable]) -> bool:
        """Whether the tables send any flow of the job's collectives over one of the ``gone``
        cables (the pairs NCCL sends over, as the model's blast radius counts them)."""
        ids = self.fabric.ids
        for a, b in fate.flows:
            hops = routes.path(a, b)
            if hops is None:
                continue
            nodes = [ids[a], *hops, ids[b]]
            if any(frozenset(p) in gone for p in pairwise(nodes)):
                return True
        return False
