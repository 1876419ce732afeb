"""A rich console reporter: a :class:`~harness.run.observers.RunObserver` (reporting stage).

Per scenario it prints one verdict line (verdict, name, fabric, seconds), the
plain-words text of every step with the scenario clock before and after it
(``t=10 s -> 44.36 s``, and why an ``expect`` moved it), the story of every
inject/restore step, and a block for each
failed expectation (observation, expected vs observed, detail, involved
elements, file:line).  At the end it prints a table of all scenarios and the
totals.  With more than a few scenarios on a terminal it shows a progress bar
(never when the output is not a TTY, nor with ``quiet``).

``quiet`` keeps only what needs attention: failed and bad-input scenarios and
the totals line.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.padding import Padding
from rich.progress import BarColumn
from rich.progress import MofNCompleteColumn
from rich.progress import Progress
from rich.progress import TaskID
from rich.progress import TextColumn
from rich.progress import TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from harness.reporting.outcome import RunReport
from harness.reporting.outcome import Skipped
from harness.reporting.text import format_involved
from harness.reporting.text import format_value
from harness.reporting.text import measured_elsewhere
from harness.reporting.text import settle_text
from harness.run.results import ExpectResult
from harness.run.results import ScenarioResult
from harness.run.results import StepResult
from harness.scenario.model import Scenario
from harness.words import plural

#: A progress bar appears only when more scenarios than this run.
PROGRESS_MIN = 3

#: Off a terminal (CI logs, pipes, files) lines may be this long before rich wraps
#: them, so tables print every id in full and never cut it to ``su05/node0…``.
PIPE_WIDTH = 1000


def make_console(file: TextIO | None = None) -> Console:
    """A console writing to ``file`` (default stdout) that never truncates ids.

    On a terminal it takes the terminal's width (id columns fold rather than
    cut); anywhere else it is :data:`PIPE_WIDTH` wide, so a table row stays one
    line with its ids whole, whatever ``COLUMNS`` says.
    """
    stream = file if file is not None else sys.stdout
    console = Console(file=stream, highlight=False)
    if console.is_terminal:
        return console
    return Console(file=stream, highlight=False, width=PIPE_WIDTH)


STYLES = {
    "passed": "bold green",
    "failed": "bold red",
    "error": "bold magenta",
    "mismatch": "bold bright_red",
    "skipped": "bold yellow",
}
VERDICTS = {
    "passed": "PASSED",
    "failed": "FAILED",
    "error": "ERROR",
    "mismatch": "MISMATCH",
    "skipped": "SKIPPED",
}


class ConsoleReporter:
    """Print a run as it happens.  Use as a context manager around the run.

    For example::

        with ConsoleReporter(Console(), quiet=False) as rep:
            rep.start(len(scenarios))
            for s in scenarios:
                run_scenario(s, "model", [rep])
            rep.finish(report)
    """

    def __init__(self, console: Console | None = None, *, quiet: bool = False) -> None:
        self.console = console if console is not None else Console()
        self.quiet = quiet
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    # -- life cycle ------------------------------------------------------------
    def __enter__(self) -> ConsoleReporter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop_progress()

    def start(self, total: int) -> None:
        """Announce how many scenarios will run (shows the progress bar if useful)."""
        if self.quiet or total <= PROGRESS_MIN or not self.console.is_terminal:
            return
        self._progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self._task = self._progress.add_task("running", total=total)
        self._progress.start()

    def finish(self, report: RunReport) -> None:
        """Stop the progress bar; print the table (unless quiet) and the totals."""
        self._stop_progress()
        if not self.quiet and (report.results or report.skipped):
            self.console.print(summary_table(report))
        self.console.print(totals(report))

    # -- RunObserver -------------------------------------------------------------
    def scenario_started(self, scenario: Scenario, backend: str) -> None:
        """Show the scenario running in the progress bar."""
        self._describe(f"{scenario.name} ({backend})")

    def step_finished(self, scenario: Scenario, step: StepResult) -> None:
        """Show the step just finished in the progress bar."""
        self._describe(f"{scenario.name}: {step.text}")

    def scenario_finished(self, result: ScenarioResult) -> None:
        """Advance the bar; print the verdict, the steps (unless quiet) and every failure."""
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)
        if self.quiet and result.passed:
            return
        if result.status == "skipped":  # the backend cannot inject its faults
            self._print_skip(result.name, result.error)
            return
        self.console.print(verdict_line(result), soft_wrap=True)
        if result.status == "error":
            self.console.print(Text(_indent(result.error), style="magenta"), soft_wrap=True)
            return
        if not self.quiet:
            for step in result.steps:
                self.console.print(step_text(step))
                if step.kind == "expect" and measured_elsewhere(step):
                    table = measurement_table(step)
                    self.console.print(Padding(table, (0, 0, 0, 11), expand=False))
        for e in result.failures:
            head, body = failure_block(e)
            self.console.print(head, soft_wrap=True)
            self.console.print(body)

    def scenario_skipped(self, skipped: Skipped) -> None:
        """A scenario that does not run on this backend (a note, not a failure)."""
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)
        self._print_skip(skipped.name, skipped.reason)

    def _print_skip(self, name: str, reason: str) -> None:
        if not self.quiet:
            line = Text.assemble(("SKIPPED", "bold yellow"), "  ", (name, "bold"))
            line.append(f"  {reason}", style="dim")
            self.console.print(line)

    # -- helpers -----------------------------------------------------------------
    def _describe(self, text: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=text[:60])

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = None


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def verdict_line(result: ScenarioResult) -> Text:
    """``PASSED  name  fabric  routing  0.08s`` (user text is never read as markup)."""
    status = result.status
    line = Text.assemble(
        (f"{VERDICTS.get(status, status.upper()):<7}", STYLES.get(status, "bold")),
        " ",
        (result.name, "bold"),
    )
    if result.fabric:
        line.append(f"  {result.fabric}", style="cyan")
    line.append(f"  routing {result.routing.describe()}", style="dim")
    line.append(f"  {result.seconds:.2f}s", style="dim")
    return line


def step_text(step: StepResult) -> Table:
    """The plain words of a step with the scenario clock before and after it, why the clock
    moved (a watch of the jobs), and its story, indented under the verdict line.

    A two-column grid, so wrapped lines keep their indentation.
    """
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=9, no_wrap=True)
    grid.add_column(overflow="fold")
    body = Text(step.text)
    body.append(f"  {step.clock_text}", style="cyan")
    if step.clock_note:
        body.append(f"\n{step.clock_note}", style="bold cyan")
    for line in step.story:
        body.append(f"\n{line}", style="dim")
    if step.settle_s:
        body.append(f"\n{settle_text(step.settle_s)}", style="dim")
    kind = Text(f"  {step.kind}", style="bold yellow" if step.kind == "inject" else "bold blue")
    grid.add_row(kind, body)
    return grid


def measurement_table(step: StepResult) -> Table:
    """An expect step on a measuring backend: predicted and measured side by side."""
    table = Table(title=f"expect: {step.plan}" if step.plan else None, title_justify="left",
                  caption="\n".join(step.notes) or None, caption_justify="left")  # fmt: skip
    for name in ("expectation", "expected", "predicted", "measured", "verdict"):
        table.add_column(name)
    for e in step.expectations:
        measured = format_value(e.measured) if e.measured_by else "-"
        verdict = Text(VERDICTS.get(e.status, e.status.upper()), style=STYLES.get(e.status, ""))
        table.add_row(Text(e.observation), Text(e.expected), Text(format_value(e.predicted)),
                      Text(measured), verdict)  # fmt: skip
    return table


def failure_block(e: ExpectResult) -> tuple[Text, Padding]:
    """A clear block for one failed expectation: a header naming the observation
    and its file:line (printed unwrapped, so the location stays one clickable
    word), then expected vs observed, detail and involved elements.
    """
    what = "measured otherwise than predicted: " if e.mismatch else "expectation failed: "
    head = Text.assemble("  ", (what, "bold red"), (e.observation, "bold"))
    if str(e.where):
        head.append("  at ")
        head.append(str(e.where), style="cyan")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    grid.add_row("expected", Text(e.expected, style="green"))
    grid.add_row("observed", Text(format_value(e.observed), style="red"))
    if e.measured_by:
        grid.add_row("predicted", Text(format_value(e.predicted)))
        grid.add_row("measured", Text(f"{format_value(e.measured)} (on {e.measured_by})"))
        if e.measured_detail:
            grid.add_row("measured detail", Text(e.measured_detail))
    if e.detail:
        grid.add_row("detail", Text(e.detail))
    if e.involved:
        grid.add_row("involved", Text(format_involved(e.involved)))
    return head, Padding(grid, (0, 0, 0, 6), expand=False)


def summary_table(report: RunReport) -> Table:
    """Scenario, backend, verdict and seconds, one row each."""
    table = Table(title="harness run", title_justify="left")
    table.add_column("scenario", overflow="fold")
    table.add_column("backend")
    table.add_column("verdict")
    table.add_column("seconds", justify="right")
    for r in report.results:
        verdict = Text(VERDICTS.get(r.status, r.status.upper()), style=STYLES.get(r.status, ""))
        table.add_row(Text(r.name), r.backend, verdict, f"{r.seconds:.2f}")
    for s in report.skipped:
        table.add_row(Text(s.name), report.backend, Text("SKIPPED", style="yellow"), "-")
    return table


def totals(report: RunReport) -> Text:
    """``3 passed, 1 failed, 1 error, 1 skipped in 0.41s on model``."""
    text = Text()
    parts: list[tuple[str, str]] = [
        (f"{report.passed} passed", "green" if report.passed else ""),
        (f"{report.failed} failed", "red" if report.failed else ""),
        (plural(report.errors, "error"), "magenta" if report.errors else ""),
    ]
    if report.mismatches:
        parts.append((plural(report.mismatches, "mismatch"), "bright_red"))
    if report.skipped:
        parts.append((f"{len(report.skipped)} skipped", "yellow"))
    for i, (words, style) in enumerate(parts):
        if i:
            text.append(", ")
        text.append(words, style=style)
    text.append(f" in {report.seconds:.2f}s on {report.backend}")
    return text
