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

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.invariants.capacity import FloatArray
from harness.invariants.servers import ServerView
from harness.invariants.traffic import Forwarding
from harness.invariants.traffic import JobTraffic
from harness.invariants.traffic import Network
from harness.invariants.traffic import job_traffic
from harness.jobs import Job
from harness.observation import Observation


def traffic(
    fabric: Fabric,
    obs: Observation,
    nic_rate: FloatArray,
    jobs: Sequence[Job],
    forwarding: Forwarding,
) -> tuple[JobTraffic, ...]:
    """What every job's collectives get from the live fabric (see :mod:`~.traffic`)."""
    net = Network(fabric, obs.element_up, obs.link_capacity, nic_rate)
    return job_traffic(net, jobs, forwarding)


def job_busbw_gbs(
    view: ServerView,
    job: Job,
    flows: JobTraffic,
    *,
    intra: Callable[[int], float],
) -> float:
    """Bus bandwidth (GB/s) of a job that is not lost: its worst collective, under NVLink.

    ``flows``: the job's :class:`~.traffic.JobTraffic`; ``intra``: a GPU's
    one-way bandwidth inside its server.
    """
    nvlink = min((intra(g) for s in job.servers for g in view.parts(s, Kind.GPU)), default=0.0)
    if len(job.servers) < 2:
        return nvlink if np.isfinite(nvlink) else 0.0  # one GPU: no collective
    worst = flows.worst
    fabric_bw = worst.busbw_gbs if worst is not None else float("inf")
    return float(min(fabric_bw, nvlink))
