"""Missing cables above the leaves: spines with fewer core cables than their peers.

(Core layer: pure.)  Part of the design-free audit
(:func:`~harness.planning.audit.regular.audit_regular`) on a three-tier
fabric.  A spine's peers are the spines that share cores with it (in a fat
tree, spine k of every pod reaches core group k): the cores most of them reach
are the ones it should reach, with the majority number of cables per
spine-core pair.  Each spine short of that is one ``spine-uplinks`` departure
naming the missing (core, cables); a spine with no core cable at all, where
most spines have some, is one too (its cores cannot be named: it shares none).
"""

from __future__ import annotations

from collections import Counter

from networkx.utils import UnionFind

from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind


def _majority(values: list[int]) -> int:
    c = Counter(values)
    return max(c, key=lambda v: (c[v], v)) if c else 0


def spine_uplinks(f: Fabric) -> list[tuple[str, str, tuple[tuple[str, int], ...]]]:
    """(spine, one line for a person, ((core, cables missing), ...)) per spine short of cores."""
    pair: Counter[tuple[int, int]] = Counter()
    for li in f.links_of_kind(LinkKind.SPINE_CORE).tolist():
        a, b = int(f.link_a[li]), int(f.link_b[li])
        if int(f.kind[a]) == Kind.SPINE and int(f.kind[b]) == Kind.CORE:
            pair[a, b] += 1
        elif int(f.kind[b]) == Kind.SPINE and int(f.kind[a]) == Kind.CORE:
            pair[b, a] += 1
    if not pair:
        return []
    name = f.ids
    spines = [int(s) for s in f.spines.tolist()]
    cpp = _majority(list(pair.values()))
    cores_of: dict[int, set[int]] = {s: set() for s in spines}
    for s, c in pair:
        cores_of[s].add(c)
    uf = UnionFind()
    by_core: dict[int, list[int]] = {}
    for s in spines:
        uf.union(s)
        for c in cores_of[s]:
            by_core.setdefault(c, []).append(s)
    for members in by_core.values():
        uf.union(*members)
    groups: dict[int, list[int]] = {}
    for s in spines:
        if cores_of[s]:
            groups.setdefault(uf[s], []).append(s)
    out: list[tuple[str, str, tuple[tuple[str, int], ...]]] = []
    uplinked = sum(1 for s in spines if cores_of[s])
    usual = _majority([sum(pair[s, c] for c in cores_of[s]) for s in spines if cores_of[s]])
    for s in spines:
        if cores_of[s]:
            continue
        if uplinked > len(spines) / 2:
            out.append((name[s], f"spine {name[s]} has 0 of {usual} core uplinks: no cable to "
                        "any core (its peers have them)", ()))  # fmt: skip
    for members in groups.values():
        reach = Counter(c for s in members for c in cores_of[s])
        expected = sorted((c for c, n in reach.items() if n > len(members) / 2),
                          key=lambda c: name[c])  # fmt: skip
        for s in sorted(members, key=lambda s: name[s]):
            short = tuple((name[c], cpp - pair[s, c]) for c in expected if pair[s, c] < cpp)
            if not short:
                continue
            have = sum(pair[s, c] for c in cores_of[s])
            what = ", ".join(f"{n} to {c}" if n < cpp or cpp == 1 else f"all {n} to {c}"
                             for c, n in short)  # fmt: skip
            out.append((name[s], f"spine {name[s]} has {have} of {cpp * len(expected)} core "
                        f"uplinks: missing {what}", short))  # fmt: skip
    return out
