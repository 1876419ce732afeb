"""Cases whose job flows cross leaves, on the sweep's bulk paths, against the full analysis.

A job already lost keeps its flows on the links (the planning view), so a
further failure that takes them off may speed the other jobs up: such NIC
cuts must not take the bulk shortcut (lost job, least ratio 0) that holds
for the jobs still running.  On three tiers under ``ecmp`` every flow between
pods is hashed at each hop (:mod:`harness.invariants.ecmp`): the sweep's rows
must still be the full analysis's.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.planning.sweep import CaseEvaluator
from harness.planning.sweep.cases import single_failures
from harness.search import strategies as hst


def test_cutting_a_lost_job_s_flows_speeds_the_others_up_as_the_full_analysis_says() -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=1, leaf_radix=8, storage=False)
    jobs = resolve_jobs(
        [JobSpec(name="a", nodes=("su01/node01", "su02/node01")),
         JobSpec(name="b", nodes=("su01/node02", "su02/node02"))], f,
    )  # fmt: skip
    uplink = next(f.link_ids[i] for i in f.links_at(f.index["su01/leaf-r0"]).tolist()
                  if "spine" in f.link_ids[i])  # fmt: skip
    state = FaultState.healthy(f).inject(Fault.parse({"kill": "su01/node01/nic1"}))
    state = state.inject(Fault.parse({"degrade": {"target": uplink, "fraction": 0.5}}))
    healthy = Analysis(f, Observation.from_state(FaultState.healthy(f)), jobs)
    before = Analysis(f, Observation.from_state(state), jobs, healthy=healthy)
    ev = CaseEvaluator(f, jobs, state, reference=before)
    assert ev.base.jobs_lost() == ["a"]
    singles = single_failures(f, ("switches", "cables", "optics", "nics"))
    fast = {c.failures[0].id: c.min_busbw_ratio for c in ev.evaluate_singles(singles)}
    exact = {x.id: ev.evaluate_exact([x]).min_busbw_ratio for x in singles}
    assert fast == exact
    assert fast["su02/node01/nic0"] == 2.0  # a's rail-0 flows gone: b gets the whole uplink


ECMP = Routing.stating(forwarding="ecmp")


@st.composite
def three_tier_ecmp(draw: st.DrawFn) -> CaseEvaluator:
    """A small three-tier fabric under ecmp, faults already present, one job over servers
    of two or more pods (so its flows are hashed through the cores), and maybe another."""
    f = draw(hst.fabrics(["three-tier"], min_sus=2, max_sus=4, max_nodes_per_su=2), label="fabric")
    base = draw(hst.fault_sets(f, ("kill", "drain", "cut", "degrade"), max_size=2), label="base")
    state = FaultState.healthy(f)
    for fault in base:
        state = state.inject(fault)
    servers = [f.ids[i] for i in f.servers.tolist()]
    pods = sorted({int(f.pod[i]) for i in f.servers.tolist()})
    ends = [next(f.ids[i] for i in f.servers.tolist() if f.pod[i] == p) for p in pods[:2]]
    more = draw(st.lists(st.sampled_from(servers), max_size=4, unique=True), label="more")
    nodes = list(dict.fromkeys([*ends, *more]))  # two pods at least: hashed via the cores
    rest = [x for x in servers if x not in nodes]
    specs = [JobSpec(name="wide", nodes=tuple(nodes))]
    if len(rest) >= 2 and draw(st.booleans(), label="second job"):  # shares hashed cables
        specs.append(JobSpec(name="other", nodes=(rest[0], rest[-1])))
    jobs = resolve_jobs(specs, f)
    note(f"{f.name}: base {[x.describe() for x in base]}, nodes {nodes}")
    return CaseEvaluator(f, jobs, state, routing=ECMP)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(ev=three_tier_ecmp(), data=st.data())
def test_three_tier_ecmp_sweep_rows_equal_the_full_analysis(
    ev: CaseEvaluator, data: st.DataObject
) -> None:
    """Hashed through the cores: every fast row equals the full analysis of the case."""
    singles = single_failures(ev.fabric, ("switches", "cables", "nics"))
    picked = sorted(data.draw(st.lists(st.integers(0, len(singles) - 1), min_size=1,
                                       max_size=12, unique=True), label="cases"))  # fmt: skip
    chosen = [singles[k] for k in picked]
    for fast, x in zip(ev.evaluate_singles(chosen), chosen, strict=True):
        exact = ev.evaluate_exact([x])
        got = (fast.min_busbw_ratio, fast.busbw_job, fast.jobs_lost, fast.pairs_disconnected)
        want = (exact.min_busbw_ratio, exact.busbw_job, exact.jobs_lost, exact.pairs_disconnected)
        assert got == want, x.id


def test_a_nic_or_leaf_cut_that_loses_a_job_speeds_the_others_up_under_ecmp() -> None:
    """The cut NICs' flows leave the links they loaded: under ecmp, hashed flows collide,
    and a job sharing an overloaded link with them gets faster (the bulk NIC and leaf
    kernels once kept the base's figure for the others)."""
    f = two_tier(sus=3, nodes_per_su=3, spines=3, leaf_radix=8, spine_radix=16, storage=False)
    jobs = resolve_jobs([
        JobSpec(name="job0", nodes=("su01/node01", "su01/node02", "su01/node03", "su02/node01",
                                    "su02/node02")),
        JobSpec(name="job1", nodes=("su02/node03", "su03/node01")),
    ], f)  # fmt: skip
    state = FaultState.healthy(f).inject(Fault.parse({"drain": "spine-01"}))
    ev = CaseEvaluator(f, jobs, state, routing=ECMP)
    singles = [x for x in single_failures(f, ("switches", "nics")) if "leaf" in x.id
               or x.id.startswith("su01/")]  # fmt: skip
    fast = {c.failures[0].id: c.min_busbw_ratio for c in ev.evaluate_singles(singles)}
    exact = {x.id: ev.evaluate_exact([x]).min_busbw_ratio for x in singles}
    assert fast == exact
    assert exact["su01/leaf-r0"] > ev._busbw_without(("job0",))[0]  # job1 sped up
