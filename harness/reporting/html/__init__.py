"""HTML reports: one self-contained page per command, with the fabric drawn.

``harness run|risk|sweep|audit|drill --report DIR`` write ``DIR/index.html`` (styles
inline, fabric drawings as inline SVG with tooltips, nothing fetched from the
network), the PNG figures it shows and each drawing as an ``.svg`` file.  Pages
are Jinja2 templates (``templates/``), figures matplotlib (Agg), drawings laid
out by :mod:`harness.reporting.html.drawing`.

Modules:

``audit_page``  The ``harness audit --report DIR`` page: the findings drawn on the fabric.
``busbw``       The jobs' bus bandwidth figures as template rows: expected, against line rate
                and healthy.
``drill_figure`` A drill's probes over time, the faults shaded and the crash times marked (a
                PNG).
``drill_page``  The ``harness drill --report DIR`` page: verdicts, probes over time, predicted
                against observed crash times, every action.
``drawing``     Lay a fabric out as tiers of cells and cable bundles.
``figures``     The report figures, drawn with matplotlib's Agg backend (reporting edge: writes
                PNGs).
``marks``       What a fabric drawing highlights: faulted elements and cables, lost jobs'
                servers.
``page``        Render report pages with Jinja2 and write them with their figures (reporting
                edge).
``risk_page``   The ``harness risk --report DIR`` page: before and after a change, side by side.
``run_page``    The ``harness run --report DIR`` page: per scenario the story, the verdicts and
                the fabric after every step that changed it.
``sweep_page``  The ``harness sweep --report DIR`` page: impact by category, worst cases, base
                state.
"""

from __future__ import annotations

from harness.reporting.html.audit_page import AuditInput
from harness.reporting.html.audit_page import write_audit_report
from harness.reporting.html.audit_page import write_regular_audit_report
from harness.reporting.html.drill_page import write_drill_report
from harness.reporting.html.risk_page import write_risk_report
from harness.reporting.html.run_page import write_run_report
from harness.reporting.html.sweep_page import write_sweep_report

__all__ = [
    "AuditInput",
    "write_audit_report",
    "write_drill_report",
    "write_regular_audit_report",
    "write_risk_report",
    "write_run_report",
    "write_sweep_report",
]
