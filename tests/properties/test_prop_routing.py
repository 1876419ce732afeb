"""Properties of the routing semantics (``paths: up-down`` against ``shortest``).

* Up-down reachability is contained in min-hop reachability, on any fault set: every
  pair of leaves (and so of NICs, GPUs, jobs) that reaches under up-down reaches under
  shortest; fewer GPU pairs talk and at least the same jobs are lost.
* On a healthy fabric the two are equal.
* The leaf signatures agree with an independent search: an up-down route exists
  between two leaves (breadth-first search over the two-copy directed graph) iff their
  signatures meet, and its length is never below the min-hop one.
* The sweep's incremental check (:class:`UpDownIndex`) says exactly whether removing
  switches and cables breaks up-down reachability, compared with recomputing it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import LinkKind
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.paths import RouteGraph
from harness.invariants.paths import switch_graph
from harness.invariants.reach import UpDownIndex
from harness.invariants.reach import leaf_reach
from harness.invariants.reach import up_down_signatures
from harness.invariants.reach import up_links
from harness.invariants.state import Observation
from harness.search import strategies as hst

SWITCH_FAULTS = ("kill", "drain", "cut", "optic")
PER_SU = (JobSpec(per_su=True), JobSpec(name="all", nodes=("*",)))


def observe(f: Fabric, faults: list[Fault]) -> Observation:
    s = FaultState.healthy(f)
    for fault in faults:
        s = s.inject(fault)
    return Observation.from_state(s)


def analyses(f: Fabric, obs: Observation) -> tuple[Analysis, Analysis]:
    jobs = resolve_jobs(PER_SU, f)
    return Analysis(f, obs, jobs, routing=Routing.stating(paths="up-down")), Analysis(
        f, obs, jobs, routing=Routing.stating(paths="shortest")
    )


def route_exists(graph: RouteGraph, a: int, b: int) -> int | None:
    """Switches on the shortest route from leaf a to leaf b (None: no route), by BFS."""
    from harness.invariants.paths import _shortest

    route = _shortest(graph, [a], [b])
    return None if route is None else len(route)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_up_down_reach_is_within_shortest_reach(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(), label="fabric")
    faults = data.draw(hst.fault_sets(f, SWITCH_FAULTS, max_size=6), label="faults")
    obs = observe(f, faults)
    ud, sp = analyses(f, obs)
    leaves = sorted(ud.reach.signature)
    assert leaves == sorted(sp.reach.signature)
    for i, a in enumerate(leaves):
        for b in leaves[i + 1 :]:
            if ud.reach.reaches(a, b):
                assert sp.reach.reaches(a, b)
    assert ud.gpu_pairs_disconnected() >= sp.gpu_pairs_disconnected()
    assert ud.gpu_pairs_disconnected(pxn=True) >= sp.gpu_pairs_disconnected(pxn=True)
    assert set(ud.jobs_lost()) >= set(sp.jobs_lost())


@settings(max_examples=30, deadline=None)
@given(f=hst.fabrics())
def test_up_down_equals_shortest_on_a_healthy_fabric(f: Fabric) -> None:
    ud, sp = analyses(f, observe(f, []))
    leaves = sorted(ud.reach.signature)
    for i, a in enumerate(leaves):
        for b in leaves[i + 1 :]:
            assert ud.reach.reaches(a, b) == sp.reach.reaches(a, b)
    assert ud.gpu_pairs_disconnected() == sp.gpu_pairs_disconnected()
    assert ud.jobs_lost() == sp.jobs_lost() == []
    assert ud.islands() == sp.islands()


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_signatures_agree_with_a_route_search(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(), label="fabric")
    faults = data.draw(hst.fault_sets(f, SWITCH_FAULTS, max_size=6), label="faults")
    obs = observe(f, faults)
    reach = leaf_reach(f, obs, "up-down")
    ud_graph, sp_graph = switch_graph(f, obs, "up-down"), switch_graph(f, obs, "shortest")
    leaves = sorted(reach.signature)
    for a in leaves:
        for b in leaves:
            hops = route_exists(ud_graph, a, b)
            assert (hops is not None) == reach.reaches(a, b), (f.ids[a], f.ids[b])
            if hops is not None:
                shortest = route_exists(sp_graph, a, b)
                assert shortest is not None
                assert hops >= shortest


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_incremental_check_is_exact(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(["two-tier", "three-tier", "dual-tor"]), label="fabric")
    base_faults = data.draw(hst.fault_sets(f, ("cut", "kill"), min_size=0, max_size=3))
    obs = observe(f, base_faults)
    leaves = set(f.leaves.tolist())
    index = UpDownIndex(f, obs, leaves)
    upper = np.concatenate([f.spines, f.cores, f.leaves]).tolist()
    cables = f.links_of_kind(LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).tolist()
    dead = data.draw(st.lists(st.sampled_from(upper), max_size=3, unique=True), label="dead")
    cut = data.draw(st.lists(st.sampled_from(cables), max_size=4, unique=True), label="cut")
    up = obs.element_up.copy()
    up[dead] = False
    cap = obs.link_capacity.copy()
    cap[cut] = 0
    sigs, _ = up_down_signatures(up_links(f, Observation("model", up, cap)))
    before, _ = up_down_signatures(up_links(f, obs))
    left = [x for x in sorted(leaves) if x in sigs]
    # broken: two leaves that reached each other before no longer do (on a complete base:
    # two leaves left that do not reach each other)
    broken = any(
        before[a] & before[b] and not sigs[a] & sigs[b]
        for i, a in enumerate(left)
        for b in left[i + 1 :]
    )
    assert index.breaks(dead, cut) == broken
