"""Traffic of jobs: the flows each collective places on each link, and what is left of them.

A job runs its collectives over its servers in rank order; on every rail each
collective is a set of flows between the rail NICs of two ranks
(:mod:`harness.invariants.collectives`).

Each flow asks for its fair share of the NICs at both ends
(``rate / flows out`` at the sender, ``rate / flows in`` at the receiver).
A flow between NICs on one leaf crosses only that leaf; a flow between two
leaves climbs to a spine (and in three tiers, between pods, through the
cores) and comes down, over the links the **forwarding** model gives it,
``adaptive``, ``static`` or ``ecmp`` (:mod:`harness.invariants.forwarding`);
in three tiers flows between pods also share the pods' core uplinks and the
pod-pair capacity (:func:`~harness.invariants.network.pod_pair_gbps`) under
``static`` and ``adaptive``, and take hashed core cables under ``ecmp``.

Every link direction is shared in proportion to what its flows ask: a flow
gets ``min(1, capacity / offered load)`` of its demand on the most loaded
link of its path (its **line rate**, :attr:`CollectiveBandwidth.line_gbs`,
is the same rate with no link shared).  All placed jobs load the links at once (the planning view:
lost ones too); for the other jobs, the heaviest of their collectives on each
link.  A collective's bus bandwidth is ``rails x`` the slowest flow's rate
scaled to a full NIC: on a healthy non-blocking fabric it is the rails' line
rate, for every collective; a link that must carry more than it can slows the
collective by the worst flow's share (NCCL splits a collective evenly over its
channels, so the slowest one paces it).  A job's bandwidth is the worst of
its collectives.  Under ``ecmp`` each figure is the **expected** one, the mean
over :data:`ECMP_DRAWS` seeded hash functions (hash collisions cost
bandwidth even on a healthy non-blocking fabric; every hop a flow crosses
hashes it, :mod:`harness.invariants.ecmp`), with the worst draw beside it;
:mod:`harness.invariants.figures` states them against line rate and against
the same fabric healthy.

>>> from harness.fabric import preset
>>> from harness.fabric.jobs import Job
>>> import numpy as np
>>> f = preset("seed-a800")
>>> su = lambda s: [f.index[f"su{s:02d}/node{n:02d}"] for n in range(1, 21)]
>>> interleaved = Job("mixed", tuple(x for pair in zip(su(1), su(2)) for x in pair))
>>> cap = f.link_capacity.copy()
>>> cap[np.isin(f.link_b, f.spines[1:])] = 0.0  # every spine but spine-01 drained
>>> net = Network.of(f, np.ones(f.n_elements, bool), cap, np.full(f.n_elements, 25.0))
>>> [round(c.busbw_gbs / 100, 3) for c in job_traffic(net, [interleaved], "static")[0].collectives]
[0.05, 0.1]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.routing import Forwarding
from harness.invariants.collectives import COLLECTIVE_ORDER
from harness.invariants.collectives import rank_flows
from harness.invariants.forwarding import Flows
from harness.invariants.forwarding import Resources
from harness.invariants.forwarding import flow_paths
from harness.invariants.network import FloatArray
from harness.invariants.network import IntArray
from harness.invariants.network import Network

ECMP_DRAWS = 16
"""Seeded hash functions an ``ecmp`` estimate averages over (and takes the worst of)."""


@dataclass(frozen=True, slots=True)
class CollectiveBandwidth:
    """Bus bandwidth of one collective of a job, and the link that paces it."""

    collective: Collective
    busbw_gbs: float  # expected (ecmp: mean over the seeded hashes)
    worst_gbs: float  # ecmp: the worst seeded hash; otherwise the same as busbw_gbs
    bottleneck: str = ""  # the most loaded link of the slowest flow ("" when none is over)
    # line rate: the same flows with no link shared (what the NICs at both ends give them)
    line_gbs: float = float("inf")


@dataclass(frozen=True, slots=True)
class JobTraffic:
    """What a job's collectives get from the fabric."""

    name: str
    forwarding: Forwarding
    collectives: tuple[CollectiveBandwidth, ...]
    cross_leaf_flows: int  # flows of the job (all collectives, all rails) between two leaves
    pod_pair_gbps: float | None  # least live capacity between two pods the job spans

    @property
    def worst(self) -> CollectiveBandwidth | None:
        """The collective with the least bus bandwidth (the job's bandwidth)."""
        return min(self.collectives, key=lambda c: c.busbw_gbs, default=None)


def _place(net: Network, jobs: Sequence[Job]) -> Flows:
    """Every port-level flow of every job's collectives, in one pass per (size, collective)."""
    nc = len(COLLECTIVE_ORDER)
    cols: dict[str, list[npt.NDArray[np.int64] | FloatArray]] = defaultdict(list)
    _, nslots_arr = net.access
    nslots = int(nslots_arr[0])
    rails = net.rail_nics.shape[1]
    batches: dict[tuple[Collective, int], list[int]] = defaultdict(list)
    for j, job in enumerate(jobs):
        for collective in job.collectives:
            batches[collective, len(job.servers)].append(j)
    for (collective, n), members in batches.items():
        s_rank, d_rank = rank_flows(collective, n)
        if not s_rank.size:
            continue
        out_deg = np.bincount(s_rank, minlength=n)
        in_deg = np.bincount(d_rank, minlength=n)
        volume = float(max(out_deg.max(), in_deg.max()))
        rows = net.server_row[np.array([jobs[j].servers for j in members], dtype=np.int64)]
        # (job, rail, flow) flattened
        a = net.rail_nics[rows[:, s_rank]].transpose(0, 2, 1).reshape(-1)
        b = net.rail_nics[rows[:, d_rank]].transpose(0, 2, 1).reshape(-1)
        per = rails * s_rank.size
        job_idx = np.repeat(np.array(members, dtype=np.int64), per)
        src_rank = np.tile(s_rank, len(members) * rails)
        dst_rank = np.tile(d_rank, len(members) * rails)
        ok = (a >= 0) & (b >= 0)
        a, b, job_idx = a[ok], b[ok], job_idx[ok]
        demand = np.minimum(
            net.nic_rate[a] / out_deg[src_rank[ok]], net.nic_rate[b] / in_deg[dst_rank[ok]]
        )
        la_all = net.port_leaf[a]
        lb_all = net.port_leaf[b]
        both = (la_all >= 0) & (lb_all >= 0)
        common = both.sum(axis=1)
        none = common == 0
        group = job_idx * nc + COLLECTIVE_ORDER.index(collective)
        for p in range(nslots):
            take = both[:, p] | (none & (p == 0))
            k = int(take.sum())
            if not k:
                continue
            cols["group"].append(group[take])
            cols["src"].append(a[take])
            cols["dst"].append(b[take])
            cols["slot"].append(np.full(k, p))
            cols["leaf_a"].append(np.where(both[take, p], la_all[take, p], -1))
            cols["leaf_b"].append(np.where(both[take, p], lb_all[take, p], -1))
            cols["key"].append(net.port_rank[b[take], p])
            cols["demand"].append(np.where(none[take], 0.0, demand[take]))
            cols["scale"].append(np.full(k, volume))
            cols["weight"].append(1.0 / np.maximum(common[take], 1))
    if not cols:
        e = np.zeros(0, dtype=np.int64)
        z = np.zeros(0)
        return Flows(e, e, e, e, e, e, e, z, z, z)
    cat = {k: np.concatenate(v) for k, v in cols.items()}
    return Flows(
        cat["group"].astype(np.int64), cat["src"].astype(np.int64),
        cat["dst"].astype(np.int64), cat["slot"].astype(np.int64),
        cat["leaf_a"].astype(np.int64), cat["leaf_b"].astype(np.int64),
        cat["key"].astype(np.int64), cat["demand"].astype(np.float64),
        cat["scale"].astype(np.float64), cat["weight"].astype(np.float64),
    )  # fmt: skip


def _evaluate(
    net: Network, fl: Flows, paths: IntArray, res: Resources, n_jobs: int
) -> tuple[FloatArray, list[str]]:
    """Per group (job x collective): the slowest flow's rate at full scale (GB/s), and why."""
    nc = len(COLLECTIVE_ORDER)
    groups = n_jobs * nc
    value = fl.demand * fl.scale
    dead = paths[:, 0] == -2
    why = [""] * groups
    has = paths >= 0
    if has.any():
        rows, cols = np.nonzero(has)
        ids = paths[rows, cols]
        uniq, inv = np.unique(ids, return_inverse=True)
        load = np.zeros((groups, uniq.size))
        np.add.at(load, (fl.group[rows], inv), fl.gbps[rows])
        per_job = load.reshape(n_jobs, nc, uniq.size)
        heaviest = per_job.max(axis=1)
        others = heaviest.sum(axis=0)[None, :] - heaviest  # (jobs, resources)
        total = per_job + others[:, None, :]
        cap = res.capacity(uniq)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(total > 0, np.minimum(1.0, cap[None, None, :] / total), 1.0)
        ratio = ratio.reshape(groups, uniq.size)
        share = np.ones(paths.shape)
        share[rows, cols] = ratio[fl.group[rows], inv]
        worst_col = share.argmin(axis=1)
        slow = share.min(axis=1)
        value = value * slow
        flat_total = total.reshape(groups, uniq.size)
    value = np.where(dead, 0.0, value)
    best = np.full(groups, np.inf)
    np.minimum.at(best, fl.group, value)
    if has.any():
        order = np.lexsort((value, fl.group))  # per group, its slowest flow first
        g_sorted = fl.group[order]
        firsts = np.r_[0, np.flatnonzero(np.diff(g_sorted)) + 1] if order.size else order
        for at in firsts.tolist():
            k, g = int(order[at]), int(g_sorted[at])
            if dead[k]:
                why[g] = "no live up-down path between the ranks' leaves"
                continue
            if slow[k] >= 1.0:
                continue
            rid = int(paths[k, worst_col[k]])
            u = int(np.searchsorted(uniq, rid))
            why[g] = (
                f"{res.describe(rid)}: {cap[u]:g} Gb/s live for {flat_total[g, u]:.4g} Gb/s offered"
            )
    return best, why


def over_draws(values: list[FloatArray], groups: int, rails: int) -> tuple[FloatArray, FloatArray]:
    """Expected (mean over the hash draws) and worst bus bandwidth per group, over all rails."""
    stack = np.stack(values) if values else np.zeros((1, groups))
    return stack.mean(axis=0) * rails, stack.min(axis=0) * rails


def job_traffic(
    net: Network, jobs: Sequence[Job], forwarding: Forwarding
) -> tuple[JobTraffic, ...]:
    """Bus bandwidth per collective of every job (GB/s over all rails; inf: no flow)."""
    fl = _place(net, jobs)
    res = Resources(net)
    nc = len(COLLECTIVE_ORDER)
    rails = net.fabric.rails
    draws = ECMP_DRAWS if forwarding == "ecmp" else 1
    values = []
    why: list[str] = []
    for seed in range(draws):
        paths = flow_paths(net, fl, res, forwarding, seed)
        v, w = _evaluate(net, fl, paths, res, len(jobs))
        values.append(v)
        if seed == 0 or not why:
            why = w
    expected, worst = over_draws(values, len(jobs) * nc, rails)
    line = np.full(len(jobs) * nc, np.inf)
    np.minimum.at(line, fl.group, fl.demand * fl.scale)
    line *= rails
    out = []
    f = net.fabric
    cross = (fl.leaf_a >= 0) & (fl.leaf_a != fl.leaf_b)
    job_of = fl.group // nc
    for j, job in enumerate(jobs):
        cb = tuple(
            CollectiveBandwidth(c, float(expected[j * nc + COLLECTIVE_ORDER.index(c)]),
                                float(worst[j * nc + COLLECTIVE_ORDER.index(c)]),
                                why[j * nc + COLLECTIVE_ORDER.index(c)],
                                float(line[j * nc + COLLECTIVE_ORDER.index(c)]))
            for c in job.collectives
        )  # fmt: skip
        mine = cross & (job_of == j)
        pair: float | None = None
        if f.tiers == 3 and mine.any():
            pa = f.pod[fl.leaf_a[mine]]
            pb = f.pod[fl.leaf_b[mine]]
            between = {(int(a), int(b)) for a, b in zip(pa.tolist(), pb.tolist(), strict=True)
                       if a != b}  # fmt: skip
            if between:
                pair = min(net.pair_gbps(a, b) for a, b in sorted(between))
        out.append(JobTraffic(job.name, forwarding, cb, int(mine.sum()), pair))
    return tuple(out)
