"""A kill stalls exactly the jobs whose routed flows cross what died (issue 19, item 6).

For random fault states and random jobs on a small two-tier fabric, a kill of
a live spine, played through the timeline as the runner plays it (the routes
of the state before the kill, a 1 s reroute against 0.5 s timeouts), crashes
job J iff some flow of J has that spine on its path in
:func:`~harness.invariants.forwarding.flow_paths` under static tables -- read
here from the flow engine's own placement, not from the blast-radius code.
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric.generators import two_tier
from harness.fabric.jobs import DEFAULT_TIMEOUT_S
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.collectives import COLLECTIVE_ORDER
from harness.invariants.forwarding import Resources
from harness.invariants.forwarding import flow_paths
from harness.invariants.state import Observation
from harness.invariants.timeline import Timeline
from harness.invariants.timeline import after_change
from harness.invariants.timeline import traffic_of
from harness.invariants.traffic import _place


@functools.cache
def fabric() -> Fabric:
    return two_tier(sus=2, nodes_per_su=4, spines=4, leaf_radix=8, storage=False)


def _cut_state(
    f: Fabric, cuts: set[int], members: list[set[int]], timeout: float = DEFAULT_TIMEOUT_S
) -> tuple[FaultState, list[Job]]:
    """The fabric with leaf-spine cables ``cuts`` cut, and a job per set of server rows."""
    ups = f.links_of_kind(LinkKind.LEAF_SPINE)
    state = FaultState.healthy(f)
    for c in sorted(cuts):
        state = state.inject(Fault.parse({"cut": f.link_ids[int(ups[c])]}).resolve(f))
    servers = f.servers.tolist()
    jobs = [Job(f"j{k}", tuple(servers[i] for i in sorted(m)), timeout=timeout)
            for k, m in enumerate(members)]  # fmt: skip
    return state, jobs


def _on_path(a: Analysis, jobs: list[Job], spine: int) -> set[str]:
    """The jobs some of whose flows climb to or come down from ``spine`` (static paths)."""
    f = a.fabric
    net = a.network
    fl = _place(net, jobs)
    res = Resources(net)
    paths = flow_paths(net, fl, res, "static", 0)
    cables = paths[:, :2]
    real = (cables >= 0) & (cables < res.leaf_up)
    ends = np.where(real, f.link_b[np.where(real, cables, 0) // 2], -1)
    crossing = (ends == spine).any(axis=1)
    job_of = fl.group // len(COLLECTIVE_ORDER)
    return {jobs[int(j)].name for j in np.unique(job_of[crossing]).tolist()}


@settings(max_examples=25, deadline=None)
@given(
    cuts=st.sets(st.integers(0, 31), max_size=4),
    members=st.lists(st.sets(st.integers(0, 7), min_size=1, max_size=5), min_size=1, max_size=4),
    spine=st.integers(0, 3),
)
def test_a_spine_kill_stalls_a_job_iff_its_static_routes_cross_the_spine(
    cuts: set[int], members: list[set[int]], spine: int
) -> None:
    f = fabric()
    state, jobs = _cut_state(f, cuts, members, timeout=0.5)
    before = Analysis(f, Observation.from_state(state), jobs)
    kill = Fault.parse({"kill": f.ids[int(f.spines[spine])]}).resolve(f)
    after = Analysis(f, Observation.from_state(state.inject(kill)), jobs)
    t = after_change(Timeline.start(jobs), after, kill, Routing.stating(reroute=1.0),
                     traffic_of(before))  # fmt: skip
    judged = {j.name for j in jobs if j.name not in before.jobs_lost()
              and j.name not in after.jobs_lost()}  # fmt: skip
    crashed = {name for name in t.lost() if name in judged}
    assert crashed == _on_path(before, jobs, int(f.spines[spine])) & judged


@settings(max_examples=25, deadline=None)
@given(
    cuts=st.sets(st.integers(0, 31), max_size=6),
    members=st.lists(st.sets(st.integers(0, 7), min_size=2, max_size=5), min_size=1, max_size=3),
)
def test_adaptive_routes_cover_the_static_ones_in_asymmetric_states(
    cuts: set[int], members: list[set[int]]
) -> None:
    # static tables take one admissible uplink per destination, adaptive routing may take
    # any of them: its blast radius holds the static one, whatever pools the state splits a
    # leaf's uplinks into (the pools of some of a leaf's uplinks stand for their cables too)
    f = fabric()
    state, jobs = _cut_state(f, cuts, members)
    obs = Observation.from_state(state)
    static = traffic_of(Analysis(f, obs, jobs, routing=Routing.stating(forwarding="static")))
    adaptive = traffic_of(Analysis(f, obs, jobs, routing=Routing.stating(forwarding="adaptive")))
    for job in jobs:
        assert static[job.name] <= adaptive[job.name], job.name
