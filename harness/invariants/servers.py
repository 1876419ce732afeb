"""Per-server structure under one observation: damaged servers, GPU NICs, NVLink groups (pure).

A GPU uses the rail NIC behind its own PCIe switch (GPUDirect RDMA).  GPUs of
one server talk over NVLink (through live NVSwitches), or PCIe through the
CPUs.  An undamaged server (every part up, every internal link at full
capacity) is one group and uses its healthy wiring, which keeps the common
case a dictionary look-up.

>>> from harness.fabric import preset
>>> from harness.invariants.topology import healthy_observation
>>> f = preset("seed-a800")
>>> srv = f.index["su01/node01"]
>>> gpu = f.index["su01/node01/gpu3"]
>>> [f.ids[n] for n in gpu_nics(f, healthy_observation(f), frozenset(), gpu_nic_map(f), gpu)]
['su01/node01/nic1']
"""

from __future__ import annotations

from collections.abc import Hashable
from collections.abc import Iterable
from typing import Literal
from typing import Protocol

import numpy as np
import numpy.typing as npt

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.union_find import UnionFind
from harness.invariants.state import Observation

INTERNAL_LINKS = frozenset({int(LinkKind.NVLINK), int(LinkKind.PCIE), int(LinkKind.CPU_LINK)})
GroupBy = Literal["nvlink", "intra"]


def internal_adjacency(fabric: Fabric, element: int) -> list[tuple[int, int]]:
    """[(other end, link)] over the internal (NVLink/PCIe/CPU) links of an element."""
    f = fabric
    out = []
    for link in f.links_at(element).tolist():
        if int(f.link_kind[link]) in INTERNAL_LINKS:
            a = int(f.link_a[link])
            out.append((int(f.link_b[link]) if a == element else a, link))
    return out


def damaged_servers(fabric: Fabric, obs: Observation) -> frozenset[int]:
    """Servers with a part down or an internal link below its healthy capacity."""
    f = fabric
    cap, up = obs.link_capacity, obs.element_up
    internal = np.flatnonzero(f.link_kind <= int(LinkKind.CPU_LINK))
    weak = internal[cap[internal] < f.link_capacity[internal]]
    hit = set(f.parent[f.link_a[weak]].tolist())
    down = np.flatnonzero(~up)
    hit |= set(f.parent[down][f.parent[down] >= 0].tolist())
    hit |= set(down[f.kind[down] == int(Kind.NODE)].tolist())
    hit.discard(-1)
    return frozenset(int(x) for x in hit)


def gpu_nic_map(fabric: Fabric) -> dict[int, int]:
    """GPU -> the rail NIC behind its PCIe switch (healthy wiring)."""
    f = fabric
    width = int(f.rail.max(initial=0)) + 2  # rails -1 (none) .. max

    def code(x: npt.NDArray[np.int32]) -> list[int]:  # (server, rail) as one int
        out: list[int] = (f.parent[x].astype(np.int64) * width + (f.rail[x] + 1)).tolist()
        return out

    nic_of = dict(zip(code(f.nics), f.nics.tolist(), strict=True))  # the last NIC of a pair wins
    out = {}
    for g, k in zip(f.gpus.tolist(), code(f.gpus), strict=True):
        n = nic_of.get(k)
        if n is not None:
            out[g] = n
    return out


def gpu_nics(
    fabric: Fabric,
    obs: Observation,
    damaged: frozenset[int],
    gpu_nic: dict[int, int],
    gpu: int,
) -> list[int]:
    """The GPU's own rail NIC, if it is up and reached over a live PCIe switch."""
    f = fabric
    up, cap = obs.element_up, obs.link_capacity
    if not up[gpu]:
        return []
    if int(f.parent[gpu]) not in damaged:
        n = gpu_nic.get(gpu)
        return [] if n is None else [n]
    out = []
    rail = f.rail[gpu]
    for sw, link in internal_adjacency(f, gpu):
        if f.kind[sw] != int(Kind.PCIE_SWITCH) or not up[sw] or cap[link] <= 0:
            continue
        for nic, l2 in internal_adjacency(f, sw):
            # the same NIC as on a healthy server: with two NICs behind one PCIe switch
            # (H100, H800, B200) the other one belongs to the neighbouring GPU
            if f.kind[nic] != int(Kind.NIC) or f.rail[nic] != rail:
                continue
            if up[nic] and cap[l2] > 0:
                out.append(nic)
    return out


def groups(uf: UnionFind[Hashable], items: Iterable[int]) -> list[list[int]]:
    """``items`` grouped by their set in ``uf``, in first-seen order."""
    out: dict[object, list[int]] = {}
    for x in items:
        out.setdefault(uf[x], []).append(x)
    return list(out.values())


def server_groups(fabric: Fabric, obs: Observation, server: int, by: GroupBy) -> list[list[int]]:
    """A (damaged) server's live GPUs grouped by ``by``: ``"nvlink"`` (through live
    NVSwitches) or ``"intra"`` (through anything inside the server)."""
    f = fabric
    up, cap = obs.element_up, obs.link_capacity
    gpus = [g for g in f.parts_of(server, Kind.GPU).tolist() if up[g]]
    uf: UnionFind[Hashable] = UnionFind()
    if by == "nvlink":
        for g in gpus:
            uf.union(g)
            for sw, link in internal_adjacency(f, g):
                if f.kind[sw] == int(Kind.NVSWITCH) and up[sw] and cap[link] > 0:
                    uf.union(g, ("nvsw", sw))
    else:
        parts = f.children.get(server, np.empty(0, dtype=np.int32)).tolist()
        alive = {p for p in parts if up[p] and f.kind[p] != int(Kind.NIC)}
        for p in alive:
            uf.union(p)
            for q, link in internal_adjacency(f, p):
                if q in alive and cap[link] > 0:
                    uf.union(p, q)
    return groups(uf, gpus)


class ServerView(Protocol):
    """The per-server and per-NIC look-ups the invariants share (cached by whoever holds them;
    :class:`~harness.invariants.analysis.Analysis` is one)."""

    @property
    def damaged_servers(self) -> frozenset[int]:
        """Servers with a part down or an internal link below its healthy capacity."""
        ...

    @property
    def gpu_nic(self) -> dict[int, int]:
        """GPU -> the rail NIC behind its PCIe switch (healthy wiring)."""
        ...

    def parts(self, server: int, kind: Kind) -> list[int]:
        """Indices of a server's parts of one kind."""
        ...

    def gpu_nics(self, gpu: int) -> list[int]:
        """The GPU's own rail NIC, if it is up and reached over a live PCIe switch."""
        ...

    def nvlink_groups(self, server: int) -> list[list[int]]:
        """Live GPUs of a server grouped by NVLink connectivity (through NVSwitches)."""
        ...

    def intra_groups(self, server: int) -> list[list[int]]:
        """Groups of a server's GPUs that can talk inside the server (NVLink or PCIe)."""
        ...

    def nic_comps(self, nic: int) -> frozenset[int]:
        """What a NIC's live ports reach: two NICs can talk iff theirs meet."""
        ...
