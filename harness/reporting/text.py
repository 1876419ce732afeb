"""Plain-text renderings of results (reporting stage, pure: strings in, strings out).

Shared by the rich console, the JUnit ``<failure>`` body and the pytest
plugin's ``repr_failure``, so a failed expectation reads the same everywhere::

    scenarios/spines.yaml:14:7: all_gpus_connected
        expected: True
        observed: False
        detail:   1,200 GPU pairs cannot talk
        involved: su01/leaf-r0, su02/leaf-r0
"""

from __future__ import annotations

from typing import Any

from harness.run.results import ExpectResult
from harness.run.results import ScenarioResult
from harness.run.results import StepResult
from harness.words import plural

MAX_INVOLVED = 10
INDENT = "    "


def format_value(value: Any) -> str:
    """An observed value the way :meth:`~harness.observations.expect.Expect.describe` writes
    expectations."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def format_involved(involved: tuple[str, ...], limit: int = MAX_INVOLVED) -> str:
    """Element ids, at most ``limit`` of them, with a count of the rest."""
    shown = ", ".join(involved[:limit])
    rest = len(involved) - limit
    return f"{shown} (+{rest} more)" if rest > 0 else shown


def expectation_lines(e: ExpectResult) -> list[str]:
    """One failed (or passed) expectation: where, what, expected vs observed, why."""
    head = f"{e.where}: {e.observation}" if str(e.where) else e.observation
    lines = [
        head,
        f"{INDENT}expected: {e.expected}",
        f"{INDENT}observed: {format_value(e.observed)}",
    ]
    if e.measured_by:
        lines.append(f"{INDENT}predicted: {format_value(e.predicted)}")
        lines.append(f"{INDENT}measured:  {format_value(e.measured)} (on {e.measured_by})")
        if e.mismatch:
            lines.append(f"{INDENT}MISMATCH: the measurement disagrees with the prediction")
        if e.measured_detail:
            lines.append(f"{INDENT}measured detail: {e.measured_detail}")
    if e.detail:
        lines.append(f"{INDENT}detail:   {e.detail}")
    if e.involved:
        lines.append(f"{INDENT}involved: {format_involved(e.involved)}")
    return lines


def step_lines(step: StepResult) -> list[str]:
    """A step: its plain-words text with the scenario clock before and after it, why the clock
    moved (a watch of the jobs), its story, how long it settled."""
    where = f"{step.where}: " if str(step.where) else ""
    lines = [f"{where}{step.kind}: {step.text} ({step.clock_text})"]
    if step.clock_note:
        lines.append(f"{INDENT}{step.clock_note}")
    lines.extend(f"{INDENT}{line}" for line in step.story)
    if step.settle_s:
        lines.append(f"{INDENT}{settle_text(step.settle_s)}")
    return lines


def settle_text(seconds: float) -> str:
    """How long the fabric took to settle, in words."""
    return f"the fabric settled in {seconds:.2f} s"


def measured_elsewhere(step: StepResult) -> bool:
    """Whether a step holds measurements of a backend other than the model.

    On the model backend the measurement is the prediction, so there is
    nothing to show side by side.
    """
    return any(e.measured_by not in ("", "model") for e in step.expectations)


def measurement_lines(step: StepResult) -> list[str]:
    """An expect step: every expectation with its prediction beside its measurement."""
    lines = []
    for e in step.expectations:
        got = f"{format_value(e.measured)} on {e.measured_by}" if e.measured_by else "not measured"
        lines.append(
            f"{e.observation}: expected {e.expected}, predicted {format_value(e.predicted)}, "
            f"measured {got}: {e.status}"
        )
    if step.plan:
        lines.append(f"{INDENT}measured: {step.plan}")
    lines.extend(f"{INDENT}{note}" for note in step.notes)
    return lines


def verdict(result: ScenarioResult) -> str:
    """``failed``/``passed``/``error`` plus how many expectations failed."""
    if result.status == "error":
        return "error: bad input"
    checked = sum(len(s.expectations) for s in result.steps)
    if result.status == "skipped":
        return f"skipped: {result.error}"
    if result.mismatches:
        return f"mismatch: {len(result.mismatches)} of {checked} measured otherwise than predicted"
    failed = len(result.failures)
    if failed:
        return f"failed: {failed} of {plural(checked, 'expectation')}"
    return f"passed: {plural(checked, 'expectation')}"


def explain(result: ScenarioResult) -> str:
    """The whole story of a scenario, for a failure report.

    The steps come first (what was broken, what survived), then every failed
    expectation with its location, so the text alone says what went wrong.
    """
    fabric = f" on fabric {result.fabric}" if result.fabric else ""
    how = f"backend {result.backend}, routing {result.routing.describe()}"
    lines = [f"scenario {result.name}{fabric} ({how}): {verdict(result)}"]
    if result.status == "error":
        lines.extend(f"{INDENT}{line}" for line in result.error.splitlines())
        return "\n".join(lines)
    if result.steps:
        lines.append("steps:")
        for step in result.steps:
            lines.extend(f"{INDENT}{line}" for line in step_lines(step))
    if result.failures:
        lines.append("failed expectations:")
        for e in result.failures:
            lines.extend(f"{INDENT}{line}" for line in expectation_lines(e))
    return "\n".join(lines)


def failure_message(result: ScenarioResult) -> str:
    """A one-line summary: the first failed expectation, expected vs observed."""
    if result.status == "error":
        first = result.error.splitlines()[0] if result.error else "bad input"
        return f"bad input: {first}"
    fails = result.failures
    if not fails:
        return verdict(result)
    e = next((x for x in fails if x.mismatch), fails[0])
    more = f" (+{len(fails) - 1} more)" if len(fails) > 1 else ""
    if e.mismatch:
        return (
            f"{e.observation}: predicted {format_value(e.predicted)}, measured "
            f"{format_value(e.measured)} on {e.measured_by} at {e.where}{more}"
        )
    return (
        f"{e.observation}: expected {e.expected}, observed {format_value(e.observed)} "
        f"at {e.where}{more}"
    )
