"""Predicted against measured: mismatches, the preflight and unsupported faults.

The fake backends (``backend_fakes``) answer from the model except where they
are told to lie, so every disagreement here is one the runner must find.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

import harness.backends
import harness.run.scenario
from harness.backends import REGISTRY
from harness.backends import BackendInfo
from harness.cli import main
from harness.errors import BackendError
from harness.fabric.jobs import JobSpec
from harness.fabric.resolve import FabricRef
from harness.faults.fault import Fault
from harness.inputs.location import Location
from harness.observations.expect import Expect
from harness.run.scenario import run_scenario
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from tests.backends.backend_fakes import LimitedBackend
from tests.backends.backend_fakes import LyingBackend

SMALL = FabricRef(
    generator="two-tier",
    params=(("leaf_radix", 8), ("nodes_per_su", 2), ("spines", 2), ("storage", False), ("sus", 2)),
)
LIAR = "su02/node01/nic0"


def expect(**checks: object) -> ExpectStep:
    return ExpectStep(
        tuple(
            Expectation(k, Expect.parse(v), where=Location("t.yaml", 20 + i, 7))
            for i, (k, v) in enumerate(checks.items())
        )
    )


def scenario(*steps: object) -> Scenario:
    return Scenario(
        "liar", "a backend that loses one NIC's packets", SMALL, tuple(steps),  # type: ignore[arg-type]
        (JobSpec(per_su=True),), backends=("model", "netns"),
    )  # fmt: skip


KILL_SPINE = InjectStep(Fault.parse({"kill": "spine-01"}), "spine")


# -- mismatches ------------------------------------------------------------------------------
def test_a_measurement_that_disagrees_is_a_mismatch() -> None:
    result = run_scenario(
        scenario(KILL_SPINE, expect(islands=1, nics_isolated=0, bisection_ratio=0.5)),
        LyingBackend(LIAR, after=1),
    )
    assert result.status == "mismatch"
    islands, isolated, bisection = result.steps[1].expectations
    assert (islands.predicted, islands.measured, islands.measured_by) == (1, 2, "lying")
    assert islands.mismatch
    assert islands.status == "mismatch"
    assert not islands.passed  # the verdict comes from the measurement: 2 islands, not 1
    assert (isolated.predicted, isolated.measured) == (0, 1)
    assert LIAR in isolated.involved
    # the model alone answers the bisection: shown as predicted, never a mismatch
    assert (bisection.measured_by, bisection.mismatch, bisection.status) == ("", False, "passed")
    assert result.mismatches == [islands, isolated]
    assert "2 measured otherwise than predicted" in result.steps[1].text


def test_a_mismatch_is_a_finding_whatever_the_expectation_says() -> None:
    # The scenario expects what the liar measures: the expectation holds, the step does not.
    result = run_scenario(scenario(KILL_SPINE, expect(islands=2)), LyingBackend(LIAR, after=1))
    (e,) = result.steps[1].expectations
    assert e.passed
    assert e.status == "mismatch"
    assert result.status == "mismatch"
    assert not result.passed


def test_sampled_probes_include_the_predicted_cut_pairs() -> None:
    # A leaf's NICs are cut off: the model says so, the measurement confirms it with the
    # very pairs the prediction names, so a sample cannot miss the damage.
    kill_leaf = InjectStep(Fault.parse({"kill": "su01/leaf-r0"}))
    result = run_scenario(
        scenario(kill_leaf, expect(all_gpus_connected=False, rails_connected=[1, 2, 3])), "model"
    )
    assert result.status == "passed", result.failures
    connected, rails = result.steps[1].expectations
    assert (connected.predicted, connected.measured, connected.measured_by) == (
        False,
        False,
        "model",
    )
    assert "probed NIC pairs failed" in connected.measured_detail
    assert (rails.predicted, rails.measured) == ([1, 2, 3], [1, 2, 3])


def test_the_model_measures_what_it_predicts() -> None:
    pair = (("between", ["su01/node01/gpu0", "su02/node01/gpu0"]),)
    checks = ExpectStep((
        Expectation("islands", Expect.parse(1)),
        Expectation("jobs_lost", Expect.parse(0)),
        Expectation("leaf_uplink_ratio", Expect.parse(0.5)),
        Expectation("leaf_uplink_ratio", Expect.parse(0.5), (("leaf", "su01/leaf-r0"),)),
        Expectation("hops", Expect.parse(3), pair),
        Expectation("path_class", Expect.parse("cross-su"), pair),
        Expectation("link_gbps", Expect.parse(0.0), (("link", "su01/leaf-r0:3--spine-01:1"),)),
    ))  # fmt: skip
    steps = (KILL_SPINE, checks, RestoreStep("all"),
             expect(islands=1, leaf_uplink_ratio=1.0, jobs_survived=2))  # fmt: skip
    result = run_scenario(scenario(*steps), "model")
    assert result.status == "passed", result.failures
    measured = [e for s in result.steps for e in s.expectations]
    assert all(e.measured_by == "model" for e in measured), [e.observation for e in measured]
    assert all(e.predicted == e.measured for e in measured)
    path = result.steps[1].expectations[5]
    assert path.observation.startswith("path_class")
    assert path.measured_detail.startswith("traced su01/node01/nic0 -> su02/node01/nic0: ")
    assert result.steps[0].settle_s == 0.0
    assert "probes" in result.steps[1].plan


# -- the preflight ---------------------------------------------------------------------------
def test_the_preflight_refuses_a_healthy_fabric_that_does_not_match() -> None:
    backend = LyingBackend(LIAR, after=0)
    with pytest.raises(BackendError, match=f"preflight on backend lying: .*{LIAR}") as info:
        run_scenario(scenario(KILL_SPINE, expect(islands=1)), backend)
    assert "the model says it should" in str(info.value)
    assert backend.closed
    assert backend.state.is_healthy  # nothing was injected


# -- unsupported faults ----------------------------------------------------------------------
def test_a_fault_the_backend_cannot_inject_skips_the_scenario() -> None:
    backend = LimitedBackend()
    kill_gpu = InjectStep(Fault.parse({"kill": "su01/node01/gpu0"}))
    result = run_scenario(scenario(KILL_SPINE, kill_gpu, expect(jobs_lost=1)), backend)
    assert result.status == "skipped"
    assert result.error == "not supported on limited: kill of a gpu (su01/node01/gpu0)"
    assert backend.injected == 0  # decided before anything is injected
    degrade = InjectStep(
        Fault.parse({"degrade": {"target": "su01/leaf-r0:3--spine-01:1", "fraction": 0.5}})
    )
    assert "fault kind 'degrade'" in run_scenario(scenario(degrade), LimitedBackend()).error


def test_an_observation_the_backend_cannot_measure_is_shown_as_predicted() -> None:
    one_leaf = Expectation("leaf_uplink_ratio", Expect.parse(0.5), (("leaf", "su01/leaf-r0"),))
    result = run_scenario(scenario(KILL_SPINE, ExpectStep((one_leaf,))), LimitedBackend())
    (e,) = result.steps[1].expectations
    assert result.status == "passed"
    assert (e.measured_by, e.observed, e.predicted) == ("", 0.5, 0.5)  # no flows on it


# -- through the command line ----------------------------------------------------------------
SCENARIO = """\
name: liar
description: The spine goes; one NIC's packets go with it on this backend.
backends: [model, netns]
fabric:
  generator: two-tier
  params: {sus: 2, nodes_per_su: 2, spines: 2, leaf_radix: 8, storage: false}
jobs:
  - per-su: true
steps:
  - inject: {kill: spine-01}
  - expect:
      islands: 1
      jobs_lost: 0
"""


@pytest.fixture
def liar_file(tmp_path: Path) -> Path:
    path = tmp_path / "liar.yaml"
    path.write_text(SCENARIO)
    return path


def _use(monkeypatch: pytest.MonkeyPatch, backend: object) -> None:
    monkeypatch.setattr(harness.run.scenario, "make_backend", lambda _name: backend)


def test_cli_reports_mismatches(
    liar_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _use(monkeypatch, LyingBackend(LIAR, after=1))
    junit = tmp_path / "out.xml"
    assert main(["run", str(liar_file), "--json", "--junit-xml", str(junit)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["passed"], doc["failed"], doc["mismatches"], doc["mismatched"]) == (0, 0, 1, 1)
    (sc,) = doc["scenarios"]
    assert sc["status"] == "mismatch"
    step = sc["steps"][1]
    assert step["predicted"] == {"islands": 1, "jobs_lost": 0}
    assert step["measured"] == {"islands": 2, "jobs_lost": 0}
    islands = step["expectations"][0]
    assert (islands["status"], islands["predicted"], islands["measured"]) == ("mismatch", 1, 2)
    failure = ET.parse(junit).getroot().find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.attrib["type"] == "Mismatch"
    assert "islands: predicted 1, measured 2 on lying" in failure.attrib["message"]
    out = ET.parse(junit).getroot().find("testsuite/testcase/system-out")
    assert out is not None
    assert "islands: expected 1, predicted 1, measured 2 on lying: mismatch" in (out.text or "")
    assert "jobs_lost: expected 0, predicted 0, measured 0 on lying: passed" in (out.text or "")

    _use(monkeypatch, LyingBackend(LIAR, after=1))
    assert main(["run", str(liar_file)]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out
    assert "measured otherwise than predicted: islands" in out
    assert "0 passed, 0 failed, 0 errors, 1 mismatch in" in out
    # every expectation, predicted beside measured, in one table per expect step
    rows = [" ".join(line.replace("│", " ").replace("┃", " ").split()) for line in out.splitlines()]
    assert "expectation expected predicted measured verdict" in rows
    assert "islands 1 1 2 MISMATCH" in rows
    assert "jobs_lost 0 0 0 PASSED" in rows


def test_cli_preflight_failure_is_an_environment_error(
    liar_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use(monkeypatch, LyingBackend(LIAR, after=0))
    assert main(["run", str(liar_file)]) == 3
    err = capsys.readouterr().err
    assert "error: environment: preflight on backend lying: the healthy fabric" in err
    assert LIAR in err


@pytest.fixture
def limited_netns(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register ``tests.backends.backend_fakes`` (a LimitedBackend) as the netns backend."""
    entries = tuple(
        BackendInfo("netns", "tests.backends.backend_fakes", "fake") if b.name == "netns" else b
        for b in REGISTRY
    )
    monkeypatch.setattr(harness.backends, "REGISTRY", entries)
    harness.backends.unavailable.cache_clear()
    yield
    harness.backends.unavailable.cache_clear()


@pytest.mark.usefixtures("limited_netns")
def test_cli_unsupported_faults_skip_and_nothing_ran_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text(SCENARIO.replace("{kill: spine-01}", "{kill: su01/node01/gpu0}"))
    assert main(["run", str(path), "--backend", "netns"]) == 2
    captured = capsys.readouterr()
    assert "SKIPPED  liar  not supported on netns: kill of a gpu (su01/node01/gpu0)" in captured.out
    assert "error: nothing ran: 1 scenario skipped for backend netns" in captured.err
    assert main(["run", str(path), "--backend", "netns", "--allow-empty", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["total"], doc["skipped"]) == (0, 1)
    assert doc["skipped_scenarios"][0]["reason"].startswith("not supported on netns")
