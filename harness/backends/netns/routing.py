"""``routing: sm``: forwarding tables computed from what is alive, as a subnet manager does.

An InfiniBand subnet manager sweeps the fabric, finds what is alive and programs
every switch's forwarding table; here the harness does the same for the
namespaces.  Paths are up/down (up* down*, never a valley): a switch with a
downward path to the destination leaf uses only its shortest downward next
hops; otherwise it goes up to every neighbour on a shortest up/down path.  All
equal-cost next hops are installed (ECMP, one kernel multipath route per
destination leaf block), servers get one route per rail (the NIC's rail: a NIC
cabled to another rail's leaf is still used for its own rail, as NCCL uses it,
and the other servers reach it through their port of that rail).

:func:`compute` is pure (tested without root); :class:`Router` installs the
difference through netlink and re-pushes the namespaces the kernel may have
flushed (an admin-down removes the static routes through that interface).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass

from harness.backends.netns.netlink import ENOENT
from harness.backends.netns.netlink import ESRCH
from harness.backends.netns.netlink import Batch
from harness.backends.netns.plan import Plan
from harness.backends.netns.plan import Port
from harness.errors import BackendError
from harness.fabric.model import LinkKind

Hops = tuple[tuple[int, int], ...]  # (wire index, local end 0|1), sorted
Tables = dict[int, dict[str, Hops]]  # namespace -> "CIDR" or "CIDR@table" -> next hops
INF = 1 << 30
SETTLE_RETRY_S = 10.0
EHOSTUNREACH = errno.EHOSTUNREACH
ENETUNREACH = errno.ENETUNREACH
ALL_RAILS = "10.0.0.0/10"  # every access block (rails 0-63)


def port_table(ifindex: int) -> int:
    """The routing table of a server port (selected by a rule on its source address)."""
    return 100 + ifindex


@dataclass(frozen=True, slots=True)
class Alive:
    """What the subnet manager sees: usable wires and forwarding elements."""

    wires: frozenset[int]  # wires whose both ends are up (carrier on both sides)
    elements: frozenset[int]  # switches, servers and NICs up and forwarding (not drained)


def compute(plan: Plan, alive: Alive) -> Tables:
    """Every namespace's forwarding table for the live fabric (pure)."""
    f = plan.fabric
    tables: Tables = {i: {} for i in range(len(plan.namespaces))}
    up_adj: dict[int, list[tuple[int, int]]] = {}
    down_adj: dict[int, list[tuple[int, int]]] = {}
    tier: dict[int, int] = {}
    for ns in plan.namespaces:
        if ns.role == "switch" and ns.elements[0] in alive.elements:
            tier[ns.elements[0]] = ns.tier
    for w, wire in enumerate(plan.wires):
        if wire.kind not in (LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE) or w not in alive.wires:
            continue
        lo, hi = int(f.link_a[wire.link]), int(f.link_b[wire.link])
        if lo in tier and hi in tier:
            up_adj.setdefault(lo, []).append((w, hi))
            down_adj.setdefault(hi, []).append((w, lo))
    by_tier = sorted(tier, key=lambda x: tier[x])
    for dest, block in plan.leaf_block.items():
        if dest not in tier:
            continue
        down = {dest: 0}
        for x in by_tier:
            if tier[x] == 0:
                continue
            d = min((down[y] for _, y in down_adj.get(x, []) if y in down), default=INF)
            if d < INF:
                down[x] = d + 1
        best: dict[int, int] = {}
        for x in reversed(by_tier):
            if x in down:
                best[x] = down[x]
            else:
                b = min((best.get(y, INF) for _, y in up_adj.get(x, [])), default=INF)
                best[x] = b + 1 if b < INF else INF
        for x in by_tier:
            if x == dest or best[x] >= INF:
                continue
            if x in down:
                hops = [w for w, y in down_adj.get(x, []) if down.get(y) == down[x] - 1]
            else:
                hops = [w for w, y in up_adj.get(x, []) if best.get(y, INF) == best[x] - 1]
            if hops:
                tables[plan.ns_of[x]][block] = tuple(
                    sorted((w, _local_end(plan, w, x)) for w in hops)
                )
    for w, wire in enumerate(plan.wires):
        if wire.kind is not LinkKind.ACCESS or w not in alive.wires:
            continue
        nic, leaf = int(f.link_a[wire.link]), int(f.link_b[wire.link])
        if nic not in alive.elements or leaf not in tier:
            continue
        # NCCL uses NIC k for rail k wherever it is plugged: the NIC's rail picks the block
        # it sends to (the leaf's, unless the cable is on another rail's leaf)
        block = plan.rail_block.get(int(f.rail[nic]), plan.rail_block[int(f.rail[leaf])])
        table = tables[wire.a.ns]
        table[block] = tuple(sorted({*table.get(block, ()), (w, 0)}))
        # traffic from this port's address (any rail) leaves through it: its own table
        table[f"{ALL_RAILS}@{port_table(wire.a.ifindex)}"] = ((w, 0),)
    _wrong_rail_routes(plan, alive, tables, frozenset(tier))
    for bond in plan.bonds:
        live = [w for w in bond.members if w in alive.wires and bond.server in alive.elements]
        live = [w for w in live if int(f.link_a[plan.wires[w].link]) in alive.elements]
        if live:
            tables[bond.host.ns][f"{bond.switch.v4}/32"] = tuple((w, 0) for w in live)
            tables[bond.switch.ns][f"{bond.host.v4}/32"] = tuple((w, 1) for w in live)
    return tables


def _wrong_rail_routes(plan: Plan, alive: Alive, tables: Tables, live: frozenset[int]) -> None:
    """Host routes to NICs cabled to another rail's leaf, through their rail's ports.

    Such a NIC's address is in its leaf's block (the leaf routes it), but
    NCCL sends it rail-``k`` traffic from the peers' rail-``k`` NICs: every
    other server reaches it by a ``/32`` through its own rail-``k`` port, so
    the traffic climbs from the rail-``k`` leaf to the spines, as NCCL's
    does, and stalls when no route carries it.
    """
    f = plan.fabric
    ports: list[tuple[int, int, int]] = []  # (wire, NIC, leaf) of the live access wires
    for w, wire in enumerate(plan.wires):
        if wire.kind is LinkKind.ACCESS and w in alive.wires:
            nic, leaf = int(f.link_a[wire.link]), int(f.link_b[wire.link])
            if nic in alive.elements and leaf in live:
                ports.append((w, nic, leaf))
    for w, nic, leaf in ports:
        rail = int(f.rail[nic])
        if rail < 0 or rail == int(f.rail[leaf]) or rail not in plan.rail_block:
            continue
        host = f"{plan.wires[w].a.v4}/32"
        for w2, nic2, leaf2 in ports:
            ns = plan.wires[w2].a.ns
            if int(f.rail[nic2]) == rail == int(f.rail[leaf2]) and ns != plan.wires[w].a.ns:
                tables[ns][host] = tuple(sorted({*tables[ns].get(host, ()), (w2, 0)}))


def _local_end(plan: Plan, wire: int, element: int) -> int:
    return 0 if int(plan.fabric.link_a[plan.wires[wire].link]) == element else 1


def _hops(plan: Plan, hops: Hops, v6: bool) -> list[tuple[int, str]]:
    out = []
    for w, end in hops:
        wire = plan.wires[w]
        local: Port = wire.a if end == 0 else wire.b
        peer: Port = wire.b if end == 0 else wire.a
        out.append((local.ifindex, peer.v6 if v6 else peer.v4))
    return out


def _v6_net(cidr: str) -> tuple[str, int]:
    from harness.backends.netns.plan import v6_of

    net = ipaddress.IPv4Network(cidr)
    return v6_of(str(net.network_address)), 96 + net.prefixlen


class Router:
    """Installs :func:`compute` tables, pushing only what changed (plus forced namespaces).

    ``managed`` limits it to some namespaces: under ``routing: bgp`` the
    switches are routed by FRR, and only servers and storage get static routes.
    """

    def __init__(
        self,
        plan: Plan,
        batches: Sequence[Batch],
        *,
        ipv6: bool = True,
        managed: frozenset[int] | None = None,
    ) -> None:
        self.plan = plan
        self.batches = batches
        self.ipv6 = ipv6
        self.managed = managed  # the namespaces it routes (None: all; bgp: servers, storage)
        self.installed: Tables = {i: {} for i in range(len(plan.namespaces))}

    def push(self, tables: Tables, force: frozenset[int] = frozenset()) -> int:
        """Install ``tables``; returns the number of route changes sent."""
        sent = 0
        for ns, new in tables.items():
            if self.managed is not None and ns not in self.managed:
                continue
            old = self.installed.get(ns, {})
            changes = {
                dst: new.get(dst, ())
                for dst in old.keys() | new.keys()
                if new.get(dst, ()) != old.get(dst, ()) or (ns in force and dst in new)
            }
            if not changes:
                continue
            sent += len(changes)
            self._send(ns, changes)
            self.installed[ns] = dict(new)
        return sent

    def _send(self, ns: int, changes: dict[str, Hops]) -> None:
        """Send one namespace's changes; retry while a repaired link's addresses settle.

        An interface that just came back up has its IPv6 addresses tentative for a
        moment (the kernel's addrconf work runs asynchronously), and a route via a
        gateway on it fails with EHOSTUNREACH until then.
        """
        deadline = time.monotonic() + SETTLE_RETRY_S
        while True:
            batch = self.batches[ns]
            for key, hops in sorted(changes.items()):
                dst, _, tab = key.partition("@")
                table = int(tab) if tab else 254
                net = ipaddress.IPv4Network(dst)
                batch.route(
                    socket.AF_INET,
                    str(net.network_address),
                    net.prefixlen,
                    _hops(self.plan, hops, v6=False),
                    what=f"route {key}",
                    table=table,
                )
                if self.ipv6:
                    d6, p6 = _v6_net(dst)
                    batch.route(
                        socket.AF_INET6,
                        d6,
                        p6,
                        _hops(self.plan, hops, v6=True),
                        what=f"route {d6}/{p6}",
                        table=table,
                    )
            try:
                batch.flush(tolerate=frozenset({ESRCH, ENOENT}))
                return
            except BackendError as err:
                code = getattr(err.cause, "errno", None)
                if code not in (EHOSTUNREACH, ENETUNREACH) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def counts(self) -> tuple[int, int]:
        """(routes, next hops) installed per address family."""
        routes = sum(len(t) for t in self.installed.values())
        hops = sum(len(h) for t in self.installed.values() for h in t.values())
        return routes, hops
