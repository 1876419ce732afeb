"""``dump_lfts`` and ``ibnetdiscover`` output read into routing tables and live wiring (edge).

Everything is keyed by node description, which carries the harness's names
(see :mod:`harness.backends.ibsim.net`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import BackendError
from harness.importers.ibnetdiscover import parse_ibnetdiscover

_LFT_HEAD = re.compile(r"^Unicast lids \[[^\]]*\] of switch .* guid (0x[0-9a-fA-F]+) \((.*)\):\s*$")
_LFT_ROW = re.compile(
    r"^(0x[0-9a-fA-F]+)\s+(\d+)\s+:\s+\((.+?) portguid (0x[0-9a-fA-F]+): '(.*)'\)"
)


@dataclass(frozen=True, slots=True)
class Lfts:
    """Every switch's linear forwarding table: switch description -> {destination: out port}.

    A destination is the node description of the LID's owner (a switch's own
    LID has out port 0).  ``lids`` maps each description to its LID.
    """

    tables: dict[str, dict[str, int]]
    lids: dict[str, int]

    @property
    def entries(self) -> int:
        return sum(len(t) for t in self.tables.values())


def parse_dump_lfts(text: str) -> Lfts:
    """Read ``dump_lfts`` output.

    >>> head = "Unicast lids [0x0-0x2] of switch DR path slid 0; dlid 0; 0 guid 0x20 (leaf):"
    >>> t = parse_dump_lfts(head + '''
    ...   Lid  Out   Destination
    ...        Port     Info
    ... 0x0001 000 : (Switch portguid 0x0000000000000020: 'leaf')
    ... 0x0002 003 : (Channel Adapter portguid 0x0000000000000011: 'n1 mlx5_0')
    ... 2 valid lids dumped
    ... ''')
    >>> t.tables, t.lids
    ({'leaf': {'leaf': 0, 'n1 mlx5_0': 3}}, {'leaf': 1, 'n1 mlx5_0': 2})
    """
    tables: dict[str, dict[str, int]] = {}
    lids: dict[str, int] = {}
    current: dict[str, int] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        head = _LFT_HEAD.match(line)
        if head:
            current = tables.setdefault(head.group(2), {})
            continue
        row = _LFT_ROW.match(line)
        if row:
            if current is None:
                msg = f"dump_lfts output line {n}: a table row before any switch header"
                raise BackendError(msg)
            desc = row.group(5)
            current[desc] = int(row.group(2))
            lids[desc] = int(row.group(1), 16)
    return Lfts(tables, lids)


@dataclass(frozen=True, slots=True)
class Wiring:
    """The links ``ibnetdiscover`` found up: (description, port) -> (description, port)."""

    peer: dict[tuple[str, int], tuple[str, int]]
    switches: frozenset[str]
    hcas: frozenset[str]

    def linked(self, desc: str, port: int) -> bool:
        return (desc, port) in self.peer


def parse_wiring(text: str) -> Wiring:
    """Read ``ibnetdiscover`` output into the live links between described nodes."""
    topo = parse_ibnetdiscover(text, "<ibnetdiscover>")
    desc = {node.id: node.desc for node in topo.nodes}
    peer: dict[tuple[str, int], tuple[str, int]] = {}
    for node in topo.nodes:
        for p in node.ports:
            if p.remote in desc:
                peer[(node.desc, p.port)] = (desc[p.remote], p.remote_port)
    switches = frozenset(n.desc for n in topo.nodes if n.kind == "switch")
    hcas = frozenset(n.desc for n in topo.nodes if n.kind != "switch")
    return Wiring(peer, switches, hcas)
