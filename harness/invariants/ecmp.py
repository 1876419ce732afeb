"""Per-hop ECMP between pods: the leaf, the spine, the core and the spine each hash the flow.

Under ``ecmp`` forwarding (RoCE with BGP, RFC 7938) every switch spreads its
flows over its equal-cost next hops by a hash of the flow's header.  A flow
between two pods of a three-tier fabric crosses four such decisions, each over
the next hops that still lead to the destination leaf by an up-down path:

1. its **leaf**: the live uplinks to a live spine that still reaches the
   destination leaf through some core;
2. that **spine**: its live core uplinks to a live core that still reaches
   the destination leaf;
3. that **core**: its live downlinks to a live spine of the destination pod
   with a live cable to the destination leaf;
4. that **spine**: its live cables to the destination leaf.

Each hop picks ``hash mod (number of candidates)`` over its candidates in
port order; the hash is the flow's key (source NIC, destination NIC, port
slot: a 5-tuple's stand-in) mixed with a salt of the hop's tier and of the
draw (:func:`hop_key`).  **Polarisation is assumed away**: the tiers hash
independently (switch vendors seed each switch's hash differently for that
reason), so a flow's pick at one tier says nothing of its pick at the next.
With one hash function at every tier, flows that collide at a leaf would
collide again above it; the model does not predict that.

A flow then takes four cable directions (:func:`inter_pod_paths`): no pooled
capacity, so a core-tier failure costs what the hash puts on the cables left,
not the pods' pooled core capacity.  The expected bandwidth is the mean over
:data:`~harness.invariants.traffic.ECMP_DRAWS` draws of the salts.
"""

from __future__ import annotations

import weakref

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_array

from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind
from harness.invariants.network import IntArray
from harness.invariants.network import Network

BoolArray = npt.NDArray[np.bool_]
HOPS = 4  # leaf up, spine up, core down, spine down


def _mix(x: IntArray) -> IntArray:
    """A 64-bit integer hash (splitmix64's finaliser), elementwise."""
    z = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(1)).astype(np.int64)


def hop_key(src: IntArray, dst: IntArray, slot: IntArray, seed: int, hop: int) -> IntArray:
    """The hash a switch at ``hop`` (0 leaf up, 1 spine up, 2 core down, 3 spine down) gives
    each flow in draw ``seed``.  Hops 0 and 3 are the leaf's and the spine's of two tiers
    (the same numbers as before three tiers were hashed per hop); 1 and 2 have salts no
    draw of those takes."""
    base = (src * np.int64(1_000_003) + dst) * np.int64(8) + slot
    if hop == 0:
        salt = 2 * seed + 1
    elif hop == 3:
        salt = 2 * seed + 2
    else:
        salt = (1 << 40) + 4 * seed + hop
    return _mix(base ^ _mix(np.full(src.size, salt, dtype=np.int64)))


def _table(owner: IntArray, port: IntArray, links: IntArray, n: int) -> tuple[IntArray, IntArray]:
    """Element -> row (-1: none); (row, k) -> the owner's k-th link in port order (-1 padded)."""
    order = np.lexsort((port, owner))
    owner, links = owner[order], links[order]
    uniq, start, counts = np.unique(owner, return_index=True, return_counts=True)
    row = np.full(n, -1, dtype=np.int64)
    row[uniq] = np.arange(uniq.size)
    table = np.full((max(uniq.size, 1), max(int(counts.max(initial=1)), 1)), -1, dtype=np.int64)
    if links.size:
        k = np.arange(links.size) - np.repeat(start, counts)
        table[np.repeat(np.arange(uniq.size), counts), k] = links
    return row, table


Tables = tuple[tuple[IntArray, IntArray], ...]
_WIRING: weakref.WeakKeyDictionary[Fabric, Tables] = weakref.WeakKeyDictionary()


def _wiring(fabric: Fabric) -> Tables:
    """Per fabric (cached): leaf -> uplinks, spine -> core uplinks, core -> downlinks (port
    order), (spine x n + leaf) -> the cables between them (keys sorted, a row each), and
    element -> position among the spines and among the cores."""
    got = _WIRING.get(fabric)
    if got is not None:
        return got
    f = fabric
    n = f.n_elements
    ls = f.links_of_kind(LinkKind.LEAF_SPINE).astype(np.int64)
    sc = f.links_of_kind(LinkKind.SPINE_CORE).astype(np.int64)
    leaf_up = _table(f.link_a[ls].astype(np.int64), f.link_a_port[ls].astype(np.int64), ls, n)
    spine_up = _table(f.link_a[sc].astype(np.int64), f.link_a_port[sc].astype(np.int64), sc, n)
    core_down = _table(f.link_b[sc].astype(np.int64), f.link_b_port[sc].astype(np.int64), sc, n)
    pair = f.link_b[ls].astype(np.int64) * n + f.link_a[ls].astype(np.int64)
    keys, inv = np.unique(pair, return_inverse=True)
    _, downs = _table(inv.reshape(-1).astype(np.int64), f.link_a_port[ls].astype(np.int64), ls,
                      max(keys.size, 1))  # fmt: skip
    pos = (_positions(f.spines.astype(np.int64), n), _positions(f.cores.astype(np.int64), n))
    got = _WIRING[fabric] = (leaf_up, spine_up, core_down, (keys, downs), pos)
    return got


def _positions(members: IntArray, n: int) -> IntArray:
    """Element -> its position in ``members`` (-1: not one)."""
    out = np.full(n, -1, dtype=np.int64)
    out[members] = np.arange(members.size)
    return out


_REACH: weakref.WeakKeyDictionary[Network, dict[bytes, tuple[BoolArray, BoolArray, BoolArray]]]
_REACH = weakref.WeakKeyDictionary()


def _live(net: Network, links: IntArray) -> BoolArray:
    """Per entry of ``links`` (-1: none): a link with capacity between two live ends."""
    f = net.fabric
    safe = np.maximum(links, 0)
    out: BoolArray = (links >= 0) & (net.cap[safe] > 0) & net.up[f.link_a[safe]]
    return out & net.up[f.link_b[safe]]


def _reach(net: Network, leaves: IntArray) -> tuple[BoolArray, BoolArray, BoolArray]:
    """For each destination leaf of ``leaves`` (a column each): which spines have a live
    cable to it, which cores reach it through such a spine, and which spines reach it
    through such a core (rows by position among the spines or the cores; cached per
    network and leaves)."""
    memo = _REACH.setdefault(net, {})
    got = memo.get(leaves.tobytes())
    if got is not None:
        return got
    f = net.fabric
    *_, (spos, cpos) = _wiring(f)
    col = np.full(f.n_elements, -1, dtype=np.int64)
    col[leaves] = np.arange(leaves.size)
    ls = f.links_of_kind(LinkKind.LEAF_SPINE).astype(np.int64)
    ls = ls[_live(net, ls) & (col[f.link_a[ls]] >= 0)]
    direct = np.zeros((max(f.spines.size, 1), leaves.size), dtype=np.bool_)
    direct[spos[f.link_b[ls]], col[f.link_a[ls]]] = True
    sc = f.links_of_kind(LinkKind.SPINE_CORE).astype(np.int64)
    sc = sc[_live(net, sc)]
    ones = np.ones(sc.size, dtype=np.int64)
    shape = (max(f.cores.size, 1), max(f.spines.size, 1))
    core_of = csr_array((ones, (cpos[f.link_b[sc]], spos[f.link_a[sc]])), shape=shape)
    core = np.asarray(core_of @ direct.astype(np.int64)) > 0
    spine = np.asarray(core_of.T @ core.astype(np.int64)) > 0
    got = memo[leaves.tobytes()] = (direct, core, spine)
    return got


def _pick(cand: IntArray, valid: BoolArray, key: IntArray) -> tuple[IntArray, BoolArray]:
    """Per row: the candidate the key picks among the valid ones (in column order), and
    whether there was one."""
    count = valid.sum(axis=1)
    ok = count > 0
    at = key % np.maximum(count, 1)
    idx = np.argmax(np.cumsum(valid, axis=1) > at[:, None], axis=1)
    return cand[np.arange(cand.shape[0]), idx], ok


def inter_pod_paths(
    net: Network, src: IntArray, dst: IntArray, slot: IntArray, *,
    leaves: tuple[IntArray, IntArray], seed: int,
) -> IntArray:  # fmt: skip
    """Per flow from leaf ``la`` to leaf ``lb`` of another pod (``leaves``: ``la, lb``): its
    four cable directions (leaf up, spine up, core down, spine down, as resource ids
    ``2 x link (+1 down)``), or -2 in the first column when its leaf has no uplink left
    that leads to ``lb``."""
    f = net.fabric
    la, lb = leaves
    out = np.full((la.size, HOPS), -1, dtype=np.int64)
    if not la.size:
        return out
    (lrow, ltab), (srow, stab), (crow, ctab), (dkeys, dtab), (spos, cpos) = _wiring(f)
    targets, col = np.unique(lb, return_inverse=True)
    col = col.reshape(-1)
    direct, core_reach, spine_reach = _reach(net, targets)
    # 1. the leaf: uplinks to a spine that reaches lb through a core
    cand = np.where((lrow[la] >= 0)[:, None], ltab[np.maximum(lrow[la], 0)], -1)
    valid = _live(net, cand) & spine_reach[spos[f.link_b[np.maximum(cand, 0)]], col[:, None]]
    up, ok = _pick(cand, valid, hop_key(src, dst, slot, seed, 0))
    out[~ok, 0] = -2
    rows = np.flatnonzero(ok)
    if not rows.size:
        return out
    up, c_ = up[ok], col[ok]
    out[rows, 0] = 2 * up
    # 2. the spine: core uplinks to a core that reaches lb
    s = f.link_b[up]
    cand = stab[srow[s]]
    valid = _live(net, cand) & core_reach[cpos[f.link_b[np.maximum(cand, 0)]], c_[:, None]]
    sc, _ = _pick(cand, valid, hop_key(src[rows], dst[rows], slot[rows], seed, 1))
    out[rows, 1] = 2 * sc
    # 3. the core: downlinks to a spine of lb's pod with a live cable to lb
    cand = ctab[crow[f.link_b[sc]]]
    valid = _live(net, cand) & direct[spos[f.link_a[np.maximum(cand, 0)]], c_[:, None]]
    cs, _ = _pick(cand, valid, hop_key(src[rows], dst[rows], slot[rows], seed, 2))
    out[rows, 2] = 2 * cs + 1
    # 4. that spine: its cables to lb
    t = f.link_a[cs].astype(np.int64)
    cand = dtab[np.searchsorted(dkeys, t * f.n_elements + lb[ok])]
    down, _ = _pick(cand, _live(net, cand), hop_key(src[rows], dst[rows], slot[rows], seed, 3))
    out[rows, 3] = 2 * down + 1
    return out
