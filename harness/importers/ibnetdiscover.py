"""Fabrics from ``ibnetdiscover`` output and ibsim net files: records, ports, cables read back.

``ibnetdiscover`` (infiniband-diags) prints one record per node::

    Switch  41 "S-0000000000200000"   # "su01/leaf-r0" base port 0 lid 1 lmc 0
    [1]     "H-0000000000100000"[1](100001)   # "su01/node01 mlx5_0" lid 2 4xHDR
    [3]     "S-0000000000200001"[1]           # "spine-01" lid 3 4xHDR

    Ca      1 "H-0000000000100000"            # "su01/node01 mlx5_0"
    [1](100001)  "S-0000000000200000"[1]      # lid 2 lmc 0 "su01/leaf-r0" lid 1 4xHDR

ibsim reads the same syntax (its net files may omit the comments and the rates,
and use ``Hca`` for ``Ca``).  :func:`parse_ibnetdiscover` reads either into an
:class:`IbTopology`; :func:`load_ibnetdiscover` infers a :class:`Fabric` from it
(rules in :mod:`harness.importers.inference` and ``docs/importers.md``);
:func:`harness.exporters.ibsim.to_ibsim_net` writes a modelled fabric as an
ibsim net file, so that ibsim can simulate it and ``ibnetdiscover`` can dump it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from pathlib import Path

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.ib_rates import IB_LANE_GBPS
from harness.fabric.ib_rates import ib_rate
from harness.fabric.model import Fabric
from harness.importers.build import build_network
from harness.importers.records import RawCable
from harness.importers.records import RawNetwork
from harness.importers.records import RawNic
from harness.importers.records import RawSwitch
from harness.importers.rules import InferenceRules
from harness.importers.text import dump_name
from harness.importers.text import read_text

_HEADER = re.compile(r'^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"(.*)$')
_STATED_RATE = re.compile(r"\b\d+x[A-Za-z]\w*")  # what a port line says its rate is
_PORT = re.compile(
    r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*"([^"]+)"'
    r"(?:\[(\d+)\](?:\[ext \d+\])?)?(?:\(([0-9a-fA-F]+)\))?(.*)$"
)
_DESC_QUOTED = re.compile(r'#\s*"([^"]*)"')
_DESC_STOP = re.compile(r" (?:enhanced port|base port|lid|lmc) ")
_ATTR = re.compile(
    r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)\s*=\s*(0x[0-9a-fA-F]+|\d+)"
)
# ``ibnetdiscover -p``: one line per port, the remote end after " - " when linked
_PORTS_LINE = re.compile(
    r"^(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x([0-9a-fA-F]+)\s+(\d+)x\s*(\w+)"
    r"(?:\s+-\s+(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x([0-9a-fA-F]+)\s+\(\s*'(.*)'\s+-\s+'(.*)'\s*\)"
    r"|\s+'(.*)')?\s*$"
)
SHARP_AN_DESC = "Mellanox Technologies Aggregation Node"
SHARP_AN_DEVIDS: frozenset[int] = frozenset({0xCF09})
"""Device ids of SHARP Aggregation Nodes (53001, as Quantum/Quantum-2 switches report them)."""
_MLNX_SWITCH = re.compile(r"^MF0;([^;:]+):[^;:]+$")
# lines of a dump or net file that are neither records nor ports, and carry nothing
_KNOWN_OTHER = re.compile(r"^(?:[A-Za-z_]\w*\s*=|include\s)")


@dataclass(frozen=True, slots=True)
class IbPort:
    """One cabled port as a record lists it."""

    port: int
    remote: str  # the remote node's id (``S-...``/``H-...`` or an ibsim name)
    remote_port: int
    rate: str  # ``4xHDR``; empty when the line gives none
    line: int


@dataclass(frozen=True, slots=True)
class IbNode:
    """One ``Switch``/``Ca`` record."""

    kind: str  # "switch" or "ca" (routers are read as switches)
    id: str
    desc: str
    nports: int
    ports: tuple[IbPort, ...]
    line: int
    devid: int | None = None  # ``devid=`` before the record
    sysimgguid: int | None = None  # ``sysimgguid=`` before the record
    guid: int | None = None  # node GUID: ``switchguid=``/``caguid=``, else from ``S-<hex>``


@dataclass(frozen=True, slots=True)
class IbTopology:
    """A parsed ``ibnetdiscover`` dump or ibsim net file.

    ``skipped`` are the lines that are no part of ibnetdiscover output (a
    terminal capture's banner and shell prompts), as (line number, text).
    """

    path: str
    nodes: tuple[IbNode, ...]
    skipped: tuple[tuple[int, str], ...] = ()

    def node(self, node_id: str) -> IbNode:
        """The node with this id (KeyError when there is none)."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)


def _desc(rest: str, default: str) -> str:
    if "#" not in rest:
        return default
    m = _DESC_QUOTED.search(rest)
    if m:
        return m.group(1)
    tail = rest.split("#", 1)[1].strip()
    return _DESC_STOP.split(f"{tail} ", maxsplit=1)[0].strip() or default


def _guid_of(node_id: str) -> int | None:
    """The GUID in an ibnetdiscover node id (``S-2c5eab0300b87b40``), else None."""
    m = re.fullmatch(r"[SHR]-([0-9a-fA-F]{1,16})", node_id)
    return int(m.group(1), 16) if m else None


def is_ports_report(text: str) -> bool:
    """Whether ``text`` is ``ibnetdiscover -p`` output (one line per port)."""
    for raw in text.splitlines()[:50]:
        line = raw.strip()
        if line and not line.startswith("#"):
            return _PORTS_LINE.match(line) is not None
    return False


def parse_ibnetdiscover(text: str, path: str = "<string>") -> IbTopology:
    """Parse ``ibnetdiscover`` output (or an ibsim net file) into an :class:`IbTopology`.

    Reads the topology format (also with ``-f`` and ``-g``) and the ports report
    of ``ibnetdiscover -p``.  Raises :class:`ScenarioError` naming ``path:line``
    for a malformed record, a port that points at an unknown node, or two ends
    that disagree.
    """
    if is_ports_report(text):
        return _parse_ports_report(text, path)
    nodes: list[IbNode] = []
    current: tuple[str, str, str, int, int] | None = None
    attrs: dict[str, int] = {}
    held: dict[str, int] = {}
    ports: list[IbPort] = []
    problems: list[Problem] = []
    skipped: list[tuple[int, str]] = []

    def close() -> None:
        nonlocal current, ports
        if current is not None:
            kind, nid, desc, nports, line = current
            guid = held.get("switchguid" if kind == "switch" else "caguid", _guid_of(nid))
            nodes.append(IbNode(kind, nid, desc, nports, tuple(ports), line,
                                devid=held.get("devid"), sysimgguid=held.get("sysimgguid"),
                                guid=guid))  # fmt: skip
        current, ports = None, []

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            if not line:
                close()
            continue
        attr = _ATTR.match(line)
        if attr:
            attrs[attr.group(1)] = int(attr.group(2), 0)
            continue
        head = _HEADER.match(line)
        if head:
            close()
            held, attrs = attrs, {}
            word, nports, nid, rest = head.groups()
            kind = "ca" if word in ("Hca", "Ca") else "switch"
            current = (kind, nid, _desc(rest, nid), int(nports), lineno)
            continue
        if line.startswith("["):
            m = _PORT.match(line)
            if current is None or m is None:
                what = "a port line outside a Switch/Ca record" if m else "an unreadable port"
                problems.append(Problem(
                    f"{what}: {line!r}; expected '[port] \"remote-id\"[remote-port] # ...'",
                    path=path, line=lineno,
                ))  # fmt: skip
                continue
            port, _, remote, rport, _, rest = m.groups()
            rate = ib_rate(rest)
            stated = _STATED_RATE.search(rest.rsplit('"', 1)[-1])
            if rate is None and stated is not None:
                problems.append(Problem(
                    f"unknown link rate {stated.group(0)!r}; a rate is <width>x<speed> with width "
                    f"1, 2, 4, 8 or 12 and speed one of {', '.join(IB_LANE_GBPS)} (e.g. 4xHDR)",
                    path=path, line=lineno,
                ))  # fmt: skip
                continue
            ports.append(IbPort(
                int(port), remote, int(rport) if rport else 1,
                f"{rate[0]}x{rate[1]}" if rate else "", lineno,
            ))  # fmt: skip
            continue
        if re.match(r"^(Switch|Hca|Ca|Rt)\b", line):
            problems.append(Problem(
                f"unreadable node header {line!r}; expected 'Switch <ports> \"<id>\" # \"<desc>\"'",
                path=path, line=lineno,
            ))  # fmt: skip
        elif not _KNOWN_OTHER.match(line):
            skipped.append((lineno, line))
        # the known others (vendid=..., ibsim directives such as width=, speed=,
        # include) carry nothing the model uses; anything else is a terminal
        # capture's banner or prompt, skipped with one warning (raw_network)
    close()
    return _checked(nodes, problems, path, skipped)


def _parse_ports_report(text: str, path: str) -> IbTopology:
    """``ibnetdiscover -p``: ``CA 14 1 0x..0f 4x HDR - SW 6 2 0x..03 ( 'a' - 'b' )``.

    The report names each port by its port GUID (a CA's node GUID is not in
    it), so every CA port is read as a one-port HCA ``H-<port guid>``; switch
    ports share the switch's GUID.  It gives no port counts and no device ids.
    """
    kinds = {"CA": "ca", "SW": "switch", "RT": "switch"}
    prefix = {"CA": "H", "SW": "S", "RT": "R"}
    info: dict[str, tuple[str, str, int, int]] = {}  # id -> kind, desc, guid, line
    links: dict[str, list[IbPort]] = {}
    problems: list[Problem] = []

    def node_id(word: str, guid: str) -> str:
        return f"{prefix[word]}-{int(guid, 16):016x}"

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _PORTS_LINE.match(line)
        if m is None:
            problems.append(Problem(
                f"unreadable ports-report line {line!r}; expected 'CA <lid> <port> 0x<guid> "
                "<width>x <speed> - SW <lid> <port> 0x<guid> ( '<desc>' - '<desc>' )'",
                path=path, line=lineno,
            ))  # fmt: skip
            continue
        w, _, port, guid, width, speed, rw, _, rport, rguid, desc, rdesc, alone = m.groups()
        nid = node_id(w, guid)
        info.setdefault(nid, (kinds[w], desc if rw else alone or nid, int(guid, 16), lineno))
        links.setdefault(nid, [])
        if rw is None:
            continue
        rid = node_id(rw, rguid)
        info.setdefault(rid, (kinds[rw], rdesc, int(rguid, 16), lineno))
        links.setdefault(rid, [])
        rate = ib_rate(f"{width}x{speed}")
        ports = links[nid]
        if all(p.port != int(port) for p in ports):
            ports.append(IbPort(int(port), rid, int(rport),
                                f"{rate[0]}x{rate[1]}" if rate else "", lineno))  # fmt: skip
        back = links[rid]
        if all(p.port != int(rport) for p in back):
            back.append(IbPort(int(rport), nid, int(port),
                               f"{rate[0]}x{rate[1]}" if rate else "", lineno))  # fmt: skip
    nodes = [
        IbNode(kind, nid, desc, max((p.port for p in links[nid]), default=1),
               tuple(sorted(links[nid], key=lambda p: p.port)), line, guid=guid)
        for nid, (kind, desc, guid, line) in info.items()
    ]  # fmt: skip
    return _checked(nodes, problems, path)


def _checked(
    nodes: list[IbNode],
    problems: list[Problem],
    path: str,
    skipped: list[tuple[int, str]] | None = None,
) -> IbTopology:
    if problems:  # unreadable lines: the first names the cause; dangling ports would follow
        raise ScenarioError(_first_of(problems, "unreadable line", by_kind=False))
    by_id: dict[str, IbNode] = {}
    for n in nodes:
        if n.id in by_id:
            problems.append(Problem(
                f"node id {n.id!r} appears twice (first at line {by_id[n.id].line}); "
                "each node needs one record", path=path, line=n.line,
            ))  # fmt: skip
        by_id[n.id] = n
    for n in nodes:
        for p in n.ports:
            if p.port > n.nports and n.nports:
                problems.append(Problem(
                    f"{n.desc!r} has {n.nports} ports but lists port {p.port}",
                    path=path, line=p.line,
                ))  # fmt: skip
            other = by_id.get(p.remote)
            if other is None:
                problems.append(Problem(
                    f"port {p.port} of {n.desc!r} points at unknown node {p.remote!r}; add "
                    "that node's record or remove the port line", path=path, line=p.line,
                ))  # fmt: skip
                continue
            back = [q for q in other.ports if q.port == p.remote_port]
            if back and (back[0].remote != n.id or back[0].remote_port != p.port):
                problems.append(Problem(
                    f"port {p.port} of {n.desc!r} points at {other.desc!r}[{p.remote_port}], "
                    f"but that port points at {back[0].remote!r}[{back[0].remote_port}]; "
                    "fix one end", path=path, line=p.line,
                ))  # fmt: skip
    if not nodes and not problems:
        problems.append(Problem(
            "no Switch or Ca record found; is this ibnetdiscover output?", path=path, line=1
        ))  # fmt: skip
    if problems:
        raise ScenarioError(_first_of(problems, "problem"))
    return IbTopology(path, tuple(nodes), tuple(skipped or ()))


def _first_of(problems: list[Problem], what: str, *, by_kind: bool = True) -> list[Problem]:
    """The first problem of each kind (its message's start), counting the rest of that kind.

    One bad edit (tabs lost, a record cut short) can break every record: the
    first line names the cause, the others are counted with their line numbers.
    """
    kinds: dict[str, list[Problem]] = {}
    for p in problems:
        kinds.setdefault(_kind_of_problem(p.message) if by_kind else what, []).append(p)
    out = []
    for same in kinds.values():
        first, rest = same[0], same[1:]
        if rest:
            lines = ", ".join(str(p.line) for p in rest[:5]) + (", ..." if len(rest) > 5 else "")
            first = Problem(
                f"{first.message} (and {len(rest)} more {what}(s) like it: line(s) {lines})",
                path=first.path, line=first.line, column=first.column,
            )  # fmt: skip
        out.append(first)
    return out


def _kind_of_problem(message: str) -> str:
    for kind in ("unreadable node header", "unreadable port", "a port line outside",
                 "unknown link rate", "unreadable ports-report", "appears twice", "ports but lists",
                 "points at unknown node", "fix one end"):  # fmt: skip
        if kind in message:
            return kind
    return message


def aggregation_nodes(topo: IbTopology) -> dict[str, tuple[str, ...]]:
    """SHARP Aggregation Nodes: CA id -> the rules that recognised it.

    An Aggregation Node is the CA a Quantum switch runs SHARP on: description
    ``Mellanox Technologies Aggregation Node``, device id 0xcf09, and a system
    image GUID equal to its switch's GUID.  Any one of the three is enough.
    """
    switch_guids = {n.guid for n in topo.nodes if n.kind == "switch" and n.guid is not None}
    found: dict[str, tuple[str, ...]] = {}
    for n in topo.nodes:
        if n.kind != "ca":
            continue
        rules = []
        if n.desc.strip().lower() == SHARP_AN_DESC.lower():
            rules.append("description")
        if n.devid in SHARP_AN_DEVIDS:
            rules.append(f"device id {n.devid:#x}")
        if n.sysimgguid is not None and n.sysimgguid in switch_guids:
            rules.append("system image GUID = a switch's GUID")
        if rules:
            found[n.id] = tuple(rules)
    return found


def skipped_note(skipped: tuple[tuple[int, str], ...]) -> str:
    """One warning for the lines that are no part of a dump (a terminal's banner, prompts).

    >>> print(skipped_note(((1, "user@login01:~$ sudo ibnetdiscover"), (9, "login01:~$"))))
    ... # doctest: +NORMALIZE_WHITESPACE
    warning: skipped 2 line(s) that are not ibnetdiscover output (a terminal's banner or shell
    prompt?): line 1 'user@login01:~$ sudo ibnetdiscover', line 9 'login01:~$'
    """
    shown = ", ".join(f"line {n} {text[:60]!r}" for n, text in skipped[:4])
    more = f" and {len(skipped) - 4} more" if len(skipped) > 4 else ""
    return (
        f"warning: skipped {len(skipped)} line(s) that are not ibnetdiscover output "
        f"(a terminal's banner or shell prompt?): {shown}{more}"
    )


def switch_name(desc: str) -> str:
    """A switch's name from its node description: ``MF0;<name>:<model>/U1`` -> ``<name>``.

    >>> switch_name("MF0;A09-P1-IBLEAF-04-04:MQM9701/U1"), switch_name("spine-01")
    ('A09-P1-IBLEAF-04-04', 'spine-01')
    """
    m = _MLNX_SWITCH.match(desc.strip())
    return m.group(1) if m else desc


def named(topo: IbTopology, names: Mapping[int, str]) -> tuple[IbTopology, int]:
    """``topo`` with the description of every node whose GUID ``names`` maps replaced."""
    if not names:
        return topo, 0
    nodes = tuple(
        replace(n, desc=names[n.guid]) if n.guid is not None and n.guid in names else n
        for n in topo.nodes
    )
    return replace(topo, nodes=nodes), sum(1 for n in topo.nodes if n.guid in names)


def raw_network(topo: IbTopology) -> RawNetwork:
    """The dump as switches, NICs and cables (each cable once, rate from either end).

    SHARP Aggregation Nodes (:func:`aggregation_nodes`) and their cables are
    left out, with a note.
    """
    agg = aggregation_nodes(topo)
    switches = tuple(
        RawSwitch(key=n.id, desc=switch_name(n.desc), ports=n.nports, line=n.line)
        for n in topo.nodes
        if n.kind == "switch"
    )
    nics = tuple(
        RawNic(key=n.id, desc=n.desc, ports=n.nports, line=n.line,
               sysimg=f"{n.sysimgguid:#x}" if n.sysimgguid is not None else None)
        for n in topo.nodes
        if n.kind == "ca" and n.id not in agg
    )  # fmt: skip
    notes: list[str] = []
    if topo.skipped:
        notes.append(skipped_note(topo.skipped))
    if agg:
        rules = Counter(r for rs in agg.values() for r in rs)
        how = ", ".join(f"{c} by {r}" for r, c in sorted(rules.items()))
        hosts = Counter(p.remote for a in agg for p in topo.node(a).ports)
        notes.append(
            f"{len(agg)} SHARP Aggregation Node(s) left out of the compute fabric ({how}); "
            f"they sit on {len(hosts)} switch(es), one each"
            + ("" if all(c == 1 for c in hosts.values()) else " or more")
        )
    renamed = sum(1 for n in topo.nodes if n.kind == "switch" and switch_name(n.desc) != n.desc)
    if renamed:
        notes.append(
            f"{renamed} switch description(s) of the form 'MF0;<name>:<model>/U1' are named <name>"
        )
    seen: dict[frozenset[tuple[str, int]], RawCable] = {}
    for n in topo.nodes:
        if n.id in agg:
            continue
        for p in n.ports:
            if p.remote in agg:
                continue
            key = frozenset({(n.id, p.port), (p.remote, p.remote_port)})
            rate = ib_rate(p.rate) if p.rate else None
            gbps, lanes = (rate[2], rate[0]) if rate else (None, 1)
            have = seen.get(key)
            if have is None:
                seen[key] = RawCable(n.id, p.port, p.remote, p.remote_port, gbps, lanes, p.line)
            elif have.gbps is None or (gbps is not None and gbps < have.gbps):
                seen[key] = RawCable(have.a, have.a_port, have.b, have.b_port, gbps, lanes,
                                     have.line)  # fmt: skip
    return RawNetwork(
        path=topo.path, fmt="ibnetdiscover", switches=switches, nics=nics,
        cables=tuple(seen.values()), notes=tuple(notes),
    )  # fmt: skip


def fabric_from_ibnetdiscover(
    topo: IbTopology, rules: InferenceRules | None = None, *, name: str | None = None
) -> Fabric:
    """Infer a :class:`Fabric` from a parsed dump (see ``docs/importers.md``)."""
    rules = rules or InferenceRules()
    topo, renamed = named(topo, rules.node_names)
    raw = raw_network(topo)
    if rules.node_names:
        note = f"{renamed} of {len(topo.nodes)} node(s) named by the node-name map"
        raw = replace(raw, notes=(*raw.notes, note))
    fabric, _ = build_network(raw, rules, name=name or Path(dump_name(topo.path)).stem)
    return fabric


def load_ibnetdiscover(
    path: str | Path, rules: InferenceRules | None = None, *, name: str | None = None
) -> Fabric:
    """Read an ``ibnetdiscover`` dump or ibsim net file and infer its :class:`Fabric`."""
    p = str(path)
    return fabric_from_ibnetdiscover(
        parse_ibnetdiscover(read_text(p, "ibnetdiscover"), p), rules, name=name
    )
