"""Fabrics out to a fabric file: the explicit form that every command reads back.

:func:`to_fabric_file` writes a fabric (an imported dump, typically) as an
explicit fabric file (``docs/scenario-format.md``, "Explicit form"): every
server with its template's numbers as ``overrides`` of the A800 template (or
its own template when it is a known one), every switch with its kind, radix,
SU, rail, pod and plane, and every compute and storage cable with its ports,
rate and width.  What is inside a server (GPUs, NVLink, PCIe) is rebuilt from
the template when the file is read, so ``harness show``, ``risk``, ``sweep``
and ``run`` use the real fabric.
"""

from __future__ import annotations

import json
from dataclasses import fields

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.model import NodeSpec
from harness.fabric.nodes import NODE_TEMPLATES

OVERRIDE_FIELDS = (
    "gpus", "nvswitches", "nvlink_lanes", "nvlink_lane_gbs", "pcie_switches", "pcie_gbs",
    "rails", "nic_gbps", "nic_ports", "storage_nics", "storage_gbps", "host_memory_gbs",
    "nic_lag",
)  # fmt: skip
_SWITCH_KINDS = {Kind.LEAF: "leaf", Kind.SPINE: "spine", Kind.CORE: "core",
                 Kind.STORAGE_SWITCH: "storage-switch", Kind.STORAGE: "storage"}  # fmt: skip
_CABLE_KINDS = {LinkKind.ACCESS: "access", LinkKind.LEAF_SPINE: "leaf-spine",
                LinkKind.SPINE_CORE: "spine-core", LinkKind.STORAGE: "storage"}  # fmt: skip


def _flow(item: dict[str, object]) -> str:
    """One YAML flow mapping (JSON scalars are YAML)."""
    return "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in item.items()) + "}"


def _model_and_overrides(spec: NodeSpec) -> tuple[str, dict[str, object]]:
    known = NODE_TEMPLATES.get(spec.model)
    base = known if known is not None else NODE_TEMPLATES["a800"]
    names = {f.name for f in fields(NodeSpec)}
    over: dict[str, object] = {}
    for name in OVERRIDE_FIELDS:
        if name not in names:
            continue
        value = getattr(spec, name)
        if value != getattr(base.spec, name):
            over[name] = list(value) if isinstance(value, tuple) else value
    return (spec.model if known is not None else "a800"), over


def to_fabric_file(fabric: Fabric, *, description: str = "") -> str:
    """``fabric`` as the text of an explicit fabric file (YAML)."""
    f = fabric
    lines = [f"name: {json.dumps(f.name)}"]
    if description:
        lines.append(f"description: {json.dumps(description)}")
    lines.append(f"tiers: {3 if f.cores.size else 2}")
    lines.append("nodes:")
    for s in f.servers.tolist():
        model, over = _model_and_overrides(f.node_spec(int(s)))
        item: dict[str, object] = {"id": f.ids[s], "model": model, "su": int(f.su[s]),
                                   "node": int(f.node_no[s]), "pod": int(f.pod[s])}  # fmt: skip
        text = _flow(item)
        if over:
            text = text[:-1] + ", overrides: " + _flow(over) + "}"
        lines.append(f"  - {text}")
    lines.append("switches:")
    for i in range(f.n_elements):
        kind = _SWITCH_KINDS.get(Kind(int(f.kind[i])))
        if kind is None:
            continue
        lines.append("  - " + _flow({
            "id": f.ids[i], "kind": kind, "ports": int(f.ports[i]), "su": int(f.su[i]),
            "rail": int(f.rail[i]), "pod": int(f.pod[i]), "plane": int(f.plane[i]),
        }))  # fmt: skip
    lines.append("links:")
    for li in range(f.n_links):
        kind = _CABLE_KINDS.get(LinkKind(int(f.link_kind[li])))
        if kind is None:
            continue  # inside a server: rebuilt from its template
        lines.append("  - " + _flow({
            "a": f.ids[int(f.link_a[li])], "b": f.ids[int(f.link_b[li])], "kind": kind,
            "gbps": float(f.link_capacity[li]), "a_port": int(f.link_a_port[li]),
            "b_port": int(f.link_b_port[li]), "lanes": int(f.link_lanes[li]),
        }))  # fmt: skip
    return "\n".join(lines) + "\n"
