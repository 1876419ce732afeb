"""SimAI (ns-3) topology files, as written by SimAI's ``gen_Topo_Template.py`` (importers stage).

Format::

    <nodes> <gpus_per_server> <nvswitches> <switches> <links> <gpu_type>
    <ids of the NVSwitches and switches, space separated>
    <src> <dst> <bandwidth> <latency> <error_rate>      (one line per link)

Ids ``0 .. gpus-1`` are GPUs (``gpus = nodes - nvswitches - switches``); the
first ``nvswitches`` ids of line 2 are NVSwitches, the rest network switches.
GPU ``g`` belongs to server ``g // gpus_per_server``.  Each GPU's link to a
switch is its NIC's access cable (one NIC per GPU, one port per switch it
reaches); GPU--NVSwitch links are NVLink.  Switches attached to GPUs are
leaves (SimAI's ASW), those attached to leaves spines (PSW), anything above
cores; their ids are ``asw<N>``, ``psw<N>``, ``dsw<N>`` with SimAI's number.
Servers are ``suSS/nodeNN`` (SUs from the wiring); the fabric's ``meta`` maps
every SimAI id to its element (``simai:36`` -> ``asw36``).  Latency and error
rate are not modelled.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.limits import MAX_ELEMENTS
from harness.fabric.limits import MAX_GPUS_PER_SERVER
from harness.fabric.limits import MAX_LINKS
from harness.fabric.model import Fabric
from harness.fabric.nodes import NODE_TEMPLATES
from harness.fabric.nodes import NodeTemplate
from harness.fabric.nodes import node_template
from harness.importers.build import build_network
from harness.importers.records import RawCable
from harness.importers.records import RawNetwork
from harness.importers.records import RawNic
from harness.importers.records import RawSwitch
from harness.importers.rules import InferenceRules
from harness.importers.text import read_text

_BW = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT]?)bps$", re.IGNORECASE)
_UNIT = {"": 1e-9, "K": 1e-6, "M": 1e-3, "G": 1.0, "T": 1e3}
_SWITCH_PREFIX = {"leaf": "asw", "spine": "psw", "core": "dsw"}


def _gbps(text: str, path: str, line: int) -> float:
    m = _BW.match(text)
    if not m:
        msg = f"bandwidth {text!r} is not like '400Gbps'; fix the link line"
        raise ScenarioError(Problem(msg, path=path, line=line))
    return float(m.group(1)) * _UNIT[m.group(2).upper()]


def _ints(tokens: list[str], path: str, line: int, what: str) -> list[int]:
    try:
        return [int(t) for t in tokens]
    except ValueError:
        msg = f"{what} must be integers, got {' '.join(tokens)!r}"
        raise ScenarioError(Problem(msg, path=path, line=line)) from None


def _template(
    gpu_type: str, gps: int, *, ports: int, nic_gbps: float, nvsw: int, nv_gbps: float
) -> NodeTemplate:
    key = gpu_type.lower()
    base = NODE_TEMPLATES.get(key, node_template("h100"))
    s = base.spec
    pcie = s.pcie_switches if gps % s.pcie_switches == 0 else gps
    changes: dict[str, object] = {
        "model": f"{s.model if key in NODE_TEMPLATES else gpu_type} (SimAI)",
        "gpus": gps,
        "rails": gps,
        "pcie_switches": pcie,
        "nic_ports": ports,
        "nic_gbps": nic_gbps,
        "nic_lag": False,
        "storage_nics": 0,
    }
    if nvsw:
        lanes = max(1, sum(s.nvlink_lanes) // nvsw)
        changes.update(nvswitches=nvsw, nvlink_lanes=(lanes,) * nvsw,
                       nvlink_lane_gbs=nv_gbps / 8.0 / lanes)  # fmt: skip
    return base.with_overrides(**changes)


@dataclass(frozen=True, slots=True)
class SimaiServers:
    """What a SimAI file says about its servers."""

    gpus: int
    gpus_per_server: int
    servers: int
    gpu_type: str
    template: NodeTemplate
    nvswitches: tuple[tuple[int, ...], ...]  # per server: its NVSwitch ids


def parse_simai(text: str, path: str = "<string>") -> tuple[RawNetwork, SimaiServers]:
    """Parse a SimAI topology into a raw network plus the server facts it states."""
    lines = [(i, ln.split()) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if len(lines) < 2 or len(lines[0][1]) < 5:
        msg = (
            "a SimAI topology starts with '<nodes> <gpus_per_server> <nvswitches> <switches> "
            "<links> [gpu_type]' and a line of switch ids"
        )
        raise ScenarioError(Problem(msg, path=path, line=1))
    head = lines[0][1]
    nodes, gps, nvsw, nsw, nlinks = _ints(head[:5], path, 1, "the header counts")
    for count, limit, name, what in (
        (nodes, MAX_ELEMENTS, "MAX_ELEMENTS", "nodes"),
        (gps, MAX_GPUS_PER_SERVER, "MAX_GPUS_PER_SERVER", "GPUs per server"),
        (nlinks, MAX_LINKS, "MAX_LINKS", "links"),
    ):  # checked before anything is allocated from them
        if not 0 <= count <= limit:
            msg = f"the header says {count:,} {what}; the limit is {name} = {limit:,}"
            raise ScenarioError(Problem(msg, path=path, line=1))
    gpu_type = head[5] if len(head) > 5 else "H100"
    ids_line, ids_tok = lines[1]
    sw_ids = _ints(ids_tok, path, ids_line, "switch ids")
    gpus = nodes - nvsw - nsw
    problems: list[Problem] = []
    if len(sw_ids) != nvsw + nsw:
        problems.append(Problem(
            f"line 2 lists {len(sw_ids)} ids but the header says {nvsw} NVSwitches + {nsw} "
            "switches", path=path, line=ids_line,
        ))  # fmt: skip
    if gpus <= 0 or gps <= 0 or gpus % gps:
        problems.append(Problem(
            f"{gpus} GPUs do not fill servers of {gps}; check the header counts",
            path=path, line=1,
        ))  # fmt: skip
    if len(lines) - 2 != nlinks:
        problems.append(Problem(
            f"the header says {nlinks} links but the file has {len(lines) - 2} link lines",
            path=path, line=1,
        ))  # fmt: skip
    if problems:
        raise ScenarioError(problems)
    nv_ids = set(sw_ids[:nvsw])
    net_ids = set(sw_ids[nvsw:])
    links: list[tuple[int, int, float, int]] = []
    for lineno, tok in lines[2:]:
        if len(tok) < 3:
            problems.append(Problem("a link line is '<src> <dst> <bw> <latency> <error_rate>'",
                                    path=path, line=lineno))  # fmt: skip
            continue
        src, dst = _ints(tok[:2], path, lineno, "link ends")
        for end in (src, dst):
            if not 0 <= end < nodes:
                problems.append(Problem(f"node {end} is outside 0..{nodes - 1}",
                                        path=path, line=lineno))  # fmt: skip
        links.append((src, dst, _gbps(tok[2], path, lineno), lineno))
    if problems:
        raise ScenarioError(problems)

    def is_gpu(n: int) -> bool:
        return n < gpus

    # roles of network switches by structure
    adj: dict[int, set[int]] = {s: set() for s in net_ids}
    for a, b, _, _ in links:
        if a in net_ids:
            adj[a].add(b)
        if b in net_ids:
            adj[b].add(a)
    role: dict[int, str] = {s: "leaf" for s in net_ids if any(is_gpu(n) for n in adj[s])}
    for s in net_ids:
        if s not in role and any(role.get(n) == "leaf" for n in adj[s]):
            role[s] = "spine"
    for s in net_ids:
        role.setdefault(s, "core")

    servers = gpus // gps
    nv_of_server: dict[int, list[int]] = {}
    access: dict[int, list[tuple[int, float, int]]] = {}  # gpu -> [(switch, gbps, line)]
    cables: list[RawCable] = []
    trunks: list[tuple[int, int, float, int]] = []
    nv_gbps = 0.0
    sw_port: Counter[int] = Counter()
    for src, dst, gbps, lineno in links:
        a, b = (dst, src) if is_gpu(dst) and not is_gpu(src) else (src, dst)
        if is_gpu(a) and b in nv_ids:
            nv_of_server.setdefault(a // gps, [])
            if b not in nv_of_server[a // gps]:
                nv_of_server[a // gps].append(b)
            nv_gbps = max(nv_gbps, gbps)
        elif is_gpu(a) and b in net_ids:
            access.setdefault(a, []).append((b, gbps, lineno))
        elif a in net_ids and b in net_ids:
            lo, hi = sorted((a, b), key=lambda n: ("leaf", "spine", "core").index(role[n]))
            trunks.append((lo, hi, gbps, lineno))
        else:
            problems.append(Problem(
                f"link {a}--{b} joins nodes the model cannot join (GPU-GPU, NVSwitch-switch); "
                "remove it", path=path, line=lineno,
            ))  # fmt: skip
    if problems:
        raise ScenarioError(problems)
    per_server = {len(v) for v in nv_of_server.values()} or {0}
    if len(per_server) > 1 or (nvsw and sum(len(v) for v in nv_of_server.values()) != nvsw):
        msg = "NVSwitches are not spread evenly over the servers; the model needs the same count"
        raise ScenarioError(Problem(msg, path=path, line=1))
    nics: list[RawNic] = []
    ports = max((len(v) for v in access.values()), default=1)
    for g in range(gpus):
        ends = sorted(access.get(g, []))
        nics.append(RawNic(key=f"gpu{g}", desc=f"server{g // gps} gpu{g % gps}", ports=ports,
                           line=ends[0][2] if ends else 0, host=f"server{g // gps}",
                           index=g % gps))  # fmt: skip
        for p, (sw, gbps, lineno) in enumerate(ends, start=1):
            sw_port[sw] += 1
            cables.append(RawCable(f"gpu{g}", p, str(sw), sw_port[sw], gbps, 1, lineno))
    # switch ports: down ports first (GPU order), then uplinks in file order
    for lo, hi, gbps, lineno in trunks:
        sw_port[lo] += 1
        sw_port[hi] += 1
        cables.append(RawCable(str(lo), sw_port[lo], str(hi), sw_port[hi], gbps, 1, lineno))
    switches = tuple(
        RawSwitch(key=str(s), desc=f"{_SWITCH_PREFIX[role[s]]}{s}", ports=0,
                  role=role[s], eid=f"{_SWITCH_PREFIX[role[s]]}{s}")  # type: ignore[arg-type]
        for s in sorted(net_ids)
    )  # fmt: skip
    access_gbps = max((gb for v in access.values() for _, gb, _ in v), default=0.0)
    facts = SimaiServers(
        gpus=gpus,
        gpus_per_server=gps,
        servers=servers,
        gpu_type=gpu_type,
        template=_template(
            gpu_type, gps, ports=ports, nic_gbps=access_gbps,
            nvsw=next(iter(per_server)), nv_gbps=nv_gbps,
        ),
        nvswitches=tuple(tuple(nv_of_server.get(k, [])) for k in range(servers)),
    )  # fmt: skip
    raw = RawNetwork(path=path, fmt="simai", switches=switches, nics=tuple(nics),
                     cables=tuple(cables))  # fmt: skip
    return raw, facts


def load_simai(path: str | Path, *, name: str | None = None) -> Fabric:
    """Read a SimAI topology file into a :class:`Fabric` (see the module docstring)."""
    p = str(path)
    raw, facts = parse_simai(read_text(p, "SimAI topology"), p)
    fabric, idmap = build_network(
        raw,
        InferenceRules(node_template=facts.template),
        name=name or Path(p).stem,
        host_ids="su-node",
    )
    gps = facts.gpus_per_server
    meta = list(fabric.meta)
    meta += [(f"simai:{s.key}", idmap[s.key]) for s in raw.switches]
    meta += [
        (f"simai:{g}", f"{idmap[f'server{g // gps}']}/gpu{g % gps}") for g in range(facts.gpus)
    ]
    for k, nvs in enumerate(facts.nvswitches):
        meta += [(f"simai:{n}", f"{idmap[f'server{k}']}/nvsw{j}") for j, n in enumerate(nvs)]
    return dataclasses.replace(fabric, meta=tuple(meta))


def simai_ids(fabric: Fabric) -> dict[int, str]:
    """SimAI node id -> element id, for a fabric made by :func:`load_simai`."""
    return {int(k.split(":", 1)[1]): v for k, v in fabric.meta if k.startswith("simai:")}
