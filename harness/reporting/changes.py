"""What ``harness risk``, ``harness sweep`` and ``harness audit`` print (reporting stage)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.invariants.bandwidth import describe as describe_traffic
from harness.invariants.figures import slowest_line
from harness.invariants.timeline import seconds_text
from harness.observations.budget import ASSUMED_JOBS_NOTE
from harness.observations.budget import describe_budget
from harness.observations.state_summary import StateSummary
from harness.planning.id_ranges import compress_ids
from harness.planning.risk import RiskReport
from harness.planning.sweep.ranking import CaseGroup
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.run import SweepResult
from harness.reporting.sweep_files import category_lines
from harness.words import plural


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _signed(n: int) -> str:
    return f"+{n:,}" if n >= 0 else f"{n:,}"


def _of(s: StateSummary) -> str:
    """`` (JOB)``: the surviving job the bandwidth figure is of ("" when none)."""
    return f" ({s.bandwidth_job})" if s.bandwidth_job else ""


@dataclass(frozen=True, slots=True)
class Wording:
    """How a risk report names what it assesses and the two states it compares."""

    subject: str  # what is assessed: "the change"
    nothing: str  # printed when it holds no fault
    before: str  # column of the state before it
    after: str  # column of the state after it
    title: str  # of the before/after table


CHANGE = Wording("the change", "no change", "before", "after", "before and after the change")
AUDIT = Wording(
    "the live state", "no difference", "design", "live", "the design and the live state"
)


def print_risk(console: Console, r: RiskReport, *, top: int = 15, words: Wording = CHANGE) -> None:
    """A risk report (``harness risk``; ``harness audit`` with ``words=AUDIT``)."""
    subject = words.subject
    f = r.fabric
    verdict = (
        Text("WITHIN BUDGET", style="bold green")
        if r.ok
        else Text("BREAKS THE BUDGET", style="bold red")
    )
    what = ", ".join(a.describe(f) for a in r.change) or words.nothing
    console.print(Text.assemble(verdict, f"  {f.name}: ", what))
    if r.state:
        console.print("already down: " + "; ".join(a.describe(f) for a in r.state), highlight=False)
    if r.already_lost:
        console.print(
            f"[bold]already lost before {subject}:[/] {plural(len(r.already_lost), 'job')}"
        )
        for job, why in r.already_lost:
            console.print(f"  {job}: {'; '.join(why) or 'lost'}", highlight=False)
    console.print(
        "budget: "
        + describe_budget(r.rules, subject)
        + (f"; margin N+{r.require_margin}" if r.require_margin else ""),
        highlight=False,
    )
    console.print(f"routing: {r.routing.describe()}", highlight=False)
    if r.jobs_assumed:
        console.print(ASSUMED_JOBS_NOTE, highlight=False)
    table = Table(title=words.title, title_justify="left")
    table.add_column("measure")
    for col in (words.before, words.after, "added"):
        table.add_column(col, justify="right")
    b, a, d = r.before, r.after, r.added

    def count(name: str, fn: Callable[[StateSummary], int]) -> None:
        table.add_row(name, f"{fn(b):,}", f"{fn(a):,}", _signed(fn(d)))

    def ratio(name: str, fn: Callable[[StateSummary], float | None]) -> None:
        rel = fn(d)
        table.add_row(
            name, _pct(fn(b)), _pct(fn(a)), "-" if rel is None else f"{rel:.1%} of {words.before}"
        )

    count("jobs lost (running jobs that die)", lambda s: len(s.jobs_lost))
    count("jobs unplaceable (could not start now)", lambda s: len(s.jobs_unplaceable))
    count("NICs cut off", lambda s: s.nics_cut)
    count("GPUs cut off (PXN allowed)", lambda s: s.gpus_cut)
    count("GPU pairs that cannot talk", lambda s: s.gpu_pairs_disconnected)
    table.add_row(
        "min bus bandwidth of surviving jobs",
        *(f"{_pct(s.bandwidth)}{_of(s)}" if s.bandwidth_job else "-" for s in (b, a)),
        f"{d.bandwidth:.1%} of {words.before}{_of(d)}" if d.bandwidth_job else "-",
    )
    ratio("min leaf uplink capacity", lambda s: s.uplink)
    ratio("bisection bandwidth", lambda s: s.bisection)
    ratio("min storage bandwidth", lambda s: s.storage)
    console.print(table)
    for label, s in ((words.before, b), (words.after, a)):
        if line := slowest_line(s.figures):
            console.print(f"{label}: {line}", highlight=False)
    if d.jobs_lost:
        console.print(
            f"[bold]{subject} loses {plural(len(d.jobs_lost), 'job')}:[/] {', '.join(d.jobs_lost)}"
        )
        for line in d.reasons[:8]:
            console.print(f"  {line}", highlight=False)
    else:
        console.print(f"{subject} loses no job", highlight=False)
    if d.gpu_pairs_disconnected > 0:
        console.print(
            f"[bold]{subject} cuts off {plural(d.gpu_pairs_disconnected, 'GPU pair')}[/] "
            "(PXN allowed)" + (":" if r.cut is not None and r.cut.groups else "")
        )
        for line in r.cut.lines() if r.cut is not None else ():
            console.print(f"  {line}", highlight=False)
    before_bw = dict(b.job_bandwidth)
    slower = [(n, v) for n, v in a.job_bandwidth
              if n not in a.jobs_lost and v < before_bw.get(n, 1.0) - 1e-12]  # fmt: skip
    if slower:
        shown = ", ".join(f"{n} {before_bw.get(n, 1.0):.0%} -> {v:.0%}" for n, v in slower[:10])
        more = f" (+{len(slower) - 10} more)" if len(slower) > 10 else ""
        console.print(f"slower jobs (bus bandwidth vs healthy): {shown}{more}", highlight=False)
        traffic = {name: (t, up) for name, t, up in a.traffic}
        for n, _ in slower[:5]:
            if n in traffic:
                flows, up = traffic[n]
                console.print(f"  {n}: {describe_traffic(flows, up)}", highlight=False)
    if r.broken_after:
        console.print(f"[red]{subject} breaks the budget:[/] " + ", ".join(r.broken_after))
    rows = r.margin_rows()
    if rows:
        t = Table(
            title="N+1: single further failures that would break the budget",
            title_justify="left",
        )
        t.add_column("category")
        for col in (words.before, words.after, "added"):
            t.add_column(col, justify="right")
        for row in rows:
            t.add_row(
                row.category,
                f"{row.before:,} of {row.before_of:,}",
                f"{row.after:,} of {row.after_of:,}",
                _signed(row.added),
            )
        t.add_row(
            "all",
            f"{sum(x.before for x in rows):,} of {sum(x.before_of for x in rows):,}",
            f"{sum(x.after for x in rows):,} of {sum(x.after_of for x in rows):,}",
            _signed(sum(x.added for x in rows)),
            style="bold",
        )
        console.print(t)
    shown_cases = r.margin_blocking if r.require_margin else r.margin_added
    if rows and r.broken_after:
        console.print(
            f"{subject} itself breaks the budget, so every further failure on top of it does too",
            highlight=False,
        )
    elif shown_cases:
        t = Table(
            title=(
                f"single further failures that break the budget only after {subject} "
                if not r.require_margin
                else "single further failures that break the N+1 margin "
            )
            + f"(top {min(top, len(shown_cases))} of {len(shown_cases):,})",
            title_justify="left",
        )
        for col in ("failure", "category", "breaks", "jobs lost", "GPU pairs cut",
                    "min busbw (surviving)", "min uplink"):  # fmt: skip
            t.add_column(col, overflow="fold")
        for c, rules in shown_cases[:top]:
            t.add_row(
                c.label(f),
                c.category(f),
                ", ".join(rules),
                _lost(c),
                f"{c.pairs_disconnected:,}",
                _busbw(c),
                _pct(c.leaf_uplink_ratio),
            )
        console.print(t)
    console.print(f"[dim]{r.seconds:.2f} s[/]")


def _lost(c: CaseResult, shown: int = 4) -> str:
    """A case's lost jobs (those that crashed in a reroute marked so), or ``-``."""
    names = [f"{j} (crashed)" if j in c.crashed else j for j in c.jobs_lost]
    return ", ".join(names[:shown]) + (" ..." if len(names) > shown else "") or "-"


def _group_lost(g: CaseGroup) -> str:
    """The jobs a group's cases lose: the case's own for a group of one, else how many each
    and whose (``1 each: su01..10``)."""
    c = g.first
    names = list(dict.fromkeys(j for x in g.cases for j in x.jobs_lost))
    if len(names) == len(c.jobs_lost):  # every case loses the same jobs
        return _lost(c, 3)
    return f"{len(c.jobs_lost)} each: {compress_ids(names)}"


def _busbw(c: CaseResult, line: float | None = None) -> str:
    """The surviving jobs' lowest bus bandwidth and whose it is (and, ``line``, that job's
    against its line rate)."""
    if not c.busbw_job:
        return _pct(c.min_busbw_ratio)
    of_line = f"; {line:.1%} of line rate" if line is not None else ""
    return f"{_pct(c.min_busbw_ratio)} ({c.busbw_job}{of_line})"


def print_sweep(
    console: Console, r: SweepResult, *, top: int = 20, jobs_assumed: bool = False
) -> None:
    """Print a sweep: its summary, the table by category and the ``top`` worst groups of
    cases (cases alike by the fabric's symmetry are one row, with their count)."""
    f = r.fabric
    spec = r.spec
    console.print(
        f"[bold]{f.name}[/]: {len(r.cases):,} cases (depth {spec.depth}, "
        f"elements {','.join(spec.categories)}"
        + (f", {r.sampled_pairs:,} sampled pairs, seed {spec.seed}" if spec.depth >= 2 else "")
        + f"): [red]{r.job_losing:,} lose a job[/], {r.disconnecting:,} disconnect a GPU pair "
        f"(PXN allowed); {r.exact_cases:,} evaluated by the full analysis; {r.seconds:.2f} s"
    )
    console.print(
        f"routing: paths {spec.paths}, forwarding {spec.forwarding}, reroute "
        f"{seconds_text(spec.reroute_s)} s",
        highlight=False,
    )
    if jobs_assumed:
        console.print(ASSUMED_JOBS_NOTE, highlight=False)
    if line := slowest_line(r.figures):
        console.print(f"base state: {line}", highlight=False)
    summary = Table(title="by category", title_justify="left")
    for col in ("category", "cases", "disconnecting", "job-losing"):
        summary.add_column(col, justify="right" if col != "category" else "left")
    for cat, n, d, j in category_lines(r):
        summary.add_row(cat, f"{n:,}", f"{d:,}", f"{j:,}")
    console.print(summary)
    groups = r.groups()
    t = Table(
        title=f"worst cases (top {min(top, len(groups))} of {len(groups):,} groups of alike "
        f"cases, {len(r.cases):,} cases; ranked by GPUs of the jobs lost, GPU pairs cut, "
        "surviving bandwidth)",
        title_justify="left",
    )
    for col in ("case", "GPUs lost", "jobs lost", "unplaceable", "GPU pairs cut (PXN)",
                "min busbw (surviving)", "min uplink", "storage"):  # fmt: skip
        t.add_column(col, overflow="fold")  # ids fold on a narrow terminal, never cut
    for g in groups[:top]:
        c = g.first
        t.add_row(
            g.describe(),
            f"{g.gpus_lost:,}",
            _group_lost(g),
            f"{len(c.unplaceable):,}",
            f"{c.pairs_disconnected:,}",
            _busbw(c, r.vs_line_rate(c)),
            _pct(c.leaf_uplink_ratio),
            _pct(c.storage_ratio),
        )
    console.print(t)
