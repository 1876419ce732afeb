"""HTML reports: one self-contained page per command, with the fabric drawn.

``harness run|risk|sweep|audit --report DIR`` write ``DIR/index.html`` (styles
inline, fabric drawings as inline SVG with tooltips, nothing fetched from the
network), the PNG figures it shows and each drawing as an ``.svg`` file.  Pages
are Jinja2 templates (``templates/``), figures matplotlib (Agg), drawings laid
out by :mod:`harness.reporting.html.drawing`.
"""

from __future__ import annotations

from harness.reporting.html.audit_page import AuditInput
from harness.reporting.html.audit_page import write_audit_report
from harness.reporting.html.audit_page import write_regular_audit_report
from harness.reporting.html.risk_page import write_risk_report
from harness.reporting.html.run_page import write_run_report
from harness.reporting.html.sweep_page import write_sweep_report

__all__ = [
    "AuditInput",
    "write_audit_report",
    "write_regular_audit_report",
    "write_risk_report",
    "write_run_report",
    "write_sweep_report",
]
