"""JSON Schemas for editors (harness.scenario.schema): committed, valid, like the loaders."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness.fabric.explicit_file import EXPLICIT_FORM_KEYS
from harness.fabric.explicit_file import GENERATOR_FORM_KEYS
from harness.fabric.explicit_file import LINK_KEYS
from harness.fabric.explicit_file import NODE_KEYS
from harness.fabric.explicit_file import SWITCH_KEYS
from harness.fabric.schema import fabric_schema
from harness.faults.fault import FAULT_KINDS
from harness.faults.selectors import SELECTOR_KEYS
from harness.observations.registry import OBSERVATIONS
from harness.scenario.load import CHECKPOINT_KEYS
from harness.scenario.load import FABRIC_KEYS
from harness.scenario.load import JOB_KEYS
from harness.scenario.load import SCENARIO_KEYS
from harness.scenario.load import load_file
from harness.scenario.schema import main
from harness.scenario.schema import render
from harness.scenario.schema import scenario_schema
from harness.scenario.steps import DEGRADE_KEYS
from harness.scenario.steps import STEP_KEYS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "harness" / "schema"
SCENARIOS = sorted((ROOT / "scenarios").glob("*.y*ml"))
FABRICS = sorted((ROOT / "fabrics").glob("*.y*ml"))
BAD = ROOT / "tests" / "bad_scenarios"

GOOD: dict[str, Any] = {
    "name": "one-spine-left",
    "description": "drain every spine but one",
    "fabric": {"preset": "seed-a800", "params": {"sus": 2}},
    "jobs": ["per-su", {"name": "big", "nodes": "su0[1-2]/*", "failover": "port"}],
    "checkpoint": {"size_gb": 112},
    "steps": [
        {"inject": {"drain": {"tier": "spine", "all-but": 1}}, "as": "spines"},
        {"inject": {"degrade": {"target": "spine-0*", "lanes": 2}}},
        {
            "expect": {
                "all_gpus_connected": {"pxn": True, "is": True},
                "jobs_lost": 0,
                "bisection_ratio": "0.5..1",
                "min_job_busbw_ratio": ">= 0.5",
                "path_class": {"between": ["a", "b"], "is": "cross-su"},
                "rails_connected": [0, 1],
            }
        },
        {"restore": "spines"},
    ],
}


def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


SCENARIO = validator(scenario_schema())
FABRIC = validator(fabric_schema())


def with_change(path: list[str | int], value: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(GOOD))
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return doc


# -- committed == generated ------------------------------------------------------------------


@pytest.mark.parametrize("which", ["scenario", "fabric"])
def test_the_committed_schema_is_the_generated_one(which: str) -> None:
    committed = (SCHEMA_DIR / f"{which}.schema.json").read_text()
    assert committed == render(which), (
        f"regenerate: python -m harness.scenario.schema {which} > "
        f"harness/schema/{which}.schema.json"
    )


def test_the_module_prints_a_schema() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([]) == 0
    assert json.loads(out.getvalue())["$id"] == "urn:harness:schema:scenario"
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["nope"]) == 2
    assert "usage" in err.getvalue()


# -- real files validate ----------------------------------------------------------------------


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_every_scenario_validates(path: Path) -> None:
    load_file(path)  # the loader accepts it...
    errors = [e.message for e in SCENARIO.iter_errors(yaml.safe_load(path.read_text()))]
    assert errors == []  # ...and so does the schema


@pytest.mark.parametrize("path", FABRICS, ids=[p.name for p in FABRICS])
def test_every_fabric_file_validates(path: Path) -> None:
    errors = [e.message for e in FABRIC.iter_errors(yaml.safe_load(path.read_text()))]
    assert errors == []


def test_a_full_scenario_and_a_list_validate() -> None:
    assert list(SCENARIO.iter_errors(GOOD)) == []
    assert list(SCENARIO.iter_errors([GOOD, GOOD])) == []


def test_expect_fabric_error_allows_no_steps() -> None:
    doc = {k: v for k, v in GOOD.items() if k != "steps"}
    assert not SCENARIO.is_valid(doc)
    assert SCENARIO.is_valid({**doc, "expect_fabric_error": "past its limit"})


# -- the schema rejects what the loader rejects -------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["stepz"], []),
        (["name"], "Bad Name"),
        (["fabric", "preset"], "seed-a80"),
        (["fabric", "generator"], "two-tier"),
        (["fabric", "params", "suss"], 2),
        (["backends"], ["modle"]),
        (["jobs", 1, "failovr"], "port"),
        (["jobs", 0], {"per-su": True, "nodes": "x"}),
        (["checkpoint", "size"], 1),
        (["steps", 0, "inject", "drain", "tire"], "spine"),
        (["steps", 0, "inject"], {"kil": "spine-05"}),
        (["steps", 0, "inject"], {"kill": "x", "cut": "y"}),
        (["steps", 0, "inject"], {"cut": ""}),
        (["steps", 0, "inject"], {"kill": {}}),
        (["steps", 0, "as"], "all"),
        (["steps", 1, "inject", "degrade"], {"target": "x"}),
        (["steps", 1, "inject", "degrade", "fraction"], 1.5),
        (["steps", 2, "expect", "job_lost"], 0),
        (["steps", 2, "expect", "all_gpus_connected", "pxm"], True),
        (["steps", 2, "expect", "all_gpus_connected", "pxn"], "yes"),
        (["steps", 2, "expect", "jobs_lost"], ">= lots"),
        (["steps", 2, "expect", "jobs_lost"], [0]),
        (["steps", 2, "expect", "all_gpus_connected"], 1),
        (["steps", 2, "expect", "hops"], 2),
        (["steps", 2, "expect", "path_class"], {"between": ["a", "b"]}),
        (["steps", 3, "expect"], {"jobs_lost": 0}),
        (["steps"], []),
    ],
)
def test_the_schema_rejects(path: list[str | int], value: Any) -> None:
    assert not SCENARIO.is_valid(with_change(path, value))


def test_the_schema_rejects_an_unknown_key_at_the_top() -> None:
    errors = list(SCENARIO.iter_errors({**GOOD, "stpes": []}))
    assert errors


@pytest.mark.parametrize(
    "name",
    [
        "unknown-top-level-key",
        "unknown-preset",
        "unknown-fault-kind",
        "selector-unknown-key",
        "empty-selector",
        "degrade-without-fraction",
        "unknown-observation",
        "bad-observation-argument",
        "bad-expectation-string",
        "bad-job",
        "per-su-with-nodes",
        "unknown-backend",
        "steps-missing",
        "bad-checkpoint",
        "missing-name",
        "bad-name",
        "bad-routing-engine",
    ],
)
def test_the_schema_rejects_the_structural_bad_scenarios(name: str) -> None:
    assert not SCENARIO.is_valid(yaml.safe_load((BAD / f"{name}.yaml").read_text()))


@pytest.mark.parametrize(
    "text",
    [
        "generator: two-tier\nparams: {sus: 2, nodes_per_su: 4}\nextra: 1\n",
        "generator: two-tier\nparams: {sus: 2, nodes_per_su: 4, spine: 2}\n",
        "preset: seed-a800\ngenerator: two-tier\n",
        "nodes: [{id: n1, model: a800, modle: x}]\n",
        "nodes: [{id: n1, model: a800}]\nswitches: [{id: s, kind: leef, ports: 4}]\n",
        "nodes: [{id: n1, model: a800}]\nswitches: [{id: s, kind: leaf}]\n",
        "nodes: [{id: n1, model: a800}]\nlinks: [{a: n1/nic0, b: s, kind: access}]\n",
        "nodes: [{id: 'n1:2', model: a800}]\n",
    ],
)
def test_the_fabric_schema_rejects(text: str) -> None:
    assert not FABRIC.is_valid(yaml.safe_load(text))


# -- built from the same tables as the loaders -------------------------------------------------


def test_scenario_schema_uses_the_loader_tables() -> None:
    defs = scenario_schema()["$defs"]
    assert tuple(defs["scenario"]["properties"]) == SCENARIO_KEYS
    assert tuple(defs["fabric"]["properties"]) == FABRIC_KEYS
    assert tuple(defs["scenario"]["properties"]["checkpoint"]["properties"]) == CHECKPOINT_KEYS
    step_keys = {k for variant in defs["step"]["oneOf"] for k in variant["properties"]}
    assert step_keys == set(STEP_KEYS)
    assert set(defs["fault"]["properties"]) == set(FAULT_KINDS)
    assert tuple(defs["degrade"]["properties"]) == DEGRADE_KEYS
    assert tuple(defs["selector"]["anyOf"][2]["properties"]) == SELECTOR_KEYS
    assert set(defs["expect"]["properties"]) == set(OBSERVATIONS)
    job_keys = {k for v in defs["job"]["anyOf"][1:] for k in v["properties"]}
    assert job_keys == set(JOB_KEYS)
    for name, d in OBSERVATIONS.items():
        entry = defs["expect"]["properties"][name]
        variants = entry.get("anyOf", [entry])
        objects = [v for v in variants if v.get("type") == "object"]
        if d.args:
            assert set(objects[0]["properties"]) == {*d.args, "is"}


def test_fabric_schema_uses_the_loader_tables() -> None:
    generator_form, explicit_form = fabric_schema()["oneOf"]
    assert set(generator_form["properties"]) == set(GENERATOR_FORM_KEYS)
    assert set(explicit_form["properties"]) == set(EXPLICIT_FORM_KEYS)
    props = explicit_form["properties"]
    assert tuple(props["nodes"]["items"]["properties"]) == NODE_KEYS
    assert tuple(props["switches"]["items"]["properties"]) == SWITCH_KEYS
    assert tuple(props["links"]["items"]["properties"]) == LINK_KEYS
