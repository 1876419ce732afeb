"""The ``hang`` fault kind on the model: a switch that keeps its links up and forwards nothing.

What it may name, what state it leaves (a kill's, once routed around), how long the control
plane takes to notice it (hold timer, BFD, the subnet manager's sweep), the jobs' fates with
and without BFD, its reboot, the risk check, the guard's refusal, and every table that lists
fault kinds.  Pure and fast: a small two-tier fabric, the seed only where a drill names it.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.backends.ibsim.backend import IbsimBackend
from harness.backends.netns.faults import SUPPORTED_FAULTS
from harness.cli import main
from harness.errors import ScenarioError
from harness.fabric.generators import two_tier
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.routing import Routing
from harness.fabric.routing import parse_routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.fault import FaultState
from harness.faults.text import parse_faults
from harness.invariants.analysis import Analysis
from harness.invariants.outage import bgp_sessions
from harness.invariants.outage import hang_detect_min_s
from harness.invariants.outage import outage_s
from harness.invariants.state import Observation
from harness.invariants.timeline import Timeline
from harness.invariants.timeline import after_change
from harness.invariants.timeline import crashed_by_change
from harness.invariants.timeline import traffic_of
from harness.reporting.html.marks import Marks
from harness.search import strategies

BGP = Routing.stating(control="bgp")
BFD = Routing.stating(control="bgp", bfd="300ms")


@functools.cache
def small() -> Fabric:
    """2 SUs x 2 servers, 4 rails, 2 spines (as the netns drill's fabric), with storage."""
    return two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, name="hang-small")


def _job(timeout: float) -> Job:
    (job,) = resolve_jobs([JobSpec("train", ("*",), timeout=timeout)], small())
    return job


def _analysis(state: FaultState, job: Job) -> Analysis:
    return Analysis(small(), Observation.from_state(state), (job,))


def _hung(raw: object, routing: Routing, timeout: float = 5.0) -> Timeline:
    """``raw`` injected under a job over every server, as the runner does."""
    job = _job(timeout)
    healthy = FaultState.healthy(small())
    applied = Fault.parse({"hang": raw}).resolve(small())
    uses = traffic_of(_analysis(healthy, job))
    return after_change(Timeline.start([job]), _analysis(healthy.inject(applied), job), applied,
                        routing, uses)  # fmt: skip


# -- what it names, what it leaves ------------------------------------------------------------
def test_a_hang_names_leaves_spines_and_cores_and_refuses_the_rest_with_why() -> None:
    f = small()
    applied = Fault.parse({"hang": "spine-01"}).resolve(f)
    assert applied.describe(f) == "hung spine-01"
    assert applied.describe_restore(f) == "spine-01 rebooted"
    with pytest.raises(ScenarioError, match=r"hang cannot apply to su01/node01 \(a node\); it "
                       r"applies to: core, leaf, spine\..*or kill it"):  # fmt: skip
        Fault.parse({"hang": "su01/node01"}).resolve(f)
    with pytest.raises(ScenarioError, match=r"su01/storage-sw1 \(a storage-switch: .*LACP timeout"):
        Fault.parse({"hang": "su01/storage-sw1"}).resolve(f)


def test_a_scenario_places_a_refused_hang_at_file_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("name: x\ndescription: a hung server\nfabric: {preset: seed-a800}\n"
                    "steps:\n  - inject: {hang: su01/node01}\n")  # fmt: skip
    assert main(["run", str(path)]) == 2
    assert f"{path}:5:5: hang cannot apply to su01/node01 (a node)" in capsys.readouterr().err


def test_once_routed_around_a_hung_switch_is_a_killed_one_but_no_port_went_down() -> None:
    f = small()
    hung = FaultState.healthy(f).inject(Fault.parse({"hang": "spine-01"}), f)
    killed = FaultState.healthy(f).inject(Fault.parse({"kill": "spine-01"}), f)
    assert (hung.element_up == killed.element_up).all()
    assert (hung.link_capacity == killed.link_capacity).all()  # it forwards nothing
    assert (hung.link_factor == 1.0).all()  # its links are not down: their ends are up
    marks = Marks.from_faults(f, [(hung.applied[0], "change")])
    ((element, (mark,)),) = marks.elements.items()
    assert (f.ids[element], mark.status, mark.note) == ("spine-01", "failed", "hung spine-01")


def test_the_one_line_change_syntax_takes_a_hang() -> None:
    (fault,) = parse_faults("hang spine-01")
    assert fault.kind is FaultKind.HANG


# -- how long it goes unnoticed --------------------------------------------------------------
def test_detection_is_the_hold_timer_bfd_or_the_next_sweep_then_the_reroute() -> None:
    f = small()
    sessions = bgp_sessions(f)
    assert sessions == 2 * 2 * 8  # 2 spines x 8 leaves, both ends
    hang = Fault.parse({"hang": "spine-01"}).resolve(f)
    kill = Fault.parse({"kill": "spine-01"}).resolve(f)
    assert outage_s(f, hang, BGP) == 9.0 + 1.0
    assert outage_s(f, hang, BFD) == pytest.approx(0.9 + 1.0)
    assert outage_s(f, hang, Routing.stating(control="bgp", bfd="on")) == pytest.approx(1.9)
    assert outage_s(f, hang, Routing.stating(control="bgp", hold=30.0)) == 31.0
    assert outage_s(f, hang, Routing.stating(sweep=5.0, reroute=0.5)) == 5.5
    assert outage_s(f, kill, BGP) == 1.0  # its ports went down: bgpd knew at once
    assert hang_detect_min_s(BGP, sessions) == 6.0  # the last keepalive, up to 3 s before
    assert hang_detect_min_s(BFD, sessions) == pytest.approx(0.6)


def test_hold_and_sweep_are_routing_settings_with_frr_s_bounds() -> None:
    r = parse_routing({"control": "bgp", "hold": "30s"})
    assert r.hold == 30.0
    assert "hold 30s" in r.describe()
    assert "sweep 10s" in parse_routing("sm").describe()
    assert "hold" not in parse_routing("sm").describe()
    for bad in ("2s", "9.5s", "0s"):
        with pytest.raises(ScenarioError, match="hold"):
            parse_routing({"control": "bgp", "hold": bad})
    with pytest.raises(ScenarioError, match="sweep"):
        parse_routing({"sweep": "0s"})


# -- the jobs' fates --------------------------------------------------------------------------
def test_without_bfd_the_hold_timer_outlasts_a_5s_timeout_with_bfd_the_job_survives() -> None:
    t = _hung("spine-01", BGP)
    (fate,) = t.fates
    assert fate.state == "crashed"
    assert fate.crashed_at == 5.0
    assert fate.reason.startswith(
        "the hung switch goes unnoticed 9 s (the BGP hold timer) and the reroute takes 1 s more"
    )
    (fate,) = _hung("spine-01", BFD).fates
    assert fate.state == "running"
    assert fate.rerouted_s == pytest.approx(1.9)
    assert "BFD, 3 x 300 ms" in fate.describe()
    # a kill of the same spine: its peers saw the ports go, 1 s of reroute
    assert _hung("spine-01", BGP, timeout=12.0).fates[0].state == "running"


def test_under_sm_the_next_sweep_finds_it() -> None:
    (fate,) = _hung("spine-01", Routing.stating(sweep=10.0), timeout=12.0).fates
    assert fate.state == "running"
    assert fate.rerouted_s == 11.0
    assert "the subnet manager's next sweep" in fate.describe()
    (fate,) = _hung("spine-01", Routing.stating(sweep=10.0), timeout=11.0).fates
    assert fate.lost  # a stall as long as the timeout crashes it


def test_a_hung_leaf_cuts_its_servers_off_and_its_reboot_pays_link_up() -> None:
    f = small()
    job = _job(10.0)
    healthy = FaultState.healthy(f)
    applied = Fault.parse({"hang": "su01/leaf-r0"}).resolve(f)
    uses = traffic_of(_analysis(healthy, job))
    t = after_change(Timeline.start([job]), _analysis(healthy.inject(applied), job), applied,
                     BFD, uses).after(4.0, {"train"})  # fmt: skip
    assert t.fate("train").state == "stalled"  # its rail-0 NICs reach nothing
    back = after_change(t, _analysis(healthy, job), None, BFD, uses, restored=(applied,))
    assert back.fate("train").rerouted_s == pytest.approx(4.0 + 3.0)  # the reboot: link_up
    slow = Routing.stating(control="bgp", bfd="300ms", link_up=6.0)
    assert after_change(t, _analysis(healthy, job), None, slow, uses,
                        restored=(applied,)).observed().lost() == ["train"]  # fmt: skip


def test_the_risk_check_and_the_guard_time_a_hang_by_its_detection() -> None:
    f = small()
    job = _job(5.0)
    healthy = FaultState.healthy(f)
    applied = Fault.parse({"hang": "spine-02"}).resolve(f)
    before, after = _analysis(healthy, job), _analysis(healthy.inject(applied), job)
    lost = crashed_by_change(before, after, [applied], BGP)
    assert list(lost) == ["train"]
    assert lost["train"].startswith("the hung switch goes unnoticed 9 s (the BGP hold timer)")
    assert crashed_by_change(before, after, [applied], BFD) == {}
    kill = Fault.parse({"kill": "spine-02"}).resolve(f)
    assert crashed_by_change(before, _analysis(healthy.inject(kill), job), [kill], BGP) == {}


# -- the backends and the tables --------------------------------------------------------------
def test_netns_runs_a_hang_ibsim_says_why_it_cannot() -> None:
    f = small()
    applied = Fault.parse({"hang": "spine-01"}).resolve(f)
    assert "hang" in SUPPORTED_FAULTS
    why = IbsimBackend.capabilities.unsupported(applied, f)
    assert why is not None
    assert why.startswith("fault kind 'hang' (ibsim cannot hang a switch:")


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_hypothesis_draws_hangs_of_the_routed_switches(data: st.DataObject) -> None:
    fault = data.draw(strategies.faults(small(), kinds=["hang"]))
    assert fault.kind is FaultKind.HANG
    (target,) = fault.target.ids
    assert target.startswith(("spine-", "su01/leaf", "su02/leaf"))
    fault.resolve(small())  # a switch it may name
