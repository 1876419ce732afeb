"""The ``harness drill --report DIR`` page: per drill its verdict, the probes over time with
the faults shaded, predicted against observed crash times, and every action."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.reporting.html.drill_figure import drill_timeline
from harness.reporting.html.page import ReportDir
from harness.reporting.html.page import write_page


def write_drill_report(docs: Sequence[Mapping[str, Any]], directory: Path) -> Path:
    """Write the page of these drill documents (journal.json form) into ``directory``."""
    out = ReportDir(directory)
    out.prepare()
    entries = []
    for i, doc in enumerate(docs):
        figure = drill_timeline(doc, out.path(f"drill-{i + 1}.png")).name
        entries.append({"doc": doc, "figure": figure, "anchor": f"drill-{i + 1}",
                        "crashes": doc.get("crashes", []),
                        "checks": doc.get("jobs_observed", [])})  # fmt: skip
    statuses = [d.get("status", "error") for d in docs]
    verdict = "passed" if all(s == "passed" for s in statuses) else next(
        s for s in statuses if s != "passed")  # fmt: skip
    backends = ", ".join(sorted({str(d.get("backend", "?")) for d in docs}))
    return write_page(out, "drill.html.j2", {
        "title": "harness drill", "kind": "drill", "verdict": verdict, "entries": entries,
        "subtitle": f"{len(docs)} drill(s) on {backends}",
    })  # fmt: skip
