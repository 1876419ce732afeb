"""Fabrics from containerlab topology files (``*.clab.yml``): nodes and links read back.

Every node under ``topology.nodes`` is a server or a switch.  A node is
a server when its ``harness.role`` label says so, or when its name matches no
switch pattern and either its kind is a host kind (``linux``, ``host``...) or
its name matches :attr:`InferenceRules.host_pattern`.  Each linked interface of
a server is a one-port NIC (``eth1`` -> device index 1, ranked into rails).
Switch roles follow the shared rules (labels, names such as ``leaf1``,
``spine1``, ``superspine1``, then the wiring).  Port numbers are the trailing
number of the interface name (``e1-3`` -> 3, ``eth12`` -> 12).  Links carry no
rate unless a ``vars: {gbps: ...}`` entry gives one.

The writer is :func:`harness.exporters.containerlab.to_containerlab`; the
labels it leaves (harness id, role, SU, rail) make the fabric read back the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.importers.build import build_network
from harness.importers.records import RawCable
from harness.importers.records import RawNetwork
from harness.importers.records import RawNic
from harness.importers.records import RawSwitch
from harness.importers.rules import InferenceRules
from harness.importers.text import read_text
from harness.inputs.yaml import read_yaml

HOST_KINDS = frozenset({"linux", "host", "generic_vm", "k8s-kind", "ext-container"})
SKIP_ENDPOINT_NODES = frozenset({"host", "mgmt-net", "macvlan", "bridge", "ovs-bridge"})
_ROLE_LABELS = {"server": None, "leaf": "leaf", "spine": "spine", "core": "core"}


def _lines(text: str, path: str) -> tuple[Any, dict[str, int], list[int]]:
    """The YAML document, the line of each node name, and the line of each link item.

    Read with the input layer's safe, bounded reader (:mod:`harness.inputs.yaml`):
    a syntax error, a duplicate key or an unknown tag is an error with its place.
    """
    doc = read_yaml(text, path)
    if doc.problems:
        raise ScenarioError(list(doc.problems))
    data = doc.data
    node_lines: dict[str, int] = {}
    link_lines: list[int] = []
    topo = data.get("topology") if isinstance(data, dict) else None
    if isinstance(topo, dict):
        if isinstance(topo.get("nodes"), dict):
            node_lines = {
                str(k): doc.position(("topology", "nodes", k), key=True)[0] for k in topo["nodes"]
            }
        if isinstance(topo.get("links"), list):
            link_lines = [
                doc.position(("topology", "links", i))[0] for i in range(len(topo["links"]))
            ]
    return data, node_lines, link_lines


def _port(iface: str) -> int | None:
    m = re.search(r"(\d+)$", iface)
    return int(m.group(1)) if m else None


def _endpoints(link: Any) -> list[tuple[str, str]] | None:
    if not isinstance(link, Mapping):
        return None
    eps = link.get("endpoints")
    if not isinstance(eps, list) or len(eps) != 2:
        return None
    out = []
    for ep in eps:
        if isinstance(ep, str) and ":" in ep:
            node, iface = ep.split(":", 1)
            out.append((node, iface))
        elif isinstance(ep, Mapping) and "node" in ep and "interface" in ep:
            out.append((str(ep["node"]), str(ep["interface"])))
        else:
            return None
    return out


#: The labels whose value is a whole number (an SU, a rail), as the exporter writes them.
_NUMBER_LABELS = ("harness.su", "harness.rail")
#: The labels whose value is one word (a name), never a list or a mapping.
_TEXT_LABELS = ("harness.role", "harness.id")


def _label_int(value: object) -> int | None:
    """A number label's value: an int, or a string of digits (``"3"``); None otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _label_problems(name: str, labels: Mapping[str, Any], path: str, line: int) -> list[Problem]:
    """A node's harness labels checked by type: numbers for su and rail, words for the rest."""
    out = []
    for key in _NUMBER_LABELS:
        value = labels.get(key)
        if value is not None and _label_int(value) is None:
            out.append(Problem(
                f"node {name!r}: label {key} is {value!r}; give a whole number "
                f"(e.g. {key}: 1)", path=path, line=line,
            ))  # fmt: skip
    for key in _TEXT_LABELS:
        value = labels.get(key)
        if (value is not None and not isinstance(value, str | int)) or isinstance(value, bool):
            out.append(Problem(
                f"node {name!r}: label {key} is {value!r}; give one name "
                f"(e.g. {key}: {'leaf' if key == 'harness.role' else 'su01/leaf-r0'})",
                path=path, line=line,
            ))  # fmt: skip
    return out


def parse_containerlab(
    text: str, path: str = "<string>", rules: InferenceRules | None = None
) -> RawNetwork:
    """Read a containerlab topology into a raw network (servers' interfaces as NICs)."""
    rules = rules or InferenceRules()
    data, node_lines, link_lines = _lines(text, path)
    topo = data.get("topology") if isinstance(data, Mapping) else None
    nodes = topo.get("nodes") if isinstance(topo, Mapping) else None
    if not isinstance(topo, Mapping) or not isinstance(nodes, Mapping) or not nodes:
        msg = "no topology.nodes mapping; is this a containerlab topology (*.clab.yml)?"
        raise ScenarioError(Problem(msg, path=path, line=1))
    defaults = topo.get("defaults") or {}
    default_kind = str(defaults.get("kind", "")) if isinstance(defaults, Mapping) else ""
    host_rx = re.compile(rules.host_pattern) if rules.host_pattern else None
    problems: list[Problem] = []
    is_server: dict[str, bool] = {}
    labels_of: dict[str, Mapping[str, Any]] = {}
    numbers_of: dict[str, dict[str, int | None]] = {}
    for name, given in nodes.items():
        cfg = given if isinstance(given, Mapping) else {}
        labels = cfg.get("labels") or {}
        line = node_lines.get(name, 0)
        if not isinstance(labels, Mapping):
            problems.append(Problem(
                f"node {name!r}: labels must be a mapping of names to values, not a "
                f"{type(labels).__name__}; e.g. labels: {{harness.role: leaf}}",
                path=path, line=line,
            ))  # fmt: skip
            labels = {}
        labels_of[name] = labels
        problems.extend(_label_problems(name, labels, path, line))
        numbers_of[name] = {key: _label_int(labels.get(key)) for key in _NUMBER_LABELS}
        role = str(labels_of[name].get("harness.role", ""))
        if role and role not in _ROLE_LABELS:
            problems.append(Problem(
                f"node {name!r} has harness.role {role!r}; use server, leaf, spine or core",
                path=path, line=node_lines.get(name, 0),
            ))  # fmt: skip
        kind = str(cfg.get("kind", default_kind))
        if role:
            is_server[name] = role == "server"
        elif rules.role_by_name(name) is not None:
            is_server[name] = False
        else:
            by_name = host_rx is not None and host_rx.search(name) is not None
            is_server[name] = kind in HOST_KINDS or by_name
    raw_links = topo.get("links") or []
    if not isinstance(raw_links, list):
        problems.append(Problem("topology.links must be a list", path=path, line=1))
        raw_links = []
    server_ifaces: dict[str, list[str]] = {}
    parsed: list[tuple[list[tuple[str, str]], int, float | None]] = []
    skipped = 0
    for n, link in enumerate(raw_links):
        line = link_lines[n] if n < len(link_lines) else 0
        eps = _endpoints(link)
        if eps is None:
            problems.append(Problem(
                "a link needs two endpoints 'node:interface'; e.g. "
                "endpoints: [\"leaf1:e1-1\", \"spine1:e1-1\"]", path=path, line=line,
            ))  # fmt: skip
            continue
        if any(node in SKIP_ENDPOINT_NODES and node not in nodes for node, _ in eps):
            skipped += 1
            continue
        for node, iface in eps:
            if node not in nodes:
                problems.append(Problem(
                    f"endpoint '{node}:{iface}' names unknown node {node!r}; add it under "
                    "topology.nodes or fix the name", path=path, line=line,
                ))  # fmt: skip
            elif _port(iface) is None:
                problems.append(Problem(
                    f"interface {iface!r} of {node!r} has no port number; name it like eth1 "
                    "or e1-1", path=path, line=line,
                ))  # fmt: skip
            elif is_server[node]:
                server_ifaces.setdefault(node, []).append(iface)
        lvars = link.get("vars") if isinstance(link, Mapping) else None
        gbps = lvars.get("gbps") if isinstance(lvars, Mapping) else None
        parsed.append((eps, line, float(gbps) if isinstance(gbps, int | float) else None))
    if problems:
        raise ScenarioError(problems)
    switches: list[RawSwitch] = []
    nics: list[RawNic] = []
    for name in nodes:
        labels = labels_of[name]
        stated = str(labels.get("harness.role", "")) or "server"
        eid = str(labels["harness.id"]) if "harness.id" in labels else None
        if is_server[name]:
            host = eid or name
            for iface in sorted(server_ifaces.get(name, []), key=lambda i: _port(i) or 0):
                nics.append(RawNic(key=f"{name}:{iface}", desc=f"{host} {iface}", ports=1,
                                   line=node_lines.get(name, 0), host=host,
                                   index=_port(iface)))  # fmt: skip
            continue
        numbers = numbers_of[name]
        switches.append(RawSwitch(
            key=name, desc=name, ports=0, line=node_lines.get(name, 0),
            role=_ROLE_LABELS.get(stated),  # type: ignore[arg-type]
            eid=eid, su=numbers["harness.su"], rail=numbers["harness.rail"],
        ))  # fmt: skip
    cables: list[RawCable] = []
    for eps, line, gbps in parsed:
        keys: list[tuple[str, int]] = []
        for node, iface in eps:
            port = _port(iface) or 0
            keys.append((f"{node}:{iface}", 1) if is_server[node] else (node, port))
        cables.append(RawCable(keys[0][0], keys[0][1], keys[1][0], keys[1][1], gbps, 1, line))
    notes = (f"{skipped} link(s) to host/mgmt/bridge endpoints skipped",) if skipped else ()
    return RawNetwork(path=path, fmt="containerlab", switches=tuple(switches), nics=tuple(nics),
                      cables=tuple(cables), notes=notes)  # fmt: skip


def load_containerlab(
    path: str | Path, rules: InferenceRules | None = None, *, name: str | None = None
) -> Fabric:
    """Read a containerlab topology file into a :class:`Fabric`."""
    p = str(path)
    text = read_text(p, "containerlab")
    data, _, _ = _lines(text, p)
    lab = data.get("name") if isinstance(data, Mapping) else None
    raw = parse_containerlab(text, p, rules)
    fabric, _ = build_network(raw, rules or InferenceRules(), name=name or str(lab or Path(p).stem))
    return fabric
