"""Pre-change risk checks: the blast radius of a change and its N+1 margin (core, pure).

``assess`` answers "what does this change break, given the faults that are
already there?":

1. the state before the change (``state`` faults) and after it (``state`` +
   ``change``) are analysed in full: jobs lost and why, NICs and GPUs cut off,
   bandwidth ratios per job, leaf uplinks, bisection;
2. **what the change adds** is after compared with before: the jobs lost after
   but not before, the GPU pairs newly disconnected, and every ratio (job bus
   bandwidth, leaf uplinks, storage, bisection) of after to before, so a job
   already lost, or bandwidth already gone, is not the change's loss;
3. the budget (``jobs_lost=0,bandwidth>=0.9``) is judged on what the change
   adds; a rule written ``abs:RULE`` (``abs:bandwidth>=0.5``) is judged on the
   state after the change instead;
4. the **N+1 margin**: every single further failure (switch, cable, optic,
   NIC by default) is evaluated on top of the state after the change, and on
   top of the state before it, with the fast
   :class:`~harness.planning.sweep.evaluator.CaseEvaluator`, both against the state before
   the change; a further failure *added* by the change breaks the budget after
   the change but did not before it.

The budget metrics, relative (default) and ``abs:``:

* ``jobs_lost``: jobs lost after the change and not before / jobs lost after;
* ``gpu_pairs_disconnected``: pairs cut off by the change / after (PXN allowed);
* ``bandwidth``: the lowest ratio, over the jobs alive before, of a job's bus
  bandwidth after to before (a job the change loses: 0) / the lowest ratio to
  the healthy fabric over all jobs (a lost job: 0);
* ``uplink``: the lowest ratio over live leaves of uplink capacity after to
  before / to the design;
* ``storage``: the same per server for the storage bond;
* ``bisection``: bisection bandwidth after to before / to healthy (not used for
  the N+1 cases).

>>> from harness.fabric import preset
>>> from harness.fabric.jobs import JobSpec, resolve_jobs
>>> fabric = preset("seed-a800")
>>> jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
>>> r = assess(fabric, jobs, "drain spine-03", "jobs_lost=0", state="kill su02/leaf-r1",
...            margin=False)
>>> r.ok, r.before.jobs_lost, r.added.jobs_lost
(True, ('su02',), ())
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import DEFAULT_FORWARDING
from harness.fabric.routing import Forwarding
from harness.fabric.routing import PathRule
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.faults.text import parse_faults
from harness.faults.text import resolve_faults
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import crashed_by_change
from harness.invariants.timeline import reroute_fragile
from harness.invariants.traffic import JobTraffic
from harness.observations.expect import Expect
from harness.planning.sweep.cases import single_failures
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure
from harness.planning.sweep.run import paused_gc

DEFAULT_MARGIN_CATEGORIES = ("switches", "cables", "optics", "nics")

# budget names -> what they read (relative: what the change adds; abs: the state after it)
BUDGET_METRICS = {
    "jobs_lost": "jobs lost by the change (abs: jobs lost after it)",
    "bandwidth": "lowest job bus bandwidth ratio, after to before (abs: to healthy; lost: 0)",
    "uplink": "lowest leaf uplink capacity ratio, after to before (abs: to the design)",
    "gpu_pairs_disconnected": "GPU pairs the change cuts off, PXN allowed (abs: after it)",
    "storage": "lowest storage bond bandwidth ratio, after to before (abs: to healthy)",
    "bisection": "bisection bandwidth ratio, after to before (abs: to healthy; not N+1)",
}
RATIO_METRICS = frozenset({"bandwidth", "uplink", "storage", "bisection"})
ABSOLUTE = "abs:"
_RULE = re.compile(r"^\s*(abs\s*:)?\s*([a-z_]+)\s*(>=|<=|==|!=|=|>|<)\s*([-+\d.eE]+)\s*$")
BUDGET_EXAMPLE = "jobs_lost=0,bandwidth>=0.9 (abs:RULE judges the state after the change)"
Progress = Callable[[int, int], None]  # (cases done, cases in all)
MARGIN_CHUNKS = 20  # progress reports per N+1 margin


@dataclass(frozen=True, slots=True)
class BudgetRule:
    """One rule of a budget: on what the change adds, or (``absolute``) on the state after it."""

    metric: str
    expect: Expect
    absolute: bool = False

    def describe(self) -> str:
        return f"{ABSOLUTE if self.absolute else ''}{self.metric} {self.expect.describe()}"


def parse_budget(text: str) -> tuple[BudgetRule, ...]:
    """``"jobs_lost=0,abs:bandwidth>=0.5"`` -> rules; raises ScenarioError with the fix.

    >>> [r.describe() for r in parse_budget("jobs_lost=0, abs:bandwidth>=0.5")]
    ['jobs_lost 0', 'abs:bandwidth >= 0.5']
    """
    rules = []
    for part in [p for p in text.split(",") if p.strip()]:
        m = _RULE.match(part)
        if not m:
            msg = f"--budget: cannot read {part.strip()!r}; write e.g. {BUDGET_EXAMPLE}"
            raise ScenarioError(msg)
        absolute, name, op, value = m.groups()
        if name not in BUDGET_METRICS:
            near = difflib.get_close_matches(name, BUDGET_METRICS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"--budget: unknown metric {name!r}{hint} (known: {', '.join(BUDGET_METRICS)})"
            raise ScenarioError(msg)
        op = "==" if op == "=" else op
        rules.append(BudgetRule(name, Expect.parse(f"{op} {value}"), absolute is not None))
    if not rules:
        msg = f"--budget is empty; write e.g. {BUDGET_EXAMPLE}"
        raise ScenarioError(msg)
    return tuple(rules)


def parse_change(text: str) -> tuple[Fault, ...]:
    """A change as text (the ``--change`` syntax of :mod:`harness.faults.text`) -> faults."""
    return parse_faults(text, "--change")


@dataclass(frozen=True, slots=True)
class StateSummary:
    """One state in numbers (before or after the change), or what the change adds.

    For :attr:`RiskReport.added` the counts are differences (after minus
    before; ``jobs_lost``: the jobs lost after and not before) and the ratios
    are after to before, over what was still alive before.
    """

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
    # per job: what its collectives get and its uplink ratio (the state's, not relative)
    traffic: tuple[tuple[str, JobTraffic, float], ...] = ()

    def metric(self, name: str) -> float:
        if name == "jobs_lost":
            return float(len(self.jobs_lost))
        if name == "bisection":
            return self.bisection if self.bisection is not None else 1.0
        if name == "gpu_pairs_disconnected":
            return float(self.gpu_pairs_disconnected)
        return float(getattr(self, name))

    def reasons_of(self, job: str) -> tuple[str, ...]:
        """Why ``job`` is lost (the ``JOB: `` prefix dropped)."""
        head = f"{job}: "
        return tuple(r[len(head) :] for r in self.reasons if r.startswith(head))


def _nics_cut(a: Analysis) -> int:
    f = a.fabric
    live_nics = [n for n in f.nics.tolist() if a.up[n]]
    return sum(1 for n in live_nics if not a.nic_comps(n)) + int((~a.up[f.nics]).sum())


def _storage_ratio(a: Analysis, ref: Analysis) -> float:
    vals = [
        a.storage_gbps(s) / h
        for s in a.fabric.servers.tolist()
        if (h := ref.storage_gbps(s)) and a.up[s]
    ]
    return min(vals, default=1.0)


def _bisection_ratio(a: Analysis, ref: Analysis, *, nothing: float) -> float | None:
    """Bisection of ``a`` to ``ref``; ``nothing``: the ratio when ``ref`` has none."""
    if a.fabric.n_sus < 2:
        return None
    base = ref.bisection_gbps
    return a.bisection_gbps / base if base else nothing


def summarize(a: Analysis, crashed: Mapping[str, str] | None = None) -> StateSummary:
    """A state in numbers, against the healthy fabric.

    ``crashed``: jobs that are connected in this state but crashed on the way
    into it (a reroute as slow as their timeout), each with why: lost too.
    """
    crashed = crashed or {}
    cut = set(a.jobs_lost())
    lost = tuple(j.name for j in a.jobs if j.name in cut or j.name in crashed)
    reasons = tuple(
        f"{v.name}: {r}"
        for v in a.verdicts
        for r in ((crashed[v.name],) if v.name in crashed else v.reasons[:2] if v.lost else ())
    )
    ratios = tuple((j.name, 0.0 if j.name in crashed else a.job_busbw_ratio(j)) for j in a.jobs)
    traffic = tuple((j.name, a.job_traffic(j), a.job_uplink_ratio(j)) for j in a.jobs)
    return StateSummary(
        lost, reasons, _nics_cut(a), a.gpus_isolated(pxn=True), a.gpu_pairs_disconnected(pxn=True),
        min((r for _, r in ratios), default=1.0), ratios, a.leaf_uplink_ratio(),
        _bisection_ratio(a, a.healthy, nothing=0.0), _storage_ratio(a, a.healthy), traffic,
    )  # fmt: skip


def summarize_added(
    after: Analysis, before: Analysis, sa: StateSummary, sb: StateSummary
) -> StateSummary:
    """What the change adds: ``after`` against ``before`` (see :class:`StateSummary`)."""
    f = after.fabric
    new_lost = tuple(j for j in sa.jobs_lost if j not in sb.jobs_lost)
    reasons = tuple(r for r in sa.reasons if r.split(": ", 1)[0] in new_lost)
    ratios = tuple(
        (j.name, 0.0 if j.name in sa.jobs_lost else after.job_busbw_gbs(j) / b)
        for j in after.jobs
        if (b := before.job_busbw_gbs(j)) > 0
    )
    live_a = after.leaf_uplinks[0]
    live_b = before.leaf_uplinks[0]
    leaves = f.leaves[after.up[f.leaves]]
    leaves = leaves[live_b[leaves] > 0]
    uplink = float((live_a[leaves] / live_b[leaves]).min()) if leaves.size else 1.0
    return StateSummary(
        new_lost, reasons, sa.nics_cut - sb.nics_cut, sa.gpus_cut - sb.gpus_cut,
        sa.gpu_pairs_disconnected - sb.gpu_pairs_disconnected,
        min((r for _, r in ratios), default=1.0), ratios, uplink,
        _bisection_ratio(after, before, nothing=1.0), _storage_ratio(after, before),
    )  # fmt: skip


def breaks(rules: Sequence[BudgetRule], values: dict[tuple[str, bool], float]) -> list[str]:
    """The rules these values break; ``values`` maps (metric, absolute) to a number."""
    return [
        r.describe()
        for r in rules
        if (r.metric, r.absolute) in values and not r.expect.check(values[(r.metric, r.absolute)])
    ]


def _values(added: StateSummary, after: StateSummary) -> dict[tuple[str, bool], float]:
    out = {(name, False): added.metric(name) for name in BUDGET_METRICS}
    out.update({(name, True): after.metric(name) for name in BUDGET_METRICS})
    return out


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


@dataclass(frozen=True)
class RiskReport:
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
        return tuple(out)

    @property
    def margin_blocking(self) -> tuple[tuple[CaseResult, tuple[str, ...]], ...]:
        """What ``require_margin=1`` refuses: failures the change makes break the budget, and
        failures that break an ``abs:`` rule after it."""
        if self.margin_after is None:
            return ()
        added = {c.failures for c, _ in self.margin_added}
        absolute = {r.describe() for r in self.rules if r.absolute}
        return tuple(
            (c, rules) for c, rules in self.margin_after.breaking
            if c.failures in added or absolute.intersection(rules)
        )  # fmt: skip

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
        if self.broken_after:
            return False
        return not (self.require_margin >= 1 and self.margin_blocking)


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


def _margin(
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
    forwarding: Forwarding = DEFAULT_FORWARDING,
    paths: PathRule = "up-down",
    reroute_s: float = 0.0,
) -> Margin:
    """The N+1 cases on top of ``state``, judged against the state before the change.

    ``reference`` is that state's analysis (None when it is the healthy fabric,
    then one evaluator serves the relative and the ``abs:`` rules alike).  A
    further failure is unplanned (a kill, cut or optic): it crashes the running
    jobs whose timeout is no longer than ``reroute_s`` when it takes a link
    their traffic uses.
    """
    rel_ev = CaseEvaluator(
        fabric, jobs, state, reference=reference, forwarding=forwarding, paths=paths
    )
    rel_ev.prepare()
    abs_ev = rel_ev
    if reference is not None and any(r.absolute and r.metric in RATIO_METRICS for r in rules):
        abs_ev = CaseEvaluator(fabric, jobs, state, forwarding=forwarding, paths=paths)
        abs_ev.prepare()
    fragile = reroute_fragile(fabric, jobs, reroute_s, skip=summary.jobs_lost)
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
                (_with_reroute_crashes(fabric, r, x, fragile) for r in (c_rel, c_abs_rel))
                if fragile
                else (c_rel, c_abs_rel)
            )
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


def _with_reroute_crashes(
    fabric: Fabric, c: CaseResult, x: Failure, fragile: Mapping[str, frozenset[int]]
) -> CaseResult:
    """``c`` with the ``fragile`` jobs whose traffic ``x`` takes away crashed (lost, busbw 0)."""
    links = {x.index} if x.kind != "element" else set(fabric.links_at(x.index).tolist())
    hit = [name for name, uses in fragile.items() if name not in c.jobs_lost and links & uses]
    if not hit:
        return c
    why = tuple(f"{name}: crashed while the fabric rerouted around {x.id}" for name in hit)
    return dataclasses.replace(
        c, jobs_lost=(*c.jobs_lost, *hit), min_busbw_ratio=0.0, reasons=(*c.reasons, *why)
    )


FaultsArg = str | Sequence[Fault | AppliedFault]


def assess(
    fabric: Fabric,
    jobs: Sequence[Job],
    change: FaultsArg,
    budget: str | Sequence[BudgetRule] = "jobs_lost=0",
    *,
    state: FaultsArg = (),
    margin_categories: Sequence[str] = DEFAULT_MARGIN_CATEGORIES,
    require_margin: int = 0,
    margin: bool = True,
    progress: Progress | None = None,
    forwarding: Forwarding | None = None,
    routing: Routing = DEFAULT_ROUTING,
) -> RiskReport:
    """Assess a change; see the module docstring.

    ``change`` and ``state`` are fault text in the ``--change`` syntax
    (``"drain spine-05,spine-06"``, ``"drain: {tier: spine, all-but: 1}"``,
    ``"@faults.yaml"``; see :mod:`harness.faults.text`) or sequences of
    :class:`~harness.faults.fault.Fault` (or resolved ``AppliedFault``); ``budget`` is
    budget text (``"jobs_lost=0,abs:bandwidth>=0.5"``) or :class:`BudgetRule` s.
    ``progress(done, total)`` is called while the N+1 cases are evaluated.
    ``routing`` says which routes exist (``paths``), how flows spread over the
    uplinks (``forwarding``; the ``forwarding`` argument overrides it) and how
    long a kill, cut or optic stalls the running jobs (``reroute``): the change
    crashes a job whose timeout is no longer than that, a drain never does.
    """
    if forwarding is not None:
        routing = dataclasses.replace(routing, forwarding=forwarding)
    forwarding = routing.forwarding_model
    paths = routing.paths
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
        forwarding=forwarding,
        paths=paths,
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
            forwarding=forwarding,
            paths=paths,
        )
    )
    after_a = Analysis(
        fabric,
        Observation.from_state(after_state),
        jobs,
        healthy=healthy,
        forwarding=forwarding,
        paths=paths,
    )
    before = summarize(before_a)
    after = summarize(after_a, crashed_by_change(before_a, after_a, change_faults,
                                                 routing.reroute))  # fmt: skip
    added = summarize_added(after_a, before_a, after, before)
    broken = tuple(breaks(rules, _values(added, after)))
    m_after = m_before = None
    if margin or require_margin:
        singles = single_failures(fabric, margin_categories)
        reference = None if before_state.is_healthy else before_a
        none = summarize_added(before_a, before_a, before, before)

        def run(on: FaultState, summary: StateSummary, add: StateSummary, done: int) -> Margin:
            return _margin(
                fabric, jobs=jobs, state=on, summary=summary, added=add, before=before,
                reference=reference, rules=rules, singles=singles, progress=progress,
                done=done, total=2 * len(singles), forwarding=forwarding, paths=paths,
                reroute_s=routing.reroute,
            )  # fmt: skip

        with paused_gc():  # many small acyclic results: collections would walk them for nothing
            m_after = run(after_state, after, added, 0)
            m_before = run(before_state, before, none, len(singles))
        if progress is not None:
            progress(2 * len(singles), 2 * len(singles))
    return RiskReport(
        fabric, change_faults, state_faults, rules, before, after, added, broken, m_after,
        m_before, require_margin, time.perf_counter() - start, routing,
    )  # fmt: skip


def traffic_json(t: JobTraffic, uplink_ratio: float) -> dict[str, Any]:
    """A job's traffic as JSON: per collective GB/s (and ECMP's worst hash), what paces it."""
    worst = t.worst
    return {
        "forwarding": t.forwarding,
        "collectives": {
            c.collective: {
                "busbw_gbs": _gbs(c.busbw_gbs),
                "worst_gbs": _gbs(c.worst_gbs),
                "bottleneck": c.bottleneck,
            }
            for c in t.collectives
        },
        "worst_collective": worst.collective if worst is not None else None,
        "cross_leaf_flows": t.cross_leaf_flows,
        "uplink_ratio": round(uplink_ratio, 6),
        "pod_pair_gbps": t.pod_pair_gbps,
    }


def _gbs(x: float) -> float | None:
    return round(x, 6) if math.isfinite(x) else None  # a one-server job has no flows


def _ratio(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def to_json(report: RiskReport) -> dict[str, Any]:
    """The report as JSON: before, after and added explicitly, for the change and for N+1."""
    f = report.fabric

    def summary(s: StateSummary) -> dict[str, Any]:
        return {
            "jobs_lost": list(s.jobs_lost),
            "reasons": list(s.reasons),
            "nics_cut": s.nics_cut,
            "gpus_cut": s.gpus_cut,
            "gpu_pairs_disconnected": s.gpu_pairs_disconnected,
            "min_job_busbw_ratio": round(s.bandwidth, 6),
            "job_busbw_ratio": {k: round(v, 6) for k, v in s.job_bandwidth},
            "leaf_uplink_ratio": round(s.uplink, 6),
            "bisection_ratio": _ratio(s.bisection),
            "storage_ratio": round(s.storage, 6),
            "job_traffic": {name: traffic_json(t, up) for name, t, up in s.traffic},
        }

    def cases(items: Sequence[tuple[CaseResult, tuple[str, ...]]]) -> list[dict[str, Any]]:
        return [
            {
                "failure": c.label(f),
                "category": c.category(f),
                "breaks": list(rules),
                "jobs_lost": list(c.jobs_lost),
                "min_busbw_ratio": round(c.min_busbw_ratio, 6),
                "leaf_uplink_ratio": round(c.leaf_uplink_ratio, 6),
            }
            for c, rules in items[:50]
        ]

    def margin(m: Margin | None) -> dict[str, Any] | None:
        if m is None:
            return None
        return {
            "cases": m.cases,
            "breaking": len(m.breaking),
            "by_category": {k: {"breaking": n, "of": t} for k, n, t in m.by_category},
            "top": cases(m.breaking),
        }

    rows = report.margin_rows()
    return {
        "fabric": f.name,
        "ok": report.ok,
        "routing": report.routing.to_dict(),
        "budget": [r.describe() for r in report.rules],
        "require_margin": report.require_margin,
        "change": [a.describe(f) for a in report.change],
        "state": [a.describe(f) for a in report.state],
        "already_lost": [{"job": j, "reasons": list(why)} for j, why in report.already_lost],
        "before": summary(report.before),
        "after": summary(report.after),
        "added": summary(report.added),
        "budget_broken_by_change": list(report.broken_after),
        "margin": None
        if report.margin_after is None
        else {
            "by_category": {
                r.category: {
                    "before": {"breaking": r.before, "of": r.before_of},
                    "after": {"breaking": r.after, "of": r.after_of},
                    "added": r.added,
                }
                for r in rows
            },
            "added": len(report.margin_added),
            "blocking": len(report.margin_blocking),
            "top_added": cases(report.margin_added),
        },
        "margin_after": margin(report.margin_after),
        "margin_before": margin(report.margin_before),
        "seconds": round(report.seconds, 4),
    }


__all__ = [
    "BUDGET_METRICS",
    "BudgetRule",
    "MarginRow",
    "RiskReport",
    "StateSummary",
    "assess",
    "parse_budget",
    "parse_change",
    "to_json",
]
