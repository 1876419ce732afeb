"""The N+1 margin of a risk check: every single further failure, judged against the budget.

:func:`evaluate_margin` evaluates the further failures on top of one state
with the sweep's :class:`~harness.planning.sweep.evaluator.CaseEvaluator` (in
bulk where it can), judges each against the state before the change, and
crashes the jobs a reroute as slow as their timeout would take down.  Each
further failure is one, alone on the changed state: no repair (so no
``link_up``) and no reroute under way to queue behind (the change's own
reroutes are over when the margin is judged), the rule
:mod:`harness.planning.sweep.reroute` states for the sweep too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.routing import Routing
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.timeline import reroute_fragile
from harness.observations.budget import RATIO_METRICS
from harness.observations.budget import BudgetRule
from harness.observations.expect import Expect
from harness.observations.state_summary import StateSummary
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure
from harness.planning.sweep.reroute import with_reroute_crashes

Progress = Callable[[int, int], None]  # (cases done, cases in all)
MARGIN_CHUNKS = 20  # progress reports per N+1 margin


@dataclass(frozen=True)
class Margin:
    """The N+1 view of one state: single further failures that break the budget."""

    cases: int
    breaking: tuple[tuple[CaseResult, tuple[str, ...]], ...]  # ranked, with broken rules
    by_category: tuple[tuple[str, int, int], ...]  # category, breaking, of total


@dataclass(frozen=True, slots=True)
class MarginRow:
    """One category of the N+1 table: breaking of candidates, before and after; added."""

    category: str
    before: int
    before_of: int
    after: int
    after_of: int
    added: int  # break the budget after the change, not before it


def _case_judge(
    rules: Sequence[BudgetRule], base: StateSummary, added: StateSummary, before: StateSummary
) -> Callable[[CaseResult, CaseResult], tuple[str, ...]]:
    """The rules one N+1 case breaks: ``base`` + the case, against ``before``.

    The judge takes the case as evaluated against the state before the change
    (``rel``) and against the healthy fabric (``abs_``, for ``abs:`` ratio rules).
    """
    lost_rel, lost_abs = len(added.jobs_lost), len(base.jobs_lost)
    pairs_before = before.gpu_pairs_disconnected
    read: dict[tuple[str, bool], Callable[[CaseResult, CaseResult], float]] = {
        ("jobs_lost", False): lambda rel, _: lost_rel + len(rel.jobs_lost),
        ("jobs_lost", True): lambda rel, _: lost_abs + len(rel.jobs_lost),
        ("gpu_pairs_disconnected", False): lambda rel, _: rel.pairs_disconnected - pairs_before,
        ("gpu_pairs_disconnected", True): lambda rel, _: rel.pairs_disconnected,
        ("bandwidth", False): lambda rel, _: rel.min_busbw_ratio,
        ("bandwidth", True): lambda _, c: c.min_busbw_ratio,
        ("uplink", False): lambda rel, _: rel.leaf_uplink_ratio,
        ("uplink", True): lambda _, c: c.leaf_uplink_ratio,
        ("storage", False): lambda rel, _: rel.storage_ratio,
        ("storage", True): lambda _, c: c.storage_ratio,
    }  # bisection is not judged per case
    Reader = Callable[[CaseResult, CaseResult], float]
    judged: list[tuple[str, Expect, Reader, dict[float, bool]]] = [
        (r.describe(), r.expect, read[(r.metric, r.absolute)], {})
        for r in rules if (r.metric, r.absolute) in read
    ]  # fmt: skip

    def judge(rel: CaseResult, abs_: CaseResult) -> tuple[str, ...]:
        out = []
        for text, expect, get, seen in judged:
            value = float(get(rel, abs_))
            ok = seen.get(value)
            if ok is None:
                ok = seen[value] = expect.check(value)  # many cases share a value
            if not ok:
                out.append(text)
        return tuple(out)

    return judge


def evaluate_margin(
    fabric: Fabric,
    *,
    jobs: Sequence[Job],
    state: FaultState,
    summary: StateSummary,
    added: StateSummary,
    before: StateSummary,
    reference: Analysis | None,
    rules: Sequence[BudgetRule],
    singles: Sequence[Failure],
    progress: Progress | None,
    done: int,
    total: int,
    routing: Routing,
) -> Margin:
    """The N+1 cases on top of ``state``, judged against the state before the change.

    ``reference`` is that state's analysis (None when it is the healthy fabric,
    then one evaluator serves the relative and the ``abs:`` rules alike).  A
    further failure is unplanned (a kill, cut or optic): it crashes the running
    jobs whose timeout is no longer than ``routing.reroute`` when it takes a
    cable their flows are routed over in ``state`` (the routes before it).
    """
    rel_ev = CaseEvaluator(fabric, jobs, state, reference=reference, routing=routing)
    rel_ev.prepare()
    abs_ev = rel_ev
    if reference is not None and any(r.absolute and r.metric in RATIO_METRICS for r in rules):
        abs_ev = CaseEvaluator(fabric, jobs, state, routing=routing)
        abs_ev.prepare()
    fragile = reroute_fragile(rel_ev.base, routing.reroute, skip=summary.jobs_lost)
    up = state.element_up
    cap = state.link_capacity
    live = [
        x for x in singles
        if (up[x.index] if x.kind == "element" else cap[x.index] > 0)
    ]  # fmt: skip  # what is already down is not a further failure
    judge = _case_judge(rules, summary, added, before)
    breaking = []
    totals: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    chunk = max(1, -(-len(live) // MARGIN_CHUNKS))
    for start in range(0, len(live), chunk):
        if progress is not None:
            progress(done + round(start * len(singles) / max(len(live), 1)), total)
        part = live[start : start + chunk]
        rel = rel_ev.evaluate_singles(part)  # in bulk where it can: the same results
        absolute = rel if abs_ev is rel_ev else abs_ev.evaluate_singles(part)
        for x, c_rel, c_abs_rel in zip(part, rel, absolute, strict=True):
            c, c_abs = (
                (with_reroute_crashes(fabric, r, fragile, ev)
                 for r, ev in ((c_rel, rel_ev), (c_abs_rel, abs_ev)))
                if fragile
                else (c_rel, c_abs_rel)
            )  # fmt: skip
            cat = x.category(fabric)
            totals[cat] += 1
            broken = judge(c, c_abs)
            if broken:
                hits[cat] += 1
                breaking.append((c, broken))
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
