"""Cases whose job flows cross leaves, on the sweep's bulk paths, against the full analysis.

A job already lost keeps its flows on the links (the planning view), so a
further failure that takes them off may speed the other jobs up: such NIC
cuts must not take the bulk shortcut (lost job, least ratio 0) that holds
for the jobs still running.
"""

from __future__ import annotations

from harness.fabric import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.planning.sweep import CaseEvaluator
from harness.planning.sweep.cases import single_failures


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
