"""What a backend measured, and what it was asked to measure (backends stage, pure data).

A backend never judges a fabric: it returns :class:`Measurements`, frozen
records keyed by the fabric's own element and link ids, for a
:class:`MeasurePlan` the runner gives it.  The runner predicts the same things
from the fault state (:mod:`harness.invariants.analysis`) and compares
(:mod:`harness.observations.compare`).

Records (every id is an id of the fabric being run):

* :class:`Probe` -- ``src`` reached ``dst`` (rail NIC ids) with real packets,
  and the round-trip time when the backend measures one.
* :class:`TracedPath` -- the switches a packet from ``src`` to ``dst`` crossed,
  in order; ``complete`` when it arrived.
* :class:`Flow` -- a bulk transfer from ``src`` to ``dst`` in a named group of
  flows that ran at the same time; ``gbps`` in the fabric's units (a backend
  that shapes 200 Gb/s to 200 Mb/s reports 200, and ``Measurements.scale``
  says 0.001).
* :class:`JobRun` -- a training job: alive, its iteration rate, how it ended.
* :class:`LinkState` -- a cable's operational state and rate (fabric units).
* :class:`LinkLoss` -- the fraction of the packets one end of a cable sent
  to the other that did not arrive, and how many were sent (0: exact, the model).
* ``Measurements.settle_s`` -- how long the fabric took to settle after the
  last change (:meth:`~harness.backends.protocol.Backend.settle`).

A plan names what to measure, so that a 1,600-GPU fabric is not probed pair by
pair at every step: the probe pairs are chosen by the runner (a seeded sample
per rail, or all pairs; :func:`sample_pairs`), plus the pairs the prediction
says are cut, so the measurement can confirm them.

>>> plan = MeasurePlan(probes=(("a", "b"),), jobs=("j1",))
>>> (plan | MeasurePlan(probes=(("a", "b"), ("b", "c")))).probes
(('a', 'b'), ('b', 'c'))
>>> m = Measurements("model", probes=(Probe("a", "b", True),))
>>> m.probe("b", "a")
Probe(src='a', dst='b', ok=True, rtt_ms=None)
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from harness.fabric.model import Fabric

Pair = tuple[str, str]
JobEnd = Literal["running", "error", "timeout", "exited"]
MEASUREMENT_KINDS: tuple[str, ...] = (
    "probes",
    "paths",
    "flows",
    "jobs",
    "links",
    "traffic",
    "losses",
)


# -- records ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Probe:
    """Did packets from NIC ``src`` reach NIC ``dst`` (and come back)?"""

    src: str
    dst: str
    ok: bool
    rtt_ms: float | None = None


@dataclass(frozen=True, slots=True)
class TracedPath:
    """The switches crossed from NIC ``src`` to NIC ``dst``, in order."""

    src: str
    dst: str
    hops: tuple[str, ...]
    complete: bool  # the packet arrived at dst


@dataclass(frozen=True, slots=True)
class Flow:
    """One bulk transfer of a flow group (all flows of a group run at once)."""

    group: str
    src: str
    dst: str
    gbps: float  # in the fabric's units, whatever the backend's scale
    seconds: float


@dataclass(frozen=True, slots=True)
class JobRun:
    """A training job between ``settle()`` and ``measure()``.

    ``alive``: it kept making progress; ``ended``: how it stopped if it did
    (``error``, ``timeout``: seconds after the fault, ``exited``).
    ``busbw_gbs`` (fabric units) only from a job whose collectives are large
    enough to be bound by the fabric's bandwidth: an iteration rate bound by
    latency or compute says nothing about bandwidth.  A job that crashed
    stays crashed until ``restart()`` (a scenario's ``restart:`` step).
    """

    name: str
    alive: bool
    iterations_per_s: float | None = None
    ended: JobEnd = "running"
    seconds: float = 0.0  # how long it ran in the window (to the failure if it failed)
    detail: str = ""
    busbw_gbs: float | None = None  # its collective's bus bandwidth, when bandwidth-bound
    ended_at: float | None = None  # when it failed, on this host's monotonic clock (if known)


@dataclass(frozen=True, slots=True)
class LinkState:
    """A link's operational state (both ends up, carrier) and rate in fabric units."""

    link: str
    up: bool
    gbps: float


@dataclass(frozen=True, slots=True)
class LinkLoss:
    """Of ``sent`` packets ``sender`` (an end of ``link``) sent over it, the fraction lost.

    ``sent`` is 0 for an exact figure (the model's), else the sample size a
    measured fraction comes from (judged with a binomial tolerance,
    :func:`harness.observations.compare.agree_fraction`).
    """

    link: str
    sender: str
    loss: float
    sent: int = 0


# -- the plan ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FlowGroup:
    """Flows measured together (their rates share the links they cross)."""

    name: str
    pairs: tuple[Pair, ...]


def _union(a: tuple[Pair, ...], b: tuple[Pair, ...]) -> tuple[Pair, ...]:
    if not b:
        return a
    if not a:
        return b
    return tuple(dict.fromkeys((*a, *b)))


def _least(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


@dataclass(frozen=True, slots=True)
class MeasurePlan:
    """What to measure at one step.  ``a | b`` is the union of two plans.

    ``probes``: NIC id pairs to probe; ``paths``: NIC id pairs to trace;
    ``flows``: flow groups, each run for ``flow_seconds``; ``jobs``: job names
    whose runs to report, watched for at least ``job_seconds`` (with ``job_now``: as
    they are at once, their rate since the previous such look); ``links``: link
    ids whose state to report; ``traffic``: flow groups that stand for a job's
    collective (its ring, tree or all-to-all flows on one rail, in rank order),
    run like ``flows`` by a backend that moves real packets (the model predicts
    a collective's bus bandwidth from its flow engine instead); ``losses``:
    (link id, sending end id) pairs whose one-direction packet loss to measure;
    ``probe_wait_s``: how long one round of probes waits for its answers (None: the
    backend's own; a drill's frequent probe waits less); ``flow_now``: the flow groups as
    they run now, kept running between looks (a drill's probe), instead of a window.
    ``note`` says how the probes were chosen.
    """

    probes: tuple[Pair, ...] = ()
    paths: tuple[Pair, ...] = ()
    flows: tuple[FlowGroup, ...] = ()
    jobs: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    flow_seconds: float = 2.0
    job_seconds: float = 0.0
    note: str = ""
    traffic: tuple[FlowGroup, ...] = ()
    losses: tuple[Pair, ...] = ()
    job_now: bool = False  # the jobs as they are now, without a watch window (a drill's probe)
    probe_wait_s: float | None = None
    flow_now: bool = False

    def __or__(self, other: MeasurePlan) -> MeasurePlan:
        groups = {g.name: g for g in (*self.flows, *other.flows)}
        traffic = {g.name: g for g in (*self.traffic, *other.traffic)}
        notes = dict.fromkeys(n for n in (self.note, other.note) if n)
        return MeasurePlan(
            _union(self.probes, other.probes),
            _union(self.paths, other.paths),
            tuple(groups.values()),
            tuple(dict.fromkeys((*self.jobs, *other.jobs))),
            tuple(dict.fromkeys((*self.links, *other.links))),
            max(self.flow_seconds, other.flow_seconds),
            max(self.job_seconds, other.job_seconds),
            "; ".join(notes),
            tuple(traffic.values()),
            _union(self.losses, other.losses),
            # at once only if every plan that asks for jobs asks so
            (self.job_now or not self.jobs) and (other.job_now or not other.jobs),
            _least(self.probe_wait_s, other.probe_wait_s),
            # kept running only if some plan asks so and every plan that asks for flows does
            (self.flow_now or other.flow_now)
            and (self.flow_now or not self.flows)
            and (other.flow_now or not other.flows),
        )

    @property
    def empty(self) -> bool:
        """Whether the plan measures nothing at all."""
        return not (
            self.probes
            or self.paths
            or self.flows
            or self.jobs
            or self.links
            or self.traffic
            or self.losses
        )

    @property
    def kinds(self) -> frozenset[str]:
        """Which measurement kinds the plan asks for (see :data:`MEASUREMENT_KINDS`)."""
        asked = zip(
            MEASUREMENT_KINDS,
            (self.probes, self.paths, self.flows, self.jobs, self.links, self.traffic, self.losses),
            strict=True,
        )
        return frozenset(k for k, v in asked if v)

    def describe(self) -> str:
        """What the plan measures, in a few words (``"12 probes, 2 jobs"``)."""
        parts = [
            f"{len(self.probes):,} probes" if self.probes else "",
            f"{len(self.paths)} traced paths" if self.paths else "",
            f"{len(self.flows)} flow groups" if self.flows else "",
            f"{len(self.jobs)} jobs" if self.jobs else "",
            f"{len(self.links)} links" if self.links else "",
            f"{len(self.traffic)} collectives' flows" if self.traffic else "",
            f"{len(self.losses)} one-way losses" if self.losses else "",
        ]
        text = ", ".join(p for p in parts if p) or "nothing"
        return f"{text} ({self.note})" if self.note else text


def sample_pairs(
    fabric: Fabric,
    per_rail: int | None,
    seed: int,
    *,
    rails: Iterable[int] | None = None,
    cross_rail: int = 0,
) -> tuple[Pair, ...]:
    """Rail NIC pairs to probe: ``per_rail`` sampled pairs on each rail (``None``: all).

    Pairs join NICs of different servers; the same seed gives the same pairs.
    ``cross_rail`` adds that many sampled pairs of NICs on different rails.

    >>> from harness.fabric import preset
    >>> f = preset("seed-a800")
    >>> len(sample_pairs(f, None, 0)), len(sample_pairs(f, 8, 0, cross_rail=4))
    (79600, 36)
    >>> sample_pairs(f, 8, 1) == sample_pairs(f, 8, 1)
    True
    """
    rng = random.Random(seed)
    nics = fabric.nics.tolist()
    ids = fabric.ids
    rail_of = fabric.rail.tolist()
    parent = fabric.parent.tolist()
    out: list[Pair] = []
    for r in sorted(set(rails) if rails is not None else range(fabric.rails)):
        members = [n for n in nics if rail_of[n] == r]
        out.extend(_pairs_of(members, per_rail, rng, parent, ids))
    if cross_rail and fabric.rails > 1:
        seen: set[Pair] = set()
        tries = 0
        while len(seen) < cross_rail and tries < 20 * cross_rail:
            tries += 1
            a, b = rng.sample(nics, 2)
            if rail_of[a] != rail_of[b] and parent[a] != parent[b]:
                seen.add((ids[min(a, b)], ids[max(a, b)]))
        out.extend(sorted(seen))
    return tuple(out)


def _pairs_of(
    members: Sequence[int],
    limit: int | None,
    rng: random.Random,
    par: Sequence[int],
    ids: Sequence[str],
) -> list[Pair]:
    n = len(members)
    total = n * (n - 1) // 2
    if limit is None or limit >= total:
        return [
            (ids[members[i]], ids[members[j]])
            for i in range(n)
            for j in range(i + 1, n)
            if par[members[i]] != par[members[j]]
        ]
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < limit:
        i, j = sorted(rng.sample(range(n), 2))
        if par[members[i]] != par[members[j]]:
            chosen.add((i, j))
    return [(ids[members[i]], ids[members[j]]) for i, j in sorted(chosen)]


# -- what was measured ------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Measurements:
    """Everything one ``measure(plan)`` call returned, with lookups by id."""

    backend: str
    probes: tuple[Probe, ...] = ()
    paths: tuple[TracedPath, ...] = ()
    flows: tuple[Flow, ...] = ()
    jobs: tuple[JobRun, ...] = ()
    links: tuple[LinkState, ...] = ()
    losses: tuple[LinkLoss, ...] = ()
    settle_s: float = 0.0
    scale: float = 1.0  # emulated rate / fabric rate; gbps figures are already in fabric units
    notes: tuple[str, ...] = ()  # what else it saw, in plain words (ibsim: engine, route balance)

    @cached_property
    def _probes(self) -> dict[Pair, Probe]:
        out: dict[Pair, Probe] = {}
        for p in self.probes:
            out[(p.src, p.dst)] = p
            out.setdefault((p.dst, p.src), p)
        return out

    def probe(self, src: str, dst: str) -> Probe | None:
        """The probe between two NICs (either direction), if it was measured."""
        return self._probes.get((src, dst))

    @cached_property
    def _paths(self) -> dict[Pair, TracedPath]:
        return {(p.src, p.dst): p for p in self.paths}

    def path(self, src: str, dst: str) -> TracedPath | None:
        """The path traced from ``src`` to ``dst`` (this direction only), if it was measured."""
        return self._paths.get((src, dst))

    def flow_group(self, name: str) -> tuple[Flow, ...]:
        """The flows of one flow group, in order."""
        return tuple(f for f in self.flows if f.group == name)

    @cached_property
    def _jobs(self) -> dict[str, JobRun]:
        return {j.name: j for j in self.jobs}

    def job(self, name: str) -> JobRun | None:
        """The run of the named job, if it was measured."""
        return self._jobs.get(name)

    @cached_property
    def _links(self) -> dict[str, LinkState]:
        return {s.link: s for s in self.links}

    def link(self, link_id: str) -> LinkState | None:
        """The state of one link, if it was measured."""
        return self._links.get(link_id)

    @cached_property
    def _losses(self) -> dict[Pair, LinkLoss]:
        return {(x.link, x.sender): x for x in self.losses}

    def loss(self, link_id: str, sender: str) -> LinkLoss | None:
        """The loss measured on ``link_id`` for what ``sender`` sent, if it was measured."""
        return self._losses.get((link_id, sender))

    def missing(self, plan: MeasurePlan) -> list[str]:
        """What the plan asked for and these measurements do not hold (empty: complete)."""
        out = [f"probe {a} -> {b}" for a, b in plan.probes if self.probe(a, b) is None]
        out += [f"path {a} -> {b}" for a, b in plan.paths if self.path(a, b) is None]
        have = {(f.group, f.src, f.dst) for f in self.flows}
        out += [
            f"flow {g.name}: {a} -> {b}"
            for g in (*plan.flows, *plan.traffic)
            for a, b in g.pairs
            if (g.name, a, b) not in have
        ]
        out += [f"job {j}" for j in plan.jobs if self.job(j) is None]
        out += [f"link {x}" for x in plan.links if self.link(x) is None]
        out += [f"loss on {x} from {s}" for x, s in plan.losses if self.loss(x, s) is None]
        return out
