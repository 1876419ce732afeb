"""Explicit fabric files: servers, switches and cables listed one by one (fabric stage).

The explicit form of a fabric file (``docs/scenario-format.md``, "Explicit form"):
``nodes:`` (servers from a template, with overrides), ``switches:`` and ``links:``
(cables, with ports, counts and lanes), checked key by key with every problem at its
file:line and built with :class:`~harness.fabric.builder.FabricBuilder`.  The keys of
both forms are here, since the explicit form is the one that names them all;
:mod:`harness.fabric.fabric_file` reads the file and picks the form.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from harness.errors import FabricDesignError
from harness.errors import Problem
from harness.fabric.builder import FabricBuilder
from harness.fabric.generators import IB_LANES
from harness.fabric.limits import MAX_CABLES_PER_PAIR
from harness.fabric.limits import MAX_GBPS
from harness.fabric.limits import MAX_ID
from harness.fabric.limits import MAX_LANES
from harness.fabric.limits import MAX_LINKS
from harness.fabric.limits import MAX_PORT_NUMBER
from harness.fabric.limits import MAX_PORTS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.model import NodeSpec
from harness.fabric.nodes import NODE_TEMPLATES
from harness.fabric.nodes import NodeTemplate
from harness.inputs.checker import Checker
from harness.inputs.checker import describe_type
from harness.inputs.checker import did_you_mean
from harness.inputs.checker import matches_type
from harness.inputs.suggest import closest
from harness.inputs.values import number_problem
from harness.inputs.yaml import KeyPath

GENERATOR_FORM_KEYS = ("name", "description", "routing", "generator", "preset", "params")
EXPLICIT_FORM_KEYS = ("name", "description", "routing", "tiers", "nodes", "switches", "links")
FILE_KEYS = tuple(dict.fromkeys(GENERATOR_FORM_KEYS + EXPLICIT_FORM_KEYS))
NODE_KEYS = ("id", "model", "su", "node", "pod", "overrides")
SWITCH_KEYS = ("id", "kind", "ports", "su", "rail", "pod", "plane")
LINK_KEYS = ("a", "b", "kind", "gbps", "a_port", "b_port", "count", "lanes")

SWITCH_KINDS: dict[str, Kind] = {
    "leaf": Kind.LEAF,
    "spine": Kind.SPINE,
    "core": Kind.CORE,
    "storage-switch": Kind.STORAGE_SWITCH,
    "storage": Kind.STORAGE,  # the storage cluster (no port limit unless given)
}
LINK_KINDS: dict[str, LinkKind] = {
    "access": LinkKind.ACCESS,
    "leaf-spine": LinkKind.LEAF_SPINE,
    "spine-core": LinkKind.SPINE_CORE,
    "storage": LinkKind.STORAGE,
}
# Per link kind: the allowed (lower end, upper end) kinds; a link written
# upper-end first is turned around.
LINK_ENDS: dict[LinkKind, tuple[tuple[Kind, Kind], ...]] = {
    LinkKind.ACCESS: ((Kind.NIC, Kind.LEAF),),
    LinkKind.LEAF_SPINE: ((Kind.LEAF, Kind.SPINE),),
    LinkKind.SPINE_CORE: ((Kind.SPINE, Kind.CORE),),
    LinkKind.STORAGE: (
        (Kind.STORAGE_NIC, Kind.STORAGE_SWITCH),
        (Kind.STORAGE_SWITCH, Kind.STORAGE),
    ),
}
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
NODE_OVERRIDE_FIELDS: dict[str, Any] = {
    **{k: v for k, v in typing.get_type_hints(NodeSpec).items() if k != "model"},
    "cpus": int,
}


@dataclass(frozen=True, slots=True)
class _Server:
    id: str
    template: NodeTemplate
    su: int
    node: int
    pod: int


@dataclass(frozen=True, slots=True)
class _Switch:
    id: str
    kind: Kind
    ports: int
    su: int
    rail: int
    pod: int
    plane: int


@dataclass(frozen=True, slots=True)
class _Link:
    a: str
    b: str
    kind: LinkKind
    gbps: float
    a_port: int | None
    b_port: int | None
    count: int
    lanes: int
    path: KeyPath


def _int(
    c: Checker,
    raw: Mapping[str, Any],
    path: KeyPath,
    key: str,
    *,
    default: int,
    minimum: int,
    maximum: int = MAX_ID,
    limit: str = "MAX_ID",
) -> int:
    value = raw.get(key, default)
    problem = number_problem(
        value, key, integer=True, minimum=minimum, maximum=maximum, limit=limit
    )
    if problem:
        c.add(problem, (*path, key))
        return default
    return int(value)


def _element_id(c: Checker, raw: Mapping[str, Any], path: KeyPath, what: str) -> str | None:
    eid = raw.get("id")
    if "id" not in raw:
        c.add(f"{what} needs an id, e.g. id: {'n1' if what == 'a node' else 'leaf1'}", path)
        return None
    if not isinstance(eid, str) or not ID_RE.fullmatch(eid) or "--" in eid:
        c.add(
            f"id {eid!r} is not valid: use letters, digits, '.', '_', '-' and '/' "
            "(no ':' or '--', which name ports and cables)",
            (*path, "id"),
        )
        return None
    return eid


def _nodes(c: Checker, raw: Any) -> list[_Server]:
    if raw is None:
        c.add(
            "an explicit fabric file needs nodes: (servers), e.g. nodes: [{id: n1, model: a800}]",
            (),
            key=True,
        )
        return []
    if not isinstance(raw, list) or not raw:
        c.add(
            "nodes must be a non-empty list of servers, e.g. nodes: [{id: n1, model: a800}]",
            ("nodes",),
        )
        return []
    out: list[_Server] = []
    per_su: dict[int, int] = {}
    for i, item in enumerate(raw):
        path: KeyPath = ("nodes", i)
        body = c.mapping(item, path, "a node")
        if body is None:
            continue
        before = len(c.problems)
        c.check_keys(body, path, NODE_KEYS, "a node")
        eid = _element_id(c, body, path, "a node")
        model = body.get("model")
        template: NodeTemplate | None = None
        if "model" not in body:
            c.add(f"a node needs model: one of {', '.join(NODE_TEMPLATES)}", path)
        elif not isinstance(model, str) or model.lower() not in NODE_TEMPLATES:
            c.add(
                f"unknown node model {model!r}{did_you_mean(model, NODE_TEMPLATES)}",
                (*path, "model"),
            )
        else:
            template = NODE_TEMPLATES[model.lower()]
        su = _int(c, body, path, "su", default=1, minimum=0)
        pod = _int(c, body, path, "pod", default=0, minimum=0)
        per_su[su] = per_su.get(su, 0) + 1
        node = _int(c, body, path, "node", default=per_su[su], minimum=0)
        changes = body.get("overrides")
        if changes is not None and template is not None:
            template = _overrides(c, changes, (*path, "overrides"), template)
        if eid is not None and template is not None and len(c.problems) == before:
            out.append(_Server(eid, template, su, node, pod))
    return out


def _overrides(c: Checker, raw: Any, path: KeyPath, template: NodeTemplate) -> NodeTemplate | None:
    body = c.mapping(raw, path, "node overrides")
    if body is None:
        return None
    ok = c.check_keys(body, path, tuple(NODE_OVERRIDE_FIELDS), "node overrides")
    for key, value in body.items():
        hint = NODE_OVERRIDE_FIELDS.get(key)
        if hint is not None and not matches_type(value, hint):
            c.add(
                f"node override {key!r} must be {describe_type(hint)}, got {value!r}", (*path, key)
            )
            ok = False
    if not ok:
        return None
    try:
        return template.with_overrides(**body)
    except FabricDesignError as err:
        c.wrap(err, path)
    except (ArithmeticError, TypeError, ValueError) as err:  # e.g. pcie_switches: 0
        c.add(f"these node overrides do not make a server ({err}); check the numbers", path)
    return None


def _switches(c: Checker, raw: Any) -> list[_Switch]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        c.add(
            "switches must be a list, e.g. switches: [{id: leaf1, kind: leaf, ports: 40}]",
            ("switches",),
        )
        return []
    out: list[_Switch] = []
    for i, item in enumerate(raw):
        path: KeyPath = ("switches", i)
        body = c.mapping(item, path, "a switch")
        if body is None:
            continue
        before = len(c.problems)
        c.check_keys(body, path, SWITCH_KEYS, "a switch")
        eid = _element_id(c, body, path, "a switch")
        kind_name = body.get("kind")
        kind = SWITCH_KINDS.get(kind_name) if isinstance(kind_name, str) else None
        if "kind" not in body:
            c.add(f"a switch needs kind: one of {', '.join(SWITCH_KINDS)}", path)
        elif kind is None:
            c.add(
                f"unknown switch kind {kind_name!r}{did_you_mean(kind_name, SWITCH_KINDS)}",
                (*path, "kind"),
            )
        if "ports" not in body and kind is not Kind.STORAGE:
            c.add("a switch needs ports: its number of ports (the radix), e.g. ports: 40", path)
        ports = _int(c, body, path, "ports", default=0, minimum=0 if kind is Kind.STORAGE else 1,
                     maximum=MAX_PORTS, limit="MAX_PORTS")  # fmt: skip
        in_su = kind in (Kind.LEAF, Kind.STORAGE_SWITCH)
        su = _int(c, body, path, "su", default=1 if in_su else 0, minimum=0)
        rail = _int(c, body, path, "rail", default=-1, minimum=-1)
        pod = _int(c, body, path, "pod", default=0, minimum=0)
        plane = _int(c, body, path, "plane", default=0, minimum=0)
        if eid is not None and kind is not None and len(c.problems) == before:
            out.append(_Switch(eid, kind, ports, su, rail, pod, plane))
    return out


def _links(c: Checker, raw: Any) -> list[_Link]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        c.add(
            "links must be a list, e.g. links: [{a: n1/nic0, b: leaf1, kind: access, gbps: 200}]",
            ("links",),
        )
        return []
    out: list[_Link] = []
    for i, item in enumerate(raw):
        path: KeyPath = ("links", i)
        body = c.mapping(item, path, "a link")
        if body is None:
            continue
        before = len(c.problems)
        c.check_keys(body, path, LINK_KEYS, "a link")
        for end in ("a", "b"):
            if end not in body:
                c.add(f"a link needs {end}: the id of the element at that end", path)
            elif not isinstance(body[end], str):
                c.add(f"link end {end} must be an element id, got {body[end]!r}", (*path, end))
        kind_name = body.get("kind")
        kind = LINK_KINDS.get(kind_name) if isinstance(kind_name, str) else None
        if "kind" not in body:
            c.add(f"a link needs kind: one of {', '.join(LINK_KINDS)}", path)
        elif kind is None:
            c.add(
                f"unknown link kind {kind_name!r}{did_you_mean(kind_name, LINK_KINDS)}",
                (*path, "kind"),
            )
        gbps: Any = body.get("gbps")
        if "gbps" not in body:
            c.add("a link needs gbps: its speed per direction in Gb/s, e.g. gbps: 200", path)
        elif problem := number_problem(
            gbps, "gbps (Gb/s per direction)", above=0, maximum=MAX_GBPS, limit="MAX_GBPS"
        ):
            c.add(problem, (*path, "gbps"))
        port_bounds: dict[str, Any] = {"maximum": MAX_PORT_NUMBER, "limit": "MAX_PORT_NUMBER"}
        a_port = (
            _int(c, body, path, "a_port", default=0, minimum=1, **port_bounds)
            if "a_port" in body
            else None
        )
        b_port = (
            _int(c, body, path, "b_port", default=0, minimum=1, **port_bounds)
            if "b_port" in body
            else None
        )
        count = _int(c, body, path, "count", default=1, minimum=1,
                     maximum=MAX_CABLES_PER_PAIR, limit="MAX_CABLES_PER_PAIR")  # fmt: skip
        # compute cables are 4x, as the generators make them (degrade {lanes: 1} = 4x -> 1x)
        lanes_default = 1 if kind is LinkKind.STORAGE else IB_LANES
        lanes = _int(c, body, path, "lanes", default=lanes_default, minimum=1,
                     maximum=MAX_LANES, limit="MAX_LANES")  # fmt: skip
        if kind is not None and len(c.problems) == before:
            out.append(
                _Link(body["a"], body["b"], kind, float(gbps), a_port, b_port, count, lanes, path)
            )
    return out


def build_explicit(
    c: Checker, data: Mapping[str, Any], default_name: str, overrides: dict[str, Any]
) -> Fabric:
    """Build the fabric an explicit fabric file lists, element by element and cable by cable.

    Problems go to ``c``; ``overrides`` (only generator files take them) is one.
    """
    for k in data:
        if k in GENERATOR_FORM_KEYS and k not in EXPLICIT_FORM_KEYS:
            c.add(
                f"{k!r} belongs to generator fabric files; an explicit fabric file gives "
                f"{', '.join(EXPLICIT_FORM_KEYS)}",
                (k,),
                key=True,
            )
        elif k not in EXPLICIT_FORM_KEYS:
            c.add(f"unknown key {k!r} in a fabric file{did_you_mean(k, FILE_KEYS)}", (k,), key=True)
    if overrides:
        c.problems.append(
            Problem(
                f"this fabric file is explicit, so it takes no params (the scenario gives "
                f"{', '.join(overrides)}); remove params: from the scenario's fabric",
                c.doc.path,
            )
        )
    name = c.name(data["name"], ("name",), "fabric name") if "name" in data else default_name
    servers = _nodes(c, data.get("nodes"))
    switches = _switches(c, data.get("switches"))
    links = _links(c, data.get("links"))
    cables = sum(link.count for link in links)
    if cables > MAX_LINKS:
        c.add(f"the links give {cables:,} cables, more than MAX_LINKS = {MAX_LINKS:,}", ("links",))
        c.raise_if_any()
    tiers = data.get("tiers")
    if tiers is not None and tiers not in (2, 3):
        c.add(f"tiers is 2 (leaf/spine) or 3 (leaf/spine/core), got {tiers!r}", ("tiers",))
        tiers = None

    b = FabricBuilder()
    first: dict[str, KeyPath] = {}

    def claim(eid: str, path: KeyPath) -> bool:
        if eid in first:
            line = c.doc.position(first[eid])[0]
            c.add(f"id {eid!r} is already used on line {line}; ids must be unique", path)
            return False
        first[eid] = path
        return True

    for i, s in enumerate(servers):
        path: KeyPath = ("nodes", i, "id")
        if claim(s.id, path):
            start = len(b.ids)
            b.add_server(s.id, s.template, su=s.su, node=s.node, pod=s.pod)
            for part in b.ids[start + 1 :]:
                first[part] = path
    for i, w in enumerate(switches):
        if claim(w.id, ("switches", i, "id")):
            b.add(w.id, w.kind, su=w.su, rail=w.rail, pod=w.pod, plane=w.plane, ports=w.ports)
    elements = b.build(name, tiers=2)  # a snapshot of the elements, for checking the links
    design = Checker(replace(c.doc, problems=()))  # impossible designs, raised apart
    wired = _wire(c, design, elements, links, _declared_ids(data))
    has_core = bool(elements.cores.size)
    if tiers == 2 and has_core:
        c.add("tiers: 2 but the file has core switches; write tiers: 3", ("tiers",))
    if c.problems:  # input mistakes first; the design problems come along
        c.problems.extend(design.problems)
        c.raise_if_any()
    design.raise_if_any(FabricDesignError)
    for a, bb, kind, gbps, lanes, ap, bp in wired:
        b.link(a, bb, kind, gbps, lanes=lanes, a_port=ap, b_port=bp)
    return b.build(name, tiers=tiers or (3 if has_core else 2), params={"file": c.doc.path})


def _declared_ids(data: Mapping[str, Any]) -> set[str]:
    """Every id the nodes and switches give, valid or not."""
    out: set[str] = set()
    for key in ("nodes", "switches"):
        items = data.get(key)
        if isinstance(items, list):
            out.update(
                i["id"] for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)
            )
    return out


def _wire(
    c: Checker, design: Checker, elements: Fabric, links: list[_Link], declared: set[str]
) -> list[tuple[int, int, LinkKind, float, int, int, int]]:
    """Check link ends and ports; give each cable its ports (as the builder would)."""
    index = elements.index
    broken = declared - set(index)  # elements with problems of their own
    next_port: dict[int, int] = {}
    used: dict[tuple[int, int], int] = {}
    out: list[tuple[int, int, LinkKind, float, int, int, int]] = []
    for link in links:
        ends: list[int] = []
        for end, eid in (("a", link.a), ("b", link.b)):
            i = index.get(eid)
            if i is None and (eid in broken or eid.split("/")[0] in broken):
                continue
            if i is None:
                hint = _near_id(eid, elements)
                c.add(f"link end {end}: no element {eid!r}{hint}", (*link.path, end))
            else:
                ends.append(i)
        if len(ends) != 2:
            continue
        a, b = ends
        ka, kb = Kind(int(elements.kind[a])), Kind(int(elements.kind[b]))
        allowed = LINK_ENDS[link.kind]
        a_port, b_port = link.a_port, link.b_port
        if (kb, ka) in allowed and (ka, kb) not in allowed:
            a, b, a_port, b_port = b, a, b_port, a_port  # lower tier first
        elif (ka, kb) not in allowed:
            want = " or ".join(f"a {x.label} and a {y.label}" for x, y in allowed)
            hint = ""
            for eid, k in ((link.a, ka), (link.b, kb)):
                if k is Kind.NODE and link.kind is LinkKind.ACCESS:
                    hint = f"; use the NIC of {eid}, e.g. {eid}/nic0"
            kinds = f"{link.a} is a {ka.label}, {link.b} is a {kb.label}"
            label = _kind_label(link.kind)
            article = "an" if label[0] in "aeiou" else "a"
            c.add(f"{article} {label} link joins {want}; {kinds}{hint}", link.path)
            continue
        for n in range(link.count):
            ports = []
            for e, given in ((a, a_port), (b, b_port)):
                port = given + n if given is not None else next_port.get(e, 1)
                next_port[e] = max(next_port.get(e, 1), port + 1)
                radix = int(elements.ports[e])
                name = elements.ids[e]
                line = c.doc.position(link.path)[0]
                if radix and port > radix:
                    design.add(
                        f"{name} needs port {port} but has only {radix} ports; give it more "
                        "ports, use fewer cables, or add a switch",
                        link.path,
                    )
                elif (e, port) in used:
                    design.add(
                        f"port {name}:{port} is taken by the cable on line {used[e, port]}; "
                        "give a free a_port/b_port, or leave them out to take the next free one",
                        link.path,
                    )
                else:
                    used[e, port] = line
                ports.append(port)
            out.append((a, b, link.kind, link.gbps, link.lanes, ports[0], ports[1]))
    return out


def _kind_label(kind: LinkKind) -> str:
    return next(name for name, k in LINK_KINDS.items() if k is kind)


def _near_id(eid: str, elements: Fabric) -> str:
    near = closest(eid, elements.ids, n=1, cutoff=0.6)
    if near:
        return f"; did you mean {near[0]!r}?"
    return "; parts of a server are named like n1/nic0, n1/stor0"


__all__ = ["build_explicit"]
