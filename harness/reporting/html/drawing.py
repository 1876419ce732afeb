"""Lay a fabric out as tiers of cells and cable bundles (reporting stage, pure).

Tiers are rows, top to bottom: cores, spines, leaves, servers.  Servers are drawn
in blocks, one per scalable unit (SU), with one cell per server; the leaves of an
SU sit above its block, ordered by rail.  Cables are drawn as bundles: every access
cable of one SU to one leaf is one line, every cable from one SU's leaves to one
spine is one line, so seed-a800 (1,600 cables) is 240 lines.  Big fabrics are
aggregated further (SUs into blocks of SUs, a cell per block of servers or per
rail of leaves, bins of spines and cores) so a drawing never holds more than a few
hundred cells per row.  A cell or bundle shows the worst mark of what it holds;
its tooltip lists every mark.

The result, a :class:`Drawing`, is plain geometry; ``fabric.svg.j2`` renders it.

>>> from harness.fabric import preset
>>> d = draw(preset("seed-a800"), Marks())
>>> len([c for c in d.cells if c.tier == "server"]), len(d.bundles), d.highlighted
(200, 0, 0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.reporting.html.marks import Mark
from harness.reporting.html.marks import Marks
from harness.reporting.html.marks import worst

MAX_BLOCKS = 40  # server blocks per row
MAX_SERVER_CELLS = 400  # above: one cell per block of servers
MAX_LEAF_CELLS = 320  # above: one cell per rail of a block
MAX_SWITCH_CELLS = 160  # spines or cores per row; above: bins
MAX_BUNDLES = 300  # leaf-spine bundles per leaf; above: per block
WIDTH = 1200.0
LEFT = 70.0  # room for the row labels
RIGHT = 12.0
NOTE_LIMIT = 8  # marks listed in one tooltip


@dataclass(frozen=True, slots=True)
class Cell:
    """One drawn unit: an element or a group of elements of one tier."""

    x: float
    y: float
    w: float
    h: float
    tier: str  # server | leaf | spine | core
    key: str  # the element id, or the group's name
    title: str  # the tooltip
    members: int
    status: str = ""  # the worst mark's status ("" when healthy)
    source: str = ""
    lost: tuple[str, ...] = ()  # lost jobs running on it
    label: str = ""  # drawn inside when it fits


@dataclass(frozen=True, slots=True)
class Bundle:
    """Cables between two cells (or a block and a cell) drawn as one line."""

    x1: float
    y1: float
    x2: float
    y2: float
    tier: str  # access | leaf-spine | spine-core
    cables: int
    title: str
    status: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class Label:
    """A text label at ``(x, y)`` of the drawing (SVG ``text-anchor`` and CSS class)."""

    x: float
    y: float
    text: str
    anchor: str = "middle"
    cls: str = "block"


@dataclass(frozen=True)
class Drawing:
    """The geometry of one fabric drawing."""

    fabric: str
    width: float
    height: float
    cells: tuple[Cell, ...]
    bundles: tuple[Bundle, ...]  # only the marked ones; healthy ones are in ``healthy``
    healthy: tuple[tuple[str, str, str], ...]  # (tier, SVG path data, tooltip)
    labels: tuple[Label, ...]
    not_drawn: tuple[str, ...]  # marks on what the drawing has no place for
    aggregated: tuple[str, ...]  # how the drawing was aggregated, in words

    @property
    def highlighted(self) -> int:
        """Cells and bundles drawn with a mark."""
        return sum(1 for c in self.cells if c.status) + sum(1 for b in self.bundles if b.status)

    @property
    def lost_cells(self) -> int:
        """The cells drawn as lost."""
        return sum(1 for c in self.cells if c.lost)


@dataclass
class _Unit:
    tier: str
    key: str
    members: list[int]
    block: int = -1  # the server block it belongs to (servers, leaves)
    cell: Cell | None = None


def _chunks(items: Sequence[int], limit: int) -> list[list[int]]:
    size = max(1, math.ceil(len(items) / limit))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _span(fabric: Fabric, members: Sequence[int]) -> str:
    first, last = fabric.ids[members[0]], fabric.ids[members[-1]]
    return first if len(members) == 1 else f"{first} .. {last} ({len(members)})"


def _blocks(fabric: Fabric) -> list[list[int]]:
    """SU numbers per server block (at most MAX_BLOCKS blocks)."""
    sus = sorted({int(s) for s in fabric.su[fabric.servers].tolist()} |
                 {int(s) for s in fabric.su[fabric.leaves].tolist()})  # fmt: skip
    return _chunks(sus, MAX_BLOCKS) if sus else []


def _block_name(sus: Sequence[int]) -> str:
    def name(s: int) -> str:
        return f"su{s:02d}" if s > 0 else "no SU"

    return name(sus[0]) if len(sus) == 1 else f"{name(sus[0])}-{name(sus[-1])}"


class _Layout:
    def __init__(self, fabric: Fabric, marks: Marks) -> None:
        self.f = fabric
        self.marks = marks
        self.units: list[_Unit] = []
        self.unit_of: dict[int, _Unit] = {}
        self.aggregated: list[str] = []
        self.blocks = _blocks(fabric)
        self.block_of_su = {s: b for b, sus in enumerate(self.blocks) for s in sus}

    # -- units -----------------------------------------------------------------
    def add(self, unit: _Unit) -> None:
        self.units.append(unit)
        for i in unit.members:
            self.unit_of[i] = unit

    def server_units(self) -> list[list[_Unit]]:
        f = self.f
        servers = sorted(f.servers.tolist(), key=lambda i: (int(f.su[i]), int(f.node_no[i])))
        per_block: list[list[int]] = [[] for _ in self.blocks]
        for s in servers:
            per_block[self.block_of_su[int(f.su[s])]].append(s)
        aggregate = len(servers) > MAX_SERVER_CELLS
        if aggregate:
            self.aggregated.append(f"one cell per block of servers ({len(servers):,} servers)")
        out: list[list[_Unit]] = []
        for b, members in enumerate(per_block):
            groups = [members] if aggregate and members else [[s] for s in members]
            row = [_Unit("server", _span(f, g), g, b) for g in groups]
            for u in row:
                self.add(u)
                for s in u.members:  # a server's parts are drawn in its cell
                    for p in f.parts_of(s).tolist():
                        self.unit_of[int(p)] = u
            out.append(row)
        return out

    def leaf_units(self) -> list[list[_Unit]]:
        f = self.f
        leaves = sorted(
            f.leaves.tolist(),
            key=lambda i: (int(f.su[i]), int(f.rail[i]), int(f.plane[i]), f.ids[i]),
        )
        aggregate = len(leaves) > MAX_LEAF_CELLS
        if aggregate:
            self.aggregated.append(f"one cell per rail of a block of leaves ({len(leaves):,})")
        out: list[list[_Unit]] = [[] for _ in self.blocks]
        groups: dict[tuple[int, int], list[int]] = {}
        for leaf in leaves:
            b = self.block_of_su[int(f.su[leaf])]
            key = (b, int(f.rail[leaf]) if aggregate else leaf)
            groups.setdefault(key, []).append(leaf)
        for (b, _), members in groups.items():
            u = _Unit("leaf", _span(f, members), members, b)
            self.add(u)
            out[b].append(u)
        return out

    def switch_units(self, tier: str, members: Sequence[int]) -> list[_Unit]:
        f = self.f
        ordered = sorted(members, key=lambda i: f.ids[i])
        if len(ordered) > MAX_SWITCH_CELLS:
            self.aggregated.append(f"{tier}s in bins ({len(ordered):,})")
        row = [_Unit(tier, _span(f, g), g) for g in _chunks(ordered, MAX_SWITCH_CELLS)]
        for u in row:
            self.add(u)
        return row

    # -- marks -----------------------------------------------------------------
    def unit_marks(self, unit: _Unit) -> list[Mark]:
        out: list[Mark] = []
        for i in unit.members:
            out.extend(self.marks.elements.get(i, ()))
            if unit.tier == "server":
                for p in self.f.parts_of(i).tolist():
                    out.extend(self.marks.elements.get(int(p), ()))
        return out

    def make_cell(self, unit: _Unit, box: tuple[float, float, float, float], label: str) -> Cell:
        x, y, w, h = box
        f = self.f
        ms = self.unit_marks(unit)
        top = worst(ms)
        lost = sorted({j for i in unit.members for j in self.marks.lost.get(i, ())})
        if len(unit.members) == 1:
            i = unit.members[0]
            head = f"{f.ids[i]} ({Kind(int(f.kind[i])).label})"
        else:
            head = f"{unit.tier}s {unit.key}"
        lines = [head, *_notes(ms)]
        if lost:
            lines.append("runs lost job(s): " + ", ".join(lost))
        cell = Cell(
            x, y, w, h, unit.tier, unit.key, "\n".join(lines), len(unit.members),
            top.status if top else "", top.source if top else "", tuple(lost), label,
        )  # fmt: skip
        unit.cell = cell
        return cell


def _notes(ms: Sequence[Mark]) -> list[str]:
    notes = list(dict.fromkeys(m.note for m in ms))
    out = notes[:NOTE_LIMIT]
    if len(notes) > NOTE_LIMIT:
        out.append(f"... and {len(notes) - NOTE_LIMIT} more")
    return out


def _server_grid(n: int, width: float, max_h: float) -> tuple[int, float]:
    """Columns and cell size for ``n`` server cells in a block ``width`` wide."""
    size = 24.0
    while size > 2.0:
        cols = max(1, int((width + 1) // size))
        rows = math.ceil(n / cols)
        if rows * size <= max_h:
            return cols, size
        size -= 1.0
    cols = max(1, int(width // 2))
    return cols, max_h / max(1, math.ceil(n / cols))


def draw(fabric: Fabric, marks: Marks) -> Drawing:
    """Lay ``fabric`` out with ``marks`` highlighted; see the module docstring."""
    lay = _Layout(fabric, marks)
    f = fabric
    server_rows = lay.server_units()
    leaf_rows = lay.leaf_units()
    spines = lay.switch_units("spine", f.spines.tolist())
    cores = lay.switch_units("core", f.cores.tolist())

    cells: list[Cell] = []
    labels: list[Label] = []
    usable = WIDTH - LEFT - RIGHT
    y = 26.0
    sw_h = 18.0
    rows_y: dict[str, float] = {}
    for tier, row in (("core", cores), ("spine", spines)):
        if not row:
            continue
        rows_y[tier] = y
        step = usable / len(row)
        w = max(2.0, min(34.0, step - 2.0))
        for k, u in enumerate(row):
            cx = LEFT + step * (k + 0.5)
            text = _short(f, u) if w >= 18 else ""
            cells.append(lay.make_cell(u, (cx - w / 2, y, w, sw_h), text))
        labels.append(Label(8, y + sw_h / 2 + 4, f"{tier}s ({sum(len(u.members) for u in row)})",
                            "start", "row"))  # fmt: skip
        y += 110.0 if tier == "core" else 120.0
    n_blocks = max(1, len(lay.blocks))
    block_w = usable / n_blocks
    gap = min(10.0, block_w * 0.12)
    inner = block_w - gap
    leaf_y = y
    rows_y["leaf"] = leaf_y
    for b, row in enumerate(leaf_rows):
        if not row:
            continue
        bx = LEFT + b * block_w + gap / 2
        w = max(2.0, min(26.0, (inner - 2.0 * (len(row) - 1)) / len(row)))
        total = w * len(row) + 2.0 * (len(row) - 1)
        x0 = bx + (inner - total) / 2
        for k, u in enumerate(row):
            text = _short(f, u) if w >= 16 else ""
            cells.append(lay.make_cell(u, (x0 + k * (w + 2.0), leaf_y, w, sw_h), text))
    labels.append(Label(8, leaf_y + sw_h / 2 + 4, f"leaves ({f.leaves.size})", "start", "row"))
    server_y = leaf_y + sw_h + 70.0
    rows_y["server"] = server_y
    max_h = 140.0
    block_bottom = server_y
    for b, row in enumerate(server_rows):
        bx = LEFT + b * block_w + gap / 2
        if row:
            if len(row) == 1 and len(row[0].members) > 1:
                cells.append(lay.make_cell(row[0], (bx, server_y, inner, 40.0), ""))
                block_bottom = max(block_bottom, server_y + 40.0)
            else:
                cols, size = _server_grid(len(row), inner, max_h)
                x0 = bx + (inner - cols * size) / 2
                for k, u in enumerate(row):
                    r, c = divmod(k, cols)
                    box = (x0 + c * size + 0.5, server_y + r * size + 0.5, size - 1.0, size - 1.0)
                    cells.append(lay.make_cell(u, box, ""))
                block_bottom = max(block_bottom, server_y + math.ceil(len(row) / cols) * size)
        if n_blocks <= 20 or b % math.ceil(n_blocks / 20) == 0:
            labels.append(Label(bx + inner / 2, 0.0, _block_name(lay.blocks[b])))
    labels.append(Label(8, server_y + 14, f"servers ({f.servers.size})", "start", "row"))
    label_y = block_bottom + 16.0
    labels = [Label(lb.x, label_y, lb.text, lb.anchor, lb.cls) if lb.cls == "block" else lb
              for lb in labels]  # fmt: skip
    bundles, healthy = _bundles(lay, server_y, block_w, gap)
    drawn = set(lay.unit_of)
    not_drawn = [m.note for i, ms in marks.elements.items() if i not in drawn for m in ms] + [
        m.note for i, ms in marks.links.items() if int(f.link_kind[i]) not in _BUNDLED for m in ms
    ]
    return Drawing(
        f.name, WIDTH, label_y + 14.0, tuple(cells), tuple(bundles), tuple(healthy),
        tuple(labels), tuple(not_drawn), tuple(lay.aggregated),
    )  # fmt: skip


_BUNDLED = {int(LinkKind.ACCESS), int(LinkKind.LEAF_SPINE), int(LinkKind.SPINE_CORE)}


def _short(f: Fabric, u: _Unit) -> str:
    """A label that fits in a small cell: the rail of a leaf, the number of a switch."""
    if len(u.members) != 1:
        return ""
    i = u.members[0]
    if u.tier == "leaf":
        tail = f.ids[i].rsplit("leaf-", 1)[-1]
        return tail if len(tail) <= 4 else f"r{int(f.rail[i])}"
    digits = "".join(ch for ch in f.ids[i].rsplit("-", 1)[-1] if ch.isdigit())
    return digits[-3:]


def _bundles(
    lay: _Layout, server_y: float, block_w: float, gap: float
) -> tuple[list[Bundle], list[tuple[str, str, str]]]:
    f = lay.f
    groups: dict[tuple[str, object, object], list[int]] = {}
    links = f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).tolist()
    per_leaf = sum(1 for i in links if int(f.link_kind[i]) == LinkKind.LEAF_SPINE)
    leaf_by_block = per_leaf > MAX_BUNDLES
    if leaf_by_block:
        lay.aggregated.append("leaf-spine cables bundled per SU block and spine")
    for i in links:
        a, b = int(f.link_a[i]), int(f.link_b[i])
        ua, ub = lay.unit_of.get(a), lay.unit_of.get(b)
        if ua is None or ub is None:
            continue
        kind = int(f.link_kind[i])
        if kind == LinkKind.ACCESS:
            key: tuple[str, object, object] = ("access", ua.block, id(ub))
        elif kind == LinkKind.LEAF_SPINE:
            key = ("leaf-spine", ua.block if leaf_by_block else id(ua), id(ub))
        else:
            key = ("spine-core", id(ua), id(ub))
        groups.setdefault(key, []).append(i)
    bundles: list[Bundle] = []
    paths: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    for (tier, _, _), members in groups.items():
        a0, b0 = int(f.link_a[members[0]]), int(f.link_b[members[0]])
        ca, cb = lay.unit_of[a0].cell, lay.unit_of[b0].cell
        if ca is None or cb is None:
            continue
        ua = lay.unit_of[a0]
        x2, y2 = cb.x + cb.w / 2, cb.y + cb.h
        if tier == "access":
            # from the leaf down to the top of its SU block, straight below the leaf
            bx = LEFT + ua.block * block_w + gap / 2
            x1 = min(max(x2, bx), bx + block_w - gap)
            y1 = server_y
            lower = f"servers of {_block_name(lay.blocks[ua.block])}"
        elif tier == "leaf-spine" and leaf_by_block:
            bx = LEFT + ua.block * block_w + gap / 2
            x1, y1 = bx + (block_w - gap) / 2, ca.y
            lower = f"leaves of {_block_name(lay.blocks[ua.block])}"
        else:
            x1, y1 = ca.x + ca.w / 2, ca.y
            lower = ca.key
        ms = [m for i in members for m in lay.marks.links.get(i, ())]
        top = worst(ms)
        title = "\n".join([f"{lower} -- {cb.key}: {len(members)} {tier} cable(s)", *_notes(ms)])
        if top is None:
            paths.setdefault(tier, []).append(f"M{x1:.1f} {y1:.1f}L{x2:.1f} {y2:.1f}")
            counts[tier] = counts.get(tier, 0) + len(members)
            continue
        bundles.append(Bundle(x1, y1, x2, y2, tier, len(members), title, top.status, top.source))
    healthy = [
        (tier, "".join(p), f"{counts[tier]:,} healthy {tier} cables in {len(p)} bundles")
        for tier, p in paths.items()
    ]
    return bundles, healthy
