"""Which leaves reach which under the fabric's routing (pure).

``paths`` says which routes the fabric's routing uses:

``up-down`` (the default)
    OpenSM's ftree and updn engines, and eBGP in a Clos with RFC 7938 AS
    numbering (one AS for the spines of a tier), route only *up-down* paths:
    a packet climbs from its leaf towards the spines and cores, then descends
    to the destination leaf, and never goes down and up again through a lower
    tier (a *valley*).  Two leaves reach each other iff the switches above
    them share one: the set ``up(L)`` of live switches reachable from leaf
    ``L`` by going only up meets ``up(M)``.
``shortest``
    Min-hop routing over any live path (OpenSM minhop): two leaves reach each
    other iff they are in one component of the live switch graph.

Each live leaf gets a *signature*, a frozenset of integers: two leaves reach
each other iff their signatures meet.  Under ``shortest`` it is the leaf's
component; under ``up-down`` it is the class of leaves it belongs to when
reachability is transitive there (always on a healthy Clos), otherwise the
peaks (top-most switches) above it, one per distinct set of leaves below.

>>> from harness.fabric import preset
>>> from harness.invariants.topology import healthy_observation
>>> f = preset("seed-a800")
>>> r = leaf_reach(f, healthy_observation(f), "up-down")
>>> r.complete, len(set(r.signature.values()))
(True, 1)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import PATH_RULES
from harness.fabric.routing import PathRule
from harness.fabric.union_find import UnionFind
from harness.invariants.servers import groups
from harness.invariants.state import Observation
from harness.invariants.topology import IntArray
from harness.invariants.topology import kind_mask
from harness.invariants.topology import switch_components

Signature = frozenset[int]


@dataclass(frozen=True, slots=True)
class LeafReach:
    """Per live leaf its signature (two leaves reach each other iff theirs meet).

    ``complete``: every live leaf reaches every other live leaf.
    """

    rule: PathRule
    signature: Mapping[int, Signature]
    complete: bool

    def reaches(self, leaf_a: int, leaf_b: int) -> bool:
        """Whether live leaves ``leaf_a`` and ``leaf_b`` reach each other."""
        a, b = self.signature.get(leaf_a), self.signature.get(leaf_b)
        return a is not None and b is not None and bool(a & b)


@dataclass(frozen=True, slots=True)
class UpLinks:
    """The live up-links of the switch graph over compact switch ids.

    ``pos``: element -> compact id (-1: not a live switch); ``switches``: the
    element of each id; ``tier`` per id (leaf 0, spine 1, core 2); ``up``: per
    id its live up-links as (upper id, link); ``down``: per id the ids below;
    ``lower``: live switch cable -> its lower id; ``leaves``: ids of live leaves.
    """

    pos: IntArray
    switches: IntArray
    tier: list[int]
    up: list[list[tuple[int, int]]]
    down: list[list[int]]
    lower: dict[int, int]
    leaves: list[int]

    def peaks(self) -> list[int]:
        """Per id, the peaks above it (itself when nothing is): a bit set over ids."""
        out = [0] * len(self.tier)
        for x in sorted(range(len(self.tier)), key=lambda i: -self.tier[i]):
            acc = 0
            for z, _ in self.up[x]:
                acc |= out[z]
            out[x] = acc or (1 << x)
        return out


def up_links(fabric: Fabric, obs: Observation) -> UpLinks:
    """The live up-links of a fabric under one observation."""
    f = fabric
    sw_mask = kind_mask(f, COMPUTE_SWITCH_KINDS) & obs.element_up
    switches = np.flatnonzero(sw_mask).astype(np.int32)
    pos = np.full(f.n_elements, -1, dtype=np.int32)
    pos[switches] = np.arange(switches.size, dtype=np.int32)
    kinds = f.kind[switches]
    tier = ((kinds == int(Kind.SPINE)) * 1 + (kinds == int(Kind.CORE)) * 2).tolist()
    by_kind = f.links_by_kind
    links = np.concatenate([by_kind[LinkKind.LEAF_SPINE], by_kind[LinkKind.SPINE_CORE]])
    links = links[obs.link_capacity[links] > 0]
    lo, hi = pos[f.link_a[links]], pos[f.link_b[links]]
    keep = (lo >= 0) & (hi >= 0)
    n = int(switches.size)
    up: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    down: list[list[int]] = [[] for _ in range(n)]
    lower: dict[int, int] = {}
    for link, a, b in zip(links[keep].tolist(), lo[keep].tolist(), hi[keep].tolist(),
                          strict=True):  # fmt: skip
        up[a].append((b, link))
        down[b].append(a)
        lower[link] = a
    leaves = pos[f.leaves[sw_mask[f.leaves]]].tolist()
    return UpLinks(pos, switches, tier, up, down, lower, leaves)


def _bits(x: int) -> list[int]:
    """The positions of the set bits of ``x``."""
    out = []
    while x:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out


def up_down_signatures(links: UpLinks) -> tuple[dict[int, Signature], bool]:
    """Per live leaf (element index) its up-down signature; whether every pair reaches."""
    peaks = links.peaks()
    rows: dict[int, list[int]] = {}
    for c in links.leaves:
        rows.setdefault(peaks[c], []).append(c)
    distinct = list(rows)
    uf: UnionFind[Hashable] = UnionFind()
    meet_all = True
    for i, a in enumerate(distinct):
        uf.union(i)
        for j in range(i + 1, len(distinct)):
            if a & distinct[j]:
                uf.union(i, j)
            else:
                meet_all = False
    sig_of_row: list[Signature] = [frozenset()] * len(distinct)
    comps = groups(uf, range(len(distinct)))
    offset = len(comps)
    for cid, members in enumerate(comps):
        if meet_all or all(
            distinct[a] & distinct[b] for k, a in enumerate(members) for b in members[k + 1 :]
        ):  # everyone reaches everyone: one class
            for r in members:
                sig_of_row[r] = frozenset((cid,))
            continue
        # one id per distinct set of rows below a peak
        pattern_of_peak: dict[int, int] = {}
        for k, r in enumerate(members):
            for b in _bits(distinct[r]):
                pattern_of_peak[b] = pattern_of_peak.get(b, 0) | (1 << k)
        pid: dict[int, int] = {}
        for pattern in pattern_of_peak.values():
            if pattern not in pid:
                pid[pattern] = offset
                offset += 1
        for k, r in enumerate(members):
            sig_of_row[r] = frozenset(v for p, v in pid.items() if p >> k & 1)
    out: dict[int, Signature] = {}
    for r, row in enumerate(distinct):
        for c in rows[row]:
            out[int(links.switches[c])] = sig_of_row[r]
    return out, meet_all


def leaf_reach(
    fabric: Fabric,
    obs: Observation,
    rule: PathRule,
    comp: IntArray | None = None,
    links: UpLinks | None = None,
) -> LeafReach:
    """Every live leaf's signature under ``rule`` (``comp``: :func:`switch_components`;
    ``links``: :func:`up_links` of ``obs``, when they are at hand)."""
    f = fabric
    if rule == "shortest":
        c = switch_components(f, obs) if comp is None else comp
        live = f.leaves[c[f.leaves] >= 0]
        sig = {int(x): frozenset((int(c[x]),)) for x in live.tolist()}
        return LeafReach(rule, sig, len({int(c[x]) for x in live.tolist()}) <= 1)
    sigs, complete = up_down_signatures(up_links(f, obs) if links is None else links)
    return LeafReach(rule, sigs, complete)


def check_rule(value: str) -> PathRule:
    """``value`` as a path rule (a ValueError naming the choices if it is none)."""
    for r in PATH_RULES:
        if value == r:
            return r
    msg = f"paths must be one of {', '.join(PATH_RULES)}, not {value!r}"
    raise ValueError(msg)


class UpDownIndex:
    """Answers fast whether removing switches and cables breaks up-down reachability.

    Built once for a base state and the leaves that matter there (``leaves``:
    element indices, e.g. those with live NIC ports); :attr:`complete` says
    whether they all reach each other.  Each switch holds the set of peaks
    above it as a bit set (a Python int over compact switch ids); a case
    recomputes only the switches below what it removes (once per distinct set
    of up-neighbours for the leaves) and checks that every two of the leaves
    that matter which shared a peak in the base still do (on a complete base:
    that every two still share one).  Exact: the tests compare it with
    :func:`up_down_signatures` on the reduced fabric.
    """

    __slots__ = (
        "_cut_info",
        "_down",
        "_key_of",
        "_keys",
        "_lower",
        "_memo",
        "_order",
        "_peaks",
        "_pos",
        "_relevant",
        "_row_keys",
        "_safe_memo",
        "_up",
        "complete",
    )

    def __init__(
        self,
        fabric: Fabric,
        obs: Observation,
        leaves: Iterable[int],
        links: UpLinks | None = None,
    ) -> None:
        ul = up_links(fabric, obs) if links is None else links  # ``links``: of ``obs``, reused
        self._pos = ul.pos
        self._up, self._down, self._lower = ul.up, ul.down, ul.lower
        self._order = [-t for t in ul.tier]  # sort key: higher tiers first
        peaks_of = ul.peaks()
        self._peaks = peaks_of
        # the leaves that matter, by their up-neighbours (such leaves share every answer)
        keys: dict[tuple[int, ...], list[int]] = {}
        for leaf in sorted(set(leaves)):
            c = int(ul.pos[leaf])
            if c >= 0:
                key = tuple(sorted({z for z, _ in ul.up[c]})) or (-1 - c,)
                keys.setdefault(key, []).append(c)
        self._keys = keys
        self._key_of = {c: key for key, members in keys.items() for c in members}
        # the leaves that matter and every switch above them: nothing else changes their rows
        relevant = [False] * len(ul.tier)
        stack = [c for members in keys.values() for c in members]
        while stack:
            c = stack.pop()
            if not relevant[c]:
                relevant[c] = True
                stack.extend(z for z, _ in ul.up[c])
        self._relevant = relevant
        self._memo: dict[tuple[tuple[int, ...], int, int], bool] = {}
        self._safe_memo: dict[int, bool] = {}
        self._cut_info: dict[int, dict[int, tuple[int, int]]] = {}
        row_keys: dict[int, set[tuple[int, ...]]] = {}
        for key, members in keys.items():
            row_keys.setdefault(peaks_of[members[0]], set()).add(key)
        self._row_keys = row_keys
        self.complete = _all_meet(row_keys)

    def breaks(self, dead: Iterable[int], cut: Iterable[int]) -> bool:
        """Whether removing the switches ``dead`` and the cables ``cut`` (element and link
        indices) leaves two of the leaves that matter without a shared peak."""
        dead, cut = list(dead), list(cut)
        if not dead and len(cut) == 1:
            return self.breaks_cut(cut[0])
        if len(dead) == 1 and not cut and self._pos[dead[0]] >= 0:
            z = int(self._pos[dead[0]])
            if self._key_of.get(z) is None and self._safe(z):  # not a leaf that matters
                return False
        return self._breaks(dead, cut)

    def breaks_cut(self, link: int) -> bool:
        """:meth:`breaks` of the one cable ``link``.

        An uplink of a leaf that matters: the answer depends only on the leaf's
        up-neighbours (its key), the switch the cable goes up to, and how many
        cables go there, so it is computed once per such triple.
        """
        c = self._lower.get(link, -1)
        if c < 0:
            return self._breaks([], [link])
        info = self._cut_info.get(c)
        if info is None:  # per cable up from ``c``: (the switch above, cables to it)
            counts = Counter(z for z, _ in self._up[c])
            info = self._cut_info[c] = {x: (z, counts[z]) for z, x in self._up[c]}
        z, count = info[link]
        key = self._key_of.get(c)
        if key is None:
            return not self._safe(z) and self._breaks([], [link])
        memo = (key, z, count)
        got = self._memo.get(memo)
        if got is None:
            got = self._memo[memo] = self._breaks([], [link])
        return got

    def _safe(self, z: int) -> bool:
        """Whether every two rows (and each row with itself) still share a peak outside the
        peaks above switch ``z``: then ``z``, or a cable up into it, can go, since a row loses
        at most those peaks (what it reaches through ``z``; the rest it reaches another way)."""
        got = self._safe_memo.get(z)
        if got is None:
            keep = ~self._peaks[z]
            rows = list(self._row_keys)
            got = self._safe_memo[z] = all(r & keep for r in rows) and all(
                a & b & keep for i, a in enumerate(rows) for b in rows[i + 1 :] if a & b
            )
        return got

    def _breaks(self, dead: list[int], cut: list[int]) -> bool:
        pos = self._pos
        rel = self._relevant
        gone = {int(pos[x]) for x in dead if pos[x] >= 0 and rel[pos[x]]}
        cut_set = {link for link in cut if link in self._lower and rel[self._lower[link]]}
        cut_lower = {self._lower[link] for link in cut_set}
        stack = [y for c in gone for y in self._down[c]] + list(cut_lower)
        affected: set[int] = set()
        while stack:
            c = stack.pop()
            if c in affected or c in gone:
                continue
            affected.add(c)
            stack.extend(self._down[c])
        if not affected:  # only leaves, or switches with nothing below: no row changes
            return False
        new: dict[int, int] = {}
        order = self._order
        peaks = self._peaks
        for c in sorted(affected, key=order.__getitem__):
            if order[c] == 0 and c not in cut_lower:
                continue  # leaves: once per key, below
            new[c] = self._recompute(c, gone, cut_set, new)
        touched: set[tuple[int, ...]] = set()
        key_of = self._key_of
        for c in affected:
            key = key_of.get(c)
            if key is not None:
                touched.add(key)
        for c in gone:
            key = key_of.get(c)
            if key is not None:
                touched.add(key)
        rows: list[int] = []
        variants: dict[tuple[int, ...], list[int]] = {}
        for key in touched:
            start = len(rows)
            members = self._keys[key]
            # members of a key share their up-neighbours, so their peaks, unless a cable
            # of one of them is cut (those are in ``new``)
            plain = False
            moved: list[int] = []
            for c in members:
                if c in gone:
                    continue
                if c in new:
                    rows.append(new[c])
                elif c in affected:
                    moved.append(c)
                else:
                    plain = True
            if plain:
                rows.append(peaks[members[0]])
            if moved:
                above = self._above(moved[0], gone, cut_set, new)
                if above:
                    rows.append(above)
                else:  # no way up: each such leaf reaches only itself
                    rows.extend(1 << c for c in moved)
            variants[key] = rows[start:]
        if not self.complete:
            return self._breaks_met(variants)
        # the untouched keys' rows met each other in the base: check only the new ones
        fresh = list(dict.fromkeys(rows))
        if not _all_meet(fresh):
            return True
        kept = [r for r, keys in self._row_keys.items() if not keys <= touched]
        return any(not a & b for a in fresh for b in kept)

    def _breaks_met(self, variants: dict[tuple[int, ...], list[int]]) -> bool:
        """Whether two leaves that reached each other in the base (an incomplete one) no
        longer do, given the rows the leaves of the touched keys have now (``variants``)."""
        peaks = self._peaks
        row = {key: peaks[members[0]] for key, members in self._keys.items()}
        touched = list(variants)
        for i, k in enumerate(touched):
            mine = variants[k]
            if not _all_meet(mine):  # two leaves of one key always met
                return True
            for m in touched[i + 1 :]:
                if row[k] & row[m] and any(not a & b for a in mine for b in variants[m]):
                    return True
            for m, r in row.items():
                if m not in variants and row[k] & r and any(not a & r for a in mine):
                    return True
        return False

    def _recompute(self, c: int, gone: set[int], cut: set[int], new: dict[int, int]) -> int:
        return self._above(c, gone, cut, new) or (1 << c)

    def _above(self, c: int, gone: set[int], cut: set[int], new: dict[int, int]) -> int:
        """The peaks above switch ``c`` through what is left (0: none)."""
        acc = 0
        for z, link in self._up[c]:
            if z not in gone and link not in cut:
                acc |= new.get(z, self._peaks[z])
        return acc


def _all_meet(rows: Iterable[int]) -> bool:
    """Whether every two of the peak sets ``rows`` (bit sets) share a peak."""
    vals = list(dict.fromkeys(rows))
    for i, a in enumerate(vals):
        for b in vals[i + 1 :]:
            if not a & b:
                return False
    return True
