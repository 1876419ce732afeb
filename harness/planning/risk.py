"""Pre-change risk checks: the blast radius of a change and its N+1 margin.

``assess`` answers "what does this change break, given the faults that are
already there?":

1. the state before the change (``state`` faults) and after it (``state`` +
   ``change``) are analysed in full: jobs lost and why, NICs and GPUs cut off,
   bandwidth ratios per job, leaf uplinks, bisection;
2. **what the change adds** is after compared with before: the jobs lost after
   but not before, the GPU pairs newly disconnected, and every ratio (job bus
   bandwidth, leaf uplinks, storage, bisection) of after to before, so a job
   already lost, or bandwidth already gone, is not the change's loss;
3. the budget (``jobs_lost=0,bandwidth>=0.9``, :mod:`harness.observations.budget`)
   is judged on what the change adds (:mod:`harness.observations.state_summary`); a
   rule written ``abs:RULE`` (``abs:bandwidth>=0.5``) is judged on the state
   after the change instead.  The default budget
   (:data:`~harness.observations.budget.DEFAULT_BUDGET`) passes a change only if
   it loses no running job, cuts off no GPU pair that was connected, and leaves
   every surviving job at least 90 % of the bus bandwidth it had; the pairs it
   cuts off are named by group (:mod:`harness.planning.cut_pairs`);
4. the **N+1 margin**: every single further failure (switch, cable, optic,
   NIC by default) is evaluated on top of the state after the change, and on
   top of the state before it, with the fast
   :class:`~harness.planning.sweep.evaluator.CaseEvaluator`, both against the state before
   the change; a further failure *added* by the change breaks the budget after
   the change but did not before it (:mod:`harness.planning.margin`).

The report as JSON is :func:`harness.reporting.risk_json.to_json`.

The budget metrics, relative (default) and ``abs:``:

* ``jobs_lost``: jobs lost after the change and not before / jobs lost after;
* ``gpu_pairs_disconnected``: pairs cut off by the change / after (PXN allowed);
* ``bandwidth``: the lowest ratio, over the jobs alive before and after, of a
  job's bus bandwidth after to before / the lowest ratio to the healthy fabric
  over the jobs alive after (a lost job is counted by ``jobs_lost``, not as a
  bandwidth of 0);
* ``uplink``: the lowest ratio over live leaves of uplink capacity after to
  before / to the design;
* ``storage``: the same per server for the storage bond;
* ``bisection``: bisection bandwidth after to before / to healthy (not used for
  the N+1 cases).

>>> from harness.fabric import preset
>>> from harness.fabric.jobs import JobSpec, resolve_jobs
>>> fabric = preset("seed-a800")
>>> jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
>>> r = assess(fabric, jobs, "drain spine-03", state="kill su02/leaf-r1", margin=False)
>>> r.ok, r.before.jobs_lost, r.added.jobs_lost, [x.describe() for x in r.rules]
(True, ('su02',), (), ['jobs_lost 0', 'gpu_pairs_disconnected 0', 'bandwidth >= 0.9'])
>>> r = assess(fabric, jobs, "drain {tier: spine}", margin=False)
>>> r.ok, r.added.gpu_pairs_disconnected, r.cut.lines() if r.cut else None
(False, 1152000, ['su01..10 (160 GPUs each): no two of these can reach each other'])
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.faults.text import parse_faults
from harness.faults.text import resolve_faults
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import crashed_by_change
from harness.observations.budget import BUDGET_EXAMPLE
from harness.observations.budget import DEFAULT_BUDGET
from harness.observations.budget import BudgetRule
from harness.observations.budget import breaks
from harness.observations.budget import parse_budget
from harness.observations.state_summary import StateSummary
from harness.observations.state_summary import budget_values
from harness.observations.state_summary import summarize
from harness.observations.state_summary import summarize_added
from harness.planning.cut_pairs import CutPairs
from harness.planning.cut_pairs import cut_pairs
from harness.planning.margin import Margin
from harness.planning.margin import MarginRow
from harness.planning.margin import Progress
from harness.planning.margin import evaluate_margin
from harness.planning.sweep.cases import single_failures
from harness.planning.sweep.categories import DEFAULT_MARGIN_CATEGORIES
from harness.planning.sweep.ranking import rank_key
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.run import paused_gc


def parse_change(text: str) -> tuple[Fault, ...]:
    """A change as text (the ``--change`` syntax of :mod:`harness.faults.text`) -> faults."""
    return parse_faults(text, "--change")


@dataclass(frozen=True)
class RiskReport:
    """What a change does to a fabric (in a given state): its costs, the rules it breaks and the
    N+1 margin before and after it."""

    fabric: Fabric
    change: tuple[AppliedFault, ...]
    state: tuple[AppliedFault, ...]
    rules: tuple[BudgetRule, ...]
    before: StateSummary
    after: StateSummary
    added: StateSummary
    broken_after: tuple[str, ...]  # rules the change breaks
    margin_after: Margin | None
    margin_before: Margin | None
    require_margin: int
    seconds: float = 0.0
    routing: Routing = DEFAULT_ROUTING
    cut: CutPairs | None = None  # the GPU pairs the change cuts off, by group (None: none)
    jobs: tuple[Job, ...] = ()
    jobs_assumed: bool = False  # no jobs were given: one per SU, no traffic between SUs

    @property
    def already_lost(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Jobs lost before the change, each with why."""
        return tuple((j, self.before.reasons_of(j)) for j in self.before.jobs_lost)

    @property
    def margin_added(self) -> tuple[tuple[CaseResult, tuple[str, ...]], ...]:
        """Further failures that break the budget after the change but not before it.

        Each with the rules it breaks that it did not break before.
        """
        if self.margin_after is None or self.margin_before is None:
            return ()
        before = {c.failures: set(rules) for c, rules in self.margin_before.breaking}
        out = []
        for c, rules in self.margin_after.breaking:
            new = tuple(r for r in rules if r not in before.get(c.failures, set()))
            if new:
                out.append((c, new))
        return self.ranked(out)

    def ranked(
        self, items: Sequence[tuple[CaseResult, tuple[str, ...]]]
    ) -> tuple[tuple[CaseResult, tuple[str, ...]], ...]:
        """Worst first, as the sweep ranks (:func:`~harness.planning.sweep.ranking.rank_key`)."""
        key = rank_key(self.fabric, self.jobs)
        return tuple(sorted(items, key=lambda item: key(item[0])))

    @property
    def margin_blocking(self) -> tuple[tuple[CaseResult, tuple[str, ...]], ...]:
        """What ``require_margin=1`` refuses: failures the change makes break the budget, and
        failures that break an ``abs:`` rule after it."""
        if self.margin_after is None:
            return ()
        added = {c.failures for c, _ in self.margin_added}
        absolute = {r.describe() for r in self.rules if r.absolute}
        return self.ranked([
            (c, rules) for c, rules in self.margin_after.breaking
            if c.failures in added or absolute.intersection(rules)
        ])  # fmt: skip

    def margin_rows(self) -> tuple[MarginRow, ...]:
        """The N+1 table: per category, breaking before / after, and added by the change."""
        ma, mb = self.margin_after, self.margin_before
        if ma is None or mb is None:
            return ()
        before = {k: (n, t) for k, n, t in mb.by_category}
        after = {k: (n, t) for k, n, t in ma.by_category}
        added = Counter(c.category(self.fabric) for c, _ in self.margin_added)
        return tuple(
            MarginRow(k, *before.get(k, (0, 0)), *after.get(k, (0, 0)), added[k])
            for k in sorted(set(before) | set(after))
        )

    @property
    def ok(self) -> bool:
        """Whether the change is safe: it breaks no rule and, when a margin is required, blocks
        none."""
        if self.broken_after:
            return False
        return not (self.require_margin >= 1 and self.margin_blocking)


FaultsArg = str | Sequence[Fault | AppliedFault]


def assess(
    fabric: Fabric,
    jobs: Sequence[Job],
    change: FaultsArg,
    budget: str | Sequence[BudgetRule] = DEFAULT_BUDGET,
    *,
    state: FaultsArg = (),
    margin_categories: Sequence[str] = DEFAULT_MARGIN_CATEGORIES,
    require_margin: int = 0,
    margin: bool = True,
    progress: Progress | None = None,
    routing: Routing = DEFAULT_ROUTING,
    jobs_assumed: bool = False,
) -> RiskReport:
    """Assess a change; see the module docstring.

    ``change`` and ``state`` are fault text in the ``--change`` syntax
    (``"drain spine-05,spine-06"``, ``"drain: {tier: spine, all-but: 1}"``,
    ``"@faults.yaml"``; see :mod:`harness.faults.text`) or sequences of
    :class:`~harness.faults.fault.Fault` (or resolved ``AppliedFault``); ``budget`` is
    budget text (``"jobs_lost=0,abs:bandwidth>=0.5"``) or :class:`BudgetRule` s.
    ``progress(done, total)`` is called while the N+1 cases are evaluated.
    ``routing`` (resolved once by the caller, carried unchanged) says which
    routes exist (``paths``), how flows spread over the uplinks (``forwarding``) and how
    long a kill, cut or optic stalls the running jobs (``reroute``): the change
    crashes a job whose timeout is no longer than that, a drain never does.
    ``jobs_assumed``: the jobs are not the real ones but one per SU (said in the output).
    """
    if require_margin not in (0, 1):
        msg = f"--require-margin {require_margin}: only 0 (the change) or 1 (N+1) is supported"
        raise ScenarioError(msg)
    rules = parse_budget(budget) if isinstance(budget, str) else tuple(budget)
    if not rules:
        msg = f"the budget is empty; write e.g. {BUDGET_EXAMPLE}"
        raise ScenarioError(msg)
    start = time.perf_counter()
    state_faults = resolve_faults(fabric, state, "--state")
    change_faults = resolve_faults(fabric, change, "--change")
    healthy = Analysis(
        fabric,
        Observation.from_state(FaultState.healthy(fabric)),
        jobs,
        routing=routing,
    )
    before_state = FaultState(fabric, state_faults)
    after_state = FaultState(fabric, (*state_faults, *change_faults))
    before_a = (
        healthy
        if before_state.is_healthy
        else Analysis(
            fabric,
            Observation.from_state(before_state),
            jobs,
            healthy=healthy,
            routing=routing,
        )
    )
    after_a = Analysis(
        fabric,
        Observation.from_state(after_state),
        jobs,
        healthy=healthy,
        routing=routing,
    )
    before = summarize(before_a)
    after = summarize(after_a, crashed_by_change(before_a, after_a, change_faults, routing))
    added = summarize_added(after_a, before_a, after, before)
    broken = tuple(breaks(rules, budget_values(added, after)))
    m_after = m_before = None
    if margin or require_margin:
        singles = single_failures(fabric, margin_categories)
        reference = None if before_state.is_healthy else before_a
        none = summarize_added(before_a, before_a, before, before)

        def run(on: FaultState, summary: StateSummary, add: StateSummary, done: int) -> Margin:
            return evaluate_margin(
                fabric, jobs=jobs, state=on, summary=summary, added=add, before=before,
                reference=reference, rules=rules, singles=singles, progress=progress,
                done=done, total=2 * len(singles), routing=routing,
            )  # fmt: skip

        with paused_gc():  # many small acyclic results: collections would walk them for nothing
            m_after = run(after_state, after, added, 0)
            m_before = run(before_state, before, none, len(singles))
        if progress is not None:
            progress(2 * len(singles), 2 * len(singles))
    return RiskReport(
        fabric, change_faults, state_faults, rules, before, after, added, broken, m_after,
        m_before, require_margin, time.perf_counter() - start, routing,
        cut_pairs(before_a, after_a) if added.gpu_pairs_disconnected > 0 else None,
        tuple(jobs), jobs_assumed,
    )  # fmt: skip


__all__ = [
    "RiskReport",
    "assess",
    "parse_change",
]
