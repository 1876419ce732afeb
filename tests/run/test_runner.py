"""The runner: scenarios built in Python, run on the model backend (and a recording one)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from harness.backends import make_backend
from harness.backends.model import ModelBackend
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.jobs import JobSpec
from harness.fabric.resolve import FabricRef
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.inputs.location import Location
from harness.observations.expect import Expect
from harness.run.results import ScenarioResult
from harness.run.results import StepResult
from harness.run.scenario import run_scenario
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import RestartStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from harness.scenario.model import Step

SEED = FabricRef(preset="seed-a800")
PER_SU = (JobSpec(per_su=True),)


def inject(raw: Any, name: str | None = None) -> InjectStep:
    return InjectStep(Fault.parse(raw), name)


def expect(**checks: Any) -> ExpectStep:
    """An expect step; expectation ``k`` sits on line 10 + k of a pretend file."""
    items = []
    for k, (obs, raw) in enumerate(checks.items()):
        where = Location("inline.yaml", 10 + k, 7)
        if isinstance(raw, dict):
            args = tuple((key, v) for key, v in raw.items() if key != "is")
            items.append(Expectation(obs, Expect.parse(raw["is"]), args, where))
        else:
            items.append(Expectation(obs, Expect.parse(raw), where=where))
    return ExpectStep(tuple(items), Location("inline.yaml", 9, 5))


def scenario(*steps: Step, fabric: FabricRef = SEED, **kw: Any) -> Scenario:
    return Scenario("test", "built in Python", fabric, tuple(steps), kw.pop("jobs", PER_SU), **kw)


HEALTHY = {
    "all_gpus_connected": True,
    "jobs_lost": 0,
    "leaf_uplink_ratio": 1.0,
    "bisection_ratio": 1.0,
    "nics_isolated": 0,
    "min_job_busbw_ratio": 1.0,
    "elements_down": 0,
}


class RecordingBackend(ModelBackend):
    """The model backend, recording every call; can fail reverts of chosen faults."""

    name = "recording"

    def __init__(self, fail_revert: str = "", fail_inject: str = "") -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.fail_revert = fail_revert
        self.fail_inject = fail_inject
        self.closed = False

    def inject(self, fault: AppliedFault) -> None:
        self.calls.append(("inject", fault.fault.describe()))
        if self.fail_inject and self.fail_inject in fault.fault.describe():
            msg = f"cannot inject {fault.fault.describe()}"
            raise BackendError(msg)
        super().inject(fault)

    def revert(self, fault: AppliedFault) -> None:
        self.calls.append(("revert", fault.fault.describe()))
        if self.fail_revert and self.fail_revert in fault.fault.describe():
            msg = f"cannot revert {fault.fault.describe()}"
            raise BackendError(msg)
        super().revert(fault)

    def close(self) -> None:
        self.closed = True
        super().close()

    @property
    def healthy_now(self) -> bool:
        return self.state.is_healthy


# -- passing runs ----------------------------------------------------------------------------------


def test_inject_expect_restore() -> None:
    result = run_scenario(scenario(
        inject({"kill": {"tier": "spine", "all-but": 1}}, "spines"),
        expect(all_gpus_connected=True, leaf_uplink_ratio=0.05, jobs_lost=0),
        RestoreStep("spines"),
        expect(**HEALTHY),
    ))  # fmt: skip
    assert result.status == "passed"
    assert result.passed
    assert [s.kind for s in result.steps] == ["inject", "expect", "restore", "expect"]
    assert result.steps[0].text.startswith("killed spine-02, spine-03")
    assert "every GPU pair can still talk" in result.steps[0].story
    assert "worst leaf keeps 5.0% of its uplink capacity" in result.steps[0].story
    assert result.steps[1].text == "checked 3/3 expectations"
    assert (
        result.steps[2].text
        == "spine-02, spine-03, spine-04, spine-05, spine-06, spine-07 and 13 more back up"
    )
    assert result.failures == []
    assert result.fabric == "seed-a800"


def test_restore_all_returns_the_healthy_fabric() -> None:
    result = run_scenario(scenario(
        inject({"kill": "su03/leaf-r1"}),
        inject({"cut": "su01/leaf-r0:21--spine-01:1"}),
        inject({"bond-member": "su02/node01/stor0"}),
        inject({"degrade": {"target": {"tier": "leaf-spine", "su": 5}, "fraction": 0.5}}),
        expect(jobs_lost=1, jobs_lost_names=["su03"], nics_isolated=20),
        RestoreStep("all"),
        expect(jobs_lost_names=["su03"], jobs_unplaceable=0),  # repaired, not revived
        RestartStep("all"),
        expect(**HEALTHY, storage_gbps=50.0, node_nic_ratio=1.0),
    ))  # fmt: skip
    assert result.status == "passed", result.failures
    assert result.steps[5].text.split("; ") == [  # newest first
        "su05/leaf-r0:21--spine-01:17, su05/leaf-r0:22--spine-02:17, su05/leaf-r0:23--spine-03:17, "
        "su05/leaf-r0:24--spine-04:17, su05/leaf-r0:25--spine-05:17, su05/leaf-r0:26--spine-06:17 "
        "and 74 more back to full speed",
        "bond member back: su02/node01/stor0",
        "su01/leaf-r0:21--spine-01:1 reconnected",
        "su03/leaf-r1 back up",
    ]
    assert "stalled 1 of 10 jobs: su03" in result.steps[0].story
    assert result.steps[7].text == "restarted su03"


def test_restore_last_and_by_name() -> None:
    result = run_scenario(scenario(
        inject({"kill": "spine-01"}, "one"),
        inject({"kill": "spine-02"}, "two"),
        RestoreStep("last"),
        expect(elements_down=1, leaf_uplink_ratio=0.95),
        RestoreStep("one"),
        expect(elements_down=0),
    ))  # fmt: skip
    assert result.status == "passed", result.failures


def test_faults_are_reverted_after_a_passing_run() -> None:
    backend = RecordingBackend()
    run_scenario(scenario(inject({"kill": "spine-01"}), inject({"kill": "spine-02"})), backend)
    assert backend.calls == [
        ("inject", "kill spine-01"),
        ("inject", "kill spine-02"),
        ("revert", "kill spine-02"),
        ("revert", "kill spine-01"),
    ]
    assert backend.closed
    assert backend.healthy_now


# -- failing expectations --------------------------------------------------------------------------


def test_failing_expectations_report_expected_and_observed() -> None:
    result = run_scenario(scenario(
        inject({"kill": "su03/leaf-r1"}),
        expect(jobs_lost=0, all_gpus_connected=True, leaf_uplink_ratio=">= 0.9"),
    ))  # fmt: skip
    assert result.status == "failed"
    assert not result.passed
    failures = {f.observation: f for f in result.failures}
    assert set(failures) == {"jobs_lost", "all_gpus_connected"}
    lost = failures["jobs_lost"]
    assert (lost.expected, lost.observed, lost.passed) == ("0", 1, False)
    assert "su03/leaf-r1 is down" in lost.detail
    assert "su03/node01/nic1" in lost.involved
    assert str(lost.where) == "inline.yaml:10:7"
    connected = failures["all_gpus_connected"]
    assert (connected.expected, connected.observed) == ("True", False)
    assert "GPU pairs cannot talk" in connected.detail
    assert result.steps[1].text == "checked 1/3 expectations"


def test_expectations_with_arguments() -> None:
    result = run_scenario(scenario(
        inject({"kill": {"tier": "spine"}}),
        expect(
            path_class={"between": ["su01/node01/gpu0", "su02/node01/gpu0"], "is": "cross-su"},
            islands={"pxn": True, "is": 10},
            leaf_uplink_ratio={"leaf": "su01/leaf-r0", "is": "0..0.01"},
        ),
    ))  # fmt: skip
    failures = {f.observation: f for f in result.failures}
    assert list(failures) == ["path_class(between=['su01/node01/gpu0', 'su02/node01/gpu0'])"]
    only = next(iter(failures.values()))
    assert (only.expected, only.observed) == ("'cross-su'", "disconnected")


def test_result_to_dict_is_json() -> None:
    result = run_scenario(scenario(inject({"kill": "su03/leaf-r1"}), expect(jobs_lost=0)), "model")
    data = json.loads(json.dumps(result.to_dict()))
    assert data["status"] == "failed"
    (failure,) = [e for s in data["steps"] for e in s["expectations"] if not e["passed"]]
    assert (failure["observation"], failure["expected"], failure["observed"]) == (
        "jobs_lost",
        "0",
        1,
    )


def test_infinite_values_survive_json() -> None:
    from harness.fabric.jobs import CheckpointSpec

    result = run_scenario(scenario(
        inject({"bond-member": ["su01/node01/stor0", "su01/node01/stor1"]}),
        expect(checkpoint_sync_stall_s="< 10"),
        checkpoint=CheckpointSpec(size_gb=112.0),
    ))  # fmt: skip
    (failure,) = result.failures
    assert failure.observed == float("inf")
    assert json.loads(json.dumps(result.to_dict()))["steps"][1]["expectations"][0]["observed"] == (
        "inf"
    )


# -- errors: revert in finally ---------------------------------------------------------------------


def test_bad_input_is_found_before_anything_is_injected() -> None:
    backend = RecordingBackend()
    bad = scenario(
        inject({"kill": "spine-01"}),
        inject({"cut": "su01/leaf-r0:21--spine-01:1"}),
        expect(leaf_uplink_ratio={"leaf": "spine-02", "is": 1.0}),
        inject({"kill": "spine-99"}),
    )
    with pytest.raises(ScenarioError) as info:
        run_scenario(bad, backend)
    # every problem at once, each at its place, and the fabric was never touched
    assert str(info.value).splitlines() == [
        "inline.yaml:10:7: 'spine-02' is not a leaf of fabric 'seed-a800'",
        "selector 'spine-99' matches no elements; closest: spine-09, spine-19, spine-08",
    ]
    assert backend.calls == []


def test_revert_happens_even_when_a_step_raises() -> None:
    backend = RecordingBackend(fail_inject="spine-03")
    bad = scenario(
        inject({"kill": "spine-01"}),
        inject({"cut": "su01/leaf-r0:21--spine-01:1"}),
        expect(leaf_uplink_ratio={"leaf": "su01/leaf-r0", "is": 0.9}),
        inject({"kill": "spine-03"}),
    )
    with pytest.raises(BackendError, match="cannot inject kill spine-03"):
        run_scenario(bad, backend)
    assert backend.calls[-3:] == [
        ("revert", "kill spine-03"),  # recorded before it is done, so reverted too
        ("revert", "cut su01/leaf-r0:21--spine-01:1"),
        ("revert", "kill spine-01"),
    ]
    assert backend.healthy_now
    assert backend.closed


def test_a_failing_revert_does_not_hide_the_original_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = RecordingBackend(fail_revert="spine-02", fail_inject="spine-03")
    bad = scenario(
        inject({"kill": "spine-01"}),
        inject({"kill": "spine-02"}),
        inject({"kill": "spine-03"}),
    )
    with (
        caplog.at_level(logging.ERROR, logger="harness.run.session"),
        pytest.raises(BackendError, match="cannot inject"),
    ):
        run_scenario(bad, backend)
    # both reverts were attempted, newest first, and the revert error was logged
    assert backend.calls[-2:] == [("revert", "kill spine-02"), ("revert", "kill spine-01")]
    assert "revert of kill spine-02 failed" in caplog.text


def test_a_failing_revert_after_a_clean_run_is_raised() -> None:
    backend = RecordingBackend(fail_revert="spine-01")
    with pytest.raises(BackendError, match="cannot revert kill spine-01"):
        run_scenario(scenario(inject({"kill": "spine-01"})), backend)


def test_restore_errors_name_the_step() -> None:
    where = Location("inline.yaml", 12, 5)
    with pytest.raises(ScenarioError, match=r"inline.yaml:12:5.*restore: no fault is applied"):
        run_scenario(scenario(RestoreStep("all", where)))
    with pytest.raises(
        ScenarioError, match=r"no applied fault is named 'two' \(named: \['one'\]\)"
    ):
        run_scenario(scenario(inject({"kill": "spine-01"}, "one"), RestoreStep("two")))


# -- fabrics that must not build -------------------------------------------------------------------


def test_expected_fabric_error_passes() -> None:
    result = run_scenario(scenario(
        fabric=FabricRef(preset="seed-a800", params=(("sus", 11),)),
        expect_fabric_error="two-tier fabric past its limit",
    ))  # fmt: skip
    assert result.status == "passed"
    assert result.steps[0].kind == "fabric"
    assert "200 nodes" in result.steps[0].story[0]


def test_expected_fabric_error_that_does_not_happen_fails() -> None:
    result = run_scenario(scenario(expect(jobs_lost=0), expect_fabric_error="past its limit"))
    assert result.status == "failed"
    assert result.failures[0].observed == "the fabric built"


def test_unexpected_fabric_error_is_a_located_user_error() -> None:
    ref = FabricRef(preset="seed-a800", params=(("sus", 11),), where=Location("s.yaml", 4, 3))
    with pytest.raises(ScenarioError, match=r"^s.yaml:4:3: two-tier fabric past its limit"):
        run_scenario(scenario(expect(jobs_lost=0), fabric=ref))


def test_bad_jobs_are_user_errors() -> None:
    with pytest.raises(ScenarioError, match="nodes 'su99/\\*' match no server"):
        run_scenario(scenario(expect(jobs_lost=0), jobs=(JobSpec(name="x", nodes=("su99/*",)),)))


# -- observers and backends ------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    def scenario_started(self, scenario: Scenario, backend: str) -> None:
        self.events.append(f"start {scenario.name} on {backend}")

    def step_finished(self, scenario: Scenario, step: StepResult) -> None:
        self.events.append(f"step {step.kind}")

    def scenario_finished(self, result: ScenarioResult) -> None:
        self.events.append(f"done {result.status}")


def test_observers_hear_every_event_in_order() -> None:
    rec = Recorder()
    run_scenario(scenario(inject({"kill": "spine-01"}), expect(jobs_lost=0)), observers=[rec])
    assert rec.events == ["start test on model", "step inject", "step expect", "done passed"]


def test_backend_names() -> None:
    assert isinstance(make_backend("model"), ModelBackend)
    with pytest.raises(ScenarioError, match=r"unknown backend 'modle'; did you mean 'model'\?"):
        make_backend("modle")


def test_model_backend_needs_a_fabric_first() -> None:
    with pytest.raises(BackendError, match=r"apply\(fabric\) first"):
        ModelBackend().observe()
