"""What a drill run records: probe samples, events with prediction beside observation, the
rollback, and the verdict (run stage, pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from harness.run.results import ExpectResult

#: A drill's final status: its expectations and probes held, one did not, a measurement
#: disagreed with the prediction, an abort condition (or a signal, the halt lever, the time
#: limit) stopped it, or an error of the environment or the input.
DRILL_STATUSES = ("passed", "failed", "mismatch", "aborted", "error")
#: Times within this fraction count as agreeing (the issue's "times within 10 %").
TIME_TOLERANCE = 0.10
#: Items named in a mismatching sample's detail (the count is always given).
NAMED = 3


def disagreement(said: Sequence[str], of: int, how: str) -> str:
    """A sample's disagreeing items in words: the count, and the first :data:`NAMED`.

    >>> disagreement(["a", "b", "c", "d"], 24, "pairs measured otherwise")
    '4 of 24 pairs measured otherwise: a; b; c (+1 more)'
    >>> disagreement([], 24, "pairs measured otherwise")
    ''
    """
    if not said:
        return ""
    more = f" (+{len(said) - NAMED} more)" if len(said) > NAMED else ""
    return f"{len(said)} of {of} {how}: {'; '.join(said[:NAMED])}{more}"


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample of a probe: when (drill time), the value judged, the model's, the backend's."""

    t: float
    value: float | None
    ok: bool
    predicted: float | None = None
    measured: float | None = None
    mismatch: bool = False
    detail: str = ""  # what disagreed (a reachability sample's pairs)

    def to_json(self) -> dict[str, Any]:
        """The sample as JSON (``detail`` only when there is one)."""
        out: dict[str, Any] = {"t": round(self.t, 6), "value": self.value, "ok": self.ok,
               "predicted": self.predicted, "measured": self.measured,
               "mismatch": self.mismatch}  # fmt: skip
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class ProbeRecord:
    """A probe over the whole drill: its baseline, its samples and its verdict."""

    name: str
    describe: str
    mode: str
    baseline: float | None
    samples: tuple[Sample, ...]
    verdict: str  # passed | failed | not judged
    why: str = ""

    @property
    def mismatches(self) -> int:
        """Samples whose measurement disagreed with the prediction."""
        return sum(s.mismatch for s in self.samples)

    def to_json(self) -> dict[str, Any]:
        """The probe as JSON."""
        return {"name": self.name, "probe": self.describe, "mode": self.mode,
                "baseline": self.baseline, "verdict": self.verdict, "why": self.why,
                "mismatches": self.mismatches,
                "samples": [s.to_json() for s in self.samples]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One action of the drill: planned and actual time, what it did, what the model
    predicted and what was observed."""

    planned_s: float
    actual_s: float
    action: str  # inject | restore | rollback
    label: str
    fault: str
    status: str  # applied | restored | refused | gone | skipped | rolled back | failed
    settle_s: float | None = None
    predicted: tuple[str, ...] = ()  # the model's job fates after the action
    observed: tuple[str, ...] = ()  # what the backend showed
    guard: str = ""  # the guard's verdict (inject)
    mismatch: str = ""  # prediction and observation disagree: how
    wall_s: float = 0.0  # wall clock since the drill started
    outage_s: float | None = None  # inject: the model's outage bound (reroute + a probe period)
    expected_failures: tuple[tuple[str, int], ...] = ()  # per probe, until the next action

    def to_json(self) -> dict[str, Any]:
        """The event as JSON."""
        return {"planned_s": round(self.planned_s, 6), "actual_s": round(self.actual_s, 6),
                "wall_s": round(self.wall_s, 6), "action": self.action, "label": self.label,
                "fault": self.fault, "status": self.status, "settle_s": self.settle_s,
                "predicted": list(self.predicted), "observed": list(self.observed),
                "guard": self.guard, "mismatch": self.mismatch, "outage_s": self.outage_s,
                "expected_failures": dict(self.expected_failures)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DrillResult:
    """One drill's run."""

    name: str
    path: str
    backend: str
    status: str
    events: tuple[EventRecord, ...] = ()
    probes: tuple[ProbeRecord, ...] = ()
    rollback: tuple[EventRecord, ...] = ()
    expectations: tuple[ExpectResult, ...] = ()
    reason: str = ""  # why it failed, aborted or errored
    recovered_s: float | None = None  # after the last restore, when the steady state held again
    fates: tuple[str, ...] = ()  # every job's predicted fate at the end
    dry_run: bool = False
    duration_s: float = 0.0
    journal: str = ""  # the journal directory ("" without --journal)
    routing: str = ""
    job_checks: tuple[tuple[str, bool], ...] = ()  # predicted beside observed job fates
    crashes: tuple[tuple[str, float | None, float | None], ...] = ()  # job, predicted, observed
    abort: tuple[float, str] | None = None  # when the method was stopped, and why (as said)

    @property
    def job_mismatches(self) -> int:
        """Jobs whose observed fate (crash, and when) is not the predicted one."""
        return sum(bad for _, bad in self.job_checks)

    @property
    def mismatches(self) -> int:
        """Every disagreement of measurement and prediction: samples, events, expectations."""
        return (sum(p.mismatches for p in self.probes) + sum(bool(e.mismatch) for e in self.events)
                + sum(e.mismatch for e in self.expectations) + self.job_mismatches)  # fmt: skip

    @property
    def ok(self) -> bool:
        """The drill passed."""
        return self.status == "passed"


@dataclass
class Series:
    """A probe's samples so far and its running judgement (mutable while the drill runs)."""

    name: str
    samples: list[Sample] = field(default_factory=list)
    baseline: float | None = None
    misses: int = 0  # consecutive samples out of tolerance
    failed_at: float | None = None
    why: str = ""
    below_since: float | None = None  # abort rules: since when the bound has been crossed
