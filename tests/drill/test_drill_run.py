"""Drills on the model: the timeline runs in model time, aborts stop it, the guard refuses,
the rollback always runs, the journal is written as it goes, and a replay's predicted half
is identical."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.backends.model import ModelBackend
from harness.run.drill.document import journal_document
from harness.run.drill.document import predicted_half
from harness.run.drill.halt import HaltLever
from harness.run.drill.journal import read_journal
from harness.run.drill.results import DrillResult
from harness.run.drill.runner import run_drill
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.model import Scenario
from tests.drill.conftest import drill

REPO = Path(__file__).resolve().parents[2]


def _run(s: Scenario, backend: ModelBackend | None = None, **kw: object) -> DrillResult:
    pd = prepare_drill(s)
    return run_drill(pd, backend or ModelBackend(), routing=pd.prepared.routing, **kw)  # type: ignore[arg-type]


LEAF = """\
time_limit: 1m
baseline: 1s
probes:
  - {name: rate, probe: job_rate, job: train, every: 250ms}
abort:
  - {job_lost: train}
timeline:
  - {at: 2s, inject: {kill: su01/leaf-r0}, hold: 20s, as: leaf}
"""


def test_a_lost_job_aborts_at_its_predicted_crash_and_the_rollback_restores(tmp_path: Path) -> None:
    backend = ModelBackend()
    r = _run(drill(LEAF), backend, journal_dir=tmp_path / "j")
    assert r.status == "aborted"
    assert "train crashed at t=7 s" in r.reason  # 2 s + its 5 s timeout
    assert [(e.action, e.status) for e in r.events] == [("inject", "applied")]
    assert [(e.action, e.label, e.status) for e in r.rollback] == [("rollback", "leaf",
                                                                     "rolled back")]  # fmt: skip
    assert r.rollback[0].actual_s <= 7.0 + 0.25  # within one probe period of the crash
    assert backend.state.is_healthy  # nothing is left applied
    rate = r.probes[0]
    assert rate.baseline == 1.0
    # a sample at an action's instant is taken before it; then stalled until the crash
    assert [s.value for s in rate.samples if 2.0 < s.t < 7.0] == [0.0] * 19
    doc = read_journal(tmp_path / "j")
    assert doc["status"] == "aborted"
    assert doc["events"][0]["predicted"][0].startswith("train stalled since t=2 s")
    lines = (tmp_path / "j" / "journal.jsonl").read_text().splitlines()
    kinds = [json.loads(x)["type"] for x in lines]
    assert kinds[0] == "start"
    assert kinds[-1] == "end"
    assert kinds.index("abort") < kinds.index("rollback")


def test_a_cut_short_journal_reads_as_incomplete(tmp_path: Path) -> None:
    _run(drill(LEAF), journal_dir=tmp_path)
    (tmp_path / "journal.json").unlink()
    lines = (tmp_path / "journal.jsonl").read_text().splitlines()
    (tmp_path / "journal.jsonl").write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    doc = read_journal(tmp_path)
    assert doc["status"] == "incomplete"
    assert doc["drill"] == "d"


def test_the_guard_refuses_an_inject_predicted_to_break_it_and_skips_its_restore() -> None:
    s = drill("""\
        time_limit: 1m
        guard: "jobs_lost=0"
        timeline:
          - {at: 0s, inject: {kill: su01/leaf-r0}, hold: 10s}
          - {at: 1s, inject: {drain: spine-01}, hold: 5s}
    """)
    r = _run(s)
    assert [(e.label, e.action, e.status) for e in r.events] == [
        ("timeline[0]", "inject", "refused"), ("timeline[1]", "inject", "applied"),
        ("timeline[1]", "restore", "restored"), ("timeline[0]", "restore", "skipped"),
    ]  # fmt: skip
    assert "breaks jobs_lost 0" in r.events[0].guard
    assert r.status == "failed"
    assert r.rollback == ()


def test_a_probe_out_of_tolerance_fails_after_its_count_and_the_gate_refuses_the_method() -> None:
    s = drill("""\
        time_limit: 1m
        probes:
          - {name: up, probe: leaf_uplink_ratio, leaf: su01/leaf-r0, every: 1s,
             tolerance: ">= 0.9", fail_after: 3}
        timeline:
          - {at: 0s, inject: {kill: spine-01}, hold: 2500ms}
          - {at: 10s, inject: {kill: spine-02}, hold: 4s}
    """)
    r = _run(s)
    assert r.status == "failed"
    assert "out of tolerance (>= 0.9) for 3 sample(s) in a row at t=13 s" in r.reason
    gated = drill("""\
        time_limit: 1m
        probes:
          - {name: up, probe: leaf_uplink_ratio, leaf: su01/leaf-r0, mode: before,
             tolerance: ">= 1.5"}
        timeline: [{at: 0s, inject: {kill: spine-01}, hold: 1s}]
    """)
    g = _run(gated)
    assert g.status == "failed"
    assert g.reason.startswith("gate: up is 1.0")
    assert g.events == ()


def test_an_abort_on_a_probe_bound_fires_once_it_held_for_its_time() -> None:
    s = drill("""\
        time_limit: 1m
        probes:
          - {name: up, probe: leaf_uplink_ratio, leaf: su01/leaf-r0, every: 500ms}
        abort:
          - {probe: up, below: 0.9, for: 2s}
        timeline:
          - {at: 1s, inject: {kill: spine-01}, hold: 1s}
          - {at: 5s, inject: {kill: spine-02}, hold: 10s}
    """)
    r = _run(s)
    assert r.status == "aborted"
    # sampled every 0.5 s (the one at t=5 s before the kill); the 1 s dip at t=1 s was too short
    assert "from t=5.5 s to t=7.5 s" in r.reason
    assert [e.label for e in r.rollback] == ["timeline[1]"]


def test_the_recovery_window_is_judged_on_the_continuous_probes() -> None:
    body = """\
        time_limit: 1m
        recover_within: {w}
        probes:
          - {{name: rate, probe: job_rate, job: train, every: 500ms, tolerance: ">= 0.9",
             fail_after: 20}}
        timeline:
          - {{at: 0s, inject: {{cut: "su01/node01/nic0:1--su01/leaf-r0:1"}}, hold: 1s}}
    """
    slow = _run(drill(body.format(w="1s")))  # link_up 3s: the job resumes 3 s after the repair
    assert slow.status == "failed"
    assert slow.reason == "the steady state did not hold again within 1 s"
    ok = _run(drill(body.format(w="5s")))
    assert ok.status == "passed"
    assert ok.recovered_s == 3.0


def test_the_halt_lever_stops_a_drill_within_one_probe_period(state_dir: Path) -> None:
    class Halting(ModelBackend):
        """A backend whose clock reaches the halt: `harness halt` pulled from outside."""

        name = "paced-model"
        waited = 0.0

        def wait(self, seconds: float) -> None:
            super().wait(seconds)
            self.waited += seconds
            if self.waited >= 3.0:
                HaltLever().halt_all()

    s = drill("""\
        time_limit: 1m
        probes: [{name: rate, probe: job_rate, job: train, every: 400ms}]
        timeline: [{at: 1s, inject: {drain: spine-01}, hold: 30s}]
    """)
    lever = HaltLever()
    try:
        r = _run(s, Halting(), lever=lever)
    finally:
        lever.release()
    assert r.status == "aborted"
    assert r.reason == "halted by harness halt --all"
    assert 3.0 <= r.rollback[0].actual_s <= 3.0 + 0.4 + 1e-9
    assert lever.running() == []  # unregistered


def test_halt_all_refuses_new_drills_on_a_fabric_until_released(state_dir: Path) -> None:
    import pytest

    from harness.errors import BackendError

    class Acting(ModelBackend):
        name = "acting-model"  # stands for a backend that acts on a fabric

    lever = HaltLever()
    lever.halt_all()
    with pytest.raises(BackendError, match="harness halt --release"):
        _run(drill(LEAF), Acting(), lever=lever)
    assert _run(drill(LEAF), lever=lever).status == "aborted"  # the model touches nothing
    lever.release()
    assert _run(drill(LEAF), Acting(), lever=lever).status == "aborted"
    assert lever.running() == []


@st.composite
def _timelines(draw: st.DrawFn) -> str:
    kinds = ["kill", "drain", "cut", "optic", "degrade"]
    targets = {"kill": ["spine-01", "spine-02", "su01/leaf-r0", "su02/leaf-r1"],
               "drain": ["spine-03", "su02/leaf-r2"],
               "cut": ["su01/leaf-r0:5--spine-01:1", "su01/node02/nic1:1--su01/leaf-r1:2"],
               "optic": ["su02/node03/nic2:1"],
               "degrade": ["su01/leaf-r3:8--spine-04:4"]}  # fmt: skip
    lines = []
    for i in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(kinds))
        target = draw(st.sampled_from(targets[kind]))
        fault = f"{{degrade: {{target: {target}, fraction: 0.5}}}}" if kind == "degrade" else (
            f'{{{kind}: "{target}"}}')  # fmt: skip
        at = draw(st.integers(0, 20))
        hold = draw(st.integers(1, 10))
        every = draw(st.sampled_from(["", f", every: {hold + 2}s, for: 15s"]))
        lines.append(f"  - {{at: {at}s, inject: {fault}, hold: {hold}s{every}, as: e{i}}}")
    abort = draw(st.sampled_from(["", "abort: [{job_lost: train}]\n"]))
    return ("time_limit: 2m\nprobes:\n  - {name: rate, probe: job_rate, job: train, "
            f"every: 700ms}}\n{abort}timeline:\n" + "\n".join(lines) + "\n")  # fmt: skip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_timelines())
def test_any_timeline_ends_with_every_fault_restored_and_replays_identically(body: str) -> None:
    s = drill(body)
    pd = prepare_drill(s)
    backend = ModelBackend()
    r = run_drill(pd, backend, routing=pd.prepared.routing)
    assert backend.state.is_healthy
    injected = {e.label for e in r.events if e.action == "inject" and e.status == "applied"}
    undone = {e.label for e in (*r.events, *r.rollback) if e.action in ("restore", "rollback")}
    assert injected == undone
    again = run_drill(pd, ModelBackend(), routing=pd.prepared.routing)
    one = json.loads(json.dumps(journal_document(r, pd, "a", {}), default=str))
    two = json.loads(json.dumps(journal_document(again, pd, "b", {}), default=str))
    assert predicted_half(one) == predicted_half(two)


def test_a_control_job_cancels_what_slows_both_and_shows_what_hits_one() -> None:
    head = """\
fabric:
  generator: two-tier
  params: {sus: 2, nodes_per_su: 2, spines: 4, leaf_radix: 8, storage: false}
jobs:
  - {name: experiment, nodes: ["su01/node01", "su02/node01"], timeout: 10s}
  - {name: control, nodes: ["su01/node02", "su02/node02"], timeout: 10s}
"""
    body = """\
        time_limit: 1m
        probes:
          - {name: ratio, probe: job_ratio, job: experiment, control: control, every: 500ms}
        timeline:
          - {at: 0s, inject: {kill: spine-01}, hold: 2s}
          - {at: 3s, inject: {kill: spine-02}, hold: 2s}
          - {at: 6s, inject: {kill: spine-03}, hold: 2s}
          - {at: 9s, inject: {cut: "su01/node01/nic0:1--su01/leaf-r0:1"}, hold: 2s}
    """
    r = _run(drill(body, head=head))
    ratio = {round(s.t, 2): s.predicted for s in r.probes[0].samples}
    # the tables send the experiment's flows over spine-01, the control's over spine-02,
    # neither over spine-03: each kill stalls whose flows it carried, for the 1 s reroute
    assert ratio[0.5] == 0.0  # only the experiment stalls
    assert ratio[3.5] is None  # only the control: nothing to compare against
    assert ratio[6.5] == 1.0  # neither
    assert ratio[9.5] == 0.0  # the experiment's own cable
    assert ratio[2.5] == ratio[5.5] == 1.0  # both back
    import pytest

    from harness.errors import ScenarioError

    with pytest.raises(ScenarioError, match="the control must be another job"):
        drill(body.replace("control: control", "control: experiment"), head=head)


def test_an_abort_on_a_measured_probe_stops_within_a_period_and_an_action() -> None:
    """A fake backend measures a link the model says is up as dark from t=4 s on: the
    abort on that probe fires on the measurement, one period later at most."""
    import dataclasses

    from harness.backends.measurement import LinkState
    from harness.backends.measurement import Measurements
    from harness.backends.measurement import MeasurePlan

    link = "su01/leaf-r0:5--spine-01:1"

    class Dark(ModelBackend):
        name = "fake-measuring"
        clock = 0.0

        def wait(self, seconds: float) -> None:
            super().wait(seconds)
            self.clock += seconds

        def measure(self, plan: MeasurePlan) -> Measurements:
            m = super().measure(plan)
            if self.clock < 4.0 - 1e-9:
                return m
            dark = tuple(LinkState(x.link, False, 0.0) if x.link == link else x
                         for x in m.links)  # fmt: skip
            return dataclasses.replace(m, links=dark)

    s = drill(f"""\
        time_limit: 1m
        probes:
          - {{name: up, probe: link_gbps, link: "{link}", every: 300ms}}
        abort:
          - {{probe: up, below: 1}}
        timeline:
          - {{at: 1s, inject: {{drain: spine-02}}, hold: 20s}}
    """)
    r = _run(s, Dark())
    assert r.status == "aborted"
    assert r.rollback[0].actual_s <= 4.0 + 0.3 + 1e-9  # within one period of the darkness
    assert r.mismatches > 0  # measured otherwise than predicted: a finding, counted
    dark = [x for x in r.probes[0].samples if x.measured == 0.0]
    assert dark
    assert all(x.predicted and x.predicted > 0 for x in dark)


def test_the_time_limit_on_the_wall_clock_aborts_and_a_gone_object_is_recorded() -> None:
    """An emulated backend whose settle takes real time overruns the drill's time limit:
    the drill aborts and rolls back; a fault whose object is already gone when it is
    reverted is recorded as gone, not as an error."""
    import time

    from harness.errors import BackendError
    from harness.faults.fault import AppliedFault

    class Slow(ModelBackend):
        name = "slow-emulation"

        def settle(self, timeout: float) -> float:
            time.sleep(0.6)
            return 0.6

        def revert(self, fault: AppliedFault) -> None:
            if fault.fault.kind.value == "kill":
                msg = "slow-emulation: namespace of spine-02 is gone (no such namespace)"
                raise BackendError(msg)
            super().revert(fault)

    s = drill("""\
        time_limit: 1s
        timeline:
          - {at: 0s, inject: {kill: spine-02}, hold: 300ms, as: k}
          - {at: 100ms, inject: {drain: spine-01}, hold: 800ms, as: d}
    """)
    r = _run(s, Slow())
    assert r.status == "aborted"
    assert r.reason == "time_limit reached (1 s)"
    # both settles (0.6 s each) were done when the clock passed 1 s: both rolled back
    assert [(e.label, e.status) for e in r.rollback] == [("d", "rolled back"), ("k", "gone")]
