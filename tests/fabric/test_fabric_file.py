"""Fabric files: generator/preset form and explicit form (harness.fabric.fabric_file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import FabricDesignError
from harness.errors import ScenarioError
from harness.fabric.fabric_file import load_fabric_file
from harness.fabric.model import CABLE_KINDS
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.resolve import FabricRef
from harness.faults.fault import Fault
from harness.observations.expect import Expect
from harness.run.scenario import run_scenario
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import Scenario

ROOT = Path(__file__).resolve().parents[2]
FABRICS = ROOT / "fabrics"

TINY = """\
name: tiny
nodes:
  - {id: n1, model: a800, overrides: {rails: 2, storage_nics: 0}}
  - {id: n2, model: a800, overrides: {rails: 2, storage_nics: 0}}
switches:
  - {id: leaf-r0, kind: leaf, rail: 0, ports: 4}
  - {id: leaf-r1, kind: leaf, rail: 1, ports: 4}
  - {id: spine1, kind: spine, ports: 4}
links:
  - {a: n1/nic0, b: leaf-r0, kind: access, gbps: 200}
  - {a: leaf-r0, b: n2/nic0, kind: access, gbps: 200}
  - {a: n1/nic1, b: leaf-r1, kind: access, gbps: 200}
  - {a: n2/nic1, b: leaf-r1, kind: access, gbps: 200}
  - {a: leaf-r0, b: spine1, kind: leaf-spine, gbps: 400, count: 2}
  - {a: spine1, b: leaf-r1, kind: leaf-spine, gbps: 400, b_port: 3, count: 2}
"""


def write(tmp_path: Path, text: str, name: str = "fabric.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(
    tmp_path: Path, text: str, overrides: dict[str, object] | None = None
) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_fabric_file(write(tmp_path, text), overrides)
    return info.value


# -- the example files -------------------------------------------------------------------


def test_lab_2su_is_the_generator_form() -> None:
    f = load_fabric_file(FABRICS / "lab-2su.yaml")
    s = f.summary()
    assert f.name == "lab-2su"
    assert (s["sus"], s["nodes"], s["leaves"], s["spines"], s["tiers"]) == (2, 8, 8, 2, 2)


def test_scenario_params_override_the_file() -> None:
    f = load_fabric_file(FABRICS / "lab-2su.yaml", {"spines": 1, "storage": False})
    assert f.summary()["spines"] == 1
    assert f.summary()["storage_switches"] == 0


def test_tiny_explicit_has_two_servers_two_leaves_one_spine() -> None:
    f = load_fabric_file(FABRICS / "tiny-explicit.yaml")
    s = f.summary()
    assert (s["nodes"], s["leaves"], s["spines"], s["rails"], s["tiers"]) == (2, 2, 1, 2, 2)
    assert s["access_cables"] == 4
    assert s["leaf_spine_cables"] == 4
    assert f.params == (("file", "fabrics/tiny-explicit.yaml"),) or f.params[0][0] == "file"


def test_a_scenario_runs_on_an_explicit_fabric() -> None:
    ref = FabricRef(file=FABRICS / "tiny-explicit.yaml")
    scenario = Scenario(
        name="tiny",
        description="kill the only spine",
        fabric=ref,
        steps=(
            InjectStep(Fault.parse({"kill": "spine1"})),
            ExpectStep(
                (
                    Expectation("all_gpus_connected", Expect.parse(True), (("pxn", True),)),
                    Expectation("rails_connected", Expect.parse([0, 1])),
                    Expectation("elements_down", Expect.parse(1), (("kind", "spine"),)),
                )
            ),
        ),
    )
    result = run_scenario(scenario)
    assert result.passed, result.to_dict()


# -- explicit form ---------------------------------------------------------------------------


def test_explicit_links_are_turned_lower_tier_first_and_get_ports(tmp_path: Path) -> None:
    f = load_fabric_file(write(tmp_path, TINY))
    cables = [f.link_id(i) for i in f.links_of_kind(*CABLE_KINDS).tolist()]
    assert cables == [
        "n1/nic0:1--leaf-r0:1",
        "n2/nic0:1--leaf-r0:2",
        "n1/nic1:1--leaf-r1:1",
        "n2/nic1:1--leaf-r1:2",
        "leaf-r0:3--spine1:1",
        "leaf-r0:4--spine1:2",
        "leaf-r1:3--spine1:3",
        "leaf-r1:4--spine1:4",
    ]
    assert f.name == "tiny"
    leaf = f.element("leaf-r1")
    assert (leaf.kind, leaf.rail, leaf.su, leaf.ports) == (Kind.LEAF, 1, 1, 4)
    n2 = f.element("n2")
    assert (n2.su, n2.node) == (1, 2)
    assert int(f.link_capacity[f.links_of_kind(LinkKind.LEAF_SPINE)[0]]) == 400
    assert set(f.link_lanes[f.links_of_kind(*CABLE_KINDS)].tolist()) == {4}


def test_the_name_defaults_to_the_file_name(tmp_path: Path) -> None:
    f = load_fabric_file(write(tmp_path, TINY.replace("name: tiny\n", ""), "My Lab.yaml"))
    assert f.name == "my-lab"


def test_tiers_follow_the_core_switches(tmp_path: Path) -> None:
    text = TINY.replace("kind: spine, ports: 4}", "kind: spine, ports: 8}").replace(
        "ports: 8}\nlinks:", "ports: 8}\n  - {id: core1, kind: core, ports: 4}\nlinks:"
    )
    text += "  - {a: spine1, b: core1, kind: spine-core, gbps: 400}\n"
    assert load_fabric_file(write(tmp_path, text)).tiers == 3
    err = error_of(tmp_path, "tiers: 2\n" + text)
    assert "tiers: 2 but the file has core switches" in str(err)


def test_storage_links(tmp_path: Path) -> None:
    text = TINY.replace("storage_nics: 0", "storage_nics: 1").replace(
        "links:\n",
        "  - {id: ssw, kind: storage-switch, ports: 4}\n  - {id: store, kind: storage}\nlinks:\n"
        "  - {a: n1/stor0, b: ssw, kind: storage, gbps: 25}\n"
        "  - {a: store, b: ssw, kind: storage, gbps: 100}\n",
    )
    f = load_fabric_file(write(tmp_path, text))
    assert f.summary()["storage_switches"] == 1
    assert "ssw:2--store:1" in f.link_ids
    assert f.link_lanes[f.link_index["ssw:2--store:1"]] == 1


@pytest.mark.parametrize(
    ("before", "after", "message", "line"),
    [
        (
            "name: tiny",
            "nmae: tiny",
            "unknown key 'nmae' in a fabric file; did you mean 'name'?",
            1,
        ),
        ("name: tiny", "name: Tiny Lab", "fabric name 'Tiny Lab' is not a valid name", 1),
        ("name: tiny", "name: tiny\ndescription: [1]", "description must be plain words", 2),
        (
            "name: tiny",
            "name: tiny\nparams: {sus: 1}",
            "'params' belongs to generator fabric files",
            2,
        ),
        (
            "model: a800, overrides",
            "model: a8000, overrides",
            "unknown node model 'a8000'; did you mean 'a800'?",
            3,
        ),
        (
            "{id: n1, model: a800,",
            "{id: n1, modle: a800,",
            "unknown key 'modle' in a node; did you mean 'model'?",
            3,
        ),
        (
            "{rails: 2, storage_nics: 0}}\n  - {id: n2",
            "{rials: 2}}\n  - {id: n2",
            "did you mean 'rails'?",
            3,
        ),
        (
            "{rails: 2, storage_nics: 0}}\n  - {id: n2",
            "{rails: two}}\n  - {id: n2",
            "node override 'rails' must be a whole number",
            3,
        ),
        (
            "{rails: 2, storage_nics: 0}}\n  - {id: n2",
            "{gpus: 7}}\n  - {id: n2",
            "do not spread evenly",
            3,
        ),
        (
            "{rails: 2, storage_nics: 0}}\n  - {id: n2",
            "{pcie_switches: 0}}\n  - {id: n2",
            "node parameter 'pcie_switches' must be >= 1, got 0",
            3,
        ),
        ("id: n2,", "id: n1,", "id 'n1' is already used on line 3", 4),
        ("id: n2,", "id: 'n2:1',", "id 'n2:1' is not valid", 4),
        (
            "kind: leaf, rail: 0",
            "kind: leef, rail: 0",
            "unknown switch kind 'leef'; did you mean 'leaf'?",
            6,
        ),
        (
            "{id: spine1, kind: spine, ports: 4}",
            "{id: spine1, kind: spine}",
            "a switch needs ports:",
            8,
        ),
        ("rail: 0, ports: 4", "rail: 0, ports: 0", "ports must be >= 1, got 0", 6),
        (
            "{a: n1/nic0, b: leaf-r0",
            "{a: n1/nic9, b: leaf-r0",
            "no element 'n1/nic9'; did you mean 'n1/nic",
            10,
        ),
        ("{a: n1/nic0, b: leaf-r0", "{a: n1, b: leaf-r0", "use the NIC of n1, e.g. n1/nic0", 10),
        (
            "{a: n1/nic0, b: leaf-r0",
            "{a: n1/gpu0, b: leaf-r0",
            "an access link joins a nic and a leaf",
            10,
        ),
        (
            "kind: access, gbps: 200}\n  - {a: leaf-r0",
            "kind: acess, gbps: 200}\n  - {a: leaf-r0",
            "unknown link kind 'acess'; did you mean 'access'?",
            10,
        ),
        (
            "kind: access, gbps: 200}\n  - {a: leaf-r0",
            "kind: access, gbps: fast}\n  - {a: leaf-r0",
            "gbps (Gb/s per direction) must be a number, not a string 'fast'",
            10,
        ),
        (
            "kind: access, gbps: 200}\n  - {a: leaf-r0",
            "kind: access}\n  - {a: leaf-r0",
            "a link needs gbps:",
            10,
        ),
        ("gbps: 400, count: 2}", "gbps: 400, count: 0}", "count must be >= 1, got 0", 14),
        ("nodes:\n", "nodes: []\nxnodes:\n", "nodes must be a non-empty list", 2),
    ],
)
def test_input_mistakes_are_located(
    tmp_path: Path, before: str, after: str, message: str, line: int
) -> None:
    assert before in TINY
    err = error_of(tmp_path, TINY.replace(before, after, 1))
    assert not isinstance(err, FabricDesignError)
    assert message in str(err)
    assert f"fabric.yaml:{line}:" in str(err)


def test_every_problem_of_a_fabric_file_is_reported(tmp_path: Path) -> None:
    text = (
        TINY.replace("name: tiny", "nmae: tiny")
        .replace("kind: leaf, rail: 1", "kind: leef, rail: 1")
        .replace("{a: n1/nic1", "{a: n1/nic7")
    )
    err = error_of(tmp_path, text)
    assert [p.line for p in err.problems] == [1, 7, 12]


@pytest.mark.parametrize(
    ("before", "after", "message", "line"),
    [
        (
            "gbps: 400, count: 2}",
            "gbps: 400, count: 3}",
            "leaf-r0 needs port 5 but has only 4 ports",
            14,
        ),
        (
            "b: n2/nic0, kind: access, gbps: 200}",
            "b: n2/nic0, kind: access, gbps: 200, a_port: 1}",
            "port leaf-r0:1 is taken by the cable on line 10",
            11,
        ),
        (
            "{a: n1/nic0, b: leaf-r0, kind: access, gbps: 200}",
            "{a: n1/nic0, b: leaf-r0, kind: access, gbps: 200, a_port: 2}",
            "n1/nic0 needs port 2 but has only 1 ports",
            10,
        ),
    ],
)
def test_impossible_designs_are_fabric_design_errors(
    tmp_path: Path, before: str, after: str, message: str, line: int
) -> None:
    assert before in TINY
    with pytest.raises(FabricDesignError) as info:
        load_fabric_file(write(tmp_path, TINY.replace(before, after, 1)))
    assert message in str(info.value)
    assert f"fabric.yaml:{line}:" in str(info.value)


def test_an_explicit_file_takes_no_params(tmp_path: Path) -> None:
    err = error_of(tmp_path, TINY, {"sus": 2})
    assert "explicit, so it takes no params" in str(err)


# -- generator and preset form -------------------------------------------------------------


GEN = """\
name: lab
generator: two-tier
params:
  sus: 2
  nodes_per_su: 2
  spines: 2
  leaf_radix: 8
  storage: false
"""


def test_generator_form(tmp_path: Path) -> None:
    f = load_fabric_file(write(tmp_path, GEN))
    assert (f.name, f.summary()["nodes"]) == ("lab", 4)


def test_preset_form(tmp_path: Path) -> None:
    f = load_fabric_file(write(tmp_path, "name: small-seed\npreset: seed-a800\nparams: {sus: 2}\n"))
    assert (f.name, f.summary()["sus"], f.summary()["spines"]) == ("small-seed", 2, 20)


@pytest.mark.parametrize(
    ("before", "after", "message", "line"),
    [
        (
            "generator: two-tier",
            "generator: two_tier",
            "unknown generator 'two_tier'; did you mean 'two-tier'?",
            2,
        ),
        (
            "generator: two-tier",
            "preset: seed-a80",
            "unknown fabric preset 'seed-a80'; did you mean 'seed-a800'?",
            2,
        ),
        (
            "generator: two-tier",
            "generator: two-tier\npreset: seed-a800",
            "either generator: or preset:",
            3,
        ),
        ("  spines: 2\n", "  spine: 2\n", "no parameter 'spine'; did you mean 'spines'?", 6),
        ("  spines: 2\n", "", "needs parameter(s) spines", 3),
        (
            "  sus: 2\n",
            "  sus: two\n",
            "parameter 'sus' of generator two-tier must be a whole number",
            4,
        ),
        ("name: lab\n", "name: lab\nnodes: []\n", "'nodes' belongs to explicit fabric files", 2),
        ("params:\n", "params: 3\nx:\n", "params must be a mapping", 3),
        (
            "  sus: 2\n",
            "  sus: 0\n",
            "parameter 'sus' of generator two-tier must be a finite number > 0, got 0",
            4,
        ),
    ],
)
def test_generator_mistakes_are_located(
    tmp_path: Path, before: str, after: str, message: str, line: int
) -> None:
    assert before in GEN
    err = error_of(tmp_path, GEN.replace(before, after, 1))
    assert message in str(err)
    assert f"fabric.yaml:{line}:" in str(err)


def test_bad_scenario_params_are_reported_by_key(tmp_path: Path) -> None:
    err = error_of(tmp_path, GEN, {"spine": 3, "sus": "x"})
    keys = sorted(p.key for p in err.problems)
    assert keys == ["params.spine", "params.sus"]
    assert "did you mean 'spines'?" in str(err)


def test_scenario_params_may_complete_the_file(tmp_path: Path) -> None:
    f = load_fabric_file(write(tmp_path, GEN.replace("  spines: 2\n", "")), {"spines": 1})
    assert f.summary()["spines"] == 1


def test_a_generator_design_error_points_at_the_file(tmp_path: Path) -> None:
    with pytest.raises(FabricDesignError) as info:
        load_fabric_file(write(tmp_path, GEN.replace("sus: 2", "sus: 9")))
    assert "two-tier fabric past its limit" in str(info.value)
    assert "fabric.yaml:2:" in str(info.value)


# -- whole-file problems ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty fabric file"),
        ("[1, 2]\n", "a fabric file must be a mapping"),
        ("name: x\n", "needs generator: (or preset:) with params:, or explicit"),
        ("name: [\n", "YAML syntax error"),
    ],
)
def test_whole_file_problems(tmp_path: Path, text: str, message: str) -> None:
    assert message in str(error_of(tmp_path, text))


def test_a_missing_fabric_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="file not found"):
        load_fabric_file(tmp_path / "nope.yaml")
