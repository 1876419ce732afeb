"""Which GPU pairs a change cuts off, in words an operator reads: groups, not a count.

:func:`cut_pairs` compares each GPU's reach (the fabric components it can use,
PXN allowed) before and after a change.  GPUs that had the same reach before
and have the same after form a group (usually one SU, or one rail of an SU); a
pair of groups whose GPUs could talk before and cannot after is one
:class:`CutGroup` ("su01 cannot reach su02..10"), with the GPU pairs it holds.

>>> from harness.fabric import preset
>>> from harness.faults.fault import Fault
>>> f = preset("seed-a800")
>>> r = cut_pairs_of(f, [Fault.parse({"drain": {"tier": "spine"}})])
>>> r.pairs, len(r.groups), r.lines()
(1152000, 45, ['su01..10 (160 GPUs each): no two of these can reach each other'])
>>> r = cut_pairs_of(f, [Fault.parse({"kill": "su01/node01"})])
>>> r.pairs, r.lines()
(12736, ['su01/node01 (8 GPUs) cannot reach the other GPUs of su01..10 (1,592 GPUs)'])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.planning.id_ranges import compress_ids
from harness.planning.id_ranges import compress_numbers

SERVERS_NAMED = 4  # a group of GPUs on at most this many servers is named by its servers


@dataclass(frozen=True, slots=True)
class CutGroup:
    """GPUs of ``a`` that could reach those of ``b`` before the change and cannot after."""

    a: str  # the GPUs, by SU (and rails when not all of them)
    a_gpus: int
    b: str
    b_gpus: int
    pairs: int


@dataclass(frozen=True, slots=True)
class CutPairs:
    """The GPU pairs a change cuts off, grouped (pairs of one server aside)."""

    pairs: int  # cross-server pairs the groups hold
    groups: tuple[CutGroup, ...]  # largest first

    def lines(self, top: int = 4) -> list[str]:
        """Up to ``top`` lines: which groups of GPUs can no longer reach which.

        Groups that can reach none of the others are one line ("su01..10: no two of these
        can reach each other"); otherwise one line per group, largest loss first.
        """
        reach: dict[str, set[str]] = defaultdict(set)
        size: dict[str, int] = {}
        for g in self.groups:
            reach[g.a].add(g.b)
            reach[g.b].add(g.a)
            size[g.a], size[g.b] = g.a_gpus, g.b_gpus
        names = list(size)
        if len(names) > 2 and all(len(reach[n]) == len(names) - 1 for n in names):
            each = set(size.values())
            gpus = f"{each.pop():,} GPUs each" if len(each) == 1 else "GPUs"
            return [f"{_join(names)} ({gpus}): no two of these can reach each other"]
        order = sorted(names, key=lambda n: -size[n] * sum(size[b] for b in reach[n]))
        shown: list[str] = []
        out: list[str] = []
        for n in order:
            if reach[n] <= set(shown):
                continue  # its every line is printed from the other side
            shown.append(n)
            if len(out) < top:
                targets = sorted(reach[n], key=names.index)
                out.append(f"{n} ({size[n]:,} GPUs) cannot reach {_join(targets)} "
                           f"({sum(size[b] for b in targets):,} GPUs)")  # fmt: skip
        if len(shown) > top:
            out.append(f"... and {len(shown) - top} more group(s) of GPUs")
        return out


def _join(labels: Sequence[str]) -> str:
    """``["su02", "su03", "su04"]`` -> ``"su02..04"``; other labels joined with commas."""
    if all(x.startswith("su") and x[2:].isdigit() for x in labels):
        return "su" + compress_numbers([x[2:] for x in labels])
    return ", ".join(labels)


def _label(fabric: Fabric, gpus: Sequence[int], nic_of: dict[int, int], per_su: dict[int, int],
           per_rail: dict[tuple[int, int], int]) -> str:  # fmt: skip
    """The GPUs by SU; with the rails (``nic0,1``) when they are not all of those SUs' GPUs."""
    f = fabric
    sus = sorted({int(f.su[g]) for g in gpus})
    name = "su" + compress_numbers([f"{s:02d}" for s in sus]) if sus and sus[0] else "no SU"
    if len(gpus) == sum(per_su.get(s, 0) for s in sus):
        return name
    rails = sorted({int(f.rail[nic_of[g]]) for g in gpus if g in nic_of})
    whole = len(gpus) == sum(per_rail.get((s, r), 0) for s in sus for r in rails)
    if rails and rails[0] >= 0 and whole:
        return f"{name} nic{','.join(map(str, rails))}"
    servers = sorted({int(f.parent[g]) for g in gpus})
    if len(servers) <= SERVERS_NAMED:
        return compress_ids([f.ids[x] for x in servers])
    return f"the other GPUs of {name}"


def cut_pairs(before: Analysis, after: Analysis) -> CutPairs:
    """The GPU pairs that talk in ``before`` and not in ``after``, grouped (PXN allowed)."""
    f = after.fabric
    rb, ra = before.gpu_reach[1], after.gpu_reach[1]
    groups: dict[tuple[frozenset[int], frozenset[int]], list[int]] = defaultdict(list)
    for g in f.gpus.tolist():
        groups[rb[g], ra[g]].append(g)
    nic_of = before.gpu_nic
    per_su: dict[int, int] = defaultdict(int)
    per_rail: dict[tuple[int, int], int] = defaultdict(int)
    for g in f.gpus.tolist():
        per_su[int(f.su[g])] += 1
        if g in nic_of:
            per_rail[int(f.su[g]), int(f.rail[nic_of[g]])] += 1
    keys = sorted(groups, key=lambda k: min(groups[k]))  # fabric order
    labels = {k: _label(f, groups[k], nic_of, per_su, per_rail) for k in keys}
    out: list[CutGroup] = []
    for i, ka in enumerate(keys):
        for kb in keys[i + 1 :]:
            if ka[0] & kb[0] and not ka[1] & kb[1]:
                na, nb = len(groups[ka]), len(groups[kb])
                out.append(CutGroup(labels[ka], na, labels[kb], nb, na * nb))
    return CutPairs(sum(g.pairs for g in out), tuple(out))


def cut_pairs_of(
    fabric: Fabric, change: Sequence[Fault], routing: Routing = DEFAULT_ROUTING
) -> CutPairs:
    """:func:`cut_pairs` of ``change`` on the healthy fabric (a convenience for the docs)."""
    healthy = Analysis(fabric, Observation.from_state(FaultState.healthy(fabric)), (),
                       routing=routing)  # fmt: skip
    state = FaultState.healthy(fabric)
    for fault in change:
        state = state.inject(fault)
    after = Analysis(fabric, Observation.from_state(state), (), healthy=healthy, routing=routing)
    return cut_pairs(healthy, after)
