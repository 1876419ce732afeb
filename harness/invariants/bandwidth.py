"""Bus bandwidth of the jobs over the live fabric (pure).

Ring all-reduce bus bandwidth = rails x the slowest (server, rail) rate of the
job, because NCCL splits each collective evenly over its channels; a rate is
min(NIC ports, PCIe, fair share of the leaf uplinks).  Each rail carries one
ring over the job's servers in id order; a ring edge between servers on
different leaves is a flow through both leaves' uplinks, and a leaf's uplink
capacity is shared equally by the flows of all placed jobs (lost ones too: it
is the planning view).  Single-server jobs run over NVLink.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.invariants.capacity import FloatArray
from harness.invariants.servers import ServerView
from harness.invariants.topology import port_leaf
from harness.jobs import Job

RingFlow = tuple[int, int, int, int, int]  # NIC a, NIC b, leaf a, leaf b, ports of NIC a


@dataclass(frozen=True, slots=True)
class FlowCounts:
    """Ring flows crossing leaves and pods: flows out of / into each leaf and pod."""

    leaf_out: Mapping[int, int]
    leaf_in: Mapping[int, int]
    pod_out: Mapping[int, int]
    pod_in: Mapping[int, int]


def ring_edges(job: Job) -> list[tuple[int, int]]:
    """(server, next server) of the job's ring, in id order."""
    s = job.servers
    if len(s) < 2:
        return []
    if len(s) == 2:
        return [(s[0], s[1]), (s[1], s[0])]
    return [(s[i], s[(i + 1) % len(s)]) for i in range(len(s))]


def ring_flows(fabric: Fabric, view: ServerView, job: Job) -> list[RingFlow]:
    """The job's ring edges that cross leaves: (NIC a, NIC b, leaf a, leaf b, ports).

    One ring per rail over the job's servers in id order; port ``p`` of a
    NIC talks to port ``p`` of the next server's NIC (the same plane).
    """
    out = []
    for a, b in ring_edges(job):
        for na, nb in zip(view.parts(a, Kind.NIC), view.parts(b, Kind.NIC), strict=False):
            la, lb = port_leaf(fabric, na), port_leaf(fabric, nb)
            for p, leaf_a in la.items():
                leaf_b = lb.get(p)
                if leaf_b is not None and leaf_b != leaf_a:
                    out.append((na, nb, leaf_a, leaf_b, max(len(la), 1)))
    return out


def flow_counts(fabric: Fabric, flows: Iterable[RingFlow]) -> FlowCounts:
    """How many of ``flows`` leave and enter each leaf, and each pod (three tiers)."""
    f = fabric
    leaf_out: dict[int, int] = defaultdict(int)
    leaf_in: dict[int, int] = defaultdict(int)
    pod_out: dict[int, int] = defaultdict(int)
    pod_in: dict[int, int] = defaultdict(int)
    for _, _, leaf_a, leaf_b, _ in flows:
        leaf_out[leaf_a] += 1
        leaf_in[leaf_b] += 1
        if f.tiers == 3 and f.pod[leaf_a] != f.pod[leaf_b]:
            pod_out[int(f.pod[leaf_a])] += 1
            pod_in[int(f.pod[leaf_b])] += 1
    return FlowCounts(leaf_out, leaf_in, pod_out, pod_in)


def flow_share(
    fabric: Fabric,
    counts: FlowCounts,
    leaf_a: int,
    leaf_b: int,
    *,
    leaf_live: FloatArray,
    pod_live: Mapping[int, float],
) -> float:
    """Gb/s one flow gets through the uplinks of both leaves (and pods)."""
    f = fabric
    lo, li = counts.leaf_out, counts.leaf_in
    share = min(
        leaf_live[leaf_a] / max(lo.get(leaf_a, 0), 1), leaf_live[leaf_b] / max(li.get(leaf_b, 0), 1)
    )
    if f.tiers == 3 and f.pod[leaf_a] != f.pod[leaf_b]:
        pa, pb = int(f.pod[leaf_a]), int(f.pod[leaf_b])
        share = min(
            share,
            pod_live.get(pa, 0.0) / max(counts.pod_out.get(pa, 0), 1),
            pod_live.get(pb, 0.0) / max(counts.pod_in.get(pb, 0), 1),
        )
    return float(share)


def job_busbw_gbs(
    fabric: Fabric,
    view: ServerView,
    job: Job,
    flows: Iterable[RingFlow],
    *,
    nic_rate: FloatArray,
    intra: Callable[[int], float],
    share: Callable[[int, int], float],
) -> float:
    """Ring all-reduce bus bandwidth estimate (GB/s) of a job that is not lost.

    ``flows``: its :func:`ring_flows`; ``intra``: a GPU's one-way bandwidth
    inside its server; ``share``: Gb/s one flow gets between two leaves.
    """
    nvlink = min((intra(g) for s in job.servers for g in view.parts(s, Kind.GPU)), default=0.0)
    if len(job.servers) < 2:
        return nvlink if np.isfinite(nvlink) else 0.0  # one GPU: no collective
    rates: dict[int, float] = {}
    for s in job.servers:
        for n in view.parts(s, Kind.NIC):
            rates[n] = float(nic_rate[n])
    for na, nb, leaf_a, leaf_b, nports in flows:
        flow = share(leaf_a, leaf_b) / 8.0
        rates[na] = min(rates[na], flow * nports)
        rates[nb] = min(rates[nb], flow * nports)
    return min(fabric.rails * min(rates.values()), nvlink) if rates else nvlink
