"""Time and history (harness.invariants.timeline): flaps, timeouts, reroutes, restarts, NVLink
errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.fabric import preset
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.routing import Routing
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import Timeline
from harness.invariants.timeline import after_change
from harness.invariants.timeline import traffic_of
from harness.run.scenario import run_scenario
from harness.scenario.load import load_text
from harness.scenario.prepare import prepare

SEED = preset("seed-a800")


REROUTE_1S = Routing.stating(reroute=1.0)


def _job(name: str = "j", timeout: float = 10.0) -> Job:
    return Job(name, (0, 1), timeout=timeout)


def test_a_flap_shorter_than_the_timeout_is_survived() -> None:
    t = Timeline.start([_job()]).changed({"j"}).after(9.99, {"j"}).changed(())
    assert t.fate("j").state == "running"
    assert t.now == 9.99


def test_an_outage_as_long_as_the_timeout_crashes_at_start_plus_timeout() -> None:
    t = Timeline.start([_job()]).after(5.0, ()).changed({"j"}).after(10.0, {"j"})
    fate = t.fate("j")
    assert (fate.state, fate.crashed_at) == ("crashed", 15.0)
    assert "timeout (10 s)" in fate.reason


def test_repair_does_not_revive_a_crashed_job_restart_does_when_placeable() -> None:
    t = Timeline.start([_job()]).changed({"j"}).observed()
    assert t.lost() == ["j"]
    assert t.changed(()).lost() == ["j"]  # the cable is back, the job is not
    assert t.restarted({"j"}, cut_off={"j"}).lost() == ["j"]  # cannot be placed yet
    assert t.changed(()).restarted({"j"}).lost() == []


def test_observing_a_cut_off_job_watches_it_time_out() -> None:
    t = Timeline.start([_job(timeout=3.0)]).after(1.0, ()).changed({"j"}).observed()
    assert t.fate("j").crashed_at == 4.0


def test_a_reroute_slower_than_the_timeout_crashes_a_connected_job() -> None:
    slow = Timeline.start([_job(timeout=0.5)]).changed((), stalls={"j": 1.0})
    fast = Timeline.start([_job(timeout=5.0)]).changed((), stalls={"j": 1.0})
    assert slow.fate("j").crashed_at == 0.5
    assert fast.fate("j").state == "running"
    assert fast.fate("j").rerouted_s == 1.0


def _played(*faults: dict[str, object], timeout: float, nodes: str) -> Timeline:
    """Inject ``faults`` one after the other under one job, as the runner does."""
    (job,) = resolve_jobs([JobSpec("j", (nodes,), timeout=timeout)], SEED)
    state = FaultState.healthy(SEED)
    t = Timeline.start([job])
    for raw in faults:
        applied = Fault.parse(raw).resolve(SEED)
        uses = traffic_of(Analysis(SEED, Observation.from_state(state), (job,)))  # routes before
        state = state.inject(applied)
        a = Analysis(SEED, Observation.from_state(state), (job,))
        t = after_change(t, a, applied, REROUTE_1S, uses)
    return t


def test_kill_stalls_a_cross_su_job_drain_does_not() -> None:
    assert _played({"kill": "spine-05"}, timeout=0.5, nodes="su0[1-2]/*").lost() == ["j"]
    assert _played({"drain": "spine-05"}, timeout=0.5, nodes="su0[1-2]/*").lost() == []
    # a job inside one SU never sends a byte through a spine
    assert _played({"kill": "spine-05"}, timeout=0.5, nodes="su01/*").lost() == []
    # nor a degraded uplink (nothing to reroute)
    degrade = {"degrade": {"target": "su01/leaf-r0:21--spine-01:1", "fraction": 0.25}}
    assert _played(degrade, timeout=0.5, nodes="su0[1-2]/*").lost() == []


def test_an_nvswitch_lost_under_a_running_job_crashes_it() -> None:
    t = _played({"kill": "su01/node01/nvsw0"}, timeout=30.0, nodes="su01/node01")
    assert t.lost() == ["j"]
    assert "nvswitch su01/node01/nvsw0 lost under the running job" in t.fate("j").reason
    other = _played({"kill": "su01/node01/nvsw0"}, timeout=30.0, nodes="su02/node01")
    assert other.lost() == []


@given(st.lists(st.tuples(st.booleans(), st.floats(0, 50)), min_size=1, max_size=12))
def test_without_restart_a_crashed_job_stays_crashed(events: list[tuple[bool, float]]) -> None:
    t = Timeline.start([_job()])
    crashed_at = None
    for cut, seconds in events:
        t = t.changed({"j"} if cut else ()).after(seconds, {"j"} if cut else ())
        if crashed_at is not None:
            assert t.fate("j").crashed_at == crashed_at
        elif t.fate("j").lost:
            crashed_at = t.fate("j").crashed_at
    # a job crashes iff some cut-off lasted the whole timeout
    longest = max((s for cut, s in events if cut), default=0.0)
    assert t.fate("j").lost == (longest >= 10.0) or _merged_outage(events) >= 10.0


def _merged_outage(events: list[tuple[bool, float]]) -> float:
    best = run = 0.0
    for cut, seconds in events:
        run = run + seconds if cut else 0.0
        best = max(best, run)
    return best


SCENARIO = """
name: history
description: a flap, an outage, a restart
fabric: {preset: seed-a800}
jobs: [{name: j, nodes: "su0[1-2]/*", timeout: 5s}]
steps:
  - inject: {kill: su01/leaf-r0}
  - wait: 1s
  - restore: last
  - wait: 3s
  - expect: {jobs_lost: 0}
  - inject: {kill: su01/leaf-r0}
  - wait: 6s
  - restore: last
  - expect: {jobs_lost: 1, jobs_unplaceable: 0}
  - restart: all
  - expect: {jobs_lost: 0, jobs_survived: 1}
"""


def test_the_runner_keeps_the_clock_and_the_model_backend_agrees() -> None:
    (scenario,) = load_text(SCENARIO)
    result = run_scenario(scenario)
    assert result.status == "passed", result.failures
    assert [s.kind for s in result.steps][:3] == ["inject", "wait", "restore"]
    assert result.steps[1].text == "waited 1 s"
    assert result.steps[1].clock == (0.0, 1.0)
    assert not result.mismatches
    # down 1 s, then the leaf's links carry traffic 3 s later (sm's link_up): stalled 4 s
    assert any("stalled 4 s as it was cut off 1 s" in line for line in result.steps[2].story)
    waited = result.steps[6]
    assert waited.kind == "wait"
    assert any("crashed at t=9 s" in line for line in waited.story)
    assert result.steps[9].text == "restarted j"


def test_restart_of_an_unknown_job_is_located_with_the_closest_name() -> None:
    text = SCENARIO.replace("restart: all", "restart: k")
    (scenario,) = load_text(text, Path("history.yaml"))
    with pytest.raises(ScenarioError) as info:
        prepare(scenario)
    assert "history.yaml:16:5:" in str(info.value)
    assert "restart k: no job is named so" in str(info.value)
    assert "give a job name or all (jobs: j)" in str(info.value)


HUNG = """
name: hung-spine
description: a spine that BGP finds only by its hold timer
fabric: {preset: seed-a800}
routing: {control: bgp, reroute: 9s}
jobs:
  - {name: default, nodes: "su0[1-2]/*"}
  - {name: nccl-2-18, nodes: "su0[3-4]/*", timeout: 8.6s}
steps:
  - inject: {drain: spine-05}
  - expect: {jobs_lost: 0}
  - restore: last
  - inject: {kill: spine-05}
  - expect: {jobs_lost_names: [nccl-2-18]}
"""


def test_the_reroute_delay_comes_from_routing_and_only_a_kill_pays_it() -> None:
    (scenario,) = load_text(HUNG)
    result = run_scenario(scenario)
    assert result.status == "passed", result.failures
    assert result.routing.reroute == 9.0
    assert not result.mismatches
    (lost,) = result.steps[-1].expectations
    assert "the reroute takes 9 s, as long as its timeout (8.6 s) or longer" in lost.detail


def test_shortest_paths_route_the_valley_up_down_does_not() -> None:
    path = Path(__file__).parents[2] / "scenarios" / "seed-valley-paths-are-not-routes.yaml"
    text = path.read_text(encoding="utf-8")
    (updown,) = load_text(text, path)
    (shortest,) = load_text(text.replace("fabric:", "routing: {paths: shortest}\nfabric:", 1), path)
    assert run_scenario(updown).status == "passed"
    result = run_scenario(shortest)
    assert result.routing.paths == "shortest"
    assert result.status == "failed"  # the valley counts as a route: nothing is lost
    first = next(e for s in result.steps for e in s.expectations if e.observation == "jobs_lost")
    assert first.observed == 0


# -- link_up: a repair carries traffic only once the link is up ---------------------------
@settings(max_examples=40)
@given(st.floats(0.0, 12.0), st.floats(0.0, 5.0))
def test_a_flap_crashes_iff_outage_plus_link_up_reaches_the_timeout(down: float, up: float) -> None:
    t = Timeline.start([_job(timeout=10.0)]).changed({"j"}).after(down, {"j"})
    t = t.changed((), resume_after_s=up).observed()
    assert t.fate("j").lost == (down >= 10.0 or down + up >= 10.0 - 1e-9 / 2)
    if t.fate("j").lost:
        assert t.fate("j").crashed_at == 10.0  # at start + timeout, not at the repair


def test_a_restore_of_a_cut_pays_link_up_a_restore_of_a_drain_does_not() -> None:
    (job,) = resolve_jobs([JobSpec("j", ("su01/node01", "su01/node02"), timeout=5.0)], SEED)
    uses = traffic_of(Analysis(SEED, Observation.from_state(FaultState.healthy(SEED)), (job,)))
    for raw, pays in (({"cut": "su01/node01/nic0:1--su01/leaf-r0:1"}, True),
                      ({"drain": "su01/leaf-r0"}, False)):  # fmt: skip
        applied = Fault.parse(raw).resolve(SEED)
        down = FaultState.healthy(SEED).inject(applied)
        a_down = Analysis(SEED, Observation.from_state(down), (job,))
        t = after_change(Timeline.start([job]), a_down, applied, REROUTE_1S, uses).after(2.5, {"j"})
        assert t.fate("j").state == "stalled", raw
        healthy = Analysis(SEED, Observation.from_state(FaultState.healthy(SEED)), (job,))
        back = after_change(t, healthy, None, Routing.stating(reroute=1.0, link_up=3.0), uses,
                            restored=(applied,))  # fmt: skip
        assert back.observed().fate("j").lost == pays, raw  # 2.5 + 3 >= 5 only with link_up


def test_a_job_a_reroute_moved_away_pays_nothing_for_the_repair() -> None:
    t = Timeline.start([_job(timeout=2.0)]).changed((), stalls={"j": 1.0}).after(5.0, ())
    t = t.changed((), resume_after_s=30.0)  # the repaired link was not its only path
    assert t.fate("j").state == "running"
    assert t.observed().lost() == []


# -- overlapping reroutes -------------------------------------------------------------------
def _two_failures(gap: float, serial: bool) -> Timeline:
    """Two failures ``gap`` apart under a 1 s reroute: ``a`` crosses the first, ``b`` the
    second (both 1.2 s timeouts)."""
    t = Timeline.start([Job("a", (0,), timeout=1.2), Job("b", (1,), timeout=1.2)])
    for name in ("a", "b"):
        start, end = t.reroute_window(1.0, serial)
        t = t.changed((), stalls={name: end - t.now}, sweep=(start, end) if serial else None)
        t = t.after(gap, ()) if name == "a" else t
    return t.observed()


def test_a_second_failure_during_a_sweep_waits_for_it_under_sm_not_bgp() -> None:
    sm = _two_failures(0.5, serial=True)
    assert sm.lost() == ["b"]  # routed at max(0.5, 1) + 1 = 2 s: stalled 1.5 s
    assert sm.fate("b").crashed_at == 0.5 + 1.2
    assert _two_failures(0.5, serial=False).lost() == []  # bgp: 1 s each
    assert _two_failures(1.0, serial=True).lost() == []  # the first sweep was done


def test_failures_at_one_instant_are_one_sweep() -> None:
    assert _two_failures(0.0, serial=True).lost() == []  # both routed at 1 s


def test_a_job_hit_again_while_stalled_stalls_on_from_the_first_stall() -> None:
    t = Timeline.start([_job(timeout=1.8)])
    start, end = t.reroute_window(1.0, serial=True)
    t = t.changed((), stalls={"j": end}, sweep=(start, end)).after(0.5, ())
    start, end = t.reroute_window(1.0, serial=True)  # queued: 1 s -> 2 s
    t = t.changed((), stalls={"j": end - t.now}, sweep=(start, end))
    fate = t.fate("j")
    assert (fate.state, fate.crashed_at) == ("crashed", 1.8)  # stalled 0 -> 2 s
    assert "on top of the stall since t=0 s" in fate.reason
