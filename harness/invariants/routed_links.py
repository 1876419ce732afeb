"""The cables each job's routed flows cross: what a failure stalls (invariants stage, pure).

A kill, cut or optic stalls a running job for the control plane's reroute
only when the routes sent some flow of the job over a cable it takes down
(:mod:`harness.invariants.timeline`).  The routes are those of the state
*before* the failure, as the forwarding model places them: the job's flows
from :func:`~harness.invariants.traffic._place` and their paths from
:func:`~harness.invariants.forwarding.flow_paths` (no second derivation), read
as cable ids:

``static``
    the cables of each flow's d-mod-k path (per destination, OpenSM's
    ftree tables): a spine kill stalls the jobs whose destinations that
    spine carried, not every job that crosses leaves;
``adaptive``
    a pooled uplink stands for every *admissible* cable of the pool (the
    leaf's live uplinks to spines that still reach the destination leaf, and
    those spines' live cables down to it): adaptive routing spreads a flow
    over all of them, so losing any one stalls it;
``ecmp``
    each of the :data:`~harness.invariants.traffic.ECMP_DRAWS` seeded hash
    functions places the flows on one path each; :attr:`RoutedLinks.draws`
    keeps the cables of every draw and :attr:`RoutedLinks.links` their
    union.  A job is judged stalled when **any** draw puts one of its flows
    on a cable that died (the fabric's real hash is one of many; a risk
    check must not call a job safe that a hash may put there); the risk
    check's and the sweep's reasons say in how many draws when not all
    (:meth:`RoutedLinks.hits`, :func:`draw_note`: "in 3 of 16 hash draws").

In three tiers the core tier is pooled by the flow engine whatever the
forwarding: a pod's pooled core uplinks stand for the live spine-core cables
of the spines the flow climbs to (in the source pod) and of the spines that
reach the destination leaf (in the destination pod).  Access cables of every
live port a flow uses count too: a job that outlives one of its NIC ports (a
second port, PXN) still stalls while the fabric routes around it.

Answers are cached per (fabric, live elements, live cables, forwarding,
jobs): the timeline asks at every change, the risk check's N+1 margin and the
sweep once per state.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.fabric.jobs import Job
from harness.fabric.model import LinkKind
from harness.fabric.routing import Forwarding
from harness.invariants.collectives import COLLECTIVE_ORDER
from harness.invariants.forwarding import Flows
from harness.invariants.forwarding import Resources
from harness.invariants.forwarding import flow_paths
from harness.invariants.network import IntArray
from harness.invariants.network import Network
from harness.invariants.traffic import ECMP_DRAWS
from harness.invariants.traffic import _place

CACHE_SIZE = 64  # states kept (a scenario or a risk check visits a handful)


@dataclass(frozen=True, slots=True)
class RoutedLinks:
    """The cables one job's flows are routed over in one state (one draw each for ``ecmp``)."""

    name: str
    draws: tuple[frozenset[int], ...]

    @property
    def links(self) -> frozenset[int]:
        """Every cable some draw routes a flow of the job over (the union of the draws)."""
        return frozenset().union(*self.draws) if self.draws else frozenset()

    def hits(self, taken: Collection[int]) -> int:
        """How many draws route a flow of the job over one of the ``taken`` cables."""
        gone = frozenset(taken)
        return sum(1 for d in self.draws if d & gone)


def draw_note(routed: RoutedLinks, taken: Collection[int]) -> str:
    """``" (in 3 of 16 hash draws)"`` when only some draws put the job on ``taken``, else ``""``.

    >>> r = RoutedLinks("j", (frozenset({1}), frozenset({2})))
    >>> draw_note(r, {1}), draw_note(r, {1, 2}), r.hits({3})
    (' (in 1 of 2 hash draws)', '', 0)
    """
    k, n = routed.hits(taken), len(routed.draws)
    return f" (in {k} of {n} hash draws)" if 0 < k < n else ""


_CACHE: dict[tuple[object, ...], tuple[Network, dict[str, RoutedLinks]]] = {}


def routed_links(
    net: Network, jobs: Sequence[Job], forwarding: Forwarding
) -> dict[str, RoutedLinks]:
    """Per job (by name): the cables its flows are routed over in ``net``'s state."""
    key = (
        id(net.fabric), net.up.tobytes(), (net.cap > 0).tobytes(), forwarding, tuple(jobs),
    )  # fmt: skip
    kept = _CACHE.get(key)
    if kept is not None and kept[0].fabric is net.fabric:
        return kept[1]
    out = _routed(net, tuple(jobs), forwarding)
    if len(_CACHE) >= CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (net, out)
    return out


def _routed(net: Network, jobs: tuple[Job, ...], forwarding: Forwarding) -> dict[str, RoutedLinks]:
    if not jobs:
        return {}
    fl = _place(net, jobs)
    job_of = fl.group // len(COLLECTIVE_ORDER)
    access = _access_cables(net, fl)
    res = Resources(net)
    draws = ECMP_DRAWS if forwarding == "ecmp" else 1
    per_draw = []
    memo: dict[tuple[int, ...], IntArray] = {}  # a pool's cables in a context, for every draw
    for seed in range(draws):
        paths = flow_paths(net, fl, res, forwarding, seed)
        per_draw.append(_job_cables(net, fl, paths=paths, res=res, job_of=job_of,
                                    n_jobs=len(jobs), access=access, memo=memo))  # fmt: skip
    return {
        job.name: RoutedLinks(job.name, tuple(d[j] for d in per_draw)) for j, job in enumerate(jobs)
    }


def _access_cables(net: Network, fl: Flows) -> tuple[IntArray, IntArray]:
    """(flow, access cable) of both ends of every flow with a live common port."""
    table, _ = net.access
    ok = np.flatnonzero(fl.leaf_a >= 0)
    ends = np.concatenate([table[fl.src[ok], fl.slot[ok]], table[fl.dst[ok], fl.slot[ok]]])
    rows = np.concatenate([ok, ok])
    keep = ends >= 0
    return rows[keep], ends[keep]


def _job_cables(
    net: Network,
    fl: Flows,
    *,
    paths: IntArray,
    res: Resources,
    job_of: IntArray,
    n_jobs: int,
    access: tuple[IntArray, IntArray],
    memo: dict[tuple[int, ...], IntArray],
) -> list[frozenset[int]]:
    """Per job: the cables of one draw's paths (pools read as their admissible cables)."""
    rows_a, cables_a = access
    rows, cols = np.nonzero(paths >= 0)
    rid = paths[rows, cols]
    extra = rid >= res.extra
    if extra.any():  # an adaptive pool of some of a leaf's uplinks (or cables into a leaf):
        # the flow may use every admissible cable of it, as of the leaf's whole pool
        down = ((rid[extra] - res.extra) % 2).astype(np.bool_)
        r = rows[extra]
        rid = rid.copy()
        rid[extra] = np.where(down, res.leaf_down + fl.leaf_b[r], res.leaf_up + fl.leaf_a[r])
    cable = rid < res.leaf_up
    pairs = [np.stack([job_of[rows_a], cables_a], axis=1),
             np.stack([job_of[rows[cable]], rid[cable] // 2], axis=1)]  # fmt: skip
    pooled = ~cable & (rid < res.pair)  # the pod-pair capacity: its cables are the pools'
    if pooled.any():
        f = net.fabric
        prow, prid = rows[pooled], rid[pooled]
        la, lb = fl.leaf_a[prow], fl.leaf_b[prow]
        up_cable = paths[prow, 0]
        explicit = (up_cable >= 0) & (up_cable < res.leaf_up)  # a cable, not a pool
        spine = np.where(explicit, f.link_b[np.where(explicit, up_cable, 0) // 2], -1)
        inter = (f.pod[la] != f.pod[lb]) if f.tiers == 3 else np.zeros(la.size, dtype=np.bool_)
        # what each pool's cables depend on, and nothing else (-1): few distinct contexts
        src_pool = prid < res.leaf_down
        dst_pool = (prid >= res.leaf_down) & (prid < res.pod_up)
        pod_up = (prid >= res.pod_up) & (prid < res.pod_down)
        keep_a = src_pool | (dst_pool & ~inter) | (pod_up & (spine < 0))
        keep_b = (src_pool & ~inter) | dst_pool | (prid >= res.pod_down)
        ctx = np.stack([prid, np.where(keep_a, la, -1), np.where(keep_b, lb, -1),
                        np.where(pod_up, spine, -1), inter, job_of[prow]], axis=1)  # fmt: skip
        for r, a, b, sp, x, j in _unique_rows(ctx).tolist():
            k = (r, a, b, sp, x)
            if k not in memo:
                memo[k] = _pool_cables(net, res, r, la=a, lb=b, s=sp, inter=bool(x))
            links = memo[k]
            if links.size:
                pairs.append(np.stack([np.full(links.size, j), links], axis=1))
    both = np.concatenate(pairs)
    code = np.unique(both[:, 0].astype(np.int64) * net.fabric.n_links + both[:, 1])
    jobs, cables = np.divmod(code, net.fabric.n_links)
    starts = np.searchsorted(jobs, np.arange(n_jobs + 1))
    return [frozenset(cables[starts[j] : starts[j + 1]].tolist()) for j in range(n_jobs)]


def _unique_rows(x: IntArray) -> IntArray:
    """The distinct rows of ``x`` (sorted; ``np.unique(axis=0)`` is many times slower)."""
    if not x.shape[0]:
        return x
    s = x[np.lexsort(x.T[::-1])]
    first = np.r_[True, (s[1:] != s[:-1]).any(axis=1)]
    out: IntArray = s[first]
    return out


def _pool_cables(
    net: Network, res: Resources, rid: int, *, la: int, lb: int, s: int, inter: bool
) -> IntArray:
    """The live cables a pooled resource stands for, for a flow from leaf ``la`` to ``lb``
    (``inter``: between two pods; ``s``: the spine its explicit up cable climbs to)."""
    f = net.fabric
    empty = np.zeros(0, dtype=np.int64)
    if rid < res.leaf_down:  # the source leaf's uplinks
        return _admissible_ups(net, la, lb, inter)
    if rid < res.pod_up:  # the destination leaf's uplinks, coming down
        if inter:
            return _core_spine_ups(net, lb)
        spines = np.unique(f.link_b[_admissible_ups(net, la, lb, inter)])
        downs = [net.live_links(net.downlinks.get((int(x), lb), empty)) for x in spines.tolist()]
        return np.concatenate(downs) if downs else empty
    if rid < res.pod_down:  # the source pod's core uplinks, from the spines climbed to
        above = [s] if s >= 0 else f.link_b[_admissible_ups(net, la, lb, inter)].tolist()
        return _core_cables(net, np.unique(np.array(above, dtype=np.int64)))
    # the destination pod's core uplinks, from spines with a way down to lb
    return _core_cables(net, np.unique(f.link_b[_core_spine_ups(net, lb)]).astype(np.int64))


def _admissible_ups(net: Network, la: int, lb: int, inter: bool) -> IntArray:
    """``la``'s live uplinks to live spines that reach ``lb`` (or, between pods, the cores)."""
    f = net.fabric
    ups = net.live_links(net.uplinks.get(la, np.zeros(0, dtype=np.int64)))
    ups = ups[net.up[f.link_b[ups]]]
    if inter:
        return ups[net._core_reach[f.link_b[ups]]]
    spine_row, leaf_col, reaches = net.spine_reaches
    out: IntArray = ups[reaches[spine_row[f.link_b[ups]], leaf_col[lb]]]
    return out


def _core_spine_ups(net: Network, lb: int) -> IntArray:
    """``lb``'s live uplinks to live spines with a live core uplink (the way down from the
    cores)."""
    f = net.fabric
    ups = net.live_links(net.uplinks.get(lb, np.zeros(0, dtype=np.int64)))
    ups = ups[net.up[f.link_b[ups]]]
    return ups[net._core_reach[f.link_b[ups]]]


def _core_cables(net: Network, spines: IntArray) -> IntArray:
    """The live spine-core cables of ``spines`` to live cores."""
    f = net.fabric
    sc = f.links_of_kind(LinkKind.SPINE_CORE)
    sc = sc[(net.cap[sc] > 0) & np.isin(f.link_a[sc], spines) & net.up[f.link_b[sc]]]
    return sc.astype(np.int64)
