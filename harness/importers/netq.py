"""NVIDIA NetQ topology graph JSON: import (importers stage).

The NetQ API's topology graph (``POST /api/netq/telemetry/v1/object/
topologygraph/fetch-topology``, what the NetQ UI's topology view draws) answers
a JSON list with one object::

    [{"nodes": [{"id": "tier-1", "node_type": "tier", "tier": 1,
                 "compounded_nodes": [{"id": "node0", "name": "leaf01",
                                       "tier": 1, "device_type": "switch"}, ...]},
                {"id": "tier-unclassified", "tier": -1,
                 "compounded_nodes": [{"id": "node2", "name": "dgx-04",
                                       "tier": -1, "device_type": "discovered_via_lldp"}]}],
      "links": [{"id": "node0-*-node2", "src": "node0", "target": "node2", "size": 4,
                 "compounded_links": [{"id": "node0:swp17s3-*-node2:ens4f0np0",
                                       "interfaces": [{"node": "node0", "interface": "swp17s3"},
                                                      {"node": "node2",
                                                       "interface": "ens4f0np0"}]}, ...]}]}]

Nodes come grouped by tier: tier 1 leaves, 2 spines, 3 and up cores (super-spines);
tier -1 the hosts NetQ learned over LLDP.  Each link joins two nodes and
compounds the cables between them (``size`` of them), each with its two
interfaces.  :func:`parse_netq` reads that into the shared
:class:`~harness.importers.records.RawNetwork`:

* a host interface is a one-port NIC named ``"<host> <interface>"``; its device
  index is the interface's trailing number, or -- when two interfaces of a host
  end in the same number (``enp27s0np0``, ``enp40s0np0``) -- its rank in the
  natural order of the host's interface names;
* a switch port number is the trailing number of the interface (``swp17`` ->
  17); a switch with breakout interfaces (``swp17s2``) numbers all its
  interfaces 1.. in natural order instead (noted);
* the graph states no rates: every cable gets ``InferenceRules.default_gbps``
  (noted).

The schema is the one NVIDIA's Topograph reads (``pkg/providers/netq``); NetQ
adds layout fields that are ignored here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.importers.build import build_network
from harness.importers.names import natural_key
from harness.importers.records import RawCable
from harness.importers.records import RawNetwork
from harness.importers.records import RawNic
from harness.importers.records import RawSwitch
from harness.importers.rules import InferenceRules
from harness.importers.rules import Role
from harness.importers.text import read_text

HOST_DEVICE_TYPES = frozenset({"discovered_via_lldp", "host", "server"})
"""NetQ ``device_type`` values of hosts (besides any non-switch node below tier 1)."""
_TRAILING = re.compile(r"(\d+)$")
_BREAKOUT = re.compile(r"\d+s\d+$")


def looks_like_netq(text: str) -> bool:
    """Whether ``text`` looks like a NetQ topology graph (JSON with compounded nodes/links)."""
    head = text.lstrip()[:1]
    return head in ("[", "{") and '"compounded_nodes"' in text and '"links"' in text


def _line_finder(text: str) -> Any:
    starts = [0]
    for m in re.finditer(r"\n", text):
        starts.append(m.end())

    def line_of(needle: str) -> int:
        at = text.find(needle)
        if at < 0:
            return 1
        lo, hi = 0, len(starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if starts[mid] <= at:
                lo = mid
            else:
                hi = mid
        return lo + 1

    return line_of


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            msg = f"duplicate key {k!r}"
            raise ValueError(msg)
        out[k] = v
    return out


def _role(tier: int) -> Role | None:
    if tier == 1:
        return "leaf"
    if tier == 2:
        return "spine"
    if tier >= 3:
        return "core"
    return None


def parse_netq(text: str, path: str = "<string>") -> RawNetwork:
    """Read a NetQ topology graph into a :class:`RawNetwork` (see the module docstring).

    Raises :class:`ScenarioError` naming ``path:line`` for invalid JSON, a shape
    that is not a topology graph, a link to an unknown node, or a cable whose
    interfaces do not name both ends of its link.
    """
    line_of = _line_finder(text)
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        msg = f"not valid JSON: {err.msg}; is this a NetQ topology graph?"
        raise ScenarioError(Problem(msg, path=path, line=err.lineno, column=err.colno)) from None
    except ValueError as err:
        raise ScenarioError(Problem(f"{err}; each key once", path=path, line=1)) from None
    except RecursionError:
        msg = "JSON nested too deep to be a NetQ topology graph (which is 5 levels deep)"
        raise ScenarioError(Problem(msg, path=path, line=1)) from None
    if isinstance(data, list):
        if len(data) != 1:
            msg = (
                f"a NetQ topology graph is a list of one object, this one has {len(data)}; "
                "export one premises at a time"
            )
            raise ScenarioError(Problem(msg, path=path, line=1))
        data = data[0]
    if not isinstance(data, Mapping) or not isinstance(data.get("nodes"), list) \
            or not isinstance(data.get("links"), list):  # fmt: skip
        msg = "expected an object with 'nodes' and 'links' lists (the NetQ topology graph)"
        raise ScenarioError(Problem(msg, path=path, line=1))
    problems: list[Problem] = []
    nodes: dict[str, tuple[str, int, int]] = {}  # id -> name, tier, line
    hosts: set[str] = set()
    for group in data["nodes"]:
        members = group.get("compounded_nodes") if isinstance(group, Mapping) else None
        if not isinstance(members, list):
            members = [group]  # a flat node list
        for n in members:
            nid = n.get("id") if isinstance(n, Mapping) else None
            if not isinstance(nid, str) or not nid:
                problems.append(Problem("a node without an 'id'", path=path,
                                        line=line_of(json.dumps(n)[:20])))  # fmt: skip
                continue
            line = line_of(f'"id": "{nid}"') if f'"id": "{nid}"' in text else line_of(f'"{nid}"')
            tier = n.get("tier", -1)
            if not isinstance(tier, int) or isinstance(tier, bool):
                problems.append(Problem(f"node {nid!r}: 'tier' must be an integer, not {tier!r}",
                                        path=path, line=line))  # fmt: skip
                continue
            if nid in nodes:
                problems.append(Problem(f"node id {nid!r} appears twice (first at line "
                                        f"{nodes[nid][2]})", path=path, line=line))  # fmt: skip
                continue
            name = n.get("name") if isinstance(n.get("name"), str) and n.get("name") else nid
            nodes[nid] = (str(name), tier, line)
            kind = n.get("device_type")
            if kind in HOST_DEVICE_TYPES or (kind != "switch" and tier < 1):
                hosts.add(nid)
    cables: list[tuple[str, str, str, str, int]] = []  # node, iface, node, iface, line
    for link in data["links"]:
        if not isinstance(link, Mapping):
            problems.append(Problem("a link that is not an object", path=path, line=1))
            continue
        lid = str(link.get("id", ""))
        line = line_of(f'"id": "{lid}"') if lid else 1
        members = link.get("compounded_links")
        if not isinstance(members, list) or not members:
            members = [link]
        for c in members:
            ifaces = c.get("interfaces") if isinstance(c, Mapping) else None
            cline = line_of(f'"id": "{c.get("id")}"') if isinstance(c, Mapping) else line
            ends = [(i.get("node"), i.get("interface")) for i in ifaces or []
                    if isinstance(i, Mapping)]  # fmt: skip
            if len(ends) != 2 or not all(isinstance(n, str) and isinstance(i, str) and i
                                         for n, i in ends):  # fmt: skip
                problems.append(Problem(
                    f"link {c.get('id', lid) if isinstance(c, Mapping) else lid!r}: a cable needs "
                    "two interfaces {'node': ..., 'interface': ...}", path=path, line=cline,
                ))  # fmt: skip
                continue
            (na, ia), (nb, ib) = ends
            unknown = [n for n in (na, nb) if n not in nodes]
            if unknown:
                problems.append(Problem(
                    f"link {lid!r} names unknown node {unknown[0]!r}; add it to 'nodes' or "
                    "drop the link", path=path, line=cline,
                ))  # fmt: skip
                continue
            cables.append((str(na), str(ia), str(nb), str(ib), cline))
    if problems:
        raise ScenarioError(problems)
    return _raw(path, nodes, hosts, cables)


def _raw(
    path: str,
    nodes: Mapping[str, tuple[str, int, int]],
    hosts: set[str],
    cables: list[tuple[str, str, str, str, int]],
) -> RawNetwork:
    is_host = {nid: nid in hosts for nid in nodes}
    ifaces: dict[str, set[str]] = {nid: set() for nid in nodes}
    for na, ia, nb, ib, _ in cables:
        ifaces[na].add(ia)
        ifaces[nb].add(ib)
    notes: list[str] = []
    port_of: dict[tuple[str, str], int] = {}
    renumbered: list[str] = []
    index_of: dict[tuple[str, str], int] = {}
    for nid, names in ifaces.items():
        ordered = sorted(names, key=natural_key)
        if is_host[nid]:
            tails = [_TRAILING.search(i) for i in ordered]
            nums = [int(m.group(1)) if m else None for m in tails]
            distinct = None not in nums and len(set(nums)) == len(nums)
            for k, iface in enumerate(ordered):
                index_of[nid, iface] = nums[k] if distinct else k  # type: ignore[assignment]
            continue
        plain = [_TRAILING.search(i) for i in ordered]
        if any(_BREAKOUT.search(i) for i in ordered) or not all(plain):
            renumbered.append(nodes[nid][0])
            for k, iface in enumerate(ordered, start=1):
                port_of[nid, iface] = k
        else:
            for iface, m in zip(ordered, plain, strict=True):
                assert m is not None
                port_of[nid, iface] = int(m.group(1))
    if renumbered:
        notes.append(
            f"{len(renumbered)} switch(es) with breakout or unnumbered interfaces "
            f"({', '.join(sorted(renumbered)[:3])}{', ...' if len(renumbered) > 3 else ''}) "
            "have their ports numbered 1.. in interface-name order"
        )
    switches = tuple(
        RawSwitch(key=nid, desc=name, ports=0, line=line, role=_role(tier))
        for nid, (name, tier, line) in nodes.items()
        if not is_host[nid]
    )
    nics = tuple(
        RawNic(key=f"{nid}:{iface}", desc=f"{nodes[nid][0]} {iface}", ports=1,
               line=nodes[nid][2], host=nodes[nid][0], index=index_of[nid, iface])
        for nid in nodes if is_host[nid]
        for iface in sorted(ifaces[nid], key=natural_key)
    )  # fmt: skip

    def end(nid: str, iface: str) -> tuple[str, int]:
        return (f"{nid}:{iface}", 1) if is_host[nid] else (nid, port_of[nid, iface])

    raw_cables: list[RawCable] = []
    seen: set[frozenset[tuple[str, int]]] = set()
    for na, ia, nb, ib, line in cables:
        (ka, pa), (kb, pb) = end(na, ia), end(nb, ib)
        key = frozenset({(ka, pa), (kb, pb)})
        if key in seen:
            continue  # NetQ lists some cables under both directions
        seen.add(key)
        raw_cables.append(RawCable(ka, pa, kb, pb, None, 1, line))
    notes.append(f"{len(hosts)} host(s) discovered over LLDP (NetQ tier -1)")
    return RawNetwork(path=path, fmt="netq", switches=switches, nics=nics,
                      cables=tuple(raw_cables), notes=tuple(notes))  # fmt: skip


def load_netq(
    path: str | Path, rules: InferenceRules | None = None, *, name: str | None = None
) -> Fabric:
    """Read a NetQ topology graph JSON file into a :class:`Fabric`."""
    p = str(path)
    raw = parse_netq(read_text(p, "NetQ topology"), p)
    fabric, _ = build_network(raw, rules or InferenceRules(), name=name or Path(p).stem)
    return fabric
