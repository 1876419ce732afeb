"""Reporting: observers and writers over run results (reporting stage).

* :class:`ConsoleReporter` -- a rich :class:`~harness.run.observers.RunObserver` for people;
* :func:`json_report` / :func:`write_json` -- a machine-readable document;
* :func:`junit_xml` / :func:`write_junit` -- JUnit XML for CI;
* :func:`explain` -- the plain-text story of a result (pytest, JUnit);
* :func:`fabric_document` / :func:`print_fabric` -- what ``harness show`` prints.

Modules:

``changes``      What ``harness risk``, ``harness sweep`` and ``harness audit`` print.
``console``      A rich console reporter: a :class:`~harness.run.observers.RunObserver`.
``drill_text``   What ``harness drill`` and ``harness journal`` print.
``fabric_view``  What ``harness show`` prints about a fabric.
``json_report``  A machine-readable run report.
``junit``        JUnit XML for CI consumers.
``outcome``      What one ``harness run`` produced, for the reporters.
``progress``     Progress of long work, for people and for logs.
``reliability``  What ``harness reliability`` prints: interruptions per month, attribution,
                 availability.
``risk_json``    The risk report as JSON: before, after and added, for the change and for its
                 N+1 margin.
``sweep_files``  Sweep output: JSON document, CSV rows and a PNG.
``text``         Plain-text renderings of results.
``html/``        HTML reports: one self-contained page per command, with the fabric drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.reporting.console import ConsoleReporter
    from harness.reporting.fabric_view import TierUsage
    from harness.reporting.fabric_view import fabric_document
    from harness.reporting.fabric_view import print_fabric
    from harness.reporting.fabric_view import tier_usage
    from harness.reporting.json_report import json_report
    from harness.reporting.json_report import write_json
    from harness.reporting.junit import junit_xml
    from harness.reporting.junit import write_junit
    from harness.reporting.outcome import RunReport
    from harness.reporting.outcome import Skipped
    from harness.reporting.text import explain
    from harness.reporting.text import failure_message

#: Each re-exported name and the module that holds it, imported on first use (PEP 562):
#: importing one module of the package does not import the others.
_EXPORTS: dict[str, str] = {
    "ConsoleReporter": "harness.reporting.console",
    "RunReport": "harness.reporting.outcome",
    "Skipped": "harness.reporting.outcome",
    "TierUsage": "harness.reporting.fabric_view",
    "explain": "harness.reporting.text",
    "fabric_document": "harness.reporting.fabric_view",
    "failure_message": "harness.reporting.text",
    "json_report": "harness.reporting.json_report",
    "junit_xml": "harness.reporting.junit",
    "print_fabric": "harness.reporting.fabric_view",
    "tier_usage": "harness.reporting.fabric_view",
    "write_json": "harness.reporting.json_report",
    "write_junit": "harness.reporting.junit",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "ConsoleReporter",
    "RunReport",
    "Skipped",
    "TierUsage",
    "explain",
    "fabric_document",
    "failure_message",
    "json_report",
    "junit_xml",
    "print_fabric",
    "tier_usage",
    "write_json",
    "write_junit",
]
