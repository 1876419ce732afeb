"""Adaptive forwarding's pools: a leaf's uplinks that can carry a flow, grouped by what reaches.

Adaptive routing (InfiniBand AR, Spectrum-X) moves a flow between the
uplinks of its leaf packet by packet, but only between the uplinks that lead
somewhere: a flow from leaf ``A`` to leaf ``B`` can climb only to a spine that
still has a live cable down to ``B`` (and comes down into ``B`` only from a
spine ``A`` still reaches).  Its **admissible set** is

    ``S(A, B)`` = the spines with a live cable from ``A`` and a live cable to ``B``

(in three tiers, a flow to another pod: the spines of ``A``'s pod with a live
cable from ``A`` that reach the cores, and on the way down the spines of
``B``'s pod that reach the cores with a live cable to ``B``).

**The fluid model.**  The flows leaving ``A`` are a bipartite flow problem:
each flow may use any of its admissible uplinks, each uplink carries its
capacity.  By max-flow/min-cut (Hall's theorem), the load can be spread
without overloading any uplink if and only if, for every set ``U`` of ``A``'s
uplinks, the flows whose admissible set lies inside ``U`` ask no more than
``U``'s capacity: that load is *forced* onto ``U`` whatever the balancing
does, and every other flow can leave ``U``.  Only the unions of admissible
sets matter (a set that is not one only adds capacity no forced flow needs),
and of those only the *connected* ones (a union of two disjoint parts is the
sum of its parts' conditions).  So each leaf gets one **pool** per class of
destinations (the distinct admissible sets of its flows) and per union of
overlapping classes: its capacity is the live Gb/s of the leaf's uplinks to
the pool's spines, and it carries every flow from the leaf whose admissible
set is a subset of it (a flow is on its own class's pool and on every
superset pool).  The same pools, by the same argument, come down into each
leaf.  The flow engine (:func:`~harness.invariants.traffic._evaluate`) gives
each flow ``min(1, capacity / offered)`` on the most loaded resource of its
path: with these pools every share is 1 exactly when a balanced routing
exists (Hall), and otherwise the most overloaded set of uplinks a flow is
forced onto paces it, the pooled bottleneck rule of the healthy fabric
applied to what the flow can actually reach.  The climb and the descent are
judged separately, as the healthy pools are (a spine is non-blocking; the
joint choice of a spine that is free both ways is not modelled).

A leaf's whole reach (every live uplink to a live spine) is always one of
its pools (a true condition whether or not some flow's set equals it).  In a
healthy or symmetric state (every leaf reaches the same spines) each leaf
has that one pool, all its live uplinks: the leaf's pooled uplinks of
:class:`~harness.invariants.forwarding.Resources`, so the numbers are those
of the plain pooled model.  A leaf that has lost a spine makes every other
leaf of its pod keep two classes (flows to it, and the rest).

**Bound.**  Closing a leaf's classes under union of overlapping pairs can in
principle grow exponentially (every admissible set a different chain of
spines); it stops at :data:`MAX_POOLS_PER_LEAF` pools per leaf.  Beyond that
(never in a generated fabric with fewer than a few dozen distinct failures
at one leaf) a union not built may be overloaded while every built pool is
not: the answer is then optimistic for those flows, never pessimistic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from harness.fabric.model import LinkKind

if TYPE_CHECKING:
    from harness.invariants.network import Network

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

MAX_POOLS_PER_LEAF = 64
"""The most pools one leaf gets (its classes and their overlapping unions); see the module."""


@dataclass(frozen=True, eq=False)
class AdaptivePools:
    """Every leaf's pools (index ``p``), and which pool each flow's admissible set is."""

    leaf: IntArray  # (P,) the leaf element of each pool
    gbps: FloatArray  # (P,) live Gb/s of the leaf's uplinks to the pool's spines (one way)
    full: BoolArray  # (P,) the pool is every live uplink of its leaf
    masks: BoolArray  # (P, spine row) the pool's spines
    spine_el: IntArray  # spine row -> its element
    supersets: IntArray  # (P, W) the leaf's strictly larger pools, -1 padded
    intra: IntArray  # (leaf col X, leaf col Y): X's pool of S(X, Y); -1: empty
    inter: IntArray  # (leaf col X,): X's pool of its spines that reach the cores; -1
    leaf_col: IntArray  # element -> leaf column (-1: not a leaf with uplinks)

    def spines(self, pool: int) -> list[int]:
        """The spine elements of one pool."""
        return [int(x) for x in self.spine_el[self.masks[pool]].tolist()]


def _bits(rows: BoolArray) -> list[int]:
    """Each boolean row as a Python int bitset (bit k: column k)."""
    if not rows.size:
        return [0] * rows.shape[0]
    packed = np.packbits(rows, axis=1, bitorder="little")
    return [int.from_bytes(r.tobytes(), "little") for r in packed]


def _closure(classes: list[int]) -> list[int]:
    """``classes`` and the unions of overlapping ones, up to MAX_POOLS_PER_LEAF sets."""
    fam = list(dict.fromkeys(c for c in classes if c))
    seen = set(fam)
    at = 0
    while at < len(fam) and len(fam) < MAX_POOLS_PER_LEAF:
        new = fam[at]
        for old in fam[:at]:
            if new & old and new & ~old and old & ~new:
                u = new | old
                if u not in seen and len(fam) < MAX_POOLS_PER_LEAF:
                    seen.add(u)
                    fam.append(u)
        at += 1
    return fam


def adaptive_pools(net: Network) -> AdaptivePools:
    """The pools of every leaf of ``net`` (see the module)."""
    f = net.fabric
    spine_row, leaf_col, reaches = net.spine_reaches
    n_s, n_l = reaches.shape
    spine_el = np.zeros(n_s, dtype=np.int64)
    spine_el[spine_row[spine_row >= 0]] = np.flatnonzero(spine_row >= 0)
    leaf_el = np.zeros(n_l, dtype=np.int64)
    leaf_el[leaf_col[leaf_col >= 0]] = np.flatnonzero(leaf_col >= 0)
    links = f.links_of_kind(LinkKind.LEAF_SPINE)
    reach = reaches.T & net.up[spine_el][None, :] & net.up[leaf_el][:, None]  # (leaf, spine)
    live_any = np.zeros((n_l, n_s), dtype=bool)  # any cable with capacity, spine up or not
    per = np.zeros((n_l, n_s))
    if links.size:
        live = links[net.cap[links] > 0]
        live_any[leaf_col[f.link_a[live]], spine_row[f.link_b[live]]] = True
        np.add.at(per, (leaf_col[f.link_a[links]], spine_row[f.link_b[links]]), net.cap[links])
        per[~reach] = 0.0
    pod = f.pod[leaf_el] if f.tiers == 3 else np.zeros(n_l, dtype=np.int64)
    multi_pod = f.tiers == 3 and int(net.pods) > 1
    core = net._core_reach[spine_el] if multi_pod else np.ones(n_s, dtype=bool)
    intra = np.full((n_l, n_l), -1, dtype=np.int64)
    inter = np.full(n_l, -1, dtype=np.int64)
    core_bits = _bits(core[None, :])[0]
    cols_parts: list[IntArray] = []
    mask_parts: list[BoolArray] = []
    sup_parts: list[IntArray] = []
    offset = 0
    for p in np.unique(pod).tolist():
        cols = np.flatnonzero(pod == p)
        # leaves with the same reach have the same classes: work per distinct reach row
        uniq, cls = np.unique(np.packbits(reach[cols], axis=1, bitorder="little"), axis=0,
                              return_inverse=True)  # fmt: skip
        cls = cls.reshape(-1)
        bits = [int.from_bytes(r.tobytes(), "little") for r in uniq]
        present = [b for b in bits if b]
        fams: list[list[int]] = []
        rel = np.full((len(bits), len(bits)), -1, dtype=np.int64)
        rel_core = np.full(len(bits), -1, dtype=np.int64)
        for c, b in enumerate(bits):
            fam = _closure([b & o for o in present] + ([b & core_bits] if multi_pod else []))
            fams.append(fam if b else [])
            if not b:
                continue
            idx = {m: k for k, m in enumerate(fam)}
            rel[c] = [idx.get(b & o, -1) for o in bits]
            rel_core[c] = idx.get(b & core_bits, -1)
        sizes = np.array([len(fm) for fm in fams], dtype=np.int64)
        flat = [m for fm in fams for m in fm]
        cls_mask = np.array([[(m >> k) & 1 for k in range(n_s)] for m in flat], dtype=bool)
        width = max((len(fm) for fm in fams), default=0)
        cls_sup = np.full((len(flat), width), -1, dtype=np.int64)
        at = 0
        for fm in fams:
            for m in fm:
                ups = [k for k, o in enumerate(fm) if o != m and m & ~o == 0]
                cls_sup[at, : len(ups)] = ups
                at += 1
        n_per = sizes[cls]
        start = offset + np.r_[0, np.cumsum(n_per)[:-1]].astype(np.int64)  # each leaf's first
        r = rel[cls[:, None], cls[None, :]]
        intra[np.ix_(cols, cols)] = np.where(r >= 0, start[:, None] + r, -1)
        if multi_pod:
            rc = rel_core[cls]
            inter[cols] = np.where(rc >= 0, start + rc, -1)
        total = int(n_per.sum())
        owner = np.repeat(np.arange(cols.size), n_per)
        pos = np.arange(total) - np.repeat(start - offset, n_per)
        cls_start = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
        row = cls_start[cls[owner]] + pos
        cols_parts.append(cols[owner])
        mask_parts.append(cls_mask.reshape(len(flat), n_s)[row])
        sup = cls_sup[row]
        sup_parts.append(np.where(sup >= 0, start[owner][:, None] + sup, -1))
        offset += total
    width = max((x.shape[1] for x in sup_parts), default=0)
    sup_all = np.full((offset, width), -1, dtype=np.int64)
    at = 0
    for x in sup_parts:
        sup_all[at : at + x.shape[0], : x.shape[1]] = x
        at += x.shape[0]
    lc = np.concatenate(cols_parts) if cols_parts else np.zeros(0, dtype=np.int64)
    masks = np.concatenate(mask_parts) if mask_parts else np.zeros((0, n_s), dtype=bool)
    gbps = np.where(masks, per[lc], 0.0).sum(axis=1)
    full = (masks == live_any[lc]).all(axis=1)
    return AdaptivePools(leaf_el[lc], gbps, full, masks, spine_el, sup_all, intra, inter, leaf_col)
