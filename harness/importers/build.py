"""Building a network from parsed records: inferred servers, switches and cables as a Fabric.

:func:`build_network` runs the inference steps (:mod:`harness.importers.inference`)
over a :class:`~harness.importers.records.RawNetwork`, groups the HCAs whose
description names no server by the wiring (:mod:`harness.importers.hosts`),
numbers the servers within their SU, picks element ids and adds servers,
switches (lower tiers first) and cables (access first) to a
:class:`~harness.fabric.builder.FabricBuilder`.  What it guessed or skipped is
left on the fabric as notes (:func:`notes_of`).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Mapping
from typing import Literal

from harness.errors import FabricDesignError
from harness.fabric.builder import FabricBuilder
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.nodes import NodeTemplate
from harness.fabric.nodes import node_template
from harness.importers.hosts import Host
from harness.importers.hosts import group_by_wiring
from harness.importers.hosts import split_by_description
from harness.importers.inference import infer_roles
from harness.importers.inference import leaf_rails
from harness.importers.inference import leaf_sus
from harness.importers.inference import named_hosts
from harness.importers.names import clean_id
from harness.importers.names import is_name
from harness.importers.names import natural_key
from harness.importers.records import RawNetwork
from harness.importers.records import problem_at
from harness.importers.rules import InferenceRules
from harness.importers.rules import compile_pattern

ROLE_KIND: dict[str, Kind] = {"leaf": Kind.LEAF, "spine": Kind.SPINE, "core": Kind.CORE}
_TIER: dict[str, int] = {"leaf": 1, "spine": 2, "core": 3}


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


MAX_NODE_NUMBER = 99_999
"""The highest host-name number taken as a node number (larger ones are not a numbering)."""
_HEX_RUN = re.compile(r"(?i)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}")


def _trailing_int(text: str) -> int | None:
    m = re.search(r"(\d+)\D*$", text)
    return int(m.group(1)) if m else None


def _width(n: int) -> int:
    return max(2, len(str(n)))


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
        compile_pattern("unset_pattern", rules.unset_pattern),
        rules.placeholder_hosts,
    )
    hosts = named_hosts(net, rules, named)
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
    role, role_notes = infer_roles(net, rules, set(nic_by_key), adj)
    notes += role_notes

    # SUs: leaves joined by the named hosts they serve (or by name).
    su_rx = compile_pattern("su_pattern", rules.su_pattern)
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
    su_of_leaf = leaf_sus(leaves, host_leaves, su_rx, sw_by_key)
    if su_rx is not None:
        for hid in hosts:
            m = su_rx.search(hid)
            su_of_host[hid] = int(m.group("su")) if m else 0
    rail_of_leaf = leaf_rails(leaves, adj, nic_host)

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
        rail_of_leaf = leaf_rails(leaves, adj, nic_host)

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
        # a number, not the digits of a GUID (``unnamed-H-e09d730300850000``)
        use_names = (
            min(nums) >= 1 and len(set(nums)) == len(nums) and max(nums) <= MAX_NODE_NUMBER
            and not any(_HEX_RUN.search(h) for h in members)
        )  # fmt: skip
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
    nameless = [sw for sw in net.switches if sw.eid is None and not is_name(sw.desc)]
    if nameless:
        notes.append(
            f"{len(nameless)} switch(es) carry no name (description {nameless[0].desc!r}"
            + (" and the like" if len({sw.desc for sw in nameless}) > 1 else "")
            + "): known by their node ids, roles from the wiring"
        )
    for sw in net.switches:
        eid = sw.eid or clean_id(sw.desc)
        if sw.eid is None and (descs[eid] > 1 or eid in taken or not is_name(sw.desc)):
            eid = clean_id(sw.key)
        if eid in taken:
            msg = (
                f"switch {sw.desc!r} would get the id {eid!r}, which is already taken; "
                "give it a unique name"
            )
            raise problem_at(net, sw.line, msg)
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
            raise problem_at(net, nic_by_key[h.nics[-1][0]].line, msg)
        eid = host_eid[hid]
        try:
            _, nics, _ = b.add_server(eid, tmpl, su=su_of_host[hid], node=node_of_host[hid])
        except FabricDesignError as err:  # an id used twice, a number past the limits
            raise problem_at(
                net, nic_by_key[h.nics[0][0]].line if h.nics else 0, f"{err}"
            ) from None
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
            raise problem_at(net, sw.line, f"{err}") from None
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
            raise problem_at(net, c.line, f"{err}") from None
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
