"""Wrong-rail cables as NCCL meets them: the design re-cabled, and what that costs each job.

NCCL's rings and trees connect NIC ``k`` of one rank to NIC ``k`` of its
peers, by address: a NIC is used for its rail whatever leaf it is plugged
into.  A NIC cabled to another rail's leaf (an audit's ``wrong rail``
finding, :class:`~harness.planning.audit.diff.WrongRail`) is therefore not
cut off: its rail-``k`` traffic climbs from the wrong leaf to a spine and
comes down to the rail-``k`` leaves, if the fabric's routes (up-down, or
min-hop) carry it -- the extra hops and the uplink load they add make the
job slower, not lost.  When no route carries it (under up-down, no live
spine above both leaves) the NIC cannot reach its peers and the job is lost.

This module builds the design with each such cable moved to the leaf it is
really plugged into (:func:`rewired`), so the one job model of
:mod:`harness.invariants` (reachability by rail, flows over the uplinks)
judges it, and says per job what the re-cabling costs (:func:`wrong_rail_effects`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.planning.audit.diff import WrongRail


def _port(w: WrongRail, name: str) -> int | None:
    """The port of ``name``'s end of the live cable (``nic:1--leaf:5``), if its id says so."""
    for end in w.cable.split("--"):
        end_name, _, port = end.rpartition(":")
        if end_name == name and port.isdigit():
            return int(port)
    return None


def _design_cable(design: Fabric, w: WrongRail) -> int | None:
    """The design access cable a finding moves: the NIC's cable on the live cable's NIC
    port (a multi-port NIC may have one port on the wrong leaf), None if there is none."""
    nic, leaf = design.index.get(w.nic), design.index.get(w.leaf)
    if nic is None or leaf is None or int(design.kind[leaf]) != Kind.LEAF:
        return None
    cables: list[int] = [int(c) for c in design.links_at(nic).tolist()
                         if int(design.link_kind[c]) == LinkKind.ACCESS]  # fmt: skip
    port = _port(w, w.nic)
    nic_port = {c: int(design.link_a_port[c] if int(design.link_a[c]) == nic
                       else design.link_b_port[c]) for c in cables}  # fmt: skip
    same = [c for c in cables if nic_port[c] == port]
    return (same or cables)[0] if cables else None


def movable(design: Fabric, w: WrongRail) -> bool:
    """Whether the design has the finding's NIC (cabled) and leaf, so its cable can be moved."""
    return _design_cable(design, w) is not None


def rewired(design: Fabric, wrong: Sequence[WrongRail]) -> Fabric:
    """``design`` with each wrong-rail NIC's access cable moved to the leaf it reaches live.

    The NIC keeps its rail (NCCL uses it for rail ``k`` wherever it is
    plugged); only the cable's leaf end (and its port, when the live cable id
    names one) changes.  Findings whose NIC or leaf the design does not have
    are left out (the audit notes them).
    """
    if not wrong:
        return design
    link_a, link_b = design.link_a.copy(), design.link_b.copy()
    a_port, b_port = design.link_a_port.copy(), design.link_b_port.copy()
    for w in wrong:
        c = _design_cable(design, w)
        if c is None:
            continue
        nic, leaf = design.index[w.nic], design.index[w.leaf]
        port = _port(w, w.leaf)
        if int(link_a[c]) == nic:
            link_b[c] = leaf
            b_port[c] = port if port is not None else b_port[c]
        else:
            link_a[c] = leaf
            a_port[c] = port if port is not None else a_port[c]
    ids = set(design.link_ids)
    out = dataclasses.replace(design, link_a=link_a, link_b=link_b,
                              link_a_port=a_port, link_b_port=b_port)  # fmt: skip
    clash = [lid for lid in set(out.link_ids) - ids if out.link_ids.count(lid) > 1]
    if clash:
        msg = (f"the wrong-rail cables of the dump put two cables on one port ({clash[0]}); "
               "check the dump's port numbers or audit with --no-ports")  # fmt: skip
        raise ScenarioError(msg)
    return out


def moved_cables(design: Fabric, wrong: Sequence[WrongRail]) -> frozenset[str]:
    """The design ids of the cables :func:`rewired` moves (they are not missing, only moved)."""
    out: set[str] = set()
    for w in wrong:
        c = _design_cable(design, w)
        if c is not None:
            out.add(design.link_ids[c])
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class WrongRailEffect:
    """What one wrong-rail cable does to one job that uses its NIC."""

    finding: WrongRail
    job: str
    lost: bool
    ratio: float  # the job's bus bandwidth re-cabled, over the design's (0 when lost)
    reason: str = ""

    def line(self) -> str:
        """``su01/node03/nic2 is cabled to rail 5's leaf: ... job X runs at 0.8 ...``."""
        w = self.finding
        head = f"{w.nic} is cabled to rail {w.leaf_rail}'s leaf {w.leaf}"
        if self.lost:
            return (f"{head}: no route carries its rail-{w.nic_rail} traffic, job {self.job} is "
                    f"lost ({self.reason})")  # fmt: skip
        runs = ("at its full bandwidth (the uplinks carry the extra hops)" if self.ratio >= 0.9995
                else f"at {self.ratio:.3g} of its bandwidth")  # fmt: skip
        return (
            f"{head}: its rail-{w.nic_rail} traffic crosses the spines, job {self.job} runs {runs}"
        )


def wrong_rail_effects(
    design: Fabric,
    live: Fabric,
    jobs: Sequence[Job],
    wrong: Sequence[WrongRail],
    routing: Routing = DEFAULT_ROUTING,
) -> list[WrongRailEffect]:
    """Per wrong-rail finding and job with a rank on its NIC's server: lost, or how slow.

    ``live`` is ``rewired(design, wrong)``; both are judged healthy otherwise,
    so the ratio is what the re-cabling alone costs.
    """
    if not wrong or live is design:
        return []
    healthy = Observation.from_state(FaultState.healthy(design))
    base = Analysis(design, healthy, jobs, routing=routing)
    now_obs = Observation.from_state(FaultState.healthy(live))
    now = Analysis(live, now_obs, jobs, healthy=base, routing=routing)
    out: list[WrongRailEffect] = []
    for w in wrong:
        nic = design.index.get(w.nic)
        if nic is None:
            continue
        server = int(design.parent[nic])
        for job in jobs:
            if server not in job.servers or len(job.servers) < 2:
                continue
            verdict = now.judge(job)
            if verdict.lost:
                why = [r for r in verdict.reasons if r.startswith(w.nic)] or list(verdict.reasons)
                out.append(WrongRailEffect(w, job.name, True, 0.0, why[0] if why else "cut off"))
            else:
                ratio = float(np.round(now.job_busbw_ratio(job), 6))
                out.append(WrongRailEffect(w, job.name, False, ratio))
    return out
