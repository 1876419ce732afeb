"""Properties of the flow engine over random jobs and random uplink losses.

* no collective, under any forwarding model, beats the NIC line rate;
* with pooled (adaptive) uplinks, losing more cables never speeds a job up;
* a rank order is a permutation: the healthy non-blocking fabric runs every
  collective at line rate whatever the order with adaptive routing (static
  d-mod-k routes two destinations at the same leaf port of different leaves
  over the same spine, so it does not: a real ftree property);
* ``ecmp``'s worst seeded hash is never better than its mean.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.fabric import preset
from harness.fabric.jobs import Job
from harness.invariants.network import Network
from harness.invariants.traffic import job_traffic

LINE = 4 * 200 / 8


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


@functools.cache
def uplinks() -> tuple[int, ...]:
    return tuple(seed().links_of_kind(LinkKind.LEAF_SPINE).tolist())


def net_without(cut: set[int]) -> Network:
    f = seed()
    cap = f.link_capacity.copy()
    cap[list(cut)] = 0.0
    return Network(f, np.ones(f.n_elements, dtype=bool), cap, np.full(f.n_elements, 25.0))


ranks = st.lists(st.integers(0, 199), min_size=2, max_size=24, unique=True)
cuts = st.sets(st.integers(0, 799), max_size=400)
collectives = st.sampled_from([("ring",), ("tree",), ("all-to-all",), ("ring", "tree")])


def job(order: list[int], which: tuple[str, ...]) -> Job:
    servers = seed().servers
    return Job("j", tuple(int(servers[i]) for i in order), collectives=which)  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(order=ranks, cut=cuts, more=cuts, which=collectives)
def test_adaptive_never_gains_from_losing_uplinks(
    order: list[int], cut: set[int], more: set[int], which: tuple[str, ...]
) -> None:
    ups = uplinks()
    a = {ups[i] for i in cut}
    b = a | {ups[i] for i in more}
    j = job(order, which)
    before = job_traffic(net_without(a), [j], "adaptive")[0]
    after = job_traffic(net_without(b), [j], "adaptive")[0]
    for x, y in zip(before.collectives, after.collectives, strict=True):
        assert y.busbw_gbs <= x.busbw_gbs + 1e-9
        assert x.busbw_gbs <= LINE + 1e-9


@settings(max_examples=15, deadline=None, derandomize=True)
@given(order=ranks, which=collectives)
def test_healthy_runs_every_order_at_line_rate(order: list[int], which: tuple[str, ...]) -> None:
    j = job(order, which)
    for c in job_traffic(net_without(set()), [j], "adaptive")[0].collectives:
        assert abs(c.busbw_gbs - LINE) < 1e-9


@settings(max_examples=10, deadline=None, derandomize=True)
@given(order=ranks, cut=cuts, which=collectives)
def test_ecmp_worst_is_at_most_the_mean_and_nothing_beats_line_rate(
    order: list[int], cut: set[int], which: tuple[str, ...]
) -> None:
    ups = uplinks()
    net = net_without({ups[i] for i in cut})
    for forwarding in ("static", "ecmp"):
        for c in job_traffic(net, [job(order, which)], forwarding)[0].collectives:
            assert 0.0 <= c.worst_gbs <= c.busbw_gbs + 1e-9 <= LINE + 2e-9
