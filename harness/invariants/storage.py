"""Storage bonds and checkpoints (pure).

A server's storage bond carries its live members, each limited by its share
of the storage switch's live uplinks (shared in proportion by the switch's
live members).  A checkpoint of ``size_gb`` is written by every server
(``sharded``, each size/servers) or by the first one.  Synchronous save: the
job stalls for shard / bond bandwidth.  Two-phase save: the job stalls only
for the GPU-to-host copy (PCIe switch uplinks, capped by host memory
bandwidth); the write to storage runs in the background.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from collections.abc import Mapping

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants.servers import ServerView
from harness.invariants.servers import internal_adjacency
from harness.jobs import Job
from harness.observation import Observation


def storage_bonds(fabric: Fabric, obs: Observation) -> tuple[dict[int, float], dict[int, float]]:
    """Per server: live bond Gb/s to storage; per storage switch: live uplink Gb/s."""
    f = fabric
    cap = obs.link_capacity
    up_live: dict[int, float] = defaultdict(float)
    demand: dict[int, float] = defaultdict(float)
    member: list[tuple[int, int, float]] = []
    for i in f.links_by_kind[LinkKind.STORAGE].tolist():
        a, b = int(f.link_a[i]), int(f.link_b[i])
        if f.kind[a] == int(Kind.STORAGE_SWITCH):
            up_live[a] += float(cap[i])
        elif cap[i] > 0:
            member.append((int(f.parent[a]), b, float(cap[i])))
            demand[b] += float(cap[i])
    bond: dict[int, float] = defaultdict(float)
    for srv, sw, c in member:
        if up_live[sw] > 0:
            bond[srv] += c * min(1.0, up_live[sw] / demand[sw])
    return bond, up_live


def storage_gbps(obs: Observation, bonds: Mapping[int, float], server: int) -> float:
    """A server's storage bond Gb/s (0 when the server is down)."""
    if not obs.element_up[server]:
        return 0.0
    return bonds.get(server, 0.0)


def host_copy_gbs(fabric: Fabric, obs: Observation, view: ServerView, server: int) -> float:
    """GPU -> host memory copy bandwidth of a server (GB/s), phase 1 of a 2-phase save."""
    f = fabric
    up = obs.element_up
    if not up[server]:
        return 0.0
    total = 0.0
    for sw in view.parts(server, Kind.PCIE_SWITCH):
        for cpu, link in internal_adjacency(f, sw):
            if f.kind[cpu] == int(Kind.CPU) and up[cpu] and up[sw]:
                total += float(obs.link_capacity[link]) / 8.0
    return min(total, f.node_spec(server).host_memory_gbs)


def checkpoint(
    job: Job,
    size_gb: float,
    storage: Callable[[int], float],
    host_copy: Callable[[int], float],
    *,
    sharded: bool = True,
) -> tuple[float, float, float]:
    """(sync stall, async phase-1 stall, background write) in seconds.

    ``storage``: a server's bond Gb/s; ``host_copy``: its GPU-to-host GB/s.
    """
    writers = list(job.servers) if sharded else list(job.servers[:1])
    share = size_gb / len(writers)
    sync = max((share * 8 / bw if (bw := storage(s)) > 0 else float("inf")) for s in writers)
    phase1 = max((share / bw if (bw := host_copy(s)) > 0 else float("inf")) for s in writers)
    return sync, phase1, sync
