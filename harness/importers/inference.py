"""Inference from parsed records: servers and their rails, switch roles, SUs, leaf rails.

Each step reads a :class:`~harness.importers.records.RawNetwork` with the
:class:`~harness.importers.rules.InferenceRules` (``docs/importers.md``):

* :func:`named_hosts`: NICs grouped into servers by the host part of their
  description, their rail the rank of the device index (``mlx5_3`` -> 3) over
  all the indices seen in the dump;
* :func:`infer_roles`: a switch's role from the explicit map, then from a role
  the file states, then from its name (core, spine, leaf patterns in that
  order), then from the structure: a switch with a host NIC attached is a leaf,
  a switch attached to a leaf is a spine, anything further up is a core;
* :func:`leaf_sus`: SUs are the connected groups of leaves that share hosts
  (or come from a name pattern when ``su_pattern`` is set);
* :func:`leaf_rails`: a leaf's rail is the majority rail of its NICs.

:func:`harness.importers.build.build_network` runs them and builds the fabric.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from harness.fabric.union_find import UnionFind
from harness.importers.hosts import Host
from harness.importers.hosts import Named
from harness.importers.names import clean_id
from harness.importers.names import is_name
from harness.importers.names import natural_key
from harness.importers.records import RawNetwork
from harness.importers.records import RawSwitch
from harness.importers.records import problem_at
from harness.importers.rules import InferenceRules
from harness.importers.rules import Role


def named_hosts(net: RawNetwork, rules: InferenceRules, named: list[Named]) -> dict[str, Host]:
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
                raise problem_at(net, n.line, msg)
            taken[rail] = n
            out.append((n.key, rail))
        free = (r for r in range(len(members) + len(taken) + 1) if r not in taken)
        for n in unindexed:
            rail = next(free)
            taken[rail] = n
            out.append((n.key, rail))
        hosts[hid] = Host(hid, tuple(sorted(out, key=lambda kr: kr[1])))
    return hosts


def infer_roles(
    net: RawNetwork,
    rules: InferenceRules,
    nic_keys: set[str],
    adj: dict[str, set[str]],
) -> tuple[dict[str, Role], list[str]]:
    """Switch key -> role, and notes on the guesses that may be wrong."""
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
        elif is_name(sw.desc):  # a vendor default or a GUID says nothing of the role
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


def leaf_sus(
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
    uf: UnionFind[str] = UnionFind()
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


def leaf_rails(
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
