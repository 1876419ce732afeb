"""Measurement plans for the observations a scenario expects (observations stage, pure).

The runner asks each measured observation what it needs
(:attr:`harness.observations.observation.MeasureDef.plan`); the functions here build those
plans from the prediction for the step (an :class:`~harness.invariants.analysis.Analysis`)
and the :class:`MeasureOptions` of the run:

* probes: ``per_rail`` seeded pairs on every rail (``None``: every pair), plus
  *witnesses* -- pairs the prediction says are cut, so the measurement can
  confirm the damage instead of sampling past it;
* islands: every live NIC probes one *anchor* NIC of every predicted island;
* traced paths between the NICs two GPUs use;
* flows that load one leaf's uplinks (their rate against the preflight's);
* a job's collective as the flows it places (:func:`collective_flow_group`);
* job runs, and the state of links.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass

from harness.backends.measurement import FlowGroup
from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import Pair
from harness.backends.measurement import sample_pairs
from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants.analysis import Analysis
from harness.invariants.collectives import rank_flows


@dataclass(frozen=True, slots=True)
class MeasureOptions:
    """How much to measure at each step, and how long to wait.

    ``per_rail``: probe pairs sampled per rail (``None``: all pairs);
    ``seed``: the sample's seed; ``witnesses``: at most this many
    predicted-cut pairs added per observation; ``settle_timeout``: seconds a
    backend may take to converge after a change.
    """

    per_rail: int | None = 16
    seed: int = 0
    witnesses: int = 32
    flow_seconds: float = 2.0
    job_seconds: float = 0.0
    settle_timeout: float = 120.0


def _signatures(a: Analysis, nics: list[int]) -> dict[frozenset[int], list[int]]:
    groups: dict[frozenset[int], list[int]] = defaultdict(list)
    for n in nics:
        groups[a.nic_comps(n) if a.up[n] else frozenset()].append(n)
    return groups


def _pick(
    rng: random.Random, xs: list[int], ys: list[int], parent: list[int]
) -> tuple[int, int] | None:
    for _ in range(8):
        x, y = rng.choice(xs), rng.choice(ys)
        if x != y and parent[x] != parent[y]:
            return x, y
    return next(((x, y) for x in xs for y in ys if x != y and parent[x] != parent[y]), None)


def witness_pairs(a: Analysis, limit: int, seed: int, *, same_rail: bool) -> tuple[Pair, ...]:
    """Up to ``limit`` NIC pairs (on different servers) the prediction says cannot reach.

    One pair for every two groups of NICs that share no live switch component
    (and within the group of NICs that reach nothing), largest groups first.
    """
    f = a.fabric
    rng = random.Random(seed)
    parent = f.parent.tolist()
    all_nics = f.nics.tolist()
    out: list[Pair] = []
    scopes = [[n for n in all_nics if f.rail[n] == r] for r in range(f.rails)]
    for nics in scopes if same_rail else [all_nics]:
        groups = _signatures(a, nics)
        keys = sorted(groups, key=lambda k: (-len(groups[k]), min(groups[k])))
        for i, ka in enumerate(keys):
            for kb in keys[i:]:
                if (ka is kb and ka) or (ka & kb):
                    continue
                got = _pick(rng, groups[ka], groups[kb], parent)
                if got is not None:
                    out.append((f.ids[min(got)], f.ids[max(got)]))
                if len(out) >= limit:
                    return tuple(out)
    return tuple(out)


def connectivity_plan(a: Analysis, o: MeasureOptions, *, cross_rail: bool) -> MeasurePlan:
    """Sampled (or all) same-rail pairs, sampled cross-rail pairs, and the witnesses."""
    f = a.fabric
    extra = (o.per_rail or 64) if cross_rail else 0
    pairs = sample_pairs(f, o.per_rail, o.seed, cross_rail=extra)
    cut = witness_pairs(a, o.witnesses, o.seed, same_rail=not cross_rail)
    how = "all pairs per rail" if o.per_rail is None else f"{o.per_rail} pairs per rail"
    note = f"{how}, seed {o.seed}" + (f", {len(cut)} predicted-cut pairs" if cut else "")
    return MeasurePlan(probes=tuple(dict.fromkeys((*pairs, *cut))), note=note)


def predicted_islands(a: Analysis) -> list[list[int]]:
    """Live rail NICs grouped as the model groups them (shared live switch components)."""
    f = a.fabric
    nics = [n for n in f.nics.tolist() if a.up[n]]
    comp_owner: dict[int, int] = {}
    parent = {n: n for n in nics}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for n in nics:
        for c in a.nic_comps(n):
            other = comp_owner.setdefault(c, n)
            ra, rb = find(n), find(other)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = defaultdict(list)
    for n in nics:
        groups[find(n)].append(n)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def island_plan(a: Analysis, o: MeasureOptions) -> MeasurePlan:
    """Every live NIC probes one anchor NIC of every predicted island."""
    f = a.fabric
    rng = random.Random(o.seed)
    islands = predicted_islands(a)
    anchors = [rng.choice(g) for g in islands]
    nics = [n for g in islands for n in g]
    probes = tuple((f.ids[n], f.ids[x]) for n in nics for x in anchors if n != x)
    return MeasurePlan(probes=probes, note=f"{len(anchors)} island anchors, seed {o.seed}")


def path_plan(a: Analysis, gpu_a: int, gpu_b: int) -> MeasurePlan:
    """Trace the path between the NICs two GPUs on different servers use."""
    f = a.fabric
    na, nb = a.gpu_nic.get(gpu_a), a.gpu_nic.get(gpu_b)
    if na is None or nb is None or f.parent[gpu_a] == f.parent[gpu_b]:
        return MeasurePlan()
    return MeasurePlan(paths=((f.ids[na], f.ids[nb]),))


def leaf_nics(a: Analysis, leaf: int) -> list[int]:
    """The rail NICs cabled to a leaf (healthy wiring)."""
    f = a.fabric
    return sorted(
        f.other_end(x, leaf)
        for x in f.links_at(leaf).tolist()
        if f.link_kind[x] == int(LinkKind.ACCESS)
    )


def uplink_flow_group(a: Analysis, leaf: int) -> FlowGroup:
    """Enough flows from a leaf's NICs to NICs of other leaves (same rail) to fill its uplinks."""
    f = a.fabric
    ups = [x for x in f.links_at(leaf).tolist() if f.link_kind[x] == int(LinkKind.LEAF_SPINE)]
    uplink = float(f.link_capacity[ups].sum()) if ups else 0.0
    srcs = leaf_nics(a, leaf)
    others = [
        int(x)
        for x in f.leaves.tolist()
        if x != leaf and f.rail[x] == f.rail[leaf] and f.plane[x] == f.plane[leaf]
    ]
    if not srcs or not others or not uplink:
        return FlowGroup(f"uplinks {f.ids[leaf]}", ())
    port = float(f.node_spec(srcs[0]).nic_gbps * f.node_spec(srcs[0]).nic_ports)
    k = min(len(srcs), max(1, math.ceil(uplink / port)))
    dsts = [leaf_nics(a, x) for x in others]
    pairs = []
    for i in range(k):
        pool = dsts[i % len(dsts)]
        if pool:
            pairs.append((f.ids[srcs[i]], f.ids[pool[(i // len(dsts)) % len(pool)]]))
    return FlowGroup(f"uplinks {f.ids[leaf]}", tuple(pairs))


def collective_flow_group(a: Analysis, job: Job, collective: Collective) -> FlowGroup:
    """The flows ``job``'s ``collective`` places on one rail, in rank order.

    The flows of :func:`~harness.invariants.collectives.rank_flows` (ring edges,
    both trees' parent-child edges both ways, every all-to-all pair) between
    the rail NICs of the job's servers, on the rail whose leaves under the job
    keep the least live uplink capacity (rail 0 on a tie): in a rail-optimized
    fabric the rails share no cable, so that rail paces the collective.  The
    group's name is the same whatever the rail, so a step compares with the
    healthy fabric's group.
    """
    f = a.fabric
    live, _ = a.uplink_gbps()
    nics: dict[int, list[int]] = defaultdict(list)  # rail -> the rank-ordered NICs
    for server in job.servers:
        for nic in f.parts_of(server, Kind.NIC).tolist():
            nics[int(f.rail[nic])].append(nic)
    rails = [r for r, xs in sorted(nics.items()) if len(xs) == len(job.servers)]
    name = f"traffic {job.name} {collective}"
    if not rails:
        return FlowGroup(name, ())

    def least_uplinks(rail: int) -> float:
        leaves = {x for n in nics[rail] for x in a.nic_leaves(n)}
        return min((float(live[x]) for x in leaves), default=0.0)

    rail = min(rails, key=lambda r: (least_uplinks(r), r))
    src, dst = rank_flows(collective, len(job.servers))
    ranked = nics[rail]
    pairs = tuple((f.ids[ranked[s]], f.ids[ranked[d]]) for s, d in zip(src.tolist(), dst.tolist(),
                                                                          strict=True))  # fmt: skip
    return FlowGroup(name, pairs)


def uplink_links(a: Analysis) -> tuple[str, ...]:
    """Leaf-spine link ids of every live leaf."""
    f = a.fabric
    live = {int(x) for x in f.leaves.tolist() if a.up[x]}
    links = f.links_of_kind(LinkKind.LEAF_SPINE).tolist()
    return tuple(f.link_ids[x] for x in links if int(f.link_a[x]) in live)
