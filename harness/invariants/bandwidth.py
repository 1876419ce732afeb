"""Bus bandwidth of the jobs over the live fabric (pure).

Each job runs its collectives (``ring`` and ``tree`` by default, as NCCL
chooses between them; ``all-to-all`` when asked) over its servers in rank
order.  :mod:`harness.invariants.traffic` places their flows on every link by
the fabric's forwarding model and shares each link among the flows of all
placed jobs (lost ones too: it is the planning view); a collective's bus
bandwidth is ``rails x`` the slowest flow's rate scaled to a full NIC.  A
job's bus bandwidth is the worst of its collectives, and never more than its
GPUs' one-way bandwidth inside the server (NVLink, or PCIe when NVLink is
gone).  Single-server jobs run over NVLink.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence

import numpy as np

from harness.errors import ScenarioError
from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.routing import Forwarding
from harness.invariants.capacity import FloatArray
from harness.invariants.network import Network
from harness.invariants.network import pod_nic_gbps
from harness.invariants.network import pod_pair_gbps
from harness.invariants.servers import ServerView
from harness.invariants.state import Observation
from harness.invariants.traffic import JobTraffic
from harness.invariants.traffic import job_traffic


def network(fabric: Fabric, obs: Observation, nic_rate: FloatArray) -> Network:
    """The live fabric as the flow engine reads it."""
    return Network(fabric, obs.element_up, obs.link_capacity, nic_rate)


def traffic(net: Network, jobs: Sequence[Job], forwarding: Forwarding) -> tuple[JobTraffic, ...]:
    """What every job's collectives get from the live fabric (see :mod:`~.traffic`)."""
    return job_traffic(net, jobs, forwarding)


def pod_pair(net: Network, pods: tuple[int, int] | None) -> tuple[float, float, str]:
    """(Gb/s, ratio to what the smaller pod can send, which pair) between two pods.

    A named pair gets the exact up-down max-flow; with ``pods`` None, the
    least served pair through the cores (:meth:`Network.pair_gbps`) over all
    pairs.  A :class:`ScenarioError` on two tiers or an unknown pod.
    """
    f = net.fabric
    if f.tiers != 3:
        msg = f"pod pairs need a three-tier fabric; {f.name!r} has {f.tiers} tiers"
        raise ScenarioError(msg)
    offer = pod_nic_gbps(f)
    known = sorted(set(f.pod[f.leaves].tolist()) - {0})
    if pods is not None:
        a, b = pods
        for p in (a, b):
            if p not in known:
                msg = f"pod {p} is not a pod of {f.name!r} (pods {known[0]}..{known[-1]})"
                raise ScenarioError(msg)
        if a == b:
            msg = f"pods: [{a}, {b}] names one pod twice; name two different pods"
            raise ScenarioError(msg)
        gbps = pod_pair_gbps(net, a, b)
        return gbps, min(1.0, float(gbps / min(offer[a], offer[b]))), f"pod {a} -> pod {b}"
    x = net.pod_core_gbps[known]
    through = np.minimum(x[:, None, :], x[None, :, :]).sum(-1)
    leaf = net.pod_leaf_gbps[known]
    through = np.minimum(through, np.minimum(leaf[:, None], leaf[None, :]))
    demand = np.minimum(offer[known][:, None], offer[known][None, :])
    ratio = np.where(np.eye(len(known), dtype=bool), np.inf, np.minimum(1.0, through / demand))
    i, j = np.unravel_index(int(np.argmin(ratio)), ratio.shape)
    return float(through[i, j]), float(ratio[i, j]), f"pod {known[i]} -> pod {known[j]}"


def job_busbw_gbs(
    view: ServerView,
    job: Job,
    flows: JobTraffic,
    *,
    intra: Callable[[int], float],
    collective: Collective | None = None,
) -> float:
    """Bus bandwidth (GB/s) of a job that is not lost: its worst collective, under NVLink.

    ``flows``: the job's :class:`~.traffic.JobTraffic`; ``intra``: a GPU's
    one-way bandwidth inside its server; ``collective``: that one instead of
    the worst (a :class:`ScenarioError` if the job does not run it).
    """
    if collective is not None and collective not in job.collectives:
        msg = (
            f"job {job.name!r} does not run {collective}; it runs "
            f"{', '.join(job.collectives)} (add it to the job's collectives:)"
        )
        raise ScenarioError(msg)
    nvlink = min((intra(g) for s in job.servers for g in view.parts(s, Kind.GPU)), default=0.0)
    if len(job.servers) < 2:
        return nvlink if np.isfinite(nvlink) else 0.0  # one GPU: no collective
    chosen = flows.worst if collective is None else next(
        c for c in flows.collectives if c.collective == collective
    )  # fmt: skip
    fabric_bw = chosen.busbw_gbs if chosen is not None else float("inf")
    return float(min(fabric_bw, nvlink))


def describe(flows: JobTraffic, uplink_ratio: float) -> str:
    """What a job's collectives get, in words (beside its bandwidth in every report).

    >>> from harness.invariants.traffic import CollectiveBandwidth as C
    >>> t = JobTraffic("j", "static", (C("ring", 100.0, 100.0), C("tree", 5.0, 5.0, "x")), 4, None)
    >>> describe(t, 0.05)
    'forwarding static: ring 100 GB/s, tree 5 GB/s (paced by x); uplinks 0.05'
    """
    parts = []
    for c in flows.collectives:
        text = f"{c.collective} {c.busbw_gbs:.4g} GB/s"
        if c.worst_gbs < c.busbw_gbs - 1e-9:
            text += f" (worst hash {c.worst_gbs:.4g})"
        if c.bottleneck:
            text += f" (paced by {c.bottleneck})"
        parts.append(text)
    out = f"forwarding {flows.forwarding}: " + ", ".join(parts)
    out += f"; uplinks {uplink_ratio:.4g}"
    if flows.pod_pair_gbps is not None:
        out += f"; pod-pair capacity {flows.pod_pair_gbps:.6g} Gb/s"
    return out
