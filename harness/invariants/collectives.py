"""Collectives as flows between ranks: NCCL's ring, double binary tree and all-to-all.

A job runs its collectives over its servers in **rank order** (the order of
its server list).  On every rail each collective is a set of flows between the
rail NICs of two ranks (NCCL uses the same rail on both ends; port ``p`` of a
NIC talks to port ``p`` of the other: the same plane):

``ring``
    rank ``i`` -> rank ``i+1`` (NCCL's ring all-reduce; two ranks: both ways).
``tree``
    NCCL's double binary tree (``ncclGetDtree``, ``src/graph/trees.cc``): the
    binary tree of :func:`btree_parent` plus its mirror (even rank counts) or
    the same tree shifted by one rank (odd); every parent-child edge carries
    data both ways (reduce up, broadcast down), in both trees.
``all-to-all``
    every rank to every other rank.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from harness.fabric.jobs import Collective
from harness.invariants.network import IntArray

COLLECTIVE_ORDER: tuple[Collective, ...] = ("ring", "tree", "all-to-all")


def btree_parent(n: int, rank: int) -> int:
    """The parent of ``rank`` in NCCL's binary tree over ``n`` ranks (-1: the root).

    Follows ``ncclGetBtree``: the lowest set bit of the rank decides its level;
    the parent sets the next bit (or, out of range, only clears its own).

    >>> [btree_parent(14, r) for r in range(14)]
    [-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12]
    """
    if rank == 0:
        return -1
    bit = 1
    while bit < n and not bit & rank:
        bit <<= 1
    up = (rank ^ bit) | (bit << 1)
    return rank ^ bit if up >= n else up


def dtree_parents(n: int) -> tuple[list[int], list[int]]:
    """Parents in NCCL's two trees: the binary tree, and its mirror (even n) or shift (odd n).

    >>> dtree_parents(4)
    ([-1, 2, 0, 2], [1, 3, 1, -1])
    >>> dtree_parents(3)
    ([-1, 2, 0], [1, -1, 0])
    """
    first = [btree_parent(n, r) for r in range(n)]
    second = []
    for r in range(n):
        if n % 2:
            u = btree_parent(n, (r - 1) % n)
            second.append(-1 if u < 0 else (u + 1) % n)
        else:
            u = btree_parent(n, n - 1 - r)
            second.append(-1 if u < 0 else n - 1 - u)
    return first, second


@cache
def rank_flows(collective: Collective, n: int) -> tuple[IntArray, IntArray]:
    """Directed flows (sender ranks, receiver ranks) of one collective over ``n`` ranks.

    >>> [x.tolist() for x in rank_flows("ring", 3)]
    [[0, 1, 2], [1, 2, 0]]
    >>> len(rank_flows("tree", 8)[0]), len(rank_flows("all-to-all", 8)[0])
    (28, 56)
    """
    pairs: list[tuple[int, int]] = []
    if n >= 2:
        if collective == "ring":
            pairs = [(0, 1), (1, 0)] if n == 2 else [(i, (i + 1) % n) for i in range(n)]
        elif collective == "tree":
            for parents in dtree_parents(n):
                for child, parent in enumerate(parents):
                    if parent >= 0:
                        pairs += [(child, parent), (parent, child)]
        else:
            pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    src, dst = arr[:, 0].copy(), arr[:, 1].copy()
    src.flags.writeable = False
    dst.flags.writeable = False
    return src, dst
