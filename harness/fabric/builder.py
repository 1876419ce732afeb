"""A mutable accumulator that produces an immutable :class:`Fabric` (fabric stage).

Generators, fabric files and importers all build through :class:`FabricBuilder`
so that every fabric has the same shape whatever its origin.  Nothing here has
side effects outside the builder object.
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np

from harness.errors import FabricDesignError
from harness.fabric.limits import LIMITS_FILE
from harness.fabric.limits import MAX_ELEMENTS
from harness.fabric.limits import MAX_GBPS
from harness.fabric.limits import MAX_ID
from harness.fabric.limits import MAX_LANES
from harness.fabric.limits import MAX_LINKS
from harness.fabric.limits import MAX_PORTS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.model import NodeSpec
from harness.fabric.nodes import NodeTemplate

InternalLink = tuple[int, int, LinkKind, float, int]  # (a, b, kind, Gb/s, lanes)


def _internal_links(
    template: NodeTemplate,
    *,
    cpus: list[int],
    pcie: list[int],
    nvsw: list[int],
    gpus: list[int],
    nics: list[int],
    stor: list[int],
) -> list[InternalLink]:
    """A server's links between its parts, in the order they are added."""
    s = template.spec
    out: list[InternalLink] = []
    for c in range(1, len(cpus)):
        out.append((cpus[0], cpus[c], LinkKind.CPU_LINK, 8 * 64.0, 1))
    for k, p in enumerate(pcie):
        out.append((p, cpus[template.cpu_of_pcie(k)], LinkKind.PCIE, 8 * s.pcie_gbs, 1))
        for g in template.gpus_of_pcie(k):
            out.append((gpus[g], p, LinkKind.PCIE, 8 * s.pcie_gbs, 1))
    for r, n in enumerate(nics):
        out.append((n, pcie[template.pcie_of_nic(r)], LinkKind.PCIE, 8 * s.pcie_gbs, 1))
    for m, sn in enumerate(stor):
        out.append((sn, cpus[m % len(cpus)], LinkKind.PCIE, 8 * s.pcie_gbs, 1))
    for g in gpus:
        for k, sw in enumerate(nvsw):
            lanes = s.nvlink_lanes[k]
            if lanes:
                out.append((g, sw, LinkKind.NVLINK, lanes * s.nvlink_lane_gbs * 8, lanes))
    return out


class _Stamp:
    """The internal links of the first server of a template, to repeat on the next ones."""

    __slots__ = ("capacities", "kinds", "lanes", "links", "server")

    def __init__(self, links: tuple[InternalLink, ...], server: int) -> None:
        self.links = tuple((a, b) for a, b, *_ in links)
        self.kinds = tuple(int(x[2]) for x in links)
        self.capacities = tuple(float(x[3]) for x in links)
        self.lanes = tuple(x[4] for x in links)
        self.server = server


class FabricBuilder:
    """Collect elements and links, then :meth:`build` a :class:`Fabric`.

    Physical consistency is checked as the fabric is assembled, whatever its
    origin (a generator, a fabric file, an importer): at most
    :data:`~harness.fabric.limits.MAX_ELEMENTS` elements and
    :data:`~harness.fabric.limits.MAX_LINKS` links, a switch radix of at most
    :data:`~harness.fabric.limits.MAX_PORTS`, no cable from an element to
    itself, ports numbered from 1 and within the radix, never two cables in
    one port, a finite speed above 0 and 1 to
    :data:`~harness.fabric.limits.MAX_LANES` lanes.  Each violation is a
    :class:`FabricDesignError` naming the element and port; callers that read
    files add the file and line.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.index: dict[str, int] = {}
        self._kind: list[int] = []
        self._su: list[int] = []
        self._node: list[int] = []
        self._rail: list[int] = []
        self._pod: list[int] = []
        self._plane: list[int] = []
        self._parent: list[int] = []
        self._ports: list[int] = []
        self._spec_of: list[int] = []
        self._next_port: list[int] = []
        # per element with unused ports below its next free port: those ports, as sorted
        # half-open ranges (ports at or above the next free port are free by definition)
        self._gaps: dict[int, list[tuple[int, int]]] = {}
        self._a: list[int] = []
        self._b: list[int] = []
        self._ap: list[int] = []
        self._bp: list[int] = []
        self._lk: list[int] = []
        self._cap: list[float] = []
        self._lanes: list[int] = []
        self._specs: list[NodeSpec] = []
        self._spec_idx: dict[NodeSpec, int] = {}
        self._stamps: dict[NodeTemplate, _Stamp] = {}  # a server's internal links, per template

    # -- elements ----------------------------------------------------------
    def add(
        self,
        eid: str,
        kind: Kind,
        *,
        su: int = 0,
        node: int = 0,
        rail: int = -1,
        pod: int = 0,
        plane: int = 0,
        parent: int = -1,
        ports: int = 0,
        spec: int = -1,
    ) -> int:
        """Add one element and return its index; ``ports`` is the radix of a switch."""
        if eid in self.index:
            what = Kind(self._kind[self.index[eid]]).label
            msg = f"duplicate element id {eid!r} (already used by a {what}); ids must be unique"
            raise FabricDesignError(msg)
        i = len(self.ids)
        if i >= MAX_ELEMENTS:
            msg = f"more than MAX_ELEMENTS = {MAX_ELEMENTS:,} elements ({LIMITS_FILE})"
            raise FabricDesignError(msg)
        if max(su, node, rail, pod, plane) > MAX_ID or min(su, node, pod, plane) < 0 or rail < -1:
            msg = (
                f"{eid}: su {su}, node {node}, rail {rail}, pod {pod}, plane {plane}: "
                f"these numbers run from 0 (rail: -1 for none) to MAX_ID = {MAX_ID:,}"
            )
            raise FabricDesignError(msg)
        if not 0 <= ports <= MAX_PORTS:
            msg = f"{eid} has {ports} ports; a radix is 0 (no limit) to MAX_PORTS = {MAX_PORTS:,}"
            raise FabricDesignError(msg)
        self.ids.append(eid)
        self.index[eid] = i
        self._kind.append(int(kind))
        self._su.append(su)
        self._node.append(node)
        self._rail.append(rail)
        self._pod.append(pod)
        self._plane.append(plane)
        self._parent.append(parent)
        self._ports.append(ports)
        self._spec_of.append(spec)
        self._next_port.append(1)
        return i

    def spec_index(self, spec: NodeSpec) -> int:
        """The index of a server model in the fabric's list of models (added when new)."""
        if spec not in self._spec_idx:
            self._spec_idx[spec] = len(self._specs)
            self._specs.append(spec)
        return self._spec_idx[spec]

    # -- links -------------------------------------------------------------
    def link(
        self,
        a: int,
        b: int,
        kind: LinkKind,
        capacity_gbps: float,
        *,
        lanes: int = 1,
        a_port: int | None = None,
        b_port: int | None = None,
    ) -> int:
        """Add a link; cables get the next free port at each end unless given."""
        if len(self._a) >= MAX_LINKS:
            msg = f"more than MAX_LINKS = {MAX_LINKS:,} links ({LIMITS_FILE})"
            raise FabricDesignError(msg)
        if a == b:
            msg = f"a {kind.name.lower().replace('_', '-')} link from {self.ids[a]} to itself"
            raise FabricDesignError(msg + "; a cable joins two different elements")
        if not 0 < capacity_gbps <= MAX_GBPS:  # also refuses nan
            msg = (
                f"the link {self.ids[a]} -- {self.ids[b]} runs at {capacity_gbps:g} Gb/s; "
                f"a link that is up runs at more than 0 and at most MAX_GBPS = {MAX_GBPS:g}"
            )
            raise FabricDesignError(msg)
        if not 1 <= lanes <= MAX_LANES:
            msg = (
                f"the link {self.ids[a]} -- {self.ids[b]} has {lanes} lanes; "
                f"give 1 to MAX_LANES = {MAX_LANES}"
            )
            raise FabricDesignError(msg)
        if kind.is_cable:
            a_port = self._take_port(a, a_port)
            b_port = self._take_port(b, b_port)
        self._a.append(a)
        self._b.append(b)
        self._ap.append(a_port or 0)
        self._bp.append(b_port or 0)
        self._lk.append(int(kind))
        self._cap.append(float(capacity_gbps))
        self._lanes.append(lanes)
        return len(self._a) - 1

    def _take_port(self, e: int, port: int | None) -> int:
        if port is None:
            port = self._next_port[e]
        radix = self._ports[e]
        if port < 1 or (not radix and port > MAX_LINKS):
            msg = f"{self.ids[e]} port {port}: ports are numbered from 1 (port 0 does not exist)"
            raise FabricDesignError(msg)
        if radix and port > radix:
            kind = Kind(self._kind[e]).label
            msg = (
                f"{self.ids[e]} ({kind}) needs port {port} but has only {radix} ports; "
                "use switches with more ports, fewer cables per switch pair, or add a tier"
            )
            raise FabricDesignError(msg)
        nxt = self._next_port[e]
        if port > nxt:  # skipped ports stay free for later cables
            self._gaps.setdefault(e, []).append((nxt, port))
        elif port < nxt and not self._take_gap(e, port):
            msg = (
                f"two cables in port {self.ids[e]}:{port}; every port takes one cable "
                "(give the second cable a free port)"
            )
            raise FabricDesignError(msg)
        self._next_port[e] = max(self._next_port[e], port + 1)
        return port

    def _take_gap(self, e: int, port: int) -> bool:
        """Take ``port`` from the free ranges below ``e``'s next port; False if it is taken."""
        gaps = self._gaps.get(e)
        if not gaps:
            return False
        k = bisect.bisect_right(gaps, (port, math.inf)) - 1
        if k < 0 or not gaps[k][0] <= port < gaps[k][1]:
            return False
        lo, hi = gaps.pop(k)
        gaps[k:k] = [r for r in ((lo, port), (port + 1, hi)) if r[0] < r[1]]
        return True

    def ports_used(self, e: int) -> int:
        """The highest port number handed out on element ``e`` so far."""
        return self._next_port[e] - 1

    # -- servers -----------------------------------------------------------
    def add_server(
        self,
        prefix: str,
        template: NodeTemplate,
        *,
        su: int = 0,
        node: int = 0,
        pod: int = 0,
    ) -> tuple[int, list[int], list[int]]:
        """Add a server and its parts; return (server, rail NICs, storage NICs)."""
        s = template.spec
        spec = self.spec_index(s)
        srv = self.add(prefix, Kind.NODE, su=su, node=node, pod=pod, spec=spec)

        def part(name: str, kind: Kind, rail: int = -1, ports: int = 0) -> int:
            return self.add(
                f"{prefix}/{name}", kind, su=su, node=node, rail=rail, pod=pod,
                parent=srv, ports=ports, spec=spec,
            )  # fmt: skip

        cpus = [part(f"cpu{c}", Kind.CPU) for c in range(template.cpus)]
        pcie = [part(f"pcie{k}", Kind.PCIE_SWITCH) for k in range(s.pcie_switches)]
        nvsw = [part(f"nvsw{k}", Kind.NVSWITCH) for k in range(s.nvswitches)]
        gpus = [part(f"gpu{g}", Kind.GPU, rail=template.rail_of_gpu(g)) for g in range(s.gpus)]
        nics = [part(f"nic{r}", Kind.NIC, rail=r, ports=s.nic_ports) for r in range(s.rails)]
        stor = [part(f"stor{m}", Kind.STORAGE_NIC, ports=1) for m in range(s.storage_nics)]
        stamp = self._stamps.get(template)
        if stamp is None or len(self._a) + len(stamp.links) > MAX_LINKS:
            # the first server of this template (or one past the link limit, which raises at
            # the link beyond it): every link checked one by one
            links = _internal_links(
                template, cpus=cpus, pcie=pcie, nvsw=nvsw, gpus=gpus, nics=nics, stor=stor
            )
            for a, b, kind, gbps, lanes in links:
                self.link(a, b, kind, gbps, lanes=lanes)
            self._stamps[template] = _Stamp(tuple(links), srv)
            return srv, nics, stor
        # the first server's links moved to this one's parts (added in the same order after
        # the server): checked there already, and links inside a server take no ports
        shift = srv - stamp.server
        self._a.extend(a + shift for a, _ in stamp.links)
        self._b.extend(b + shift for _, b in stamp.links)
        self._ap.extend(0 for _ in stamp.links)
        self._bp.extend(0 for _ in stamp.links)
        self._lk.extend(stamp.kinds)
        self._cap.extend(stamp.capacities)
        self._lanes.extend(stamp.lanes)
        return srv, nics, stor

    # -- result ------------------------------------------------------------
    def build(self, name: str, *, tiers: int, params: dict[str, Any] | None = None) -> Fabric:
        """The fabric built from everything added, named ``name``."""
        return Fabric(
            name=name,
            ids=tuple(self.ids),
            kind=np.array(self._kind, dtype=np.int8),
            su=np.array(self._su, dtype=np.int32),
            node_no=np.array(self._node, dtype=np.int32),
            rail=np.array(self._rail, dtype=np.int32),
            pod=np.array(self._pod, dtype=np.int32),
            plane=np.array(self._plane, dtype=np.int32),
            parent=np.array(self._parent, dtype=np.int32),
            ports=np.array(self._ports, dtype=np.int32),
            link_a=np.array(self._a, dtype=np.int32),
            link_b=np.array(self._b, dtype=np.int32),
            link_a_port=np.array(self._ap, dtype=np.int32),
            link_b_port=np.array(self._bp, dtype=np.int32),
            link_kind=np.array(self._lk, dtype=np.int8),
            link_capacity=np.array(self._cap, dtype=np.float64),
            link_lanes=np.array(self._lanes, dtype=np.int16),
            node_specs=tuple(self._specs),
            node_spec_of=np.array(self._spec_of, dtype=np.int32),
            tiers=tiers,
            params=tuple(sorted((params or {}).items())),
        )
