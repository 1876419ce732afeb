"""Which failure cases a sweep or an N+1 margin check enumerates (core layer, pure)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from collections.abc import Sequence

import numpy as np

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.planning.sweep.categories import CATEGORIES
from harness.planning.sweep.categories import DEFAULT_CATEGORIES
from harness.planning.sweep.categories import parse_categories
from harness.planning.sweep.records import Failure

__all__ = [  # the categories are re-exported: callers name them from here too
    "CATEGORIES",
    "DEFAULT_CATEGORIES",
    "cable_ids",
    "parse_categories",
    "sampled_pairs",
    "single_failures",
    "switch_pairs",
]


def single_failures(fabric: Fabric, categories: Sequence[str]) -> list[Failure]:
    """Every single failure of the chosen categories, in a stable order."""
    out: list[Failure] = []
    f = fabric

    ids = f.ids

    def elements(*kinds: Kind) -> None:
        idx = np.flatnonzero(np.isin(f.kind, [int(k) for k in kinds]))
        out.extend(Failure("element", i, ids[i]) for i in idx.tolist())

    def links(*kinds: LinkKind) -> None:
        idx = f.links_of_kind(*kinds).tolist()
        out.extend(Failure("link", i, lid) for i, lid in zip(idx, cable_ids(f, idx), strict=True))

    for cat in categories:
        if cat == "switches":
            elements(Kind.LEAF, Kind.SPINE, Kind.CORE)
        elif cat == "cables":
            links(LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
        elif cat == "nics":
            elements(Kind.NIC)
        elif cat == "nodes":
            elements(Kind.NODE)
        elif cat == "optics":
            for i in f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE,
                                     LinkKind.SPINE_CORE).tolist():  # fmt: skip
                out.append(Failure("optic", i, f.port_id(i, 0)))
                out.append(Failure("optic", i, f.port_id(i, 1)))
        elif cat == "storage":
            elements(Kind.STORAGE_SWITCH, Kind.STORAGE_NIC)
            links(LinkKind.STORAGE)
    return out


def cable_ids(fabric: Fabric, links: Sequence[int]) -> list[str]:
    """The ids of these cables (``A:PORT--B:PORT``), without building every link id."""
    f = fabric
    if not links:
        return []
    if "link_ids" in vars(f):  # already built (a cached property): reuse it
        return [f.link_ids[i] for i in links]
    at = np.asarray(links)
    ids = f.ids
    return [
        f"{ids[a]}:{pa}--{ids[b]}:{pb}"
        for a, pa, b, pb in zip(
            f.link_a[at].tolist(), f.link_a_port[at].tolist(),
            f.link_b[at].tolist(), f.link_b_port[at].tolist(), strict=True,
        )
    ]  # fmt: skip


def switch_pairs(fabric: Fabric) -> Iterator[tuple[Failure, Failure]]:
    """Every pair of compute switch failures."""
    sw = np.flatnonzero(np.isin(fabric.kind, [int(Kind.LEAF), int(Kind.SPINE), int(Kind.CORE)]))
    items = [Failure("element", i, fabric.ids[i]) for i in sw.tolist()]
    return itertools.combinations(items, 2)


def sampled_pairs(
    fabric: Fabric, singles: Sequence[Failure], count: int, seed: int
) -> list[tuple[Failure, Failure]]:
    """A seeded sample of pairs of failures that are not both compute switches
    (those pairs are all enumerated by :func:`switch_pairs`)."""
    switch_kinds = {int(Kind.LEAF), int(Kind.SPINE), int(Kind.CORE)}

    def is_switch(x: Failure) -> bool:
        return x.kind == "element" and int(fabric.kind[x.index]) in switch_kinds

    rng = random.Random(seed)
    n = len(singles)
    if n < 2 or count <= 0:
        return []
    seen: set[tuple[int, int]] = set()
    out: list[tuple[Failure, Failure]] = []
    attempts = 0
    while len(out) < count and attempts < count * 20:
        attempts += 1
        i, j = sorted(rng.sample(range(n), 2))
        if (i, j) in seen:
            continue
        a, b = singles[i], singles[j]
        if is_switch(a) and is_switch(b):
            continue
        seen.add((i, j))
        out.append((a, b))
    return out
