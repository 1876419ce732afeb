"""A machine-readable run report (reporting stage, pure).

The document::

    {"passed": 3, "failed": 1, "mismatches": 0, "mismatched": 0,
     "errors": 0, "total": 4, "skipped": 1,
     "backend": "model", "seconds": 0.41,
     "scenarios": [ScenarioResult.to_dict(), ...],
     "skipped_scenarios": [{"name": ..., "path": ..., "reason": ...}]}

``mismatches`` counts the expectations whose measurement disagreed with the
prediction, ``mismatched`` the scenarios holding one (their status is
``mismatch``).  Every step record carries ``predicted`` and ``measured``
(observation -> value; ``measured`` only for what the backend measured) and
the scenario ``clock`` around it (``before_s``, ``after_s``, ``moved_s`` and
``why``: what moved it, when a job check did).
``total`` counts the scenarios that ran (passed + failed + mismatched + errors); skipped
scenarios (whose ``backends:`` exclude the run's backend) are listed apart.
"""

from __future__ import annotations

import json
from typing import Any
from typing import TextIO

from harness.reporting.outcome import RunReport


def json_report(report: RunReport) -> dict[str, Any]:
    """The report as a JSON-compatible dict."""
    return {
        "passed": report.passed,
        "failed": report.failed,
        "mismatches": report.mismatches,
        "mismatched": report.mismatched,
        "errors": report.errors,
        "total": report.total,
        "skipped": len(report.skipped),
        "backend": report.backend,
        "seconds": round(report.seconds, 4),
        "scenarios": [r.to_dict() for r in report.results],
        "skipped_scenarios": [
            {"name": s.name, "path": s.path, "reason": s.reason} for s in report.skipped
        ],
    }


def write_json(report: RunReport, stream: TextIO) -> None:
    """Write the report to ``stream`` as indented JSON (non-JSON values as strings)."""
    json.dump(json_report(report), stream, indent=2, default=str)
    stream.write("\n")
