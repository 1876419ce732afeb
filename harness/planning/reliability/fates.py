"""Which jobs a failure interrupts, in a given fault state: the scenarios' rule, cached.

(Planning stage, pure.)  A failure ``c`` arriving on top of the fault state ``S``
interrupts a running job exactly as a scenario step would decide it: the job is cut off
in ``S + c`` (its NICs no longer reach each other: the model's job verdict, for its
timeout) and was not in ``S``, or it stays connected but ``c`` crashes it
(:func:`~harness.invariants.timeline.crashed_by_change`: a reroute stall as long as its
timeout, a GPU, NVSwitch or NVLink lost under it).  The answer depends only on ``S`` and
``c``, so it is computed once per (state, failure) and kept (and the crash analysis is
skipped where no job's timeout is as short as the failure's outage): a Monte Carlo run over a
year meets the same few states again and again.  The one-fault states (``S`` empty) are
judged as the sweep judges a case (its :class:`~harness.planning.sweep.evaluator.CaseEvaluator`:
the local fast path where the case splits nothing, the full analysis where it does, exact
either way), the overlapping ones as the sweep's multi-failure cases; a state holding a
drain or a hang gets the full :class:`~harness.invariants.analysis.Analysis`.

A fault that takes only parts inside a server (a GPU, an NVSwitch) is *local*: it crashes
the job on that server (an uncorrectable NVLink error) whatever else is broken, and it
changes no path between NICs, so it is left out of the states the network is analysed in.
That is exact for the jobs that run: one on a server with a local fault standing is not
running (it waits for the repair, or runs on spares away from it).

>>> from harness.fabric import preset
>>> from harness.fabric.jobs import JobSpec, resolve_jobs
>>> from harness.faults.fault import Fault
>>> f = preset("seed-a800")
>>> book = FateBook(f, resolve_jobs([JobSpec(per_su=True)], f))
>>> cut = Fault.parse({"cut": "su01/node01/nic0:1--su01/leaf-r0:1"}).resolve(f)
>>> sorted(book.interrupted(frozenset(), ("cable", 0), cut))
['su01']
>>> sorted(book.lost(frozenset({("cable", 0)})))
['su01']
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from collections.abc import Sequence
from functools import cached_property

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.outage import outage_s
from harness.invariants.state import Observation
from harness.invariants.timeline import crashed_by_change
from harness.invariants.timeline import cut_off
from harness.invariants.timeline import in_node_crash
from harness.invariants.timeline import stall_crashes
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import Failure

FaultKey = Hashable
StateKey = frozenset[FaultKey]
#: How many full analyses of fault states are kept (their answers are kept apart, for good).
ANALYSES_KEPT = 64


class FateBook:
    """The cached fates of ``jobs`` on ``fabric``: per state the jobs cut off, per (state,
    failure) the jobs it interrupts.  Faults are named by hashable keys; :meth:`interrupted`
    learns each key's applied fault the first time it sees it."""

    def __init__(self, fabric: Fabric, jobs: Sequence[Job], routing: Routing = DEFAULT_ROUTING):
        self.fabric = fabric
        self.jobs = tuple(jobs)
        self.routing = routing
        self.applied: dict[FaultKey, AppliedFault] = {}
        self._healthy = Analysis(fabric, Observation.from_state(FaultState.healthy(fabric)),
                                 self.jobs, routing=routing)  # fmt: skip
        self._analyses: OrderedDict[StateKey, Analysis] = OrderedDict()
        self._lost: dict[StateKey, frozenset[str]] = {frozenset(): frozenset()}
        self._hits: dict[tuple[StateKey, FaultKey], frozenset[str]] = {}
        self._local: dict[FaultKey, frozenset[str]] = {}  # local fault -> the jobs it crashes
        self.full_analyses = 0  # states analysed in full (for the benchmark and the report)
        self.evaluated = 0  # states judged by the sweep's evaluator

    def analysis(self, state: StateKey) -> Analysis:
        """The full analysis of a fault state (the last :data:`ANALYSES_KEPT` are kept)."""
        if not state:
            return self._healthy
        a = self._analyses.get(state)
        if a is not None:
            self._analyses.move_to_end(state)
            return a
        applied = tuple(self.applied[k] for k in sorted(state, key=repr))
        fs = FaultState(self.fabric, applied)
        a = Analysis(self.fabric, Observation.from_state(fs), self.jobs,
                     healthy=self._healthy, routing=self.routing)  # fmt: skip
        self.full_analyses += 1
        self._analyses[state] = a
        if len(self._analyses) > ANALYSES_KEPT:
            self._analyses.popitem(last=False)
        return a

    def network(self, state: StateKey) -> StateKey:
        """``state`` without its local faults (those inside servers)."""
        return state.difference(self._local) if self._local else state

    def lost(self, state: StateKey) -> frozenset[str]:
        """The jobs cut off in the network of ``state`` (their NICs cannot reach each other;
        local faults are not looked at: :func:`in_node_crash` says whom they stop)."""
        state = self.network(state)
        got = self._lost.get(state)
        if got is None:
            case = self._case(state)
            if case is None:
                got, _ = cut_off(self.analysis(state))
            else:
                got = frozenset(self.evaluator.evaluate(case).unplaceable)
                self.evaluated += 1
            self._lost[state] = got
        return got

    @cached_property
    def evaluator(self) -> CaseEvaluator:
        """The sweep's case evaluator on the healthy fabric (its fast path, exact)."""
        ev = CaseEvaluator(self.fabric, self.jobs, routing=self.routing)
        ev.prepare()
        return ev

    def _case(self, state: StateKey) -> list[Failure] | None:
        """``state`` as a sweep case (kills, cuts and optics); ``None`` when it holds another
        kind (a drain, a hang), which the full analysis judges."""
        out: list[Failure] = []
        for key in sorted(state, key=repr):
            a = self.applied[key]
            kind = a.fault.kind
            if kind is FaultKind.KILL:
                out += [Failure("element", e, self.fabric.ids[e]) for e in a.elements]
            elif kind is FaultKind.CUT:
                out += [Failure("link", i, self.fabric.link_ids[i]) for i in a.links]
            elif kind is FaultKind.OPTIC:
                out += [Failure.of(self.fabric, port) for port in a.ports]
            else:
                return None
        return out

    def _may_crash(self, applied: AppliedFault) -> bool:
        """Whether ``applied`` can crash a connected job: its outage (the reroute, a hang's
        detection) reaches some job's timeout, or it takes a part inside a job's server.  When
        neither, :func:`crashed_by_change` crashes nobody, and its analyses are spared."""
        outage = outage_s(self.fabric, applied, self.routing)
        return any(stall_crashes(outage, j.timeout) or in_node_crash(self.fabric, applied, j)
                   for j in self.jobs)  # fmt: skip

    def interrupted(self, state: StateKey, key: FaultKey, applied: AppliedFault) -> frozenset[str]:
        """The jobs running in ``state`` that the failure ``key`` (``applied``) interrupts."""
        self.applied.setdefault(key, applied)
        local = self._local.get(key)
        if local is None and _is_local(self.fabric, applied):
            local = self._local[key] = frozenset(
                j.name for j in self.jobs if in_node_crash(self.fabric, applied, j) is not None
            )
        if local is not None:
            return local
        state = self.network(state)
        memo = (state, key)
        got = self._hits.get(memo)
        if got is not None:
            return got
        after = state | {key}
        cut = self.lost(after) - self.lost(state)
        crashed: set[str] = set()
        if self._may_crash(applied):
            crashed = set(crashed_by_change(self.analysis(state), self.analysis(after),
                                            [applied], self.routing))  # fmt: skip
        got = frozenset(cut | crashed)
        self._hits[memo] = got
        return got


_LOCAL_KINDS = frozenset({int(Kind.GPU), int(Kind.NVSWITCH)})


def _is_local(fabric: Fabric, applied: AppliedFault) -> bool:
    """Whether ``applied`` takes only GPUs or NVSwitches (nothing between NICs)."""
    return (applied.fault.kind in (FaultKind.KILL, FaultKind.DRAIN) and not applied.links
            and bool(applied.elements)
            and all(int(fabric.kind[e]) in _LOCAL_KINDS for e in applied.elements))  # fmt: skip
