"""The LFTs walked hop by hop: which HCA pairs have a route, over which switches.

For each destination HCA, every switch's next hop is read from its LFT and
followed over the live wiring until the destination's own port is reached
(a route), a port leads nowhere or to a switch without an entry (no route),
or a switch repeats (a loop: no route, and reported).  Each (switch,
destination) is walked once, so all pairs of seed-a800 (640,000) cost 51,600
steps, not 640,000 traceroutes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from dataclasses import field

import numpy as np
import numpy.typing as npt

from harness.backends.ibsim.net import IbsimNames
from harness.backends.ibsim.tables import Lfts
from harness.backends.ibsim.tables import Wiring
from harness.fabric.model import Fabric
from harness.words import plural

NO_ROUTE = -1
MAX_HOPS = 64  # IB directed routes stop at 64 hops; a longer LFT path is a loop


@dataclass(frozen=True, slots=True)
class Routes:
    """Routes between rail HCAs as the SM's tables give them.

    ``hcas`` are NIC element indices in a fixed order; ``hops[i, j]`` is the
    number of links from HCA ``i`` to HCA ``j`` (``NO_ROUTE`` when none);
    ``first_hop[s][d]`` the out port switch ``s`` uses towards HCA ``d``.
    """

    hcas: tuple[int, ...]
    hops: npt.NDArray[np.int16]
    next_switch: dict[tuple[str, str], str | None]
    loops: tuple[tuple[str, str], ...]
    lfts: Lfts
    wiring: Wiring
    names: IbsimNames
    _index: dict[int, int] = field(default_factory=dict)

    def routed(self, src: int, dst: int) -> bool:
        """Whether the tables route HCA ``src`` to HCA ``dst`` (element indices)."""
        return bool(self.hops[self._index[src], self._index[dst]] != NO_ROUTE)

    def routed_many(
        self, src: npt.NDArray[np.intp], dst: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        """:meth:`routed` for each (``src[k]``, ``dst[k]``) pair of NIC element indices."""
        rows = np.array([self._index[int(s)] for s in src], dtype=np.intp)
        cols = np.array([self._index[int(d)] for d in dst], dtype=np.intp)
        out: npt.NDArray[np.bool_] = self.hops[rows, cols] != NO_ROUTE
        return out

    def path(self, src: int, dst: int) -> list[str] | None:
        """Switch descriptions from ``src``'s leaf to ``dst``'s, None without a route."""
        if not self.routed(src, dst):
            return None
        s_desc, d_desc = self.names.desc_of[src], self.names.desc_of[dst]
        sw = self.wiring.peer[(s_desc, 1)][0]
        out = [sw]
        while True:
            nxt = self.next_switch[(sw, d_desc)]
            if nxt is None:
                return out
            out.append(nxt)
            sw = nxt

    def pairs(self, fabric: Fabric, same_rail: bool = True) -> tuple[int, int]:
        """(routed, all) ordered pairs of distinct HCAs (on the same rail by default)."""
        rails = np.array([int(fabric.rail[i]) for i in self.hcas])
        mask = ~np.eye(len(self.hcas), dtype=bool)
        if same_rail:
            mask &= rails[:, None] == rails[None, :]
        return int(((self.hops != NO_ROUTE) & mask).sum()), int(mask.sum())

    def per_rail(self, fabric: Fabric) -> dict[int, tuple[int, int]]:
        """Rail -> (routed, all) ordered pairs of distinct HCAs on that rail."""
        rails = np.array([int(fabric.rail[i]) for i in self.hcas])
        out: dict[int, tuple[int, int]] = {}
        for r in sorted(set(rails.tolist())):
            idx = np.flatnonzero(rails == r)
            sub = self.hops[np.ix_(idx, idx)]
            mask = ~np.eye(len(idx), dtype=bool)
            out[int(r)] = (int(((sub != NO_ROUTE) & mask).sum()), int(mask.sum()))
        return out

    def hop_histogram(self) -> dict[int, int]:
        """Hop count -> number of routed ordered pairs of distinct HCAs."""
        mask = ~np.eye(len(self.hcas), dtype=bool) & (self.hops != NO_ROUTE)
        values, counts = np.unique(self.hops[mask], return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts, strict=True)}

    def balance(self, leaf: str) -> dict[int, int]:
        """Uplink port of ``leaf`` -> how many destination HCAs its LFT sends out of it.

        Only ports that lead to another switch count (downlinks reach HCAs).
        """
        table = self.lfts.tables.get(leaf, {})
        counts: Counter[int] = Counter()
        for dest, port in table.items():
            if dest not in self.wiring.hcas:
                continue
            far = self.wiring.peer.get((leaf, port))
            if far is not None and far[0] in self.wiring.switches:
                counts[port] += 1
        return dict(sorted(counts.items()))

    def uplink_balance(self, leaf: str) -> dict[int, int]:
        """:meth:`balance` over every live uplink of ``leaf``, those carrying nothing as 0."""
        live = {
            port: 0
            for (sw, port), far in self.wiring.peer.items()
            if sw == leaf and far[0] in self.wiring.switches
        }
        return dict(sorted((live | self.balance(leaf)).items()))

    def balance_note(self, leaves: list[str]) -> str | None:
        """One line on how evenly the tables spread destinations over each leaf's uplinks.

        >>> from harness.backends.ibsim.tables import Lfts, Wiring
        >>> w = Wiring({("l", 3): ("s1", 1), ("l", 4): ("s2", 1), ("l", 1): ("h", 1)},
        ...            frozenset({"l", "s1", "s2"}), frozenset({"h", "x", "y", "z"}))
        >>> lfts = Lfts({"l": {"h": 1, "x": 3, "y": 3, "z": 4}}, {})
        >>> r = Routes((), np.zeros((0, 0), np.int16), {}, (), lfts, w, None)  # type: ignore
        >>> for part in r.balance_note(["l"]).split("; "):  # type: ignore[union-attr]
        ...     print(part)
        route balance (LFTs): 1-2 destination LIDs per live uplink
        most uneven: l, 2 on port 3 against a mean of 1.5 over 2 uplinks
        """
        worst: tuple[float, str, int, int, float, int] | None = None
        lo, hi = None, 0
        for leaf in leaves:
            counts = self.uplink_balance(leaf)
            if not counts or not any(counts.values()):
                continue
            mean = sum(counts.values()) / len(counts)
            port, top = max(counts.items(), key=lambda kv: (kv[1], -kv[0]))
            lo = min(counts.values()) if lo is None else min(lo, *counts.values())
            hi = max(hi, top)
            key = (top / mean, leaf, port, top, mean, len(counts))
            if worst is None or key[0] > worst[0]:
                worst = key
        if worst is None:
            return None
        _, leaf, port, top, mean, n = worst
        return (
            f"route balance (LFTs): {lo}-{hi} destination LIDs per live uplink; most uneven: "
            f"{leaf}, {top} on port {port} against a mean of {mean:.1f} over {plural(n, 'uplink')}"
        )


def walk(lfts: Lfts, wiring: Wiring, names: IbsimNames) -> Routes:
    """Every HCA pair's route from the tables, hop by hop."""
    hcas = tuple(sorted(names.hcas))
    index = {h: k for k, h in enumerate(hcas)}
    n = len(hcas)
    hops = np.full((n, n), NO_ROUTE, dtype=np.int16)
    next_switch: dict[tuple[str, str], str | None] = {}
    # hops from a switch to a destination HCA (links), NO_ROUTE when none
    to_dest: dict[tuple[str, str], int] = {}
    loops: list[tuple[str, str]] = []

    def from_switch(sw: str, dest: str) -> int:
        trail: list[str] = []
        seen: set[str] = set()
        cur = sw
        result = NO_ROUTE
        while True:
            known = to_dest.get((cur, dest))
            if known is not None:
                result = known
                break
            if cur in seen or len(trail) > MAX_HOPS:
                loops.append((sw, dest))
                break
            seen.add(cur)
            trail.append(cur)
            port = lfts.tables.get(cur, {}).get(dest)
            far = wiring.peer.get((cur, port)) if port else None
            if far is None:
                next_switch[(cur, dest)] = None
                to_dest[(cur, dest)] = NO_ROUTE
                trail.pop()
                break
            if far[0] == dest:
                next_switch[(cur, dest)] = None
                to_dest[(cur, dest)] = 1
                trail.pop()
                result = 1
                break
            if far[0] not in wiring.switches:
                next_switch[(cur, dest)] = None
                to_dest[(cur, dest)] = NO_ROUTE
                trail.pop()
                break
            next_switch[(cur, dest)] = far[0]
            cur = far[0]
        # unwind: each switch on the trail is one hop further than the next
        for t in reversed(trail):
            if result != NO_ROUTE:
                result += 1
            to_dest[(t, dest)] = result
        return to_dest.get((sw, dest), NO_ROUTE)

    attached: dict[int, str] = {}
    for h in hcas:
        far = wiring.peer.get((names.desc_of[h], 1))
        if far is not None and far[0] in wiring.switches:
            attached[h] = far[0]
    by_leaf: dict[str, npt.NDArray[np.intp]] = {}
    for leaf in sorted(set(attached.values())):
        by_leaf[leaf] = np.array([index[h] for h, sw in attached.items() if sw == leaf])
    for dst in hcas:
        if dst not in attached:
            continue
        d_desc, j = names.desc_of[dst], index[dst]
        for leaf, srcs in by_leaf.items():
            h = from_switch(leaf, d_desc)
            if h != NO_ROUTE:
                hops[srcs, j] = h + 1
        hops[j, j] = 0
    return Routes(hcas, hops, next_switch, tuple(loops), lfts, wiring, names, index)
