"""Storage bonds and checkpoints (pure).

A server's storage bond carries its live members, each limited by its share
of the storage switch's live uplinks (shared in proportion by the switch's
live members).  The bond's bandwidth is the sum of its members, but one flow
uses **one member**: 802.3ad (LACP) hashes each flow (layer 3+4: one TCP
connection) to one member, so a single stream never goes faster than one
member.

A checkpoint of ``size_gb`` is written by every server (``sharded``, each
size/servers) or by the first one (unsharded: one stream).  A sharded
checkpoint writes one file per shard, and each server streams its
``shards_per_server`` shards (by default one per GPU: one per rank, as
PyTorch DCP and Megatron's distributed checkpoints do) as that many flows,
each on the member the bond's transmit hash picks among its live members
(:mod:`harness.invariants.bond_hash`, the server's ``bond_hash``; Linux's
default ``layer2`` puts every stream to one storage target on ONE member).
A live member whose storage switch lost every uplink still gets its streams
(the bond cannot tell): they never finish.  Synchronous save: the job stalls
until the slowest member of the slowest server has written its flows.
Two-phase save: the job stalls only for the GPU-to-host copy (PCIe switch
uplinks, capped by host memory bandwidth); the write to storage runs in the
background.

Checkpoint sizes follow the 14 bytes per parameter rule of mixed-precision
Adam training: bf16 weights (2) + fp32 master weights (4) + Adam's m (4) and
v (4); gradients are not saved.  A 7B-parameter model's checkpoint is
7e9 x 14 B = 98 GB; one stream of it at 25 Gb/s takes 98 x 8 / 25 = 31.4 s.

>>> write_s(4.9, [1, 0, 1, 0, 1, 0, 1, 0], [25.0, 25.0]), write_s(4.9, [1] * 8, [25.0, 25.0])
(0.784, 1.568)
"""

from __future__ import annotations

from collections import Counter
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence

from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants import bond_hash
from harness.invariants.servers import ServerView
from harness.invariants.servers import internal_adjacency
from harness.invariants.state import Observation


def _member_shares(
    fabric: Fabric, obs: Observation
) -> tuple[dict[int, list[float]], dict[int, float]]:
    """Per server: the usable Gb/s of each live bond member in enslave (link) order (its
    share of the switch uplinks, 0 without any); per storage switch: live uplink Gb/s."""
    f = fabric
    links = f.links_by_kind[LinkKind.STORAGE]
    a, b, cap = f.link_a[links], f.link_b[links], obs.link_capacity[links]
    uplink = f.kind[a] == int(Kind.STORAGE_SWITCH)  # a storage switch's uplink: a is the switch
    up_live: dict[int, float] = defaultdict(float)
    for sw, c in zip(a[uplink].tolist(), cap[uplink].tolist(), strict=True):  # in link order
        up_live[sw] += c
    live = ~uplink & (cap > 0)  # a live bond member: storage NIC a -- storage switch b
    member = list(zip(f.parent[a[live]].tolist(), b[live].tolist(), cap[live].tolist(),
                      strict=True))  # fmt: skip
    demand: dict[int, float] = defaultdict(float)
    for _, sw, c in member:
        demand[sw] += c
    shares: dict[int, list[float]] = defaultdict(list)
    for srv, sw, c in member:  # a live member behind a switch without uplinks carries 0
        shares[srv].append(c * min(1.0, up_live[sw] / demand[sw]) if up_live[sw] > 0 else 0.0)
    return shares, up_live


def storage_bonds(fabric: Fabric, obs: Observation) -> tuple[dict[int, float], dict[int, float]]:
    """Per server: live bond Gb/s to storage; per storage switch: live uplink Gb/s."""
    shares, up_live = _member_shares(fabric, obs)
    bond: dict[int, float] = defaultdict(float)
    for srv, members in shares.items():
        for c in members:  # summed in member order, as the bond carries them
            bond[srv] += c
    return bond, up_live


def live_member_nics(fabric: Fabric, obs: Observation) -> dict[int, list[int]]:
    """Per server: its live bond members' storage NICs, in the order of
    :func:`storage_members` (enslave order: link order)."""
    f = fabric
    links = f.links_by_kind[LinkKind.STORAGE]
    a, cap = f.link_a[links], obs.link_capacity[links]
    live = (f.kind[a] == int(Kind.STORAGE_NIC)) & (cap > 0)
    out: dict[int, list[int]] = defaultdict(list)
    for nic in a[live].tolist():
        out[int(f.parent[nic])].append(int(nic))
    return out


def storage_members(fabric: Fabric, obs: Observation) -> dict[int, list[float]]:
    """Per server: the usable Gb/s of each live bond member (its share of the switch uplinks)."""
    return _member_shares(fabric, obs)[0]


def bond_ranks(fabric: Fabric) -> dict[int, int]:
    """Each bonded server's rank among the servers with storage NICs (element order).

    The rank sets the bond's addresses (:func:`harness.invariants.bond_hash.server_streams`),
    as the netns plan numbers its bonds.
    """
    f = fabric
    links = f.links_by_kind[LinkKind.STORAGE]
    a = f.link_a[links]
    servers = sorted(set(f.parent[a[f.kind[a] == int(Kind.STORAGE_NIC)]].tolist()))
    return {s: k for k, s in enumerate(servers)}


def write_s(size_gb: float, placed: Sequence[int], members: Sequence[float]) -> float:
    """Seconds to write ``size_gb`` as equal streams, stream i on member ``placed[i]``.

    ``members``: the live members' Gb/s (enslave order); the write ends when the
    last member is done; a stream on a member that carries nothing never ends.
    """
    if size_gb <= 0:
        return 0.0
    if not placed or not members:
        return float("inf")
    per_flow = size_gb / len(placed)
    load = Counter(placed)
    return max(
        (n * per_flow * 8 / members[m] if members[m] > 0 else float("inf")) for m, n in load.items()
    )


def server_write_s(
    policy: str, rank: int, size_gb: float, flows: int, members: Sequence[float]
) -> float:
    """Seconds a bonded server takes to write ``size_gb`` as ``flows`` hashed streams."""
    return write_s(size_gb, bond_hash.placement(policy, rank, flows, len(members)), members)


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
    write: Callable[[int, float, int], float],
    host_copy: Callable[[int], float],
    *,
    sharded: bool = True,
    shards_per_server: Callable[[int], int] | None = None,
) -> tuple[float, float, float]:
    """(sync stall, async phase-1 stall, background write) in seconds.

    ``write(server, gb, streams)``: the seconds a server takes to write ``gb`` as
    that many streams over its bond (:func:`server_write_s`); ``host_copy``: its
    GPU-to-host GB/s; ``shards_per_server``: how many streams a server writes
    when sharded (one when not).
    """
    writers = list(job.servers) if sharded else list(job.servers[:1])
    share = size_gb / len(writers)
    sync = max(
        write(s, share, shards_per_server(s) if sharded and shards_per_server else 1)
        for s in writers
    )
    phase1 = max((share / bw if (bw := host_copy(s)) > 0 else float("inf")) for s in writers)
    return sync, phase1, sync
