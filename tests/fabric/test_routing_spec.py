"""The ``routing:`` key: parsing, layering (fabric file < scenario < --routing), reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.fabric.fabric_file import load_fabric_file
from harness.fabric.routing import DEFAULT
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import control_of
from harness.fabric.routing import parse_override
from harness.fabric.routing import parse_routing
from harness.fabric.routing import resolve
from harness.run.scenario import run_scenario
from harness.scenario.load import load_file
from harness.scenario.load import load_text
from harness.scenario.prepare import prepare
from tests.backends.backend_fakes import LimitedBackend

SCENARIO = """\
name: routed
description: kill a spine on a fabric routed {how}
fabric: {fabric}
{routing}
steps:
  - inject: {{kill: spine-01}}
  - expect: {{all_gpus_connected: true}}
"""
FABRIC_FILE = """\
description: a small two-tier fabric
{routing}
generator: two-tier
params: {{sus: 1, nodes_per_su: 2, spines: 2, leaf_radix: 8, storage: false}}
"""


def _scenario(tmp_path: Path, routing: str = "", fabric_routing: str | None = None) -> Path:
    fabric = "{preset: seed-a800}"
    if fabric_routing is not None:
        (tmp_path / "lab.yaml").write_text(FABRIC_FILE.format(routing=fabric_routing))
        fabric = "{file: lab.yaml}"
    path = tmp_path / "routed.yaml"
    how = routing.replace("\n", " ").replace(":", "") or "by default"
    path.write_text(SCENARIO.format(how=how, fabric=fabric, routing=routing))
    return path


def test_shorthand_and_mapping_mean_the_same() -> None:
    assert parse_routing("bgp") == parse_routing({"control": "bgp"}) == Routing("bgp")
    assert parse_routing({}) == DEFAULT == Routing("sm")
    assert Routing("bgp").to_dict() == {
        "control": "bgp",
        "forwarding": "ecmp",
        "paths": "up-down",
        "reroute": "1s",
        "link_up": "3s",
        "hold": "9s",
        "bfd": "off",
    }
    assert (
        Routing("bgp").describe()
        == "control bgp, forwarding ecmp, paths up-down, reroute 1s, link_up 3s, hold 9s, bfd off"
    )
    assert (
        Routing("sm", "adaptive").describe()
        == "control sm, forwarding adaptive, paths up-down, engine ftree, reroute 1s, link_up 3s, "
        "sweep 10s"
    )


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        ("bpg", "control", "did you mean 'bgp'?"),
        ({"control": "ospf"}, "control", "use one of sm, bgp"),
        ({"contrl": "bgp"}, "contrl", "did you mean 'control'?"),
        (3, "", "routing must be a control plane (sm or bgp) or a mapping"),
        (["bgp"], "", "e.g. routing: bgp"),
    ],
)
def test_bad_routing_names_the_fix(raw: object, key: str, words: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_override(raw)
    (problem,) = info.value.problems
    assert problem.key == key
    assert words in problem.message


@pytest.mark.parametrize(
    ("raw", "want"),
    [(False, "off"), (True, "on"), ("off", "off"), ("on", "on"), ("300ms", "300ms"),
     (0.1, "100ms"), ("1s", "1000ms"), ("60s", "60000ms")],
)  # fmt: skip
def test_bfd_is_off_on_or_an_interval(raw: object, want: str) -> None:
    assert parse_routing({"control": "bgp", "bfd": raw}).bfd == want
    assert f"bfd {want}" in parse_routing({"control": "bgp", "bfd": raw}).describe()
    assert "bfd" not in parse_routing({"bfd": raw}).describe()  # sm runs no BFD


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("fast", "routing bfd 'fast' is not a duration"),
        ("5ms", "FRR's BFD intervals are 10-60000 ms"),
        (120, "FRR's BFD intervals are 10-60000 ms"),
        (None, "use off, on or an interval, e.g. routing: {bfd: 300ms}"),
    ],
)
def test_bad_bfd_names_the_fix(raw: object, words: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_override({"bfd": raw})
    (problem,) = info.value.problems
    assert problem.key == "bfd"
    assert words in problem.message


def test_yaml_off_and_on_mean_bfd_off_and_on(tmp_path: Path) -> None:
    for word in ("off", "on", "300ms"):
        (s,) = load_file(_scenario(tmp_path, f"routing:\n  control: bgp\n  bfd: {word}"))
        assert prepare(s).routing.bfd == word


def test_every_problem_of_a_mapping_at_once() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_override({"control": "x", "pahts": "up-down"})
    assert [p.key for p in info.value.problems] == ["control", "pahts"]


def test_layers_override_only_what_they_state() -> None:
    bgp = parse_override("bgp")
    assert resolve(None, bgp) == Routing("bgp")
    assert resolve(bgp, RoutingOverride()) == Routing("bgp")
    assert resolve(bgp, RoutingOverride.control("sm")) == Routing("sm")
    assert control_of("bgp") == "bgp"
    with pytest.raises(ScenarioError, match=r"--routing takes sm or bgp, not 'bpg'"):
        control_of("bpg")


def test_loader_places_the_problem_at_file_line(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "routing:\n  control: rip")
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.key) == (5, "routing.control")
    assert str(problem).startswith(f"{path}:5:")


def test_the_scenario_states_its_routing() -> None:
    (s,) = load_text(
        SCENARIO.format(how="bgp", fabric="{preset: seed-a800}", routing="routing: bgp")
    )
    assert prepare(s).routing == Routing("bgp")
    (s,) = load_text(SCENARIO.format(how="-", fabric="{preset: seed-a800}", routing=""))
    assert prepare(s).routing == DEFAULT


def test_fabric_file_routing_under_the_scenarios(tmp_path: Path) -> None:
    path = _scenario(tmp_path, fabric_routing="routing: bgp")
    (s,) = load_file(path)
    assert prepare(s).routing == Routing("bgp")
    path = _scenario(tmp_path, routing="routing: {control: sm}", fabric_routing="routing: bgp")
    (s,) = load_file(path)
    assert prepare(s).routing == Routing("sm")


def test_bad_fabric_file_routing_is_located(tmp_path: Path) -> None:
    (tmp_path / "lab.yaml").write_text(FABRIC_FILE.format(routing="routing: {control: bgpp}"))
    with pytest.raises(ScenarioError) as info:
        load_fabric_file(tmp_path / "lab.yaml")
    (problem,) = info.value.problems
    assert (problem.line, problem.key) == (2, "routing.control")
    assert "did you mean 'bgp'?" in problem.message


def test_a_backend_that_cannot_run_the_control_plane_skips(tmp_path: Path) -> None:
    (s,) = load_file(_scenario(tmp_path, "routing: bgp"))
    result = run_scenario(s, LimitedBackend())  # capabilities.routing: sm only
    assert result.status == "skipped"
    assert result.error == "not supported on limited: routing control bgp (it runs sm)"
    assert result.routing == Routing("bgp")
    result = run_scenario(s, LimitedBackend(), routing=RoutingOverride.control("sm"))
    assert result.status == "passed"
    assert result.routing == Routing("sm")


def test_run_reports_routing_and_takes_the_override(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, "routing: bgp")
    assert main(["run", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenarios"][0]["routing"] == {
        "control": "bgp",
        "forwarding": "ecmp",
        "paths": "up-down",
        "reroute": "1s",
        "link_up": "3s",
        "hold": "9s",
        "bfd": "off",
    }
    assert main(["run", str(path), "--json", "--routing", "sm"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenarios"][0]["routing"] == {
        "control": "sm",
        "forwarding": "static",
        "paths": "up-down",
        "engine": "ftree",
        "reroute": "1s",
        "link_up": "3s",
        "sweep": "10s",
    }
    assert main(["run", str(path)]) == 0
    assert "routing control bgp" in capsys.readouterr().out


def test_bad_routing_flag_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "scenarios", "--routing", "bpg"]) == 2
    err = capsys.readouterr().err
    assert "--routing takes sm or bgp, not 'bpg' (did you mean 'bgp'?)" in err


# -- engine: the OpenSM routing engine, and the paths it implies -----------------------------


@pytest.mark.parametrize(
    ("raw", "engine", "paths"),
    [
        ({}, "ftree", "up-down"),
        ({"engine": "updn"}, "updn", "up-down"),
        ({"engine": "minhop"}, "minhop", "shortest"),
        ({"engine": "dor"}, "dor", "shortest"),
        ({"paths": "shortest"}, "minhop", "shortest"),
        ({"paths": "up-down"}, "ftree", "up-down"),
        ({"engine": "dor", "paths": "shortest"}, "dor", "shortest"),
    ],
)
def test_an_engine_implies_its_paths_and_paths_an_engine(
    raw: dict[str, str], engine: str, paths: str
) -> None:
    routing = parse_routing(raw)
    assert (routing.engine, routing.paths) == (engine, paths)
    assert f"paths {paths}, engine {engine}" in routing.describe()


def test_a_contradictory_engine_and_paths_is_bad_input_naming_the_fix() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_override({"engine": "minhop", "paths": "up-down"})
    (problem,) = info.value.problems
    assert problem.key == "engine"
    assert "minhop takes any shortest path (valleys), which contradicts paths up-down" in str(
        problem
    )
    assert "use engine ftree or updn with paths up-down" in problem.message
    with pytest.raises(ScenarioError, match=r"updn takes up-down routes \(no valleys\)"):
        parse_override({"engine": "updn", "paths": "shortest"})
    with pytest.raises(ScenarioError, match=r"unknown \(did you mean 'minhop'\?\)"):
        parse_override({"engine": "minhpo"})


def test_an_engine_under_bgp_is_bad_input_and_bgp_reports_none() -> None:
    with pytest.raises(ScenarioError, match=r"OpenSM routing engine, for control sm"):
        parse_override({"control": "bgp", "engine": "updn"})
    assert "engine" not in Routing("bgp").to_dict()


def test_a_later_layer_brings_the_other_setting_along() -> None:
    fabric_file = parse_override({"engine": "updn"})
    assert resolve(fabric_file).paths == "up-down"
    # the scenario says shortest: the fabric file's up-down engine gives way to minhop
    assert resolve(fabric_file, parse_override({"paths": "shortest"})).engine == "minhop"
    # a scenario's paths that agrees keeps the fabric file's engine
    assert resolve(fabric_file, parse_override({"paths": "up-down"})).engine == "updn"
    # the control plane alone changes neither
    assert resolve(fabric_file, RoutingOverride.control("sm")).engine == "updn"
    assert resolve(parse_override({"engine": "dor"}), parse_override({"engine": "ftree"})) == (
        Routing(engine="ftree")
    )


def test_the_loader_places_a_contradiction_at_file_line(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "routing:\n  engine: ftree\n  paths: shortest")
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.key) == (5, "routing.engine")
    (tmp_path / "lab.yaml").write_text(FABRIC_FILE.format(routing="routing: {engine: lash}"))
    with pytest.raises(ScenarioError) as info:
        load_fabric_file(tmp_path / "lab.yaml")
    assert "routing engine 'lash' is unknown" in str(info.value)


def test_engine_flag_overrides_the_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, "routing: {engine: updn}")
    assert main(["run", str(path), "--json", "--engine", "minhop"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenarios"][0]["routing"]["engine"] == "minhop"
    assert doc["scenarios"][0]["routing"]["paths"] == "shortest"
    assert main(["run", str(path), "--engine", "lash"]) == 2
    assert "--engine takes ftree, updn, minhop, dor, not 'lash'" in capsys.readouterr().err
    assert RoutingOverride.of_options(control=None, engine=None) is None


def test_an_error_result_reports_the_fabric_files_routing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scenario that fails with bad input while running reports the routing it would have
    run: its fabric file's (under any ``--routing``), as a result that ran does."""
    from harness.run import scenario as run_stage
    from harness.scenario.prepare import reported_routing

    path = _scenario(tmp_path, fabric_routing="routing: {control: bgp, bfd: on}")
    (s,) = load_file(path)
    assert reported_routing(s) == prepare(s).routing == resolve(parse_override(
        {"control": "bgp", "bfd": "on"}))  # fmt: skip
    assert reported_routing(s, RoutingOverride.control("sm")).control == "sm"

    def fails(*_: object) -> None:
        msg = "a selector matched nothing"
        raise ScenarioError(msg)

    monkeypatch.setattr(run_stage, "run_scenario", fails)
    assert main(["run", str(path), "--json"]) != 0
    (result,) = json.loads(capsys.readouterr().out)["scenarios"]
    assert result["status"] == "error"
    assert (result["routing"]["control"], result["routing"]["bfd"]) == ("bgp", "on")
    # a fabric file whose routing: is wrong (what the error may be about): the scenario's own
    (tmp_path / "lab.yaml").write_text(FABRIC_FILE.format(routing="routing: {control: bgpp}"))
    assert reported_routing(s) == DEFAULT
