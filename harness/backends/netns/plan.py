"""How a modeled fabric becomes namespaces, veth pairs and addresses (pure, no root).

* one namespace per server (its rail NICs as interfaces ``r<rail>`` -- ``r<rail>p<port>``
  on multi-port NICs -- and its two storage NICs ``st0``/``st1``, bonded: see
  :class:`Bond`), per leaf, spine and core (interfaces ``p<port>``, the model's
  port numbers), and per SU for its storage switches (the pair acts as one
  partner, as an MLAG pair does: port ``n`` of ``storage-swM`` is ``s<M>p<n>``).
  GPUs, NVLink and PCIe stay in the model.
* every cable is a routed point-to-point veth pair, no bridges:

  ===================  ==============================================  =========
  link                 IPv4                                            IPv6
  ===================  ==============================================  =========
  access (rail r)      ``10.r.j.0/24`` per leaf j of rail r, /31 per   ``fd68:6172:6e65::`` +
                       port: leaf ``.2(p-1)``, server ``.2(p-1)+1``    the IPv4 bits, /127
  leaf-spine, -core    ``10.64.0.0/10``, /31 per cable k: ``2k``/``2k+1``
  storage member       ``10.128.0.0/10``, /31 per member link
  storage bond         ``10.192.0.0/10``: /32 on ``lo`` at each side
  ===================  ==============================================  =========

* names: namespaces are ``<run-id>-<code>`` where the code is the element id
  compacted (``su03/node07`` -> ``s03n07``, ``su03/leaf-r1`` -> ``s03l1``,
  ``spine-05`` -> ``sp05``, ``core-g07-03`` -> ``c07-03``); :attr:`Plan.names`
  maps every namespace back to its element ids.
* link rates are shaped at ``scale`` (default 1/1000: 200 Gb/s -> 200 Mb/s).

>>> from harness.fabric.generators import two_tier
>>> f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
>>> p = make_plan(f, "hab12c")
>>> sorted(p.namespaces[i].name for i in range(3))
['hab12c-s01n01', 'hab12c-s01n02', 'hab12c-sp01']
>>> p.port_of_nic(f.index["su01/node02/nic1"]).v4
'10.1.0.3'
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import cached_property

from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants.bond_hash import bond_v4

DEFAULT_SCALE = 1e-3
MAX_NAMESPACES = 2_000  # 195 KB of kernel memory each; beyond this use the model backend
V6_BASE = int(ipaddress.IPv6Address("fd68:6172:6e65::"))
TIER = {Kind.LEAF: 0, Kind.SPINE: 1, Kind.CORE: 2}
_CODE_RULES = (
    (r"^su(\d+)/node(\d+)$", r"s\1n\2"),
    (r"^su(\d+)/leaf-r(\d+)([ab]?)$", r"s\1l\2\3"),
    (r"^su(\d+)/storage-sw\d+$", r"s\1st"),
    (r"^pod(\d+)/spine-(\d+)$", r"p\1sp\2"),
    (r"^plane(\d+)/spine-(\d+)$", r"pl\1sp\2"),
    (r"^spine-(\d+)$", r"sp\1"),
    (r"^core-g(\d+)-(\d+)$", r"c\1-\2"),
)


@dataclass(frozen=True, slots=True)
class Port:
    """One interface end in one namespace."""

    ns: int
    ifname: str
    ifindex: int
    v4: str = ""
    v6: str = ""
    plen4: int = 31

    @property
    def plen6(self) -> int:
        """The IPv6 prefix length: the IPv4 one under the ``fd68:6172:6e65::/96`` twin."""
        return 96 + self.plen4


@dataclass(frozen=True, slots=True)
class Wire:
    """A veth pair realizing one cable (``a`` is the model's lower-tier end)."""

    link: int
    a: Port
    b: Port
    rate_bps: int
    kind: LinkKind


@dataclass(frozen=True, slots=True)
class Bond:
    """A server's storage bond: its member wires and a host address at each side.

    The kernel this runs on may lack the bonding driver (``CONFIG_BONDING``), so
    the bond is realized at layer 3: each member is a routed link, and the
    server's and the storage switch's bond addresses (on ``lo``, /32) are
    reached over an ECMP route through every live member.
    """

    server: int
    host: Port  # the server's bond address
    switch: Port  # the storage switch's address toward this server
    members: tuple[int, ...]  # wire indices


@dataclass(frozen=True, slots=True)
class Namespace:
    """One network namespace: the fabric elements it realizes, their role and tier."""

    name: str
    elements: tuple[int, ...]  # fabric elements realized here
    role: str  # server | switch | storage
    tier: int  # 0 leaf, 1 spine, 2 core; -1 server or storage


def v6_of(v4: str) -> str:
    """The IPv6 twin of a plan address: the IPv4 bits under ``fd68:6172:6e65::/96``."""
    return str(ipaddress.IPv6Address(V6_BASE | int(ipaddress.IPv4Address(v4))))


def code_of(element_id: str) -> str:
    """The compact namespace code of an element id."""
    for pattern, repl in _CODE_RULES:
        if re.match(pattern, element_id):
            return re.sub(pattern, repl, element_id)
    return re.sub(r"[^a-z0-9]", "", element_id.lower())[:9] or "x"


def _v4(base: int, offset: int) -> str:
    return str(ipaddress.IPv4Address(base + offset))


class Plan:
    """The realization of one fabric: namespaces, wires, bonds and routing blocks."""

    def __init__(self, fabric: Fabric, prefix: str, scale: float = DEFAULT_SCALE) -> None:
        if not 0 < scale <= 1:
            msg = f"netns scale factor must be in (0, 1], got {scale!r} (e.g. 0.001: 200G -> 200M)"
            raise ScenarioError(msg)
        self.fabric = fabric
        self.prefix = prefix
        self.scale = scale
        self.namespaces: list[Namespace] = []
        self.ns_of: dict[int, int] = {}  # element index -> namespace index
        self.wires: list[Wire] = []
        self.wire_of_link: dict[int, int] = {}
        self.bonds: list[Bond] = []
        self.leaf_block: dict[int, str] = {}  # leaf element -> its access block (IPv4 CIDR)
        self.rail_block: dict[int, str] = {}  # rail -> the IPv4 block of every access link
        self.element_ports: dict[int, list[tuple[int, int]]] = {}  # element -> [(wire, end)]
        self._next_ifindex: dict[int, int] = {}
        self._build()

    # -- construction ------------------------------------------------------------
    def _ns(self, code: str, elements: tuple[int, ...], role: str, tier: int) -> int:
        name = f"{self.prefix}-{code}"
        if name in self._names:
            name = f"{self.prefix}-e{elements[0]}"
        self._names.add(name)
        self.namespaces.append(Namespace(name, elements, role, tier))
        idx = len(self.namespaces) - 1
        for e in elements:
            self.ns_of[e] = idx
        self._next_ifindex[idx] = 2  # 1 is lo
        return idx

    def _ifindex(self, ns: int) -> int:
        i = self._next_ifindex[ns]
        self._next_ifindex[ns] = i + 1
        return i

    def _build(self) -> None:
        f = self.fabric
        self._names: set[str] = set()
        switches = f.indices_of_kind(Kind.LEAF, Kind.SPINE, Kind.CORE).tolist()
        servers = f.servers.tolist()
        storage_sw = f.indices_of_kind(Kind.STORAGE_SWITCH).tolist()
        n_su_storage = len({int(f.su[s]) for s in storage_sw})
        total = len(switches) + len(servers) + n_su_storage
        if total > MAX_NAMESPACES:
            msg = (
                f"fabric {f.name!r} needs {total} network namespaces; the netns backend builds "
                f"at most {MAX_NAMESPACES} (about 195 KB of kernel memory each). Use the model "
                "backend, or a smaller fabric (fewer SUs or nodes per SU)"
            )
            raise ScenarioError(msg)
        for s in servers:
            self._ns(code_of(f.ids[s]), (s,), "server", -1)
            for part in f.parts_of(s).tolist():
                self.ns_of[part] = self.ns_of[s]
        for sw in switches:
            kind = Kind(int(f.kind[sw]))
            if kind is Kind.LEAF and int(f.rail[sw]) < 0:
                msg = f"netns needs rail-optimized leaves; {f.ids[sw]} has no rail"
                raise ScenarioError(msg)
            self._ns(code_of(f.ids[sw]), (sw,), "switch", TIER[kind])
        by_su: dict[int, list[int]] = {}
        for sw in storage_sw:
            by_su.setdefault(int(f.su[sw]), []).append(sw)
        for _su, members in sorted(by_su.items()):
            self._ns(code_of(f.ids[members[0]]), tuple(members), "storage", -1)
        self._access()
        self._fabric_links()
        self._storage()

    def _rate(self, link: int) -> int:
        return int(float(self.fabric.link_capacity[link]) * 1e9 * self.scale)

    def _add_wire(self, link: int, a: Port, b: Port) -> None:
        f = self.fabric
        self.wires.append(Wire(link, a, b, self._rate(link), LinkKind(int(f.link_kind[link]))))
        w = len(self.wires) - 1
        self.wire_of_link[link] = w
        self.element_ports.setdefault(int(f.link_a[link]), []).append((w, 0))
        self.element_ports.setdefault(int(f.link_b[link]), []).append((w, 1))

    def _server_ifname(self, nic: int, port: int) -> str:
        f = self.fabric
        rail = int(f.rail[nic])
        return f"r{rail}" if f.node_spec(nic).nic_ports == 1 else f"r{rail}p{port}"

    def _access(self) -> None:
        f = self.fabric
        leaf_no: dict[int, int] = {}
        per_rail: dict[int, int] = {}
        for leaf in f.leaves.tolist():
            rail = int(f.rail[leaf])
            j = per_rail.get(rail, 0)
            per_rail[rail] = j + 1
            leaf_no[leaf] = j
            if rail >= 64 or j >= 256:
                msg = "netns addressing supports up to 64 rails and 256 leaves per rail"
                raise ScenarioError(msg)
            self.leaf_block[leaf] = f"10.{rail}.{j}.0/24"
            self.rail_block[rail] = f"10.{rail}.0.0/16"
        for link in f.links_of_kind(LinkKind.ACCESS).tolist():
            nic, leaf = int(f.link_a[link]), int(f.link_b[link])
            port = int(f.link_b_port[link])
            if not 1 <= port <= 128:
                msg = f"netns addressing supports leaf access ports 1-128; {f.link_ids[link]}"
                raise ScenarioError(msg)
            rail = int(f.rail[leaf])
            base = int(ipaddress.IPv4Address(f"10.{rail}.{leaf_no[leaf]}.0")) + 2 * (port - 1)
            sns, lns = self.ns_of[nic], self.ns_of[leaf]
            a = Port(
                sns,
                self._server_ifname(nic, int(f.link_a_port[link])),
                self._ifindex(sns),
                _v4(base, 1),
                v6_of(_v4(base, 1)),
            )
            b = Port(lns, f"p{port}", self._ifindex(lns), _v4(base, 0), v6_of(_v4(base, 0)))
            self._add_wire(link, a, b)

    def _fabric_links(self) -> None:
        f = self.fabric
        base = int(ipaddress.IPv4Address("10.64.0.0"))
        links = f.links_of_kind(LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).tolist()
        for k, link in enumerate(links):
            lo, hi = int(f.link_a[link]), int(f.link_b[link])
            ans, bns = self.ns_of[lo], self.ns_of[hi]
            v4a, v4b = _v4(base, 2 * k), _v4(base, 2 * k + 1)
            a = Port(ans, f"p{int(f.link_a_port[link])}", self._ifindex(ans), v4a, v6_of(v4a))
            b = Port(bns, f"p{int(f.link_b_port[link])}", self._ifindex(bns), v4b, v6_of(v4b))
            self._add_wire(link, a, b)

    def _storage(self) -> None:
        f = self.fabric
        base = int(ipaddress.IPv4Address("10.128.0.0"))
        sw_no = {sw: m + 1 for members in self._storage_groups() for m, sw in enumerate(members)}
        members: dict[int, list[int]] = {}  # server -> member wires
        for link in f.links_of_kind(LinkKind.STORAGE).tolist():
            snic, sw = int(f.link_a[link]), int(f.link_b[link])
            if Kind(int(f.kind[snic])) is not Kind.STORAGE_NIC:
                continue  # storage switch -> storage cluster: not emulated
            server = int(f.parent[snic])
            sns, wns = self.ns_of[server], self.ns_of[sw]
            m = len(members.get(server, []))
            w = len(self.wires)
            v4a, v4b = _v4(base, 4 * w + 1), _v4(base, 4 * w)
            a = Port(sns, f"st{m}", self._ifindex(sns), v4a, v6_of(v4a))
            b = Port(
                wns, f"s{sw_no[sw]}p{int(f.link_b_port[link])}", self._ifindex(wns), v4b, v6_of(v4b)
            )
            self._add_wire(link, a, b)
            members.setdefault(server, []).append(w)
        for i, (server, wires) in enumerate(sorted(members.items())):
            v4s, v4w = (str(ipaddress.IPv4Address(v4)) for v4 in bond_v4(i))
            self.bonds.append(
                Bond(
                    server,
                    Port(self.ns_of[server], "lo", 1, v4s, v6_of(v4s), 32),
                    Port(self._storage_ns_of(server), "lo", 1, v4w, v6_of(v4w), 32),
                    tuple(wires),
                )
            )

    def _storage_groups(self) -> list[tuple[int, ...]]:
        return [n.elements for n in self.namespaces if n.role == "storage"]

    def _storage_ns_of(self, server: int) -> int:
        f = self.fabric
        for snic in f.parts_of(server, Kind.STORAGE_NIC).tolist():
            for link in f.links_at(snic).tolist():
                if int(f.link_kind[link]) == LinkKind.STORAGE:
                    return self.ns_of[f.other_end(link, snic)]
        msg = f"{f.ids[server]} has no storage link"
        raise ScenarioError(msg)

    # -- queries -------------------------------------------------------------------
    def names(self) -> dict[str, tuple[str, ...]]:
        """Namespace name -> the element ids it realizes."""
        ids = self.fabric.ids
        return {n.name: tuple(ids[e] for e in n.elements) for n in self.namespaces}

    def ports_of(self, element: int) -> list[Port]:
        """The interface ends that belong to an element (a NIC, a switch, a storage NIC)."""
        out = []
        for w, end in self.element_ports.get(element, []):
            wire = self.wires[w]
            out.append(wire.a if end == 0 else wire.b)
        return out

    def port_of_nic(self, nic: int) -> Port:
        """A NIC's first port."""
        return self.ports_of(nic)[0]

    @cached_property
    def nic_ports(self) -> dict[int, list[Port]]:
        """Rail NIC element -> its addressed ports (the probe endpoints)."""
        f = self.fabric
        return {nic: self.ports_of(nic) for nic in f.nics.tolist() if self.ports_of(nic)}

    def describe(self) -> str:
        """One line for every report: what was built and the rate scale factor."""
        return (
            f"{len(self.namespaces)} namespaces, {len(self.wires)} veth pairs, "
            f"{len(self.bonds)} bonds; link rates shaped at {scale_text(self.scale)}"
        )


def scale_text(scale: float) -> str:
    """``1/1000 (200 Gb/s -> 200 Mb/s)``: printed with every measured rate."""
    inv = round(1 / scale)
    return f"1/{inv} (200 Gb/s -> {200 * scale * 1000:g} Mb/s)"


def make_plan(fabric: Fabric, prefix: str, scale: float = DEFAULT_SCALE) -> Plan:
    """Plan the namespaces, wires and addresses of a fabric."""
    return Plan(fabric, prefix, scale)
