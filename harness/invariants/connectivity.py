"""Which GPUs and NICs can still talk (pure).

A GPU reaches the switch components of the NICs it may use: its own rail NIC,
or with ``pxn`` (NCCL PXN) the NICs of every GPU of its NVLink group.  Two GPUs
of different servers can talk iff they reach a common component; GPUs of one
server are judged by NVLink and PCIe inside the server.
"""

from __future__ import annotations

from collections import Counter
from collections import defaultdict
from collections.abc import Hashable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.union_find import UnionFind
from harness.invariants.servers import ServerView
from harness.invariants.servers import groups
from harness.invariants.state import Observation
from harness.invariants.topology import ranges

Reach = dict[int, frozenset[int]]


@dataclass(frozen=True, slots=True)
class Island:
    """A group of live NICs that can exchange traffic."""

    nics: int
    label: str


def gpu_reach(fabric: Fabric, view: ServerView) -> tuple[Reach, Reach]:
    """Per GPU: the components it reaches through its own NIC, and with PXN.

    An undamaged server is read off its healthy wiring (``view.gpu_nic``: each
    GPU's own NIC; all its GPUs one NVLink group), as
    :func:`~harness.invariants.servers.gpu_nics` and the view's groups say it.
    """
    direct: Reach = {}
    pxn: Reach = {}
    empty: frozenset[int] = frozenset()
    damaged = view.damaged_servers
    own = view.gpu_nic
    for srv in fabric.servers.tolist():
        gpus = view.parts(srv, Kind.GPU)
        if srv not in damaged:
            mine = []
            for g in gpus:
                n = own.get(g)
                r = direct[g] = empty if n is None else view.nic_comps(n)
                mine.append(r)
            union = empty.union(*mine)
            for g in gpus:
                pxn[g] = union
            continue
        for g in gpus:
            direct[g] = empty.union(*(view.nic_comps(n) for n in view.gpu_nics(g)))
        for group in view.nvlink_groups(srv):
            union = empty.union(*(direct[g] for g in group))
            for g in group:
                pxn[g] = union
        for g in gpus:
            pxn.setdefault(g, empty)
    return direct, pxn


def gpu_pairs_disconnected(fabric: Fabric, view: ServerView, reach: Reach) -> int:
    """GPU pairs (dead GPUs included) that cannot talk, given each GPU's reach."""
    f = fabric
    of = reach.__getitem__
    sizes: Counter[frozenset[int]] = Counter(map(of, f.gpus.tolist()))
    bad = cross_bad_pairs(sizes)
    # same-server pairs: judged by NVLink/PCIe, not by the fabric
    damaged = view.damaged_servers
    for srv in f.servers.tolist():
        gpus = view.parts(srv, Kind.GPU)
        if srv not in damaged:
            seen = set(map(of, gpus))
            if not seen or (len(seen) == 1 and reach[gpus[0]]):
                continue  # all talk over NVLink and all share fabric components
        bad += server_pairs_term(intra_bad_pairs(view, srv), [reach[g] for g in gpus])
    return bad


def cross_bad_pairs(sizes: Mapping[frozenset[int], int]) -> int:
    """GPU pairs with disjoint reach, counting pairs of one server too (``sizes``: GPUs per
    reach set); :func:`server_pairs_term` turns a server's own pairs into its verdict."""
    keys = [k for k, v in sizes.items() if v]
    bad = 0
    for i, a in enumerate(keys):
        na = sizes[a]
        if not a:
            bad += na * (na - 1) // 2
        for b in keys[i + 1 :]:
            if not (a & b):
                bad += na * sizes[b]
    return bad


def server_pairs_term(intra_bad: int, reach: Sequence[frozenset[int]]) -> int:
    """What one server adds to :func:`cross_bad_pairs`: its GPU pairs are judged by NVLink
    and PCIe (``intra_bad`` of them cannot talk), not by the fabric (``reach`` per GPU)."""
    first = reach[0] if reach else frozenset()
    if all(r == first for r in reach):  # the usual server: one reach for all its GPUs
        n = len(reach)
        return intra_bad - (0 if first else n * (n - 1) // 2)
    return intra_bad - cross_bad_pairs(Counter(reach))


def intra_bad_pairs(view: ServerView, server: int) -> int:
    """Same-server GPU pairs that cannot talk inside the server."""
    n = len(view.parts(server, Kind.GPU))
    return n * (n - 1) // 2 - sum(len(g) * (len(g) - 1) // 2 for g in view.intra_groups(server))


def gpus_isolated(fabric: Fabric, reach: Reach) -> int:
    """GPUs that can reach no GPU on another server."""
    f = fabric
    servers_of: dict[int, set[int]] = defaultdict(set)
    for g in f.gpus.tolist():
        for c in reach[g]:
            servers_of[c].add(int(f.parent[g]))
    # a GPU's own server is in servers_of[c] for each c it reaches, so it is
    # isolated iff each of its components touches no other server
    spread = {c: len(v) for c, v in servers_of.items()}
    return sum(1 for g in f.gpus.tolist() if all(spread[c] <= 1 for c in reach[g]))


def islands(fabric: Fabric, obs: Observation, view: ServerView, *, pxn: bool) -> list[Island]:
    """NIC islands: groups of live NICs that can exchange traffic."""
    f = fabric
    nics = [n for n in f.nics.tolist() if obs.element_up[n]]
    uf: UnionFind[Hashable] = UnionFind()
    for n in nics:
        uf.union(n)
        for c in view.nic_comps(n):
            uf.union(n, ("c", c))
    if pxn:
        for srv in f.servers.tolist():
            for group in view.nvlink_groups(srv):
                used = [nic for g in group for nic in view.gpu_nics(g)]
                for nic in used[1:]:
                    uf.union(used[0], nic)
    out = []
    for group in sorted(groups(uf, nics), key=lambda g: (-len(g), g[0])):
        sus = sorted({int(f.su[n]) for n in group})
        rails = sorted({int(f.rail[n]) for n in group})
        label = f"{len(group)} NICs: SU {ranges(sus)}, rail {ranges(rails)}"
        if len(group) == 1:
            label = f"1 NIC: {f.ids[group[0]]}"
        out.append(Island(len(group), label))
    return out


def rails_connected(fabric: Fabric, obs: Observation, view: ServerView) -> list[int]:
    """Rails whose NICs (all of them, dead ones included) all reach each other."""
    f = fabric
    out = []
    for r in range(f.rails):
        sigs: dict[frozenset[int], int] = defaultdict(int)
        for n in f.nics[f.rail[f.nics] == r].tolist():
            sigs[view.nic_comps(n) if obs.element_up[n] else frozenset()] += 1
        keys = list(sigs)
        ok = all(k for k in keys) and all(a & b for i, a in enumerate(keys) for b in keys[i + 1 :])
        if ok:
            out.append(r)
    return out


def nics_isolated(fabric: Fabric, obs: Observation, view: ServerView) -> int:
    """Live NICs that reach no other NIC."""
    per_comp: dict[int, int] = defaultdict(int)
    live = [n for n in fabric.nics.tolist() if obs.element_up[n]]
    for n in live:
        for c in view.nic_comps(n):
            per_comp[c] += 1
    return sum(1 for n in live if not any(per_comp[c] > 1 for c in view.nic_comps(n)))


def nic_reaches(obs: Observation, view: ServerView, a: int, b: int) -> bool:
    """Whether rail NICs ``a`` and ``b`` (element indices) can exchange packets."""
    up = obs.element_up
    return bool(up[a] and up[b] and view.nic_comps(a) & view.nic_comps(b))
