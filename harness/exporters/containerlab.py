"""Fabrics out to containerlab: a ``*.clab.yml`` topology that runs the compute fabric as a lab.

:func:`to_containerlab` writes servers as ``linux`` nodes and switches as
``linux`` (or a chosen kind), one link per compute cable, and labels every
node with its harness id, role, SU and rail so that importing the file
(:func:`harness.importers.containerlab.load_containerlab`) gives the same
fabric back.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from harness.errors import FabricDesignError
from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind

INTERFACE_FORMATS: dict[str, str] = {
    "linux": "eth{port}",
    "srl": "e1-{port}",
    "nokia_srlinux": "e1-{port}",
    "ceos": "eth{port}",
    "arista_ceos": "eth{port}",
    "sonic-vs": "eth{port}",
    "cvx": "swp{port}",
    "cumulus_cvx": "swp{port}",
}
DEFAULT_IMAGE = "ghcr.io/hellt/network-multitool"
_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _node_name(eid: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", eid.replace("/", "_"))
    if not _NODE_NAME.match(name):
        name = f"n{name}"
    return name


def to_containerlab(
    fabric: Fabric,
    *,
    name: str | None = None,
    switch_kind: str = "linux",
    switch_image: str | None = None,
    server_image: str = DEFAULT_IMAGE,
) -> str:
    """The compute fabric as a containerlab topology (YAML text).

    Servers become ``linux`` nodes, switches nodes of ``switch_kind``
    (``linux`` by default, so the lab runs anywhere; pass ``nokia_srlinux`` or
    ``arista_ceos`` and its image for a real NOS).  Each compute cable becomes
    one link whose interfaces are named for the kind (``eth<port>`` for linux,
    ``e1-<port>`` for SR Linux); a server's NIC ports are numbered ``eth1``..
    in rail order.  Node names are element ids with ``/`` turned into ``_``;
    labels keep the harness id, role, SU and rail, and each link's
    ``vars.gbps`` its capacity.
    """
    lab = name or fabric.name
    if not _NODE_NAME.match(lab):
        msg = (
            f"lab name {lab!r} is not a valid containerlab name; pass name='...' "
            "(letters, digits, _ . -)"
        )
        raise FabricDesignError(msg)
    cables = fabric.links_of_kind(*COMPUTE_CABLE_KINDS).tolist()
    used = {int(x) for c in cables for x in (fabric.link_a[c], fabric.link_b[c])}
    servers = [int(i) for i in fabric.servers.tolist()]
    switches = [i for i in range(fabric.n_elements)
                if Kind(int(fabric.kind[i])) in COMPUTE_SWITCH_KINDS]  # fmt: skip
    names: dict[int, str] = {}
    for i in (*servers, *switches):
        n = _node_name(fabric.ids[i])
        if n in names.values():
            msg = f"two elements map to containerlab node {n!r}; rename one of them"
            raise FabricDesignError(msg)
        names[i] = n
    # NIC port -> (server, interface number), numbered in rail order per server
    nic_if: dict[tuple[int, int], tuple[int, int]] = {}
    for s in servers:
        k = 0
        nics = sorted(fabric.parts_of(s, Kind.NIC).tolist(), key=lambda n: int(fabric.rail[n]))
        for n in nics:
            for p in range(1, int(fabric.ports[n]) + 1):
                k += 1
                nic_if[int(n), p] = (s, k)
    server_fmt = INTERFACE_FORMATS["linux"]
    switch_fmt = INTERFACE_FORMATS.get(switch_kind, "eth{port}")

    def endpoint(e: int, port: int) -> str:
        if Kind(int(fabric.kind[e])) == Kind.NIC:
            if (e, port) not in nic_if:
                msg = f"{fabric.ids[e]} has no port {port}; fix the fabric"
                raise FabricDesignError(msg)
            s, k = nic_if[e, port]
            return f"{names[s]}:{server_fmt.format(port=k)}"
        if e not in names:
            msg = f"{fabric.ids[e]} ({Kind(int(fabric.kind[e])).label}) cannot be exported"
            raise FabricDesignError(msg)
        return f"{names[e]}:{switch_fmt.format(port=port)}"

    kinds: dict[str, dict[str, str]] = {"linux": {"image": server_image}}
    if switch_kind != "linux" or switch_image:
        kinds.setdefault(switch_kind, {})["image"] = switch_image or server_image
    nodes: dict[str, dict[str, Any]] = {}
    for s in servers:
        if not any(int(n) in used for n in fabric.parts_of(s, Kind.NIC).tolist()):
            continue
        nodes[names[s]] = {
            "kind": "linux",
            "labels": {"harness.id": fabric.ids[s], "harness.role": "server",
                       "harness.su": str(int(fabric.su[s]))},
        }  # fmt: skip
    for w in switches:
        role = Kind(int(fabric.kind[w])).label
        labels = {"harness.id": fabric.ids[w], "harness.role": role}
        if Kind(int(fabric.kind[w])) == Kind.LEAF:
            labels.update({"harness.su": str(int(fabric.su[w])),
                           "harness.rail": str(int(fabric.rail[w]))})  # fmt: skip
        nodes[names[w]] = {"kind": switch_kind, "labels": labels}
    links: list[dict[str, Any]] = []
    seen: set[str] = set()
    for c in cables:
        a = endpoint(int(fabric.link_a[c]), int(fabric.link_a_port[c]))
        b = endpoint(int(fabric.link_b[c]), int(fabric.link_b_port[c]))
        for ep in (a, b):
            if ep in seen:
                msg = f"interface {ep} would carry two links; fix the fabric's port numbers"
                raise FabricDesignError(msg)
            seen.add(ep)
        links.append({"endpoints": [a, b], "vars": {"gbps": float(fabric.link_capacity[c])}})
    doc = {"name": lab, "topology": {"kinds": kinds, "nodes": nodes, "links": links}}
    head = f"# containerlab topology written by harness from fabric {fabric.name!r}\n"
    return head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120)
