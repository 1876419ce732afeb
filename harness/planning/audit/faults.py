"""Audit findings as faults: what a live dump lacks, turned into faults on its design.

A live topology dump (``ibnetdiscover``, SimAI, containerlab...) is compared
with the design (:func:`harness.planning.audit.diff.diff_fabrics`) and every
difference becomes a fault on the design: a missing switch is killed, a
missing cable is cut, a cable below its design rate is degraded to the live
fraction.  A NIC plugged into the wrong rail's leaf is not cut off: NCCL still
uses it for its rail, over the spines, so its cable is *moved* on the design
(:func:`harness.planning.audit.rewire.rewired`), not cut.  Extra switches and
cables that the design does not have cannot help the design's jobs and are
reported, not modelled.
"""

from __future__ import annotations

from harness.fabric.model import Fabric
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.selectors import Selector
from harness.planning.audit.diff import AuditReport
from harness.planning.audit.rewire import movable
from harness.planning.audit.rewire import moved_cables


def faults_from_audit(design: Fabric, report: AuditReport) -> tuple[list[Fault], list[str]]:
    """Faults on ``design`` that reproduce an :class:`AuditReport`, and what is not modelled.

    The faults apply to ``rewired(design, report.wrong_rail)``: a wrong-rail
    NIC's design cable is moved there, so it is neither cut here nor noted as
    an extra cable.
    """
    faults: list[Fault] = []
    notes: list[str] = []
    moved = moved_cables(design, report.wrong_rail)
    moved_live = {w.cable for w in report.wrong_rail}
    for sw in report.missing_switches:
        faults.append(Fault(FaultKind.KILL, Selector(ids=(sw,))))
    for cable in report.missing_links:
        if cable in moved:
            continue
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
        if movable(design, w):
            continue  # modelled: the cable is moved (see rewire.wrong_rail_effects)
        notes.append(
            f"{w.nic} (rail {w.nic_rail}) is cabled to {w.leaf} (rail {w.leaf_rail}), which the "
            "design does not have; not modelled"
        )
    for sw in report.extra_switches:
        notes.append(f"extra switch {sw} is not in the design; not modelled")
    for cable in report.extra_links:
        if cable in moved_live:
            continue
        notes.append(f"extra link {cable} is not in the design; not modelled")
    # a switch killed and its cables cut: keep both (cutting a dead switch's cable is harmless)
    return faults, notes
