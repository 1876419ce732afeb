"""A drill's verdict: from its probes, expectations, refusals and recovery, and against the
outcome it declares (run stage, pure)."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.run.drill.results import DrillResult
from harness.run.drill.results import EventRecord
from harness.run.drill.results import ProbeRecord
from harness.scenario.drill_model import Probe


def with_status(result: DrillResult, status: str) -> DrillResult:
    """``result`` with another status."""
    return dataclasses.replace(result, status=status)


def declared(outcome: str, status: str, reason: str) -> tuple[str, str]:
    """The status against the drill's declared ``outcome`` (passed unless it says)."""
    if outcome == "passed" or status in ("error", "mismatch"):
        return status, reason
    if status == outcome:
        return "passed", f"{outcome} as the drill expects: {reason}"
    return "failed", (f"the drill expects to end {outcome}, it ended {status}"
                      + (f": {reason}" if reason else ""))  # fmt: skip


def verdict(  # noqa: PLR0917 -- the parts of one run the verdict reads
    probes: tuple[ProbeRecord, ...],
    expectations: tuple[Any, ...],
    recovered: float | None,
    window: float,
    specs: tuple[Probe, ...],
    events: list[EventRecord],
) -> tuple[str, str]:
    """A drill that ran to its end: failed on a refusal, a probe out of tolerance, a failed
    expectation or no recovery in time (the first that applies, with why); else passed."""
    refused = [e for e in events if e.status == "refused"]
    if refused:
        return "failed", "; ".join(f"{e.label}: {e.guard}" for e in refused)
    bad = [p for p in probes if p.verdict == "failed"]
    if bad:
        return "failed", "; ".join(p.why or f"{p.name} failed" for p in bad)
    wrong = [e for e in expectations if not e.passed]
    if wrong:
        return "failed", "; ".join(f"{e.observation}: expected {e.expected}, got {e.observed}"
                                   for e in wrong)  # fmt: skip
    if any(p.mode == "continuous" for p in specs) and recovered is None:
        return "failed", f"the steady state did not hold again within {window:g} s"
    return "passed", ""
