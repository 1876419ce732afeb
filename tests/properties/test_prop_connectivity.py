"""Properties of connectivity and job loss on small generated fabrics.

* Killing any set of spines short of all keeps every GPU pair connected (two-tier,
  dual-ToR); on three tiers, as long as one spine index survives in every pod with
  one of its cores.
* Any leaf loss loses exactly the per-SU job of its SU on single-ToR designs, and no
  job on dual-ToR designs.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.search import strategies as hst


def analyse(f: Fabric, faults: list[Fault], jobs: tuple[JobSpec, ...] = ()) -> Analysis:
    s = FaultState.healthy(f)
    for fault in faults:
        s = s.inject(fault)
    return Analysis(f, Observation.from_state(s), resolve_jobs(jobs, f))


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_spines_short_of_all_keep_every_gpu_pair_connected(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(["two-tier", "dual-tor"]), label="fabric")
    spines = [f.ids[i] for i in f.spines.tolist()]
    killed = data.draw(
        st.lists(st.sampled_from(spines), unique=True, max_size=len(spines) - 1), label="killed"
    )
    a = analyse(f, [hst.kill(killed)] if killed else [])
    assert a.gpu_pairs_disconnected() == 0
    assert a.gpu_pairs_disconnected(pxn=True) == 0
    assert len(a.islands()) == 1
    assert a.rails_connected() == list(range(f.rails))


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_three_tier_stays_connected_through_one_spine_plane(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(["three-tier"]), label="fabric")
    spines_per_pod = int(dict(f.params)["spines_per_pod"])
    j = data.draw(st.integers(1, spines_per_pod), label="surviving spine index")
    suffix = f"/spine-{j:0{max(2, len(str(spines_per_pod)))}d}"
    others = [f.ids[i] for i in f.spines.tolist() if not f.ids[i].endswith(suffix)]
    group = f"core-g{j:0{max(2, len(str(spines_per_pod)))}d}-"
    cores = [f.ids[i] for i in f.cores.tolist()]
    mine = [c for c in cores if c.startswith(group)]
    killed = (
        data.draw(st.lists(st.sampled_from(others), unique=True), label="spines") if others else []
    )
    killed += [c for c in cores if not c.startswith(group)]
    keep = data.draw(st.sampled_from(mine), label="surviving core")
    killed += [c for c in mine if c != keep]
    a = analyse(f, [hst.kill(killed)] if killed else [])
    assert a.gpu_pairs_disconnected() == 0


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_leaf_loss_loses_exactly_its_sus_job(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(["two-tier", "three-tier"], min_nodes_per_su=2), label="fabric")
    leaf = data.draw(st.sampled_from([f.ids[i] for i in f.leaves.tolist()]), label="leaf")
    a = analyse(f, [hst.kill(leaf)], (JobSpec(per_su=True),))
    su = int(f.su[f.index[leaf]])
    assert a.jobs_lost() == [f"su{su:02d}"]
    (verdict,) = [v for v in a.verdicts if v.lost]
    assert all(f"leaf {leaf} is down" in r for r in verdict.reasons if "cannot reach" in r)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_dual_tor_leaf_loss_loses_no_job(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(["dual-tor"], min_nodes_per_su=2), label="fabric")
    leaf = data.draw(st.sampled_from([f.ids[i] for i in f.leaves.tolist()]), label="leaf")
    a = analyse(f, [hst.kill(leaf)], (JobSpec(per_su=True), JobSpec(name="all", nodes=("*",))))
    assert a.jobs_lost() == []
    assert a.gpu_pairs_disconnected() == 0
