"""``dump_lfts`` and ``ibnetdiscover`` output read into routing tables and live wiring (edge).

Everything is keyed by node description, which carries the harness's names
(see :mod:`harness.backends.ibsim.net`).

``dump_lfts`` (``dump_fts`` of infiniband-diags 44, as ``ibroute``) misses one
entry on some fabrics: it reads a switch's LFT in 64-entry blocks from block 0
up to, but not including, ``ALIGN(top, 64) / 64``, where ``top`` is the
switch's ``LinearFDBTop`` (the highest LID it forwards).  When ``top`` is a
multiple of 64 that LID is the first entry of a block the tool never reads: its
header says ``[0x0-0x1140]`` and its rows stop at ``0x113f``.  On b200-16su
(4,416 LIDs) that was ``su16/node16 mlx5_7``, with no entry in any dumped table
although every switch forwards it.  :class:`LftHead` says when that happens and
:func:`parse_lft_block` reads the block from ``smpdump`` (the raw
LinearForwardingTable attribute, ``0x19``), which the simulation then asks for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field

from harness.errors import BackendError
from harness.importers.ibnetdiscover import parse_ibnetdiscover

_LFT_HEAD = re.compile(
    r"^Unicast lids \[0x[0-9a-fA-F]+-(0x[0-9a-fA-F]+)\] of switch (?:DR path slid \d+; "
    r"dlid \d+; ([0-9,]+) )?.*guid (0x[0-9a-fA-F]+) \((.*)\):\s*$"
)
_LFT_ROW = re.compile(
    r"^(0x[0-9a-fA-F]+)\s+(\d+)\s+:\s+\((.+?) portguid (0x[0-9a-fA-F]+): '(.*)'\)"
)


#: Entries per LinearForwardingTable block (one SMP's 64 data bytes, one byte a LID).
LFT_BLOCK = 64
#: The attribute id of the LinearForwardingTable (IBA 14.2.5.10), for ``smpdump``.
LFT_ATTRIBUTE = "0x19"
#: An LFT entry that forwards nowhere.
NO_PORT = 0xFF


@dataclass(frozen=True, slots=True)
class LftHead:
    """What ``dump_lfts`` says of one switch's table: how it reached it, and its top LID."""

    path: str  # the directed route it reached the switch by ("0,1,33"; "" when LID-routed)
    top: int  # the highest LID of the dumped range (the switch's LinearFDBTop)

    @property
    def top_unread(self) -> bool:
        """Whether the tool skipped LID ``top``: the first entry of a block it never reads.

        >>> LftHead("0,1", 0x1140).top_unread, LftHead("0,1", 0x113F).top_unread
        (True, False)
        """
        return self.top > 0 and self.top % LFT_BLOCK == 0

    @property
    def top_block(self) -> int:
        """The LFT block (of 64 LIDs) that holds LID ``top``."""
        return self.top // LFT_BLOCK


@dataclass(frozen=True, slots=True)
class Lfts:
    """Every switch's linear forwarding table: switch description -> {destination: out port}.

    A destination is the node description of the LID's owner (a switch's own
    LID has out port 0).  ``lids`` maps each description to its LID.
    """

    tables: dict[str, dict[str, int]]
    lids: dict[str, int]
    heads: dict[str, LftHead] = field(default_factory=dict)

    @property
    def entries(self) -> int:
        """How many forwarding entries all the tables hold together."""
        return sum(len(t) for t in self.tables.values())


def parse_dump_lfts(text: str) -> Lfts:
    """Read ``dump_lfts`` output.

    >>> head = "Unicast lids [0x0-0x2] of switch DR path slid 0; dlid 0; 0,1 guid 0x20 (leaf):"
    >>> t = parse_dump_lfts(head + '''
    ...   Lid  Out   Destination
    ...        Port     Info
    ... 0x0001 000 : (Switch portguid 0x0000000000000020: 'leaf')
    ... 0x0002 003 : (Channel Adapter portguid 0x0000000000000011: 'n1 mlx5_0')
    ... 2 valid lids dumped
    ... ''')
    >>> t.tables, t.lids, t.heads
    ({'leaf': {'leaf': 0, 'n1 mlx5_0': 3}}, {'leaf': 1, 'n1 mlx5_0': 2}, \
{'leaf': LftHead(path='0,1', top=2)})
    """
    tables: dict[str, dict[str, int]] = {}
    lids: dict[str, int] = {}
    heads: dict[str, LftHead] = {}
    current: dict[str, int] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        head = _LFT_HEAD.match(line)
        if head:
            current = tables.setdefault(head.group(4), {})
            heads[head.group(4)] = LftHead(head.group(2) or "", int(head.group(1), 16))
            continue
        row = _LFT_ROW.match(line)
        if row:
            if current is None:
                msg = f"dump_lfts output line {n}: a table row before any switch header"
                raise BackendError(msg)
            desc = row.group(5)
            current[desc] = int(row.group(2))
            lids[desc] = int(row.group(1), 16)
    return Lfts(tables, lids, heads)


def parse_lft_block(text: str) -> tuple[int, ...]:
    """The 64 out ports of one LFT block from ``smpdump``'s hex dump (two bytes a word).

    >>> block = parse_lft_block("30ff ffff" + " ffff" * 30 + "\\n")
    >>> len(block), block[:3], block[-1] == NO_PORT
    (64, (48, 255, 255), True)
    """
    words = re.findall(r"\b[0-9a-fA-F]{4}\b", text)
    out = tuple(b for w in words for b in bytes.fromhex(w))
    if len(out) != LFT_BLOCK:
        msg = f"smpdump printed {len(out)} bytes of an LFT block, not {LFT_BLOCK}: {text[:200]!r}"
        raise BackendError(msg)
    return out


def parse_node_description(text: str) -> str:
    """The description ``smpquery nodedesc`` prints.

    >>> parse_node_description("Node Description:..............su16/node16 mlx5_7\\n")
    'su16/node16 mlx5_7'
    """
    m = re.search(r"Node Description:\.*(.*)$", text, re.MULTILINE)
    if m is None:
        msg = f"smpquery nodedesc printed no description: {text[:200]!r}"
        raise BackendError(msg)
    return m.group(1).strip()


@dataclass(frozen=True, slots=True)
class Wiring:
    """The links ``ibnetdiscover`` found up: (description, port) -> (description, port)."""

    peer: dict[tuple[str, int], tuple[str, int]]
    switches: frozenset[str]
    hcas: frozenset[str]

    def linked(self, desc: str, port: int) -> bool:
        """Whether port ``port`` of node ``desc`` has a link up."""
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


def parse_switch_guids(text: str) -> dict[str, int]:
    """Switch description -> node GUID, from ``ibnetdiscover`` output."""
    topo = parse_ibnetdiscover(text, "<ibnetdiscover>")
    return {n.desc: n.guid for n in topo.nodes if n.kind == "switch" and n.guid is not None}
