"""The ``harness audit --report DIR`` page: the findings drawn on the fabric.

With ``--design``, the findings are drawn on the design (a missing switch or cable
where it should be, a NIC on another rail's leaf with both ends marked, a cable
below its rate), followed by the risk of the live state (the design with the
differences applied) as :mod:`~harness.reporting.html.risk_page` shows a change.
Without a design, the departures from the inferred regular design are drawn on the
live fabric where their subject exists (a missing switch has no place on it and is
listed instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING
from typing import Any

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.planning.risk import RiskReport
from harness.reporting.changes import AUDIT
from harness.reporting.html.drawing import draw
from harness.reporting.html.marks import Mark
from harness.reporting.html.marks import Marks
from harness.reporting.html.page import ReportDir
from harness.reporting.html.page import write_page
from harness.reporting.html.risk_page import risk_context

if TYPE_CHECKING:
    from harness.planning.audit.diff import AuditReport
    from harness.planning.audit.regular import RegularAudit

# design-free departures -> the status their subject is drawn with
DEPARTURE_STATUS = {
    "missing-leaf": "missing",
    "missing-spine": "missing",
    "missing-hca": "missing",
    "missing-server": "missing",
    "leaf-uplinks": "missing",
    "swapped-nics": "wrong-rail",
    "wrong-rail": "wrong-rail",
    "port-mismatch": "degraded",
}


@dataclass(frozen=True, slots=True)
class AuditInput:
    """What ``harness audit`` found, for the page."""

    dump: Path
    notes: Sequence[str] = ()


def _findings(audit: AuditReport) -> list[dict[str, str]]:
    out = [{"kind": "missing switch", "what": s, "status": "missing"}
           for s in audit.missing_switches]  # fmt: skip
    out += [{"kind": "missing cable", "what": c, "status": "missing"} for c in audit.missing_links]
    out += [{"kind": "wrong rail", "what": f"{w.nic} (rail {w.nic_rail}) on {w.leaf} (rail "
             f"{w.leaf_rail})" + (f", expected {w.expected}" if w.expected else ""),
             "status": "wrong-rail"} for w in audit.wrong_rail]  # fmt: skip
    out += [{"kind": "degraded cable",
             "what": f"{d.live}: {d.live_gbps:g} of {d.design_gbps:g} Gb/s", "status": "degraded"}
            for d in audit.degraded_links]  # fmt: skip
    out += [{"kind": "extra switch", "what": s, "status": ""} for s in audit.extra_switches]
    out += [{"kind": "extra cable", "what": c, "status": ""} for c in audit.extra_links]
    return out


def write_audit_report(
    audit: AuditReport,
    design: Fabric,
    report: RiskReport,
    directory: Path,
    *,
    jobs: Sequence[Job],
    found: AuditInput,
) -> Path:
    """Write the audit report (against ``design``) into ``directory``; return the page."""
    out = ReportDir(directory)
    out.prepare()
    marks = Marks.from_audit(design, audit)
    drawing = draw(design, marks.with_lost(jobs, report.after.jobs_lost))
    out.svg("fabric-findings.svg", drawing, f"{design.name}: the audit's findings")
    findings = _findings(audit)
    context: dict[str, Any] = {
        **risk_context(report, jobs, out, AUDIT),
        "kind": "audit",
        "title": f"audit: {found.dump.name} against {design.name}",
        "subtitle": f"{len(findings)} finding(s); {len(jobs)} job(s)",
        "verdict": "ok" if audit.ok and report.ok else "bad",
        "audit_ok": audit.ok,
        "dump": str(found.dump),
        "design_name": design.name,
        "findings": findings,
        "notes": list(found.notes),
        "findings_drawing": drawing,
        "finding_marks": marks.rows(design),
        "design_free": False,
    }
    return write_page(out, "audit.html.j2", context)


def regular_marks(live: Fabric, audit: RegularAudit) -> tuple[Marks, list[str]]:
    """Marks on the live fabric for the departures whose subject it has; the others."""
    elements: dict[int, list[Mark]] = {}
    elsewhere: list[str] = []
    for d in audit.departures:
        i = live.index.get(d.subject)
        if i is None:
            elsewhere.append(d.text)
            continue
        elements.setdefault(i, []).append(
            Mark(DEPARTURE_STATUS.get(d.kind, "degraded"), "audit", d.text)
        )
    frozen = MappingProxyType({k: tuple(v) for k, v in elements.items()})
    return Marks(frozen), elsewhere


def write_regular_audit_report(
    audit: RegularAudit, live: Fabric, found: AuditInput, directory: Path
) -> Path:
    """Write a design-free audit (departures from the inferred design) into ``directory``."""
    out = ReportDir(directory)
    out.prepare()
    marks, elsewhere = regular_marks(live, audit)
    drawing = draw(live, marks)
    out.svg("fabric-findings.svg", drawing, f"{live.name}: departures from the inferred design")
    context: dict[str, Any] = {
        "kind": "audit",
        "title": f"audit: {found.dump.name} (design inferred)",
        "subtitle": f"{len(audit.departures)} departure(s) from the inferred regular design",
        "verdict": "ok" if audit.ok else "bad",
        "audit_ok": audit.ok,
        "dump": str(found.dump),
        "design_name": "the inferred regular design",
        "design_lines": audit.design.lines(),
        "findings": [
            {"kind": d.kind, "what": d.text, "status": DEPARTURE_STATUS.get(d.kind, "")}
            for d in audit.departures
        ],
        "notes": [*found.notes, *(f"not drawn: {t}" for t in elsewhere)],
        "findings_drawing": drawing,
        "finding_marks": marks.rows(live),
        "design_free": True,
        "has_state": False,
    }
    return write_page(out, "audit.html.j2", context)
