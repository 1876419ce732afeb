"""What ``harness risk``, ``harness sweep`` and ``harness audit`` print (reporting layer)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.risk import RiskReport
from harness.risk import StateSummary
from harness.risk import margin_sentence
from harness.sweep.report import category_lines
from harness.sweep.run import SweepResult


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def print_risk(console: Console, r: RiskReport, *, top: int = 15) -> None:
    f = r.fabric
    verdict = (
        Text("WITHIN BUDGET", style="bold green")
        if r.ok
        else Text("BREAKS THE BUDGET", style="bold red")
    )
    console.print(
        Text.assemble(verdict, f"  {f.name}: ", ", ".join(a.describe(f) for a in r.change))
    )
    if r.state:
        console.print("already down: " + "; ".join(a.describe(f) for a in r.state))
    console.print(
        "budget: "
        + ", ".join(x.describe() for x in r.rules)
        + (f"; margin N+{r.require_margin}" if r.require_margin else "")
    )
    table = Table(title="before and after the change", title_justify="left")
    table.add_column("measure")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")

    def add(name: str, fn: type[str] | object, b: StateSummary, a: StateSummary) -> None:
        table.add_row(name, str(fn(b)), str(fn(a)))  # type: ignore[operator]

    add("jobs lost", lambda s: len(s.jobs_lost), r.before, r.after)
    add("NICs cut off", lambda s: s.nics_cut, r.before, r.after)
    add("GPUs cut off (PXN allowed)", lambda s: s.gpus_cut, r.before, r.after)
    add("GPU pairs that cannot talk", lambda s: f"{s.gpu_pairs_disconnected:,}", r.before, r.after)
    add("min job bus bandwidth", lambda s: _pct(s.bandwidth), r.before, r.after)
    add("min leaf uplink capacity", lambda s: _pct(s.uplink), r.before, r.after)
    add("bisection bandwidth", lambda s: _pct(s.bisection), r.before, r.after)
    add("min storage bandwidth", lambda s: _pct(s.storage), r.before, r.after)
    console.print(table)
    new_lost = [j for j in r.after.jobs_lost if j not in r.before.jobs_lost]
    if new_lost:
        console.print(f"[bold]the change loses {len(new_lost)} job(s):[/] {', '.join(new_lost)}")
        for line in [x for x in r.after.reasons if x.split(":")[0] in new_lost][:8]:
            console.print(f"  {line}", highlight=False)
    before_bw = dict(r.before.job_bandwidth)
    slower = [(n, v) for n, v in r.after.job_bandwidth
              if n not in r.after.jobs_lost and v < before_bw.get(n, 1.0) - 1e-12]  # fmt: skip
    if slower:
        shown = ", ".join(f"{n} {before_bw.get(n, 1.0):.0%} -> {v:.0%}" for n, v in slower[:10])
        more = f" (+{len(slower) - 10} more)" if len(slower) > 10 else ""
        console.print(f"slower jobs (bus bandwidth vs healthy): {shown}{more}", highlight=False)
    if r.broken_after:
        console.print("[red]after the change the budget breaks:[/] " + ", ".join(r.broken_after))
    for line in margin_sentence(r):
        console.print(line, highlight=False)
    if r.margin_after and r.margin_after.breaking:
        t = Table(
            title=f"single further failures that break the budget (top {top})", title_justify="left"
        )
        for col in ("failure", "category", "breaks", "jobs lost", "min busbw", "min uplink"):
            t.add_column(col)
        for c, rules in r.margin_after.breaking[:top]:
            t.add_row(
                c.label(f),
                c.category(f),
                ", ".join(rules),
                ", ".join(c.jobs_lost[:4]) + (" ..." if len(c.jobs_lost) > 4 else ""),
                _pct(c.min_busbw_ratio),
                _pct(c.leaf_uplink_ratio),
            )
        console.print(t)
    console.print(f"[dim]{r.seconds:.2f} s[/]")


def print_sweep(console: Console, r: SweepResult, *, top: int = 20) -> None:
    f = r.fabric
    spec = r.spec
    console.print(
        f"[bold]{f.name}[/]: {len(r.cases):,} cases (depth {spec.depth}, "
        f"elements {','.join(spec.categories)}"
        + (f", {r.sampled_pairs:,} sampled pairs, seed {spec.seed}" if spec.depth >= 2 else "")
        + f"): [red]{r.job_losing:,} lose a job[/], {r.disconnecting:,} disconnect a GPU pair "
        f"(PXN allowed); {r.exact_cases:,} evaluated by the full analysis; {r.seconds:.2f} s"
    )
    summary = Table(title="by category", title_justify="left")
    for col in ("category", "cases", "disconnecting", "job-losing"):
        summary.add_column(col, justify="right" if col != "category" else "left")
    for cat, n, d, j in category_lines(r):
        summary.add_row(cat, f"{n:,}", f"{d:,}", f"{j:,}")
    console.print(summary)
    t = Table(title=f"worst cases (top {top} of {len(r.cases):,})", title_justify="left")
    for col in ("case", "jobs lost", "GPU pairs cut (PXN)", "min busbw", "min uplink", "storage"):
        t.add_column(col)
    for c in r.ranked()[:top]:
        lost = ", ".join(c.jobs_lost[:3]) + (" ..." if len(c.jobs_lost) > 3 else "")
        t.add_row(
            c.label(f),
            lost or "-",
            f"{c.pairs_disconnected:,}",
            _pct(c.min_busbw_ratio),
            _pct(c.leaf_uplink_ratio),
            _pct(c.storage_ratio),
        )
    console.print(t)
