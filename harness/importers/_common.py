"""Shared inference for the network importers (core layer: pure, no I/O).

Every network format (ibnetdiscover, containerlab, SimAI) is first read into a
:class:`RawNetwork` -- switches, host NICs and cables as the file states them --
and :func:`build_network` turns that into a :class:`~harness.fabric.Fabric`
with the rules documented in ``docs/importers.md``:

* a switch's role comes from :attr:`InferenceRules.roles`, then from a role the
  file states, then from its name (:attr:`InferenceRules.core_pattern`,
  ``spine_pattern``, ``leaf_pattern``, tried in that order), then from the
  structure: a switch with a host NIC attached is a leaf, a switch attached to a
  leaf is a spine, anything further up is a core;
* NICs are grouped into servers by the host part of their description and get
  their rail from the device index (``mlx5_3`` -> index 3), ranked over all the
  indices seen in the dump; a leaf's rail is the majority rail of its NICs;
* SUs are the connected groups of leaves that share hosts (or come from a name
  pattern when :attr:`InferenceRules.su_pattern` is set).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from networkx.utils import UnionFind

from harness.errors import FabricDesignError
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.builder import FabricBuilder
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.nodes import NodeTemplate
from harness.fabric.nodes import node_template
from harness.importers.hosts import DEFAULT_PLACEHOLDER_HOSTS
from harness.importers.hosts import DEFAULT_UNSET_PATTERN
from harness.importers.hosts import Host
from harness.importers.hosts import Named
from harness.importers.hosts import group_by_wiring
from harness.importers.hosts import split_by_description
from harness.inputs.files import read_text as read_dump_text

Role = Literal["leaf", "spine", "core"]
ROLES: tuple[Role, ...] = ("leaf", "spine", "core")
ROLE_KIND: dict[str, Kind] = {"leaf": Kind.LEAF, "spine": Kind.SPINE, "core": Kind.CORE}
_TIER: dict[str, int] = {"leaf": 1, "spine": 2, "core": 3}

DEFAULT_HCA_PATTERN = r"^(?P<host>.+?)[\s/]+(?:(?:mlx\d+_|nic|ib)(?P<index>\d+)|HCA-(?P<hca>\d+))$"


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``node2`` before ``node10``."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


def clean_id(text: str) -> str:
    """An element id made from free text: whitespace and ``:`` become ``_``."""
    out = re.sub(r"[\s:]+", "_", text.strip())
    return out.replace("--", "-") or "unnamed"


def _compile(name: str, pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as err:
        msg = f"InferenceRules.{name}: bad regular expression {pattern!r}: {err}; fix the pattern"
        raise ScenarioError(msg) from None


@dataclass(frozen=True, slots=True)
class InferenceRules:
    """How an importer turns names and wiring into roles, rails and SUs.

    Every field has a default that fits rail-optimized fabrics named the usual
    way; override what does not fit your naming.  ``roles`` and ``rails`` are
    explicit maps that win over every pattern.

    For example::

        InferenceRules(roles={"ib-sw-07": "spine"}, rails={0: 0, 3: 1, 4: 2, 5: 3})
    """

    hca_pattern: str = DEFAULT_HCA_PATTERN
    """Regex over an HCA's node description; group ``host`` names the server,
    optional group ``index`` the device index (``mlx5_3`` -> 3) or ``hca`` the
    1-based device number (``HCA-4`` -> index 3)."""
    unset_pattern: str | None = DEFAULT_UNSET_PATTERN
    """An HCA description nobody set (the vendor default); such HCAs are grouped by wiring."""
    placeholder_hosts: tuple[str, ...] = DEFAULT_PLACEHOLDER_HOSTS
    """Host names that name no server (``localhost``, ``ubuntu``); grouped by wiring."""
    leaf_pattern: str | None = r"(?i)leaf|\btor|asw"
    spine_pattern: str | None = r"(?i)spine|\bagg|psw"
    core_pattern: str | None = r"(?i)core|super-?spine|dsw"
    host_pattern: str | None = r"(?i)client|host|server|node|gpu|hca"
    """containerlab only: node names that are servers even when their kind is a NOS."""
    roles: Mapping[str, str] = field(default_factory=dict)
    """Switch description or id -> ``leaf``, ``spine`` or ``core``."""
    rails: Mapping[int, int] = field(default_factory=dict)
    """HCA device index -> rail (default: rank of the index among all indices seen)."""
    su_pattern: str | None = None
    """Regex with group ``su`` over host and leaf names; None: SUs from the wiring."""
    node_template: NodeTemplate | None = None
    """Template for every server; None: a generic one sized to what was seen."""
    default_gbps: float = 200.0
    """Capacity of a cable whose rate the file does not state."""

    def __post_init__(self) -> None:
        for name in ("hca_pattern", "leaf_pattern", "spine_pattern", "core_pattern",
                     "host_pattern", "su_pattern", "unset_pattern"):  # fmt: skip
            _compile(name, getattr(self, name))
        bad = sorted(v for v in self.roles.values() if v not in ROLES)
        if bad:
            msg = f"InferenceRules.roles: unknown role(s) {', '.join(bad)}; use leaf, spine or core"
            raise ScenarioError(msg)
        if self.su_pattern is not None and "(?P<su>" not in self.su_pattern:
            msg = "InferenceRules.su_pattern needs a named group (?P<su>...)"
            raise ScenarioError(msg)
        if "(?P<host>" not in self.hca_pattern:
            msg = "InferenceRules.hca_pattern needs a named group (?P<host>...)"
            raise ScenarioError(msg)
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))
        object.__setattr__(self, "rails", MappingProxyType(dict(self.rails)))

    def role_by_name(self, name: str) -> Role | None:
        for role, pattern in (("core", self.core_pattern), ("spine", self.spine_pattern),
                              ("leaf", self.leaf_pattern)):  # fmt: skip
            rx = _compile(role, pattern)
            if rx is not None and rx.search(name):
                return role  # type: ignore[return-value]
        return None


@dataclass(frozen=True, slots=True)
class RawSwitch:
    """A switch as a file states it."""

    key: str  # unique within the file
    desc: str  # its name / node description
    ports: int  # radix (0: unknown)
    line: int = 0
    role: Role | None = None  # stated by the file (labels)
    eid: str | None = None  # element id stated by the file
    su: int | None = None
    rail: int | None = None


@dataclass(frozen=True, slots=True)
class RawNic:
    """A host NIC (an HCA) as a file states it."""

    key: str
    desc: str
    ports: int
    line: int = 0
    host: str | None = None  # server name, when the file states it
    index: int | None = None  # device index, when the file states it
    sysimg: str | None = None  # system image GUID, when the file states it


@dataclass(frozen=True, slots=True)
class RawCable:
    """A cable between two ports, each end a switch or NIC key."""

    a: str
    a_port: int
    b: str
    b_port: int
    gbps: float | None = None
    lanes: int = 1
    line: int = 0


@dataclass(frozen=True, slots=True)
class RawNetwork:
    """What a network file says, before any inference."""

    path: str
    fmt: str
    switches: tuple[RawSwitch, ...]
    nics: tuple[RawNic, ...]
    cables: tuple[RawCable, ...]
    notes: tuple[str, ...] = ()


def generic_node_template(rails: int, nic_ports: int, nic_gbps: float) -> NodeTemplate:
    """The template given to a server the dump says nothing about but its NICs.

    It is the A800 body (NVSwitches, CPUs, PCIe Gen4) with ``rails`` rail NICs:
    8 GPUs when ``rails`` divides 8, else one GPU per NIC; no storage NICs.
    """
    rails = max(rails, 1)
    if 8 % rails == 0:
        gpus, pcie = 8, min(rails, 4)
    else:
        gpus, pcie = rails, rails
    return node_template("a800").with_overrides(
        model=f"generic-{rails}nic",
        gpus=gpus,
        pcie_switches=pcie,
        rails=rails,
        nic_ports=max(nic_ports, 1),
        nic_gbps=nic_gbps,
        storage_nics=0,
    )


def _trailing_int(text: str) -> int | None:
    m = re.search(r"(\d+)\D*$", text)
    return int(m.group(1)) if m else None


def _problem(net: RawNetwork, line: int, message: str) -> ScenarioError:
    return ScenarioError(Problem(message, path=net.path, line=line))


def _named_hosts(net: RawNetwork, rules: InferenceRules, named: list[Named]) -> dict[str, Host]:
    """Group the NICs whose description names their server; rails = rank of the index."""
    indices = sorted({n.index for n in named if n.index is not None})
    rank = {idx: rules.rails.get(idx, r) for r, idx in enumerate(indices)}
    by_host: dict[str, list[Named]] = {}
    for n in named:
        by_host.setdefault(clean_id(n.host), []).append(n)
    hosts: dict[str, Host] = {}
    desc = {n.key: n for n in net.nics}
    for hid, members in by_host.items():
        taken: dict[int, Named] = {}
        out: list[tuple[str, int]] = []
        unindexed = sorted((n for n in members if n.index is None),
                           key=lambda n: natural_key(desc[n.key].desc))  # fmt: skip
        for n in members:
            if n.index is None:
                continue
            rail = rank[n.index]
            if rail in taken:
                msg = (
                    f"HCA {desc[n.key].desc!r} and {desc[taken[rail].key].desc!r} both map to "
                    f"host {hid!r} rail {rail}; give the HCAs distinct node descriptions or set "
                    "InferenceRules.rails / hca_pattern"
                )
                raise _problem(net, n.line, msg)
            taken[rail] = n
            out.append((n.key, rail))
        free = (r for r in range(len(members) + len(taken) + 1) if r not in taken)
        for n in unindexed:
            rail = next(free)
            taken[rail] = n
            out.append((n.key, rail))
        hosts[hid] = Host(hid, tuple(sorted(out, key=lambda kr: kr[1])))
    return hosts


def _roles(
    net: RawNetwork,
    rules: InferenceRules,
    nic_keys: set[str],
    adj: dict[str, set[str]],
) -> tuple[dict[str, Role], list[str]]:
    notes: list[str] = []
    role: dict[str, Role] = {}
    for sw in net.switches:
        explicit = rules.roles.get(sw.key) or rules.roles.get(sw.desc)
        if explicit is None and sw.eid is not None:
            explicit = rules.roles.get(sw.eid)
        if explicit is not None:
            role[sw.key] = explicit  # type: ignore[assignment]
        elif sw.role is not None:
            role[sw.key] = sw.role
        else:
            by_name = rules.role_by_name(sw.desc)
            if by_name is not None:
                role[sw.key] = by_name
    for sw in net.switches:
        if sw.key not in role and adj[sw.key] & nic_keys:
            role[sw.key] = "leaf"
    leaves = {k for k, r in role.items() if r == "leaf"}
    for sw in net.switches:
        if sw.key not in role and adj[sw.key] & leaves:
            role[sw.key] = "spine"
    for sw in net.switches:
        if sw.key not in role:
            role[sw.key] = "core"
            spines = {k for k, r in role.items() if r == "spine"}
            if not adj[sw.key] & spines:
                notes.append(
                    f"switch {sw.desc!r} touches no host, leaf or spine; taken as a core "
                    "(name it in InferenceRules.roles if that is wrong)"
                )
    for sw in net.switches:
        if role[sw.key] != "leaf" and adj[sw.key] & nic_keys:
            notes.append(f"{role[sw.key]} {sw.desc!r} has host NICs attached")
    return role, notes


def _width(n: int) -> int:
    return max(2, len(str(n)))


def _leaf_sus(
    leaves: list[RawSwitch],
    host_leaves: Mapping[str, list[str]],
    su_rx: re.Pattern[str] | None,
    sw_by_key: Mapping[str, RawSwitch],
) -> dict[str, int]:
    """Leaf -> SU: from names with ``su_pattern``, else groups of leaves that share hosts.

    Two leaves are one group when they share two hosts (one when either serves a
    single host), so one stray cable to another group's leaf does not merge groups.
    """
    su_of_leaf: dict[str, int] = {}
    if su_rx is not None:
        for sw in leaves:
            m = su_rx.search(sw.desc)
            if m:
                su_of_leaf[sw.key] = int(m.group("su"))
        return su_of_leaf
    served_by: dict[str, set[str]] = {sw.key: set() for sw in leaves}
    for hid, served in host_leaves.items():
        for k in served:
            served_by.setdefault(k, set()).add(hid)
    shared: Counter[tuple[str, str]] = Counter()
    for served in host_leaves.values():
        uniq = sorted(set(served))
        for i, a in enumerate(uniq):
            for b in uniq[i + 1 :]:
                shared[a, b] += 1
    uf = UnionFind()
    for sw in leaves:
        uf.union(sw.key)
    for (a, b), n in shared.items():
        if n >= min(2, len(served_by[a]), len(served_by[b])):
            uf.union(a, b)
    groups: dict[str, list[str]] = {}
    for sw in leaves:
        groups.setdefault(uf[sw.key], []).append(sw.key)

    def first_host(members: list[str]) -> tuple[int, tuple[tuple[int, int | str], ...]]:
        hs = [h for m in members for h in served_by[m]]
        if hs:
            return 0, min(natural_key(h) for h in hs)
        return 1, min(natural_key(sw_by_key[m].desc) for m in members)

    for su, members in enumerate(sorted(groups.values(), key=first_host), start=1):
        for k in members:
            su_of_leaf[k] = su
    return su_of_leaf


def _leaf_rails(
    leaves: list[RawSwitch], adj: Mapping[str, set[str]], nic_host: Mapping[str, tuple[str, int]]
) -> dict[str, int]:
    """Leaf -> rail: stated, else the majority rail of the NICs attached (-1: none)."""
    rail_of_leaf: dict[str, int] = {}
    for sw in leaves:
        if sw.rail is not None:
            rail_of_leaf[sw.key] = sw.rail
            continue
        votes = Counter(nic_host[n][1] for n in adj[sw.key] if n in nic_host)
        rail_of_leaf[sw.key] = min(votes, key=lambda r: (-votes[r], r)) if votes else -1
    return rail_of_leaf


def build_network(
    net: RawNetwork,
    rules: InferenceRules,
    *,
    name: str,
    host_ids: Literal["keep", "su-node"] = "keep",
    templates: Mapping[str, NodeTemplate] | None = None,
) -> tuple[Fabric, dict[str, str]]:
    """Infer roles, rails and SUs and build the fabric.

    Returns the fabric and a map from raw keys (switch and NIC keys, host
    names) to element ids.  ``host_ids="su-node"`` names servers
    ``suSS/nodeNN`` after inference instead of after the file.
    """
    notes = list(net.notes)
    named, unnamed = split_by_description(
        net.nics,
        re.compile(rules.hca_pattern),
        _compile("unset_pattern", rules.unset_pattern),
        rules.placeholder_hosts,
    )
    hosts = _named_hosts(net, rules, named)
    nic_host: dict[str, tuple[str, int]] = {}
    for h in hosts.values():
        for key, rail in h.nics:
            nic_host[key] = (h.hid, rail)
    sw_by_key = {s.key: s for s in net.switches}
    nic_by_key = {n.key: n for n in net.nics}
    adj: dict[str, set[str]] = {k: set() for k in (*sw_by_key, *nic_by_key)}
    for c in net.cables:
        adj[c.a].add(c.b)
        adj[c.b].add(c.a)
    role, role_notes = _roles(net, rules, set(nic_by_key), adj)
    notes += role_notes

    # SUs: leaves joined by the named hosts they serve (or by name).
    su_rx = _compile("su_pattern", rules.su_pattern)
    leaves = [s for s in net.switches if role[s.key] == "leaf"]

    def leaves_of_hosts() -> dict[str, list[str]]:
        out: dict[str, list[str]] = {h: [] for h in hosts}
        for c in net.cables:
            for end, other in ((c.a, c.b), (c.b, c.a)):
                if end in nic_host and other in sw_by_key and role[other] == "leaf":
                    out[nic_host[end][0]].append(other)
        return out

    host_leaves = leaves_of_hosts()
    su_of_host: dict[str, int] = {}
    su_of_leaf = _leaf_sus(leaves, host_leaves, su_rx, sw_by_key)
    if su_rx is not None:
        for hid in hosts:
            m = su_rx.search(hid)
            su_of_host[hid] = int(m.group("su")) if m else 0
    rail_of_leaf = _leaf_rails(leaves, adj, nic_host)

    # HCAs whose description does not name their server: grouped by the wiring.
    if unnamed:
        attach: dict[str, tuple[str, int]] = {}
        for c in sorted(net.cables, key=lambda c: (c.a_port, c.b_port)):
            for end, other, oport in ((c.a, c.b, c.b_port), (c.b, c.a, c.a_port)):
                if end in nic_by_key and other in sw_by_key and role[other] == "leaf":
                    attach.setdefault(end, (other, oport))
        grouped = {k for served in host_leaves.values() for k in served}
        named_su = {k: su for k, su in su_of_leaf.items() if k in grouped}
        named_at: dict[tuple[int, int], list[tuple[str, set[int]]]] = {}
        for hid, h in hosts.items():
            sites: dict[tuple[int, int], set[int]] = {}
            for key, rail in h.nics:
                if key in attach and attach[key][0] in named_su:
                    leaf, port = attach[key]
                    sites.setdefault((named_su[leaf], port), set()).add(rail)
            have = {rail for _, rail in h.nics}
            for where in sites:
                named_at.setdefault(where, []).append((hid, have))
        new, joined, wired_notes = group_by_wiring(
            unnamed, attach, su_of_leaf=named_su, rail_of_leaf=rail_of_leaf, named_at=named_at,
            leaf_name={s.key: s.desc for s in leaves},
        )  # fmt: skip
        notes += wired_notes
        for hid, more in joined.items():
            hosts[hid] = Host(hid, tuple(sorted((*hosts[hid].nics, *more), key=lambda kr: kr[1])))
        for hid, wired in new.items():
            hosts[clean_id(hid)] = Host(clean_id(hid), tuple(wired))
        for h in hosts.values():
            for key, rail in h.nics:
                nic_host[key] = (h.hid, rail)
        host_leaves = leaves_of_hosts()
        rail_of_leaf = _leaf_rails(leaves, adj, nic_host)

    for sw in leaves:
        if sw.su is not None:
            su_of_leaf[sw.key] = sw.su
    for hid, served in host_leaves.items():
        if hid not in su_of_host or su_of_host[hid] == 0:
            votes = Counter(su_of_leaf[k] for k in served if k in su_of_leaf)
            su_of_host[hid] = min(votes, key=lambda s: (-votes[s], s)) if votes else 0
    for sw in leaves:
        if sw.key not in su_of_leaf:
            votes = Counter(su_of_host[nic_host[n][0]] for n in adj[sw.key] if n in nic_host)
            su_of_leaf[sw.key] = min(votes, key=lambda s: (-votes[s], s)) if votes else 0

    # Node numbers within each SU: the host name's trailing number when unique.
    node_of_host: dict[str, int] = {}
    per_su: dict[int, list[str]] = {}
    for hid in hosts:
        per_su.setdefault(su_of_host[hid], []).append(hid)
    for members in per_su.values():
        members.sort(key=natural_key)
        nums = [_trailing_int(h) or 0 for h in members]
        use_names = min(nums) >= 1 and len(set(nums)) == len(nums)
        for i, hid in enumerate(members, start=1):
            node_of_host[hid] = nums[i - 1] if use_names else i

    # Element ids.
    hw = _width(max(su_of_host.values(), default=1))
    nw = _width(max(node_of_host.values(), default=1))
    host_eid: dict[str, str] = {}
    for hid in hosts:
        if host_ids == "su-node":
            host_eid[hid] = f"su{su_of_host[hid]:0{hw}d}/node{node_of_host[hid]:0{nw}d}"
        else:
            host_eid[hid] = hid
    descs = Counter(clean_id(s.desc) for s in net.switches)
    taken = set(host_eid.values())
    sw_eid: dict[str, str] = {}
    for sw in net.switches:
        eid = sw.eid or clean_id(sw.desc)
        if sw.eid is None and (descs[eid] > 1 or eid in taken):
            eid = clean_id(sw.key)
        if eid in taken:
            msg = (
                f"switch {sw.desc!r} would get the id {eid!r}, which is already taken; "
                "give it a unique name"
            )
            raise _problem(net, sw.line, msg)
        taken.add(eid)
        sw_eid[sw.key] = eid

    # Servers.
    b = FabricBuilder()
    idmap: dict[str, str] = {}
    nic_index: dict[str, int] = {}
    ports_of_nic = {n.key: n.ports for n in net.nics}
    max_port: Counter[str] = Counter()
    for c in net.cables:
        max_port[c.a] = max(max_port[c.a], c.a_port)
        max_port[c.b] = max(max_port[c.b], c.b_port)
    access_gbps: dict[str, float] = {}
    for c in net.cables:
        for nic in (c.a, c.b):
            if nic in nic_host and c.gbps is not None:
                hid = nic_host[nic][0]
                access_gbps[hid] = max(access_gbps.get(hid, 0.0), c.gbps)
    for hid in sorted(hosts, key=lambda h: (su_of_host[h], node_of_host[h], natural_key(h))):
        h = hosts[hid]
        rails = max(r for _, r in h.nics) + 1
        tmpl = (templates or {}).get(hid) or rules.node_template
        if tmpl is None:
            used_ports = max(max(ports_of_nic[k], max_port[k]) for k, _ in h.nics)
            tmpl = generic_node_template(
                rails, used_ports, access_gbps.get(hid, rules.default_gbps)
            )
        elif tmpl.spec.rails < rails:
            msg = (
                f"host {hid!r} has a NIC on rail {rails - 1} but the node template "
                f"{tmpl.spec.model} has {tmpl.spec.rails} rails; use a template with more "
                "rails or fix InferenceRules.rails"
            )
            raise _problem(net, nic_by_key[h.nics[-1][0]].line, msg)
        eid = host_eid[hid]
        try:
            _, nics, _ = b.add_server(eid, tmpl, su=su_of_host[hid], node=node_of_host[hid])
        except FabricDesignError as err:  # an id used twice, a number past the limits
            raise _problem(net, nic_by_key[h.nics[0][0]].line if h.nics else 0, f"{err}") from None
        idmap[hid] = eid
        for key, rail in h.nics:
            nic_index[key] = nics[rail]
            idmap[key] = b.ids[nics[rail]]

    # Switches, lower tiers first.
    sw_index: dict[str, int] = {}
    order = sorted(
        net.switches,
        key=lambda s: (_TIER[role[s.key]], su_of_leaf.get(s.key, 0),
                       rail_of_leaf.get(s.key, -1), natural_key(sw_eid[s.key])),
    )  # fmt: skip
    for sw in order:
        r = role[sw.key]
        radix = max(sw.ports, max_port[sw.key])
        try:
            sw_index[sw.key] = b.add(
                sw_eid[sw.key],
                ROLE_KIND[r],
                su=su_of_leaf.get(sw.key, 0) if r == "leaf" else 0,
                rail=rail_of_leaf.get(sw.key, -1) if r == "leaf" else -1,
                ports=radix,
            )
        except FabricDesignError as err:  # a radix or an id past the limits
            raise _problem(net, sw.line, f"{err}") from None
        idmap[sw.key] = sw_eid[sw.key]

    # Cables: access first, then up the tiers.
    def tier_of(key: str) -> int:
        return 0 if key in nic_host else _TIER[role[key]]

    def index_of(key: str) -> int:
        return nic_index[key] if key in nic_index else sw_index.get(key, -1)

    cables = sorted(
        net.cables,
        key=lambda c: (min(tier_of(c.a), tier_of(c.b)), min(index_of(c.a), index_of(c.b)),
                       max(index_of(c.a), index_of(c.b)), c.line),
    )  # fmt: skip

    same_tier = 0
    for c in cables:
        a, ap, bb, bp = c.a, c.a_port, c.b, c.b_port
        if tier_of(a) > tier_of(bb):
            a, ap, bb, bp = bb, bp, a, ap
        gbps = c.gbps if c.gbps is not None else rules.default_gbps
        ta, tb = tier_of(a), tier_of(bb)
        if ta == 0 and tb == 0:
            notes.append(f"back-to-back HCA cable {a}[{ap}]--{bb}[{bp}] is not modelled")
            continue
        if ta == 0:
            kind = LinkKind.ACCESS
            ia = nic_index[a]
        else:
            kind = LinkKind.LEAF_SPINE if ta == 1 else LinkKind.SPINE_CORE
            ia = sw_index[a]
            if ta == tb:
                same_tier += 1
        try:
            b.link(ia, sw_index[bb], kind, gbps, lanes=c.lanes, a_port=ap, b_port=bp)
        except FabricDesignError as err:
            raise _problem(net, c.line, f"{err}") from None
    if same_tier:
        notes.append(
            f"{same_tier} cable(s) join two switches of the same tier; they are recorded as "
            "leaf-spine (between leaves) or spine-core (between spines or cores)"
        )
    unknown = sum(1 for c in net.cables if c.gbps is None)
    if unknown:
        notes.append(
            f"{unknown} cable(s) state no rate; given {rules.default_gbps:g} Gb/s "
            "(InferenceRules.default_gbps)"
        )
    tiers = 3 if any(r == "core" for r in role.values()) else 2
    fabric = b.build(name, tiers=tiers, params={"importer": net.fmt, "source": net.path})
    meta = (("format", net.fmt), ("source", net.path), *(("note", n) for n in notes))
    return dataclasses.replace(fabric, meta=meta), idmap


def notes_of(fabric: Fabric) -> tuple[str, ...]:
    """The notes an importer left on a fabric (what it guessed or skipped)."""
    return tuple(v for k, v in fabric.meta if k == "note")


def read_text(path: str | Path, what: str) -> str:
    """Read a dump as text through the input layer (:func:`harness.inputs.files.read_text`).

    Only a regular file of at most :data:`~harness.inputs.files.MAX_DUMP_BYTES`
    is read; a FIFO, a directory or a device is refused as such, never blocks;
    NUL bytes and invalid UTF-8 are refused with their line and column.
    """
    return read_dump_text(path, f"{what} dump" if what and "dump" not in what else what)
