"""Whether each job survives, and if not, why (pure).

A job is lost when one of its servers, GPUs, PCIe switches or CPUs is down,
when a GPU lost its PCIe link, or when on some rail one of its NICs cannot
reach another of its NICs (NCCL has no runtime cross-rail failover).  With
``failover: port`` (NCCL port failover) or NICs whose ports are bonded in
hardware (``nic_lag``), a NIC survives as long as one port still reaches the
others; otherwise every port must (port ``p`` of one NIC to port ``p`` of the
other: the same plane).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import PathRule
from harness.invariants.reach import Signature
from harness.invariants.servers import ServerView
from harness.invariants.servers import internal_adjacency
from harness.invariants.state import Observation
from harness.invariants.topology import nic_leaves

NicPorts = Mapping[int, Mapping[int, Signature]]  # NIC -> {port: what it reaches}
MAX_NICS_NAMED = 8


@dataclass(frozen=True, slots=True)
class JobVerdict:
    """Whether a job survived, and if not, why."""

    name: str
    lost: bool
    reasons: tuple[str, ...] = ()
    culprits: tuple[str, ...] = ()  # element/link ids involved


def tolerant(fabric: Fabric, job: Job, nic: int) -> bool:
    """Whether ``nic`` survives the loss of one of its ports for ``job``."""
    spec = fabric.node_spec(nic)
    return (job.failover == "port" and spec.nic_ports > 1) or spec.nic_lag


def judge(
    fabric: Fabric,
    obs: Observation,
    view: ServerView,
    nic_ports: NicPorts,
    job: Job,
    *,
    paths: PathRule,
) -> JobVerdict:
    """The verdict on one job."""
    f = fabric
    up, cap = obs.element_up, obs.link_capacity
    reasons: list[str] = []
    culprits: list[str] = []
    damaged = view.damaged_servers
    for srv in job.servers:
        if not up[srv]:
            reasons.append(f"server {f.ids[srv]} is down")
            culprits.append(f.ids[srv])
            continue
        if srv not in damaged:  # every part up, every link inside at full capacity
            continue
        for kind in (Kind.GPU, Kind.PCIE_SWITCH, Kind.CPU):
            for p in view.parts(srv, kind):
                if not up[p]:
                    reasons.append(f"{kind.label} {f.ids[p]} is down")
                    culprits.append(f.ids[p])
        for g in view.parts(srv, Kind.GPU):
            for sw, link in internal_adjacency(f, g):
                if f.kind[sw] == int(Kind.PCIE_SWITCH) and cap[link] <= 0 and up[g]:
                    reasons.append(f"{f.ids[g]} lost its PCIe link")
                    culprits.append(f.link_ids[link])
    if len(job.servers) >= 2:
        by_rail: dict[int, list[int]] = defaultdict(list)  # the live servers' NICs, per rail
        rail_of = f.rail
        for srv in job.servers:
            if up[srv]:
                for n in view.parts(srv, Kind.NIC):
                    by_rail[int(rail_of[n])].append(n)
        for r in range(f.rails):
            nics = by_rail.get(r, [])
            if len(nics) < 2:
                continue
            why, who = _judge_rail(f, obs, view, nic_ports, job, nics=nics, rail=r, paths=paths)
            reasons += why
            culprits += who
    return JobVerdict(job.name, bool(reasons), tuple(reasons), tuple(dict.fromkeys(culprits)))


def _judge_rail(
    f: Fabric,
    obs: Observation,
    view: ServerView,
    nic_ports: NicPorts,
    job: Job,
    *,
    nics: list[int],
    rail: int,
    paths: PathRule,
) -> tuple[list[str], list[str]]:
    """(reasons, culprits) of the job's NICs on ``rail`` (``nics``: those of its live servers,
    in server order) that cannot reach the others."""
    up = obs.element_up
    reasons: list[str] = []
    culprits: list[str] = []
    bad: list[int] = []
    strict: list[int] = []  # NICs that need every port (not tolerant)
    empty: Mapping[int, Signature] = {}
    for n in nics:
        ports = nic_ports.get(n, empty)
        spec = f.node_spec(n)
        tol = (job.failover == "port" and spec.nic_ports > 1) or spec.nic_lag  # as tolerant()
        if not tol:
            strict.append(n)
        if not up[n] or not ports or (not tol and len(ports) < spec.nic_ports):
            bad.append(n)
    if not bad:
        # reachability: strict = port p of each NIC reaches port p of every other;
        # tolerant = some port of each reaches some port of the other
        keys: dict[tuple[tuple[int, Signature], ...], list[int]] = defaultdict(list)
        for n in strict:
            keys[tuple(sorted(nic_ports[n].items()))].append(n)
        if len(keys) > 1:
            kk = sorted(keys, key=lambda k: len(keys[k]))
            for i, ka in enumerate(kk):
                for kb in kk[i + 1 :]:
                    pa, pb = dict(ka), dict(kb)
                    if any(not (pa[p] & pb[p]) for p in pa.keys() & pb.keys()):
                        bad.extend(keys[ka])  # the smaller group (of equals, the earlier)
        sigs: dict[frozenset[int], list[int]] = defaultdict(list)
        for n in nics:
            sigs[view.nic_comps(n)].append(n)
        sk = list(sigs)
        for i, a in enumerate(sk):
            for b in sk[i + 1 :]:
                if not a & b:
                    smaller = a if len(sigs[a]) <= len(sigs[b]) else b
                    bad.extend(sigs[smaller])
    if not bad:
        return reasons, culprits
    named = sorted(set(bad))
    for n in named[:MAX_NICS_NAMED]:
        why = explain_nic(f, obs, n, paths=paths)
        reasons.append(f"{f.ids[n]} (rail {rail}) cannot reach the job's other NICs: {why}")
        culprits.append(f.ids[n])
    if len(named) > MAX_NICS_NAMED:
        reasons.append(f"... and {len(named) - MAX_NICS_NAMED} more NICs on rail {rail}")
    return reasons, culprits


def explain_nic(fabric: Fabric, obs: Observation, nic: int, *, paths: PathRule) -> str:
    """Why a NIC is cut off, naming the element or cable at fault."""
    f = fabric
    up, cap = obs.element_up, obs.link_capacity
    srv = int(f.parent[nic])
    if not up[srv]:
        return f"its server {f.ids[srv]} is down"
    if not up[nic]:
        return "the NIC is down"
    causes = []
    for link in f.links_at(nic).tolist():
        if f.link_kind[link] != int(LinkKind.ACCESS):
            continue
        leaf = f.other_end(link, nic)
        if not up[leaf]:
            causes.append(f"leaf {f.ids[leaf]} is down")
        elif cap[link] <= 0:
            causes.append(f"cable {f.link_ids[link]} is down")
        else:
            ups = [
                x for x in f.links_at(leaf).tolist()
                if f.link_kind[x] == int(LinkKind.LEAF_SPINE) and cap[x] > 0
            ]  # fmt: skip
            if not ups:
                causes.append(f"leaf {f.ids[leaf]} has no live uplink")
    if causes:
        return "; ".join(causes)
    if paths == "up-down":
        leaves = ", ".join(f.ids[x] for x in nic_leaves(f, obs, nic))
        return (
            f"no up-down route: no live spine or core is above both its leaf ({leaves}) and "
            "theirs (up-down routing never goes down and up again through a lower tier)"
        )
    return "its fabric component differs from the others'"
