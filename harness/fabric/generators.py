"""Fabric generators: rail-optimized two-tier, three-tier and dual-ToR (fabric stage).

Each generator takes keyword parameters, checks the design before building it
(port counts against the switch radix, the two-tier limit) and raises a
:class:`~harness.errors.FabricDesignError` that says what to change.

Wiring rules (documented in the README, relied on by the importers' audit):

* rail-optimized: NIC ``r`` of every server of SU ``s`` goes to leaf
  ``su{s}/leaf-r{r}``, on leaf port = node number.  Leaf uplinks take the ports
  after the down ports, spine by spine.
* two-tier: every leaf has ``cables_per_pair`` cables to every spine.
* three-tier: SUs are grouped in pods; inside a pod every leaf is wired to every
  pod spine; spine ``j`` of every pod is wired to core group ``j``, its uplinks
  dealt round-robin over the group's cores (``(pod * uplinks + k) mod cores``),
  which keeps each core's ports balanced even when there are more pods than a
  core has ports for a full mesh (the 102,400-GPU preset needs that).
* dual-ToR / dual-plane: NIC port ``p`` (1-based) goes to leaf
  ``su{s}/leaf-r{r}{a|b}`` of plane ``p``; plane ``p`` leaves go only to plane
  ``p`` spines (HPN's non-stacked dual-ToR with a dual-plane aggregation layer).
* storage (optional): storage NIC ``m`` of each server goes to
  ``su{s}/storage-sw{m+1}``; each storage switch has enough uplinks to the
  ``storage`` cluster to be non-blocking.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from harness.errors import FabricDesignError
from harness.fabric.builder import FabricBuilder
from harness.fabric.limits import MAX_CABLES_PER_PAIR
from harness.fabric.limits import MAX_GBPS
from harness.fabric.limits import MAX_PORTS
from harness.fabric.limits import MAX_SERVERS
from harness.fabric.limits import MAX_SUS
from harness.fabric.limits import check_fabric_size
from harness.fabric.limits import server_size
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.nodes import NodeTemplate
from harness.fabric.nodes import node_template
from harness.inputs.values import number_problem

STORAGE_UPLINK_GBPS = 100.0
IB_LANES = 4  # compute cables are 4x (HDR/NDR: 4 lanes); `degrade: {lanes: 1}` = 4x -> 1x


def _template(node: str | NodeTemplate, overrides: dict[str, Any] | None) -> NodeTemplate:
    tmpl = node_template(node) if isinstance(node, str) else node
    return tmpl.with_overrides(**overrides) if overrides else tmpl


_COUNT_LIMITS: dict[str, tuple[int, str]] = {
    "sus": (MAX_SUS, "MAX_SUS"),
    "segments": (MAX_SUS, "MAX_SUS"),
    "nodes_per_su": (MAX_SERVERS, "MAX_SERVERS"),
    "hosts_per_segment": (MAX_SERVERS, "MAX_SERVERS"),
    "sus_per_pod": (MAX_SUS, "MAX_SUS"),
    "spines": (MAX_PORTS, "MAX_PORTS"),
    "spines_per_pod": (MAX_PORTS, "MAX_PORTS"),
    "spines_per_plane": (MAX_PORTS, "MAX_PORTS"),
    "uplinks_per_leaf": (MAX_PORTS, "MAX_PORTS"),
    "cables_per_pair": (MAX_CABLES_PER_PAIR, "MAX_CABLES_PER_PAIR"),
    "leaf_radix": (MAX_PORTS, "MAX_PORTS"),
    "spine_radix": (MAX_PORTS, "MAX_PORTS"),
    "radix": (MAX_PORTS, "MAX_PORTS"),
    "leaf_down_ports": (MAX_PORTS, "MAX_PORTS"),
}


def _check_params(generator: str, params: dict[str, Any]) -> None:
    """Counts are whole numbers from 1 to their limit, speeds finite and > 0 (None: default).

    Checked before anything is computed from them, so ``sus: 10**30`` is a
    message naming ``MAX_SUS``, not a ``MemoryError``.
    """
    problems: list[str] = []
    for key, value in params.items():
        if value is None:
            continue
        what = f"{generator}: parameter {key!r}"
        if key == "uplink_gbps":
            problem = number_problem(value, what, above=0, maximum=MAX_GBPS, limit="MAX_GBPS")
            if problem:
                problems.append(problem)
            continue
        limit, name = _COUNT_LIMITS[key]
        values = value if isinstance(value, list | tuple) and key in _PER_SU else [value]
        if key in _PER_SU and isinstance(value, list | tuple) and len(value) > MAX_SUS:
            problems.append(f"{what} lists {len(value):,} SUs, more than MAX_SUS = {MAX_SUS:,}")
            continue
        for v in values:
            problem = number_problem(v, what, integer=True, minimum=1, maximum=limit, limit=name)
            if problem:
                problems.append(problem)
                break
    if problems:
        raise FabricDesignError("; ".join(problems))


_PER_SU = ("nodes_per_su", "hosts_per_segment")


def _check_size(
    generator: str, tmpl: NodeTemplate, counts: list[int], switches: int, cables: int
) -> None:
    """Refuse, before building, a fabric past the element, link or server limits."""
    s = tmpl.spec
    parts, links = server_size(
        gpus=s.gpus, cpus=tmpl.cpus, pcie=s.pcie_switches, nvswitches=s.nvswitches,
        rails=s.rails, nic_ports=s.nic_ports, storage=s.storage_nics,
    )  # fmt: skip
    check_fabric_size(
        generator,
        servers=sum(counts),
        parts=parts,
        internal_links=links,
        switches=switches,
        cables=cables,
    )


def _check_down_ports(leaf_down_ports: int | None, counts: list[int], what: str) -> int:
    """The leaf ports kept for servers: at least one per server of the largest SU."""
    most = max(counts)
    if leaf_down_ports is not None and leaf_down_ports < most:
        msg = (
            f"{what}: leaf_down_ports {leaf_down_ports} is fewer than the {most} servers of "
            f"the largest SU; each server's NIC needs its own leaf port (give leaf_down_ports "
            f">= {most}, or leave it out)"
        )
        raise FabricDesignError(msg)
    return leaf_down_ports or most


def _per_su(nodes_per_su: int | Sequence[int], sus: int) -> list[int]:
    if isinstance(nodes_per_su, int):
        counts = [nodes_per_su] * sus
    else:
        counts = [int(n) for n in nodes_per_su]
        if len(counts) != sus:
            msg = f"nodes_per_su lists {len(counts)} SUs but sus is {sus}; give one count per SU"
            raise FabricDesignError(msg)
    if sus < 1 or min(counts) < 1:
        msg = "a fabric needs at least one SU with at least one node"
        raise FabricDesignError(msg)
    return counts


def _width(n: int) -> int:
    return max(2, len(str(n)))


def _check_radix(what: str, needed: int, radix: int, fix: str) -> None:
    if needed > radix:
        msg = f"{what} needs {needed} ports but the switch has {radix}; {fix}"
        raise FabricDesignError(msg)


class _Common:
    """State shared by the generators while they build one fabric."""

    def __init__(self, tmpl: NodeTemplate, sus: int, counts: list[int]) -> None:
        self.b = FabricBuilder()
        self.tmpl = tmpl
        self.sus = sus
        self.counts = counts
        self.sw = _width(sus)
        self.nw = _width(max(counts))
        self.nics: dict[tuple[int, int], list[int]] = {}  # (su, node) -> rail NICs
        self.stor: dict[tuple[int, int], list[int]] = {}

    def su_id(self, s: int) -> str:
        return f"su{s:0{self.sw}d}"

    def servers(self, pod_of: dict[int, int] | None = None) -> None:
        for s in range(1, self.sus + 1):
            for n in range(1, self.counts[s - 1] + 1):
                pod = pod_of[s] if pod_of else 0
                _, nics, stor = self.b.add_server(
                    f"{self.su_id(s)}/node{n:0{self.nw}d}", self.tmpl, su=s, node=n, pod=pod
                )
                self.nics[s, n] = nics
                self.stor[s, n] = stor

    def storage(self) -> None:
        spec = self.tmpl.spec
        if not spec.storage_nics:
            return
        b = self.b
        cluster = b.add("storage", Kind.STORAGE, ports=0)
        for s in range(1, self.sus + 1):
            nodes = self.counts[s - 1]
            n_sw = min(2, spec.storage_nics)
            per_node = math.ceil(spec.storage_nics / n_sw)  # members of a node on one switch
            per_switch = math.ceil(nodes * per_node * spec.storage_gbps / STORAGE_UPLINK_GBPS)
            switches = [
                b.add(
                    f"{self.su_id(s)}/storage-sw{m + 1}",
                    Kind.STORAGE_SWITCH,
                    su=s,
                    ports=nodes * per_node + per_switch,
                )
                for m in range(n_sw)
            ]
            for n in range(1, nodes + 1):
                for m, sn in enumerate(
                    self.stor[s, n]
                ):  # member m: switch m % 2, port block m // 2
                    b.link(sn, switches[m % n_sw], LinkKind.STORAGE, spec.storage_gbps,
                           a_port=1, b_port=n + nodes * (m // n_sw))  # fmt: skip
            for sw in switches:
                for _ in range(per_switch):
                    b.link(sw, cluster, LinkKind.STORAGE, STORAGE_UPLINK_GBPS)


def two_tier(
    *,
    sus: int,
    nodes_per_su: int | Sequence[int],
    node: str | NodeTemplate = "a800",
    node_overrides: dict[str, Any] | None = None,
    spines: int,
    cables_per_pair: int = 1,
    leaf_radix: int = 40,
    spine_radix: int | None = None,
    leaf_down_ports: int | None = None,
    uplink_gbps: float | None = None,
    storage: bool = True,
    name: str = "two-tier",
) -> Fabric:
    """A rail-optimized leaf/spine fabric: one leaf per SU and rail, leaves x spines full mesh.

    Raises :class:`FabricDesignError` when a leaf or spine would need more
    ports than it has, naming the limit (k^2/2 NIC ports for radix k) and the fix.

    Examples
    --------
    >>> f = two_tier(sus=2, nodes_per_su=4, spines=2, leaf_radix=8, storage=False)
    >>> f.summary()["leaves"], f.summary()["gpus"]
    (8, 64)
    """
    _check_params("two-tier", {
        "sus": sus, "nodes_per_su": nodes_per_su, "spines": spines,
        "cables_per_pair": cables_per_pair, "leaf_radix": leaf_radix, "spine_radix": spine_radix,
        "leaf_down_ports": leaf_down_ports, "uplink_gbps": uplink_gbps,
    })  # fmt: skip
    tmpl = _template(node, node_overrides)
    spec = tmpl.spec
    counts = _per_su(nodes_per_su, sus)
    spine_radix = spine_radix or leaf_radix
    down = _check_down_ports(leaf_down_ports, counts, "two-tier")
    rails = spec.rails
    leaves_n = sus * rails
    if leaves_n * cables_per_pair > spine_radix:
        max_sus = spine_radix // cables_per_pair // rails
        limit = (spine_radix * leaf_radix // 2) // rails
        msg = (
            f"two-tier fabric past its limit: {leaves_n} leaves ({sus} SUs x {rails} rails) x "
            f"{cables_per_pair} cable(s) need {leaves_n * cables_per_pair} ports on every spine, "
            f"but spines have {spine_radix}. A non-blocking two-tier fabric of {leaf_radix}-port "
            f"switches with {rails} rails tops out at {limit} nodes (k^2/2 NIC ports / rails); "
            f"this design stops at {max_sus} SUs = {sum(counts[:max_sus])} nodes. "
            "Add a core tier (generator: three-tier), use switches with more ports, "
            "or use fewer SUs."
        )
        raise FabricDesignError(msg)
    _check_radix(
        f"each leaf ({down} down + {spines} spines x {cables_per_pair} up)",
        down + spines * cables_per_pair,
        leaf_radix,
        "use fewer spines or cables per leaf-spine pair, or switches with more ports",
    )
    _check_size("two-tier", tmpl, counts, leaves_n + spines + 2 * sus + 1,
                leaves_n * spines * cables_per_pair + 2 * sum(counts))  # fmt: skip
    c = _Common(tmpl, sus, counts)
    b = c.b
    c.servers()
    up = uplink_gbps or spec.nic_gbps
    spine_ids = [
        b.add(f"spine-{j:0{_width(spines)}d}", Kind.SPINE, ports=spine_radix)
        for j in range(1, spines + 1)
    ]
    for s in range(1, sus + 1):
        for r in range(rails):
            leaf = b.add(f"{c.su_id(s)}/leaf-r{r}", Kind.LEAF, su=s, rail=r, ports=leaf_radix)
            for n in range(1, counts[s - 1] + 1):
                b.link(
                    c.nics[s, n][r],
                    leaf,
                    LinkKind.ACCESS,
                    spec.nic_gbps,
                    a_port=1,
                    b_port=n,
                    lanes=IB_LANES,
                )
            port = down
            for sp in spine_ids:
                for _ in range(cables_per_pair):
                    port += 1
                    b.link(leaf, sp, LinkKind.LEAF_SPINE, up, a_port=port, lanes=IB_LANES)
    if storage:
        c.storage()
    params = {"generator": "two-tier", "sus": sus, "nodes_per_su": nodes_per_su,
              "spines": spines, "cables_per_pair": cables_per_pair, "leaf_radix": leaf_radix,
              "node": spec.model}  # fmt: skip
    return b.build(name, tiers=2, params=params)


def three_tier(
    *,
    sus: int,
    nodes_per_su: int | Sequence[int],
    node: str | NodeTemplate = "h100",
    node_overrides: dict[str, Any] | None = None,
    sus_per_pod: int,
    spines_per_pod: int,
    cables_per_pair: int = 1,
    radix: int = 64,
    leaf_down_ports: int | None = None,
    uplink_gbps: float | None = None,
    storage: bool = True,
    name: str = "three-tier",
) -> Fabric:
    """Pods of SUs (leaf/spine full mesh per pod) joined by a core tier.

    Spine ``j`` of every pod connects to core group ``j``; its uplinks are
    dealt round-robin over the group's cores.  The number of cores is the
    smallest that gives every spine uplink a port.  When a group has more
    cores than a spine has uplinks, two pods share only the cores their
    windows overlap on: the bisection stays full but a pod pair is
    oversubscribed (``clos-100k``: 2.29:1 for adjacent pods; the
    ``pod_pair_gbps`` observation).

    Examples
    --------
    >>> f = three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2,
    ...                spines_per_pod=2, radix=16, storage=False)
    >>> s = f.summary(); s["leaves"], s["spines"], s["cores"], s["tiers"]
    (16, 4, 2, 3)
    """
    _check_params("three-tier", {
        "sus": sus, "nodes_per_su": nodes_per_su, "sus_per_pod": sus_per_pod,
        "spines_per_pod": spines_per_pod, "cables_per_pair": cables_per_pair, "radix": radix,
        "leaf_down_ports": leaf_down_ports, "uplink_gbps": uplink_gbps,
    })  # fmt: skip
    tmpl = _template(node, node_overrides)
    spec = tmpl.spec
    counts = _per_su(nodes_per_su, sus)
    if sus % sus_per_pod:
        msg = f"{sus} SUs do not fill pods of {sus_per_pod}; use a multiple of sus_per_pod"
        raise FabricDesignError(msg)
    rails = spec.rails
    down = _check_down_ports(leaf_down_ports, counts, "three-tier")
    pods = sus // sus_per_pod
    leaves_per_pod = sus_per_pod * rails
    _check_radix(
        f"each leaf ({down} down + {spines_per_pod} spines x {cables_per_pair} up)",
        down + spines_per_pod * cables_per_pair,
        radix,
        "use fewer spines per pod or cables per pair, or switches with more ports",
    )
    spine_down = leaves_per_pod * cables_per_pair
    _check_radix(
        f"each spine ({leaves_per_pod} leaves x {cables_per_pair} down)",
        spine_down,
        radix,
        "use fewer SUs per pod or fewer cables per pair",
    )
    spine_up = radix - spine_down
    if spine_up < 1:
        msg = (
            f"spines have no ports left for core uplinks ({spine_down} of {radix} used "
            "downward); use fewer SUs per pod"
        )
        raise FabricDesignError(msg)
    spine_up = min(spine_up, spine_down)  # non-blocking: as many up as down
    cores_per_group = math.ceil(pods * spine_up / radix)
    _check_size(
        "three-tier", tmpl, counts,
        sus * rails + pods * spines_per_pod + spines_per_pod * cores_per_group + 2 * sus + 1,
        sus * rails * spines_per_pod * cables_per_pair + pods * spines_per_pod * spine_up
        + 2 * sum(counts),
    )  # fmt: skip
    c = _Common(tmpl, sus, counts)
    b = c.b
    pod_of = {s: (s - 1) // sus_per_pod + 1 for s in range(1, sus + 1)}
    c.servers(pod_of)
    up = uplink_gbps or spec.nic_gbps
    pw = _width(pods)
    gw = _width(spines_per_pod)
    cw = _width(cores_per_group)
    cores = {
        (j, k): b.add(f"core-g{j:0{gw}d}-{k:0{cw}d}", Kind.CORE, ports=radix)
        for j in range(1, spines_per_pod + 1)
        for k in range(1, cores_per_group + 1)
    }
    for p in range(1, pods + 1):
        pod_spines = [
            b.add(f"pod{p:0{pw}d}/spine-{j:0{gw}d}", Kind.SPINE, pod=p, ports=radix)
            for j in range(1, spines_per_pod + 1)
        ]
        for s in range(sus_per_pod * (p - 1) + 1, sus_per_pod * p + 1):
            for r in range(rails):
                leaf = b.add(f"{c.su_id(s)}/leaf-r{r}", Kind.LEAF, su=s, rail=r, pod=p, ports=radix)
                for n in range(1, counts[s - 1] + 1):
                    b.link(c.nics[s, n][r], leaf, LinkKind.ACCESS, spec.nic_gbps,
                           a_port=1, b_port=n, lanes=IB_LANES)  # fmt: skip
                port = down
                for sp in pod_spines:
                    for _ in range(cables_per_pair):
                        port += 1
                        b.link(leaf, sp, LinkKind.LEAF_SPINE, up, a_port=port, lanes=IB_LANES)
        for j, sp in enumerate(pod_spines, start=1):
            b._next_port[sp] = spine_down + 1  # uplinks after the down ports
            for k in range(spine_up):
                core = cores[j, ((p - 1) * spine_up + k) % cores_per_group + 1]
                b.link(sp, core, LinkKind.SPINE_CORE, up, lanes=IB_LANES)
    if storage:
        c.storage()
    params = {"generator": "three-tier", "sus": sus, "nodes_per_su": nodes_per_su,
              "sus_per_pod": sus_per_pod, "spines_per_pod": spines_per_pod,
              "radix": radix, "node": spec.model}  # fmt: skip
    return b.build(name, tiers=3, params=params)


def dual_tor(
    *,
    segments: int,
    hosts_per_segment: int | Sequence[int],
    node: str | NodeTemplate = "h800",
    node_overrides: dict[str, Any] | None = None,
    spines_per_plane: int,
    uplinks_per_leaf: int | None = None,
    uplink_gbps: float = 400.0,
    leaf_radix: int = 196,
    spine_radix: int = 128,
    storage: bool = True,
    name: str = "dual-tor",
) -> Fabric:
    """Non-stacked dual-ToR, dual-plane (Alibaba HPN; also DGX B300's twin planes).

    Every NIC has two ports; port 1 goes to the plane-1 ToR of its rail, port 2
    to the plane-2 ToR.  Plane ``p`` ToRs are wired only to plane ``p``
    aggregation switches (kind spine), ``uplinks_per_leaf`` cables spread
    round-robin over them.
    """
    _check_params("dual-tor", {
        "segments": segments, "hosts_per_segment": hosts_per_segment,
        "spines_per_plane": spines_per_plane, "uplinks_per_leaf": uplinks_per_leaf,
        "uplink_gbps": uplink_gbps, "leaf_radix": leaf_radix, "spine_radix": spine_radix,
    })  # fmt: skip
    tmpl = _template(node, node_overrides)
    spec = tmpl.spec
    if spec.nic_ports != 2:
        msg = f"dual-ToR needs 2-port NICs; {spec.model} has {spec.nic_ports} (set nic_ports: 2)"
        raise FabricDesignError(msg)
    counts = _per_su(hosts_per_segment, segments)
    down = max(counts)
    uplinks = uplinks_per_leaf or spines_per_plane
    _check_radix(
        f"each ToR ({down} down + {uplinks} up)",
        down + uplinks,
        leaf_radix,
        "use fewer hosts per segment or uplinks, or a larger leaf_radix",
    )
    per_spine = math.ceil(segments * spec.rails * uplinks / spines_per_plane)
    _check_radix(
        f"each aggregation switch ({per_spine} ToR cables)",
        per_spine,
        spine_radix,
        "use more aggregation switches per plane or fewer segments",
    )
    leaves = segments * spec.rails * 2
    _check_size("dual-tor", tmpl, counts, leaves + 2 * spines_per_plane + 2 * segments + 1,
                leaves * uplinks + 2 * sum(counts))  # fmt: skip
    c = _Common(tmpl, segments, counts)
    b = c.b
    c.servers()
    sw = _width(spines_per_plane)
    planes = {
        p: [
            b.add(f"plane{p}/spine-{j:0{sw}d}", Kind.SPINE, plane=p, ports=spine_radix)
            for j in range(1, spines_per_plane + 1)
        ]
        for p in (1, 2)
    }
    for s in range(1, segments + 1):
        for r in range(spec.rails):
            for p, tag in ((1, "a"), (2, "b")):
                leaf = b.add(
                    f"{c.su_id(s)}/leaf-r{r}{tag}", Kind.LEAF, su=s, rail=r, plane=p,
                    ports=leaf_radix,
                )  # fmt: skip
                for n in range(1, counts[s - 1] + 1):
                    b.link(c.nics[s, n][r], leaf, LinkKind.ACCESS, spec.nic_gbps,
                           a_port=p, b_port=n, lanes=IB_LANES)  # fmt: skip
                port = down
                for k in range(uplinks):
                    port += 1
                    spine = planes[p][k % spines_per_plane]
                    b.link(
                        leaf, spine, LinkKind.LEAF_SPINE, uplink_gbps, a_port=port, lanes=IB_LANES
                    )
    if storage:
        c.storage()
    params = {"generator": "dual-tor", "segments": segments,
              "hosts_per_segment": hosts_per_segment, "spines_per_plane": spines_per_plane,
              "node": spec.model}  # fmt: skip
    return b.build(name, tiers=2, params=params)


GENERATORS = {"two-tier": two_tier, "three-tier": three_tier, "dual-tor": dual_tor}
