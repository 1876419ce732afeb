"""Pre-change risk checks: the blast radius of a change and its N+1 margin (core, pure).

``assess`` answers "what breaks if I make this change, given the faults that
are already there?":

1. the state before the change (``state`` faults) and after it (``state`` +
   ``change``) are analysed in full: jobs lost and why, NICs and GPUs cut off,
   bandwidth ratios per job, leaf uplinks, bisection;
2. the budget (``jobs_lost=0,bandwidth>=0.9``...) is judged after the change;
3. the **N+1 margin**: every single further failure (switch, cable, optic,
   NIC by default) is evaluated on top of the change with the fast
   :class:`~harness.sweep.engine.CaseEvaluator`; the ones that break the budget
   are counted per category and ranked by impact, and the same count is taken
   before the change for comparison.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis import Analysis
from harness.errors import ScenarioError
from harness.expect import Expect
from harness.fabric.model import Fabric
from harness.faults import AppliedFault
from harness.faults import Fault
from harness.faults import FaultState
from harness.jobs import Job
from harness.observation import Observation
from harness.sweep.cases import single_failures
from harness.sweep.engine import CaseEvaluator
from harness.sweep.engine import CaseResult

DEFAULT_MARGIN_CATEGORIES = ("switches", "cables", "optics", "nics")

# budget names -> what they read (per state / per N+1 case)
BUDGET_METRICS = {
    "jobs_lost": "number of jobs lost (the state's own losses included)",
    "bandwidth": "minimum job bus bandwidth ratio to healthy (lost jobs: 0)",
    "uplink": "minimum leaf uplink capacity ratio",
    "gpu_pairs_disconnected": "GPU pairs that cannot talk (PXN allowed)",
    "storage": "minimum storage bond bandwidth ratio",
    "bisection": "bisection bandwidth ratio (not used for the N+1 cases)",
}
_RULE = re.compile(r"^\s*([a-z_]+)\s*(>=|<=|==|!=|=|>|<)\s*([-+\d.eE]+)\s*$")


@dataclass(frozen=True, slots=True)
class BudgetRule:
    metric: str
    expect: Expect

    def describe(self) -> str:
        return f"{self.metric} {self.expect.describe()}"


def parse_budget(text: str) -> tuple[BudgetRule, ...]:
    """``"jobs_lost=0,bandwidth>=0.9"`` -> rules; raises ScenarioError with the fix."""
    rules = []
    for part in [p for p in text.split(",") if p.strip()]:
        m = _RULE.match(part)
        if not m:
            msg = f"--budget: cannot read {part.strip()!r}; write e.g. jobs_lost=0,bandwidth>=0.9"
            raise ScenarioError(msg)
        name, op, value = m.groups()
        if name not in BUDGET_METRICS:
            import difflib

            near = difflib.get_close_matches(name, BUDGET_METRICS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"--budget: unknown metric {name!r}{hint} (known: {', '.join(BUDGET_METRICS)})"
            raise ScenarioError(msg)
        op = "==" if op == "=" else op
        rules.append(BudgetRule(name, Expect.parse(f"{op} {value}")))
    if not rules:
        msg = "--budget is empty; write e.g. jobs_lost=0,bandwidth>=0.9"
        raise ScenarioError(msg)
    return tuple(rules)


def parse_change(text: str) -> tuple[Fault, ...]:
    """``"drain spine-05,spine-06; cut su01/leaf-r0:21--spine-01:1"`` -> faults.

    Each ``;``-separated part is ``KIND TARGETS`` where TARGETS is a
    comma-separated list of ids or globs (``degrade`` is not a change verb).
    """
    faults = []
    for part in [p.strip() for p in text.split(";") if p.strip()]:
        verb, _, rest = part.partition(" ")
        targets = [t.strip() for t in rest.split(",") if t.strip()]
        if not targets:
            msg = f"--change: {part!r} names no target; write e.g. 'drain spine-05,spine-06'"
            raise ScenarioError(msg)
        if verb == "degrade":
            msg = "--change: degrade needs a fraction; use a --state file for degrades"
            raise ScenarioError(msg)
        raw: Any = targets[0] if len(targets) == 1 else targets
        faults.append(Fault.parse({verb: raw}))
    if not faults:
        msg = "--change is empty; write e.g. 'drain spine-05,spine-06'"
        raise ScenarioError(msg)
    return tuple(faults)


@dataclass(frozen=True, slots=True)
class StateSummary:
    """One state in numbers (before or after the change)."""

    jobs_lost: tuple[str, ...]
    reasons: tuple[str, ...]
    nics_cut: int
    gpus_cut: int  # GPUs with no path to any other server, PXN allowed
    gpu_pairs_disconnected: int
    bandwidth: float  # min job busbw ratio
    job_bandwidth: tuple[tuple[str, float], ...]
    uplink: float
    bisection: float | None
    storage: float

    def metric(self, name: str) -> float:
        if name == "jobs_lost":
            return float(len(self.jobs_lost))
        if name == "bisection":
            return self.bisection if self.bisection is not None else 1.0
        if name == "gpu_pairs_disconnected":
            return float(self.gpu_pairs_disconnected)
        return float(getattr(self, name))


def summarize(a: Analysis) -> StateSummary:
    f = a.fabric
    lost = tuple(a.jobs_lost())
    reasons = tuple(f"{v.name}: {r}" for v in a.verdicts if v.lost for r in v.reasons[:2])
    ratios = tuple((j.name, a.job_busbw_ratio(j)) for j in a.jobs)
    storage = [
        a.storage_gbps(s) / h
        for s in f.servers.tolist()
        if (h := a.healthy.storage_gbps(s)) and a.up[s]
    ]
    bis = None
    if f.n_sus >= 2:
        base = a.healthy.bisection_gbps
        bis = a.bisection_gbps / base if base else 0.0
    live_nics = [n for n in f.nics.tolist() if a.up[n]]
    cut = sum(1 for n in live_nics if not a.nic_comps(n)) + int((~a.up[f.nics]).sum())
    return StateSummary(
        lost, reasons, cut, a.gpus_isolated(pxn=True), a.gpu_pairs_disconnected(pxn=True),
        min((r for _, r in ratios), default=1.0), ratios, a.leaf_uplink_ratio(), bis,
        min(storage, default=1.0),
    )  # fmt: skip


def breaks(rules: Sequence[BudgetRule], values: dict[str, float]) -> list[str]:
    """The rules these values break."""
    return [
        r.describe() for r in rules if r.metric in values and not r.expect.check(values[r.metric])
    ]


def case_values(base: StateSummary, c: CaseResult) -> dict[str, float]:
    return {
        "jobs_lost": float(len(base.jobs_lost) + len(c.jobs_lost)),
        "bandwidth": c.min_busbw_ratio,
        "uplink": c.leaf_uplink_ratio,
        "gpu_pairs_disconnected": float(c.pairs_disconnected),
        "storage": c.storage_ratio,
    }


@dataclass(frozen=True)
class Margin:
    """The N+1 view of one state: single further failures that break the budget."""

    cases: int
    breaking: tuple[tuple[CaseResult, tuple[str, ...]], ...]  # ranked, with broken rules
    by_category: tuple[tuple[str, int, int], ...]  # category, breaking, of total


@dataclass(frozen=True)
class RiskReport:
    fabric: Fabric
    change: tuple[AppliedFault, ...]
    state: tuple[AppliedFault, ...]
    rules: tuple[BudgetRule, ...]
    before: StateSummary
    after: StateSummary
    broken_after: tuple[str, ...]
    margin_after: Margin | None
    margin_before: Margin | None
    require_margin: int
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        if self.broken_after:
            return False
        return not (self.require_margin >= 1 and self.margin_after and self.margin_after.breaking)


def _margin(
    fabric: Fabric,
    *,
    jobs: Sequence[Job],
    state: FaultState,
    summary: StateSummary,
    rules: Sequence[BudgetRule],
    categories: Sequence[str],
) -> Margin:
    ev = CaseEvaluator(fabric, jobs, state)
    ev.prepare()
    singles = single_failures(fabric, categories)
    up = state.element_up
    breaking = []
    totals: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for x in singles:
        if x.kind == "element" and not up[x.index]:
            continue  # already down: not a further failure
        if x.kind != "element" and state.link_capacity[x.index] <= 0:
            continue
        c = ev.evaluate([x])
        cat = x.category(fabric)
        totals[cat] += 1
        broken = breaks(rules, case_values(summary, c))
        if broken:
            hits[cat] += 1
            breaking.append((c, tuple(broken)))
    breaking.sort(
        key=lambda item: (
            -len(item[0].jobs_lost),
            -item[0].pairs_disconnected,
            item[0].min_busbw_ratio,
            item[0].leaf_uplink_ratio,
        )
    )
    by_cat = tuple((k, hits[k], totals[k]) for k in sorted(totals))
    return Margin(sum(totals.values()), tuple(breaking), by_cat)


def assess(
    fabric: Fabric,
    jobs: Sequence[Job],
    change: Sequence[Fault],
    rules: Sequence[BudgetRule],
    *,
    state: Sequence[Fault] = (),
    margin_categories: Sequence[str] = DEFAULT_MARGIN_CATEGORIES,
    require_margin: int = 0,
    margin: bool = True,
) -> RiskReport:
    """Assess a change; see the module docstring."""
    import time

    if require_margin not in (0, 1):
        msg = f"--require-margin {require_margin}: only 0 (the change) or 1 (N+1) is supported"
        raise ScenarioError(msg)
    start = time.perf_counter()
    healthy = Analysis(fabric, Observation.from_state(FaultState.healthy(fabric)), jobs)
    before_state = FaultState.healthy(fabric)
    for fault in state:
        before_state = before_state.inject(fault)
    after_state = before_state
    for fault in change:
        after_state = after_state.inject(fault)
    before = summarize(
        Analysis(fabric, Observation.from_state(before_state), jobs, healthy=healthy)
    )
    after = summarize(Analysis(fabric, Observation.from_state(after_state), jobs, healthy=healthy))
    values = {name: after.metric(name) for name in BUDGET_METRICS}
    broken = tuple(breaks(rules, values))
    m_after = m_before = None
    if margin or require_margin:
        m_after = _margin(fabric, jobs=jobs, state=after_state, summary=after, rules=rules,
                          categories=margin_categories)  # fmt: skip
        m_before = _margin(fabric, jobs=jobs, state=before_state, summary=before, rules=rules,
                           categories=margin_categories)  # fmt: skip
    return RiskReport(
        fabric, after_state.applied[len(before_state.applied):], before_state.applied,
        tuple(rules), before, after, broken, m_after, m_before, require_margin,
        time.perf_counter() - start,
    )  # fmt: skip


def to_json(report: RiskReport) -> dict[str, Any]:
    f = report.fabric

    def state(s: StateSummary) -> dict[str, Any]:
        return {
            "jobs_lost": list(s.jobs_lost),
            "reasons": list(s.reasons),
            "nics_cut": s.nics_cut,
            "gpus_cut": s.gpus_cut,
            "gpu_pairs_disconnected": s.gpu_pairs_disconnected,
            "min_job_busbw_ratio": round(s.bandwidth, 6),
            "job_busbw_ratio": {k: round(v, 6) for k, v in s.job_bandwidth},
            "leaf_uplink_ratio": round(s.uplink, 6),
            "bisection_ratio": None if s.bisection is None else round(s.bisection, 6),
            "storage_ratio": round(s.storage, 6),
        }

    def margin(m: Margin | None) -> dict[str, Any] | None:
        if m is None:
            return None
        return {
            "cases": m.cases,
            "breaking": len(m.breaking),
            "by_category": {k: {"breaking": n, "of": t} for k, n, t in m.by_category},
            "top": [
                {
                    "failure": c.label(f),
                    "category": c.category(f),
                    "breaks": list(rules),
                    "jobs_lost": list(c.jobs_lost),
                    "min_busbw_ratio": round(c.min_busbw_ratio, 6),
                    "leaf_uplink_ratio": round(c.leaf_uplink_ratio, 6),
                }
                for c, rules in m.breaking[:50]
            ],
        }

    return {
        "fabric": f.name,
        "ok": report.ok,
        "budget": [r.describe() for r in report.rules],
        "require_margin": report.require_margin,
        "change": [a.describe(f) for a in report.change],
        "state": [a.describe(f) for a in report.state],
        "before": state(report.before),
        "after": state(report.after),
        "budget_broken_by_change": list(report.broken_after),
        "margin_after": margin(report.margin_after),
        "margin_before": margin(report.margin_before),
        "seconds": round(report.seconds, 4),
    }


def margin_sentence(report: RiskReport) -> list[str]:
    """'after this change, 14 single cable failures would break the budget; before it, 0'."""
    out: list[str] = []
    ma, mb = report.margin_after, report.margin_before
    if ma is None or mb is None:
        return out
    before = {k: n for k, n, _ in mb.by_category}
    for k, n, total in ma.by_category:
        out.append(
            f"after this change, {n} of {total} single {k} failures would break the budget; "
            f"before it, {before.get(k, 0)}"
        )
    return out


__all__ = [
    "BUDGET_METRICS",
    "BudgetRule",
    "RiskReport",
    "assess",
    "margin_sentence",
    "parse_budget",
    "parse_change",
    "to_json",
]
