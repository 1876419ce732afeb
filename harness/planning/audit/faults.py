"""Audit findings as faults: what a live dump lacks, turned into faults on its design.

A live topology dump (``ibnetdiscover``, SimAI, containerlab...) is compared
with the design (:func:`harness.planning.audit.diff.diff_fabrics`) and every
difference becomes a fault on the design: a missing switch is killed, a
missing cable (or one plugged into the wrong rail's leaf) is cut, a cable
below its design rate is degraded to the live fraction.  Extra switches and
cables that the design does not have cannot help the design's jobs and are
reported, not modelled.
"""

from __future__ import annotations

from harness.fabric.model import Fabric
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.selectors import Selector
from harness.planning.audit.diff import AuditReport


def faults_from_audit(design: Fabric, report: AuditReport) -> tuple[list[Fault], list[str]]:
    """Faults on ``design`` that reproduce an :class:`AuditReport`, and what is not modelled."""
    faults: list[Fault] = []
    notes: list[str] = []
    for sw in report.missing_switches:
        faults.append(Fault(FaultKind.KILL, Selector(ids=(sw,))))
    for cable in report.missing_links:
        if cable in design.link_index:
            faults.append(Fault(FaultKind.CUT, Selector(ids=(cable,))))
        else:
            notes.append(f"missing link {cable} is not a design cable id; not modelled")
    for d in report.degraded_links:
        if d.design in design.link_index and d.design_gbps > 0:
            fraction = d.live_gbps / d.design_gbps
            if 0 < fraction < 1:
                faults.append(Fault(FaultKind.DEGRADE, Selector(ids=(d.design,)), fraction))
    for w in report.wrong_rail:
        notes.append(
            f"{w.nic} (rail {w.nic_rail}) is cabled to {w.leaf} (rail {w.leaf_rail}); "
            "its design cable counts as missing"
        )
    for sw in report.extra_switches:
        notes.append(f"extra switch {sw} is not in the design; not modelled")
    for cable in report.extra_links:
        notes.append(f"extra link {cable} is not in the design; not modelled")
    # a switch killed and its cables cut: keep both (cutting a dead switch's cable is harmless)
    return faults, notes
