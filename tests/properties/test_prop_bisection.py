"""The bisection (scipy max-flow in 0.1 Gb/s units) agrees with networkx under any faults."""

from __future__ import annotations

import networkx as nx
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.search import strategies as hst


def nx_bisection(f: Fabric, s: FaultState) -> float:
    g = nx.DiGraph()
    half = (f.n_sus + 1) // 2
    for i in f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).tolist():
        cap = float(s.link_capacity[i])
        if cap <= 0:
            continue
        a, b = f.ids[f.link_a[i]], f.ids[f.link_b[i]]
        for u, v in ((a, b), (b, a)):
            g.add_edge(u, v, capacity=g.get_edge_data(u, v, {"capacity": 0.0})["capacity"] + cap)
    for n in f.nics.tolist():
        if f.ids[n] in g:
            g.add_edge(*(("SOURCE", f.ids[n]) if f.su[n] <= half else (f.ids[n], "SINK")))
    if "SOURCE" not in g or "SINK" not in g:
        return 0.0
    return float(nx.maximum_flow_value(g, "SOURCE", "SINK"))


@st.composite
def multi_su(draw: st.DrawFn) -> tuple[Fabric, list[Fault]]:
    f = draw(hst.fabrics(min_sus=2, max_sus=3), label="fabric")
    kinds = ("kill", "drain", "cut", "optic", "degrade")
    return f, draw(hst.fault_sets(f, kinds=kinds, min_size=0, max_size=4), label="faults")


@settings(max_examples=60, deadline=None)
@given(case=multi_su())
def test_bisection_equals_networkx_max_flow(case: tuple[Fabric, list[Fault]]) -> None:
    f, faults = case
    assert f.n_sus >= 2
    s = FaultState.healthy(f)
    for fault in faults:
        s = s.inject(fault)
    ours = Analysis(f, Observation.from_state(s)).bisection_gbps
    exact = nx_bisection(f, s)
    # capacities are floored to 0.1 Gb/s units (stacked degrades: 200 x 0.5 x 0.25 x 0.25
    # = 6.25), so ours may sit below by up to 0.1 Gb/s per cable, never above
    cables = f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).size
    assert exact - 0.1 * cables - 1e-6 <= ours <= exact + 1e-6
    assert ours <= Analysis(f, Observation.from_state(FaultState.healthy(f))).bisection_gbps
