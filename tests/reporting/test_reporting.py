"""The reporters: console (rich), JSON, JUnit XML, plain text and the fabric view."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from harness.errors import ScenarioError
from harness.fabric.jobs import JobSpec
from harness.fabric.presets import preset
from harness.fabric.resolve import FabricRef
from harness.faults.fault import Fault
from harness.inputs.location import Location
from harness.observations.expect import Expect
from harness.reporting import ConsoleReporter
from harness.reporting import RunReport
from harness.reporting import Skipped
from harness.reporting import explain
from harness.reporting import fabric_document
from harness.reporting import failure_message
from harness.reporting import json_report
from harness.reporting import junit_xml
from harness.reporting import print_fabric
from harness.reporting import tier_usage
from harness.reporting import write_json
from harness.reporting import write_junit
from harness.reporting.junit import classname
from harness.reporting.text import format_involved
from harness.reporting.text import format_value
from harness.run.results import ExpectResult
from harness.run.results import ScenarioResult
from harness.run.results import StepResult
from harness.run.scenario import run_scenario
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario

PATH = "scenarios/spine.yaml"


def scenario(name: str, expect: dict[str, Any], kill: str = "spine-05") -> Scenario:
    """kill ``kill`` on seed-a800, then check ``expect``; lines as a YAML file would give."""
    checks = tuple(
        Expectation(obs, Expect.parse(value), where=Location(PATH, 8 + i, 7))
        for i, (obs, value) in enumerate(expect.items())
    )
    return Scenario(
        name=name,
        description="kill one spine",
        fabric=FabricRef(preset="seed-a800", where=Location(PATH, 3, 1)),
        steps=(
            InjectStep(Fault.parse({"kill": kill}), where=Location(PATH, 5, 5)),
            ExpectStep(checks, where=Location(PATH, 7, 5)),
            RestoreStep("all", where=Location(PATH, 12, 5)),
        ),
        jobs=(JobSpec(per_su=True),),
        tags=("seed",),
        where=Location(PATH, 1, 1),
    )


@pytest.fixture(scope="module")
def passed() -> ScenarioResult:
    return run_scenario(scenario("one-spine", {"jobs_lost": 0, "all_gpus_connected": True}))


@pytest.fixture(scope="module")
def failed() -> ScenarioResult:
    return run_scenario(
        scenario("wrong-hope", {"jobs_lost": 0, "leaf_uplink_ratio": 1.0, "elements_down": 0})
    )


@pytest.fixture(scope="module")
def errored() -> ScenarioResult:
    bad = scenario("no-such-spine", {"jobs_lost": 0}, kill="spine-99")
    with pytest.raises(ScenarioError) as info:
        run_scenario(bad)
    return ScenarioResult(bad.name, PATH, "model", "error", error=str(info.value))


@pytest.fixture
def report(passed: ScenarioResult, failed: ScenarioResult, errored: ScenarioResult) -> RunReport:
    return RunReport(
        "model",
        [passed, failed, errored],
        [Skipped("needs-netns", "scenarios/ns.yaml", "runs on netns, not on backend model")],
        seconds=1.5,
    )


def render(width: int = 120, **kw: Any) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, color_system=None, **kw), out


# -- plain text --------------------------------------------------------------------------
def test_explain_tells_the_story_and_locates_every_failure(failed: ScenarioResult) -> None:
    text = explain(failed)
    assert (
        "scenario wrong-hope on fabric seed-a800 (backend model, routing control sm, "
        "forwarding static, paths up-down, engine ftree, reroute 1s, link_up 3s, sweep 10s): "
        "failed: 2 of 3" in text
    )
    assert f"{PATH}:5:5: inject: killed spine-05" in text
    assert "all 10 jobs survive" in text
    assert f"{PATH}:9:7: leaf_uplink_ratio" in text
    assert "expected: 1.0" in text
    assert "observed: 0.95" in text
    assert f"{PATH}:10:7: elements_down" in text
    assert f"{PATH}:8:7" not in text  # jobs_lost held


def test_explain_error_lists_the_problems(errored: ScenarioResult) -> None:
    text = explain(errored)
    assert "error: bad input" in text
    assert "spine-99" in text
    assert f"{PATH}:5:5" in text


def test_failure_message_is_one_line(failed: ScenarioResult, errored: ScenarioResult) -> None:
    msg = failure_message(failed)
    assert msg.startswith("leaf_uplink_ratio: expected 1.0, observed 0.95 at ")
    assert msg.endswith("(+1 more)")
    assert "\n" not in msg
    assert failure_message(errored).startswith("bad input: ")


@pytest.mark.parametrize(
    ("value", "text"),
    [("cross-su", "'cross-su'"), (0.123456789, "0.123457"), ([1, "a"], "[1, a]"), (True, "True")],
)
def test_format_value(value: Any, text: str) -> None:
    assert format_value(value) == text


def test_format_involved_caps_the_list() -> None:
    ids = tuple(f"spine-{i:02d}" for i in range(1, 14))
    assert format_involved(ids).endswith("spine-10 (+3 more)")
    assert format_involved(ids[:2]) == "spine-01, spine-02"


# -- console -----------------------------------------------------------------------------
def _run_with(reporter: ConsoleReporter, scenarios: list[Scenario]) -> RunReport:
    report = RunReport("model")
    with reporter:
        reporter.start(len(scenarios))
        for s in scenarios:
            report.results.append(run_scenario(s, "model", [reporter]))
        reporter.finish(report)
    return report


def test_console_prints_verdicts_steps_failures_and_table() -> None:
    console, out = render()
    scenarios = [
        scenario("one-spine", {"jobs_lost": 0}),
        scenario("wrong-hope", {"leaf_uplink_ratio": 1.0}),
    ]
    _run_with(ConsoleReporter(console), scenarios)
    text = out.getvalue()
    assert "PASSED  one-spine  seed-a800" in text
    assert "FAILED  wrong-hope  seed-a800" in text
    assert "inject  killed spine-05" in text
    assert "worst leaf keeps 95.0% of its uplink capacity" in text
    assert "restore spine-05 back up" in text
    assert "expectation failed: leaf_uplink_ratio" in text
    assert f"{PATH}:8:7" in text
    assert "harness run" in text  # the table
    assert "1 passed, 1 failed, 0 errors in" in text


def test_console_quiet_prints_failures_and_totals_only() -> None:
    console, out = render()
    scenarios = [
        scenario("one-spine", {"jobs_lost": 0}),
        scenario("wrong-hope", {"leaf_uplink_ratio": 1.0}),
    ]
    _run_with(ConsoleReporter(console, quiet=True), scenarios)
    text = out.getvalue()
    assert "one-spine" not in text
    assert "FAILED  wrong-hope" in text
    assert "expectation failed: leaf_uplink_ratio" in text
    assert "killed spine-05" not in text  # no story
    assert "harness run" not in text  # no table
    assert "1 passed, 1 failed" in text


def test_console_error_skip_and_markup_safety(errored: ScenarioResult) -> None:
    console, out = render()
    odd = ScenarioResult("odd-[bold]name", PATH, "model", "error", error="x.yaml:1:1: [steps] bad")
    rep = ConsoleReporter(console)
    rep.scenario_finished(errored)
    rep.scenario_finished(odd)
    rep.scenario_skipped(Skipped("needs-netns", "ns.yaml", "runs on netns, not on backend model"))
    rep.finish(RunReport("model", [errored, odd], [Skipped("needs-netns", "ns.yaml", "r")]))
    text = out.getvalue()
    assert "ERROR   no-such-spine" in text
    assert "spine-99" in text
    assert "odd-[bold]name" in text  # user text is not read as rich markup
    assert "[steps] bad" in text
    assert "SKIPPED  needs-netns  runs on netns, not on backend model" in text
    assert "0 passed, 0 failed, 2 errors, 1 skipped" in text


def test_progress_bar_only_on_a_terminal_with_enough_scenarios() -> None:
    console, _ = render(force_terminal=True)
    rep = ConsoleReporter(console)
    rep.start(5)
    assert rep._progress is not None
    rep.scenario_started(scenario("a", {"jobs_lost": 0}), "model")
    rep.finish(RunReport("model"))
    assert rep._progress is None
    for console, total, quiet in [
        (render()[0], 5, False),  # not a terminal
        (render(force_terminal=True)[0], 3, False),  # only a few
        (render(force_terminal=True)[0], 5, True),  # quiet
    ]:
        rep = ConsoleReporter(console, quiet=quiet)
        rep.start(total)
        assert rep._progress is None


def test_progress_bar_is_stopped_on_an_exception() -> None:
    console, _ = render(force_terminal=True)
    rep = ConsoleReporter(console)

    def interrupted_run() -> None:
        with rep:
            rep.start(10)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted_run()
    assert rep._progress is None


# -- JSON --------------------------------------------------------------------------------
def test_json_report_counts_and_results(report: RunReport) -> None:
    doc = json_report(report)
    assert (doc["passed"], doc["failed"], doc["errors"], doc["total"], doc["skipped"]) == (
        1,
        1,
        1,
        3,
        1,
    )
    assert doc["backend"] == "model"
    assert [s["status"] for s in doc["scenarios"]] == ["passed", "failed", "error"]
    assert doc["skipped_scenarios"][0]["name"] == "needs-netns"
    stream = io.StringIO()
    write_json(report, stream)
    assert json.loads(stream.getvalue()) == json.loads(json.dumps(doc))


# -- JUnit -------------------------------------------------------------------------------
def test_junit_xml_is_well_formed_with_failure_error_and_skip(
    report: RunReport, tmp_path: Path
) -> None:
    path = tmp_path / "out" / "junit.xml"
    write_junit(report, path)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert suite.attrib["tests"] == "4"
    assert (suite.attrib["failures"], suite.attrib["errors"], suite.attrib["skipped"]) == (
        "1",
        "1",
        "1",
    )
    cases = {c.attrib["name"]: c for c in suite.findall("testcase")}
    assert set(cases) == {"one-spine", "wrong-hope", "no-such-spine", "needs-netns"}
    assert cases["one-spine"].attrib["classname"] == "scenarios.spine"
    assert list(cases["one-spine"]) == [cases["one-spine"].find("system-out")]
    failure = cases["wrong-hope"].find("failure")
    assert failure is not None
    assert failure.attrib["message"].startswith("leaf_uplink_ratio: expected 1.0, observed 0.95")
    assert "expected: 1.0" in (failure.text or "")
    assert f"{PATH}:9:7" in (failure.text or "")
    error = cases["no-such-spine"].find("error")
    assert error is not None
    assert error.attrib["type"] == "ScenarioError"
    assert "spine-99" in (error.text or "")
    skipped = cases["needs-netns"].find("skipped")
    assert skipped is not None
    assert "netns" in skipped.attrib["message"]


def test_junit_xml_drops_characters_xml_cannot_carry() -> None:
    bad = ScenarioResult("ctl", PATH, "model", "error", error="bell \x07 here")
    tree = junit_xml(RunReport("model", [bad]))
    text = ET.tostring(tree.getroot(), encoding="unicode")
    ET.fromstring(text)  # parses
    assert "bell #x07 here" in text


@pytest.mark.parametrize(
    ("path", "name"),
    [("scenarios/seed/a.yaml", "scenarios.seed.a"), ("/abs/b.yml", "abs.b"), ("", "harness")],
)
def test_classname(path: str, name: str) -> None:
    assert classname(path) == name


# -- fabric view -------------------------------------------------------------------------
def test_tier_usage_of_the_seed_cluster() -> None:
    usage = {t.tier: t for t in tier_usage(preset("seed-a800"))}
    leaf, spine = usage["leaf"], usage["spine"]
    assert (leaf.switches, leaf.ports, leaf.down, leaf.up, leaf.free) == (40, 1600, 800, 800, 0)
    assert leaf.oversubscription == pytest.approx(1.0)
    assert (spine.switches, spine.down, spine.up, spine.oversubscription) == (20, 800, 0, None)
    assert "core" not in usage


def test_fabric_document_and_print() -> None:
    fabric = preset("seed-a800")
    doc = fabric_document(fabric)
    assert doc["name"] == "seed-a800"
    assert doc["gpus"] == 1600
    assert doc["tier_usage"][0]["tier"] == "leaf"
    console, out = render(width=140)
    print_fabric(console, fabric)
    text = out.getvalue()
    assert "fabric seed-a800" in text
    assert "oversubscription" in text
    assert "1.00:1" in text


def test_step_result_without_location_renders() -> None:
    res = ScenarioResult(
        "bare",
        "",
        "model",
        "failed",
        (
            StepResult("inject", "killed x"),
            StepResult("expect", "checked", expectations=(ExpectResult("o", "1", 2, False),)),
        ),
    )
    text = explain(res)
    assert "inject: killed x" in text
    assert "\n    o\n" in text
