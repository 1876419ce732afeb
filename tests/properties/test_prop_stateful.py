"""The stateful fault search (harness.search.stateful) and its reproducer scenario files."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import ClassVar

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant

from harness.errors import InvariantViolation
from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.resolve import build_fabric
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.run.scenario import run_scenario
from harness.scenario.load import load_text
from harness.scenario.model import FabricRef
from harness.scenario.model import InjectStep
from harness.search import strategies as hst
from harness.search.reproducer import ENV_SAVE
from harness.search.reproducer import expectation_raw
from harness.search.reproducer import fabric_ref
from harness.search.reproducer import scenario_yaml
from harness.search.stateful import FabricStateMachine
from harness.search.stateful import run

# a seed-like fabric, small: 2 SUs x 3 A800 nodes, 4 rails, 2 spines
SMALL_SEED = FabricRef(
    generator="two-tier",
    params=(("sus", 2), ("nodes_per_su", 3), ("spines", 2), ("leaf_radix", 8), ("storage", False)),
)
SMALL_HPN = FabricRef(
    generator="dual-tor",
    params=(("segments", 2), ("hosts_per_segment", 2), ("spines_per_plane", 2),
            ("leaf_radix", 8), ("spine_radix", 64), ("storage", False)),
)  # fmt: skip
# derandomized: the deliberately false invariants are found the same way on every run
QUICK = settings(
    max_examples=40,
    stateful_step_count=4,
    database=None,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def reproducer_of(err: BaseException) -> str:
    notes = getattr(err, "__notes__", [])
    found = [n for n in notes if n.startswith("Reproducer scenario")]
    assert found, notes
    return found[-1].split("\n", 1)[1]


def inject_ids(doc: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for step in doc["steps"]:
        if "inject" in step:
            ((_, target),) = step["inject"].items()
            ids.extend([target] if isinstance(target, str) else target["ids"])
    return ids


class NoJobEverLost(FabricStateMachine):
    """Deliberately false: killing a server or a leaf loses its SU's job."""

    fabric = SMALL_SEED
    jobs = ("per-su",)
    fault_kinds = ("kill", "cut")

    @invariant()
    def no_job_lost(self) -> None:
        self.expect("jobs_lost", 0)


def test_a_false_invariant_is_found_and_printed_as_a_scenario(tmp_path: Path) -> None:
    with pytest.raises(InvariantViolation, match=r"^jobs_lost: expected 0, got 1 \(su0") as info:
        run(NoJobEverLost, settings=QUICK, save_reproducer=tmp_path)
    text = reproducer_of(info.value)
    assert text.startswith("# Reproducer for ")
    doc = yaml.safe_load(text)
    assert doc["name"] == "no-job-ever-lost.no-job-lost"
    assert "NoJobEverLost.no_job_lost fails after" in doc["description"]
    assert doc["fabric"] == {
        "generator": "two-tier",
        "params": {"sus": 2, "nodes_per_su": 3, "spines": 2, "leaf_radix": 8, "storage": False},
    }
    assert doc["jobs"] == [{"per-su": True}]
    assert doc["tags"] == ["reproducer", "hypothesis"]
    assert doc["steps"][-1] == {"expect": {"jobs_lost": 0}}
    ids = inject_ids(doc)
    assert len(doc["steps"]) == 2  # shrunk to one fault
    fabric = build_fabric(SMALL_SEED)
    assert all(i in fabric.index or i in fabric.link_index for i in ids)
    assert all(i in text for i in ids)
    # written to the directory, identical to what was printed
    (saved,) = tmp_path.iterdir()
    assert saved.name == "no-job-ever-lost.no-job-lost.yaml"
    assert saved.read_text(encoding="utf-8") == text


def test_the_reproducer_is_a_scenario_that_fails_the_same_way(tmp_path: Path) -> None:
    with pytest.raises(InvariantViolation) as info:
        run(NoJobEverLost, settings=QUICK, save_reproducer=tmp_path)
    (scenario,) = load_text(reproducer_of(info.value))
    result = run_scenario(scenario)
    assert result.status == "failed"
    (failure,) = result.failures
    assert (failure.observation, failure.expected, failure.observed) == ("jobs_lost", "0", 1)


def test_the_environment_variable_names_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SAVE, str(tmp_path / "repro"))
    with pytest.raises(InvariantViolation):
        run(NoJobEverLost, settings=QUICK)
    saved = list((tmp_path / "repro").iterdir())
    assert [p.suffix for p in saved] == [".yaml"]
    assert yaml.safe_load(saved[0].read_text(encoding="utf-8"))["steps"][-1] == {
        "expect": {"jobs_lost": 0}
    }


class GpusStayConnected(FabricStateMachine):
    """Deliberately false, declared without code: a dead leaf cuts its NICs off."""

    fabric = SMALL_SEED
    fault_kinds = ("kill",)
    expectations: ClassVar[Mapping[str, Any]] = {
        "all_gpus_connected": True,
        "leaf_uplink_ratio": {"is": ">= 0"},
    }


def test_expectations_mapping_is_checked_after_every_step() -> None:
    with pytest.raises(InvariantViolation, match="all_gpus_connected: expected True") as info:
        run(GpusStayConnected, settings=QUICK)
    doc = yaml.safe_load(reproducer_of(info.value))
    assert doc["steps"][-1] == {"expect": {"all_gpus_connected": True}}
    assert "jobs" not in doc


class UplinksHold(FabricStateMachine):
    """Deliberately false, with arguments: cutting uplinks of one leaf."""

    fabric = FabricRef(
        generator="two-tier",
        params=(("sus", 1), ("nodes_per_su", 2), ("spines", 2), ("leaf_radix", 8),
                ("storage", False)),
    )  # fmt: skip
    fault_kinds = ("cut",)
    correlated = False

    @invariant()
    def leaf_keeps_uplinks(self) -> None:
        self.expect("leaf_uplink_ratio", ">= 0.75", leaf="su01/leaf-r0")


def test_an_observation_with_arguments_is_written_with_them() -> None:
    match = r"leaf_uplink_ratio\(leaf='su01/leaf-r0'\): expected >= 0.75, got 0.5"
    with pytest.raises(InvariantViolation, match=match) as info:
        run(UplinksHold, settings=settings(QUICK, max_examples=200))
    text = reproducer_of(info.value)
    doc = yaml.safe_load(text)
    assert doc["steps"][-1] == {
        "expect": {"leaf_uplink_ratio": {"leaf": "su01/leaf-r0", "is": ">= 0.75"}}
    }
    assert inject_ids(doc)[0].startswith("su01/leaf-r0:")
    (scenario,) = load_text(text)
    (failure,) = run_scenario(scenario).failures
    assert (failure.expected, failure.observed) == (">= 0.75", 0.5)


class PlainAssert(FabricStateMachine):
    """Deliberately false, with a plain assert on the analysis."""

    fabric = SMALL_SEED
    jobs = ("per-su",)
    fault_kinds = ("kill",)

    @invariant()
    def nothing_lost(self) -> None:
        assert not self.analysis().jobs_lost(), "a job was lost"


def test_a_plain_assert_falls_back_to_differences_from_healthy() -> None:
    with pytest.raises(AssertionError, match="a job was lost") as info:
        run(PlainAssert, settings=QUICK)
    doc = yaml.safe_load(reproducer_of(info.value))
    expect = doc["steps"][-1]["expect"]
    assert expect["jobs_lost"] == 0
    assert "A plain assertion failed (a job was lost)" in doc["description"]


class DualTorKeepsJobs(FabricStateMachine):
    """True: on dual-ToR with bonded NIC ports, one cut cable never loses a job."""

    fabric = SMALL_HPN
    jobs = ("per-su", {"name": "both", "nodes": "*"})
    fault_kinds = ("cut", "optic")
    correlated = False
    max_faults = 1

    @invariant()
    def no_job_lost(self) -> None:
        self.expect("jobs_lost", 0)
        assert self.observe("jobs_survived") == 3

    @invariant()
    def half_a_nic_at_worst(self) -> None:
        self.expect("node_nic_ratio", ">= 0.9375")


def test_a_true_invariant_holds() -> None:
    run(DualTorKeepsJobs, settings=QUICK)


TestDualTorKeepsJobs = DualTorKeepsJobs.TestCase
TestDualTorKeepsJobs.settings = QUICK


class PresetMachine(FabricStateMachine):
    fabric = "superpod-h100"
    jobs = ("per-su",)
    fault_kinds = ("kill",)
    max_faults = 1

    @invariant()
    def state_is_consistent(self) -> None:
        a = self.analysis()
        assert len(a.jobs_lost()) + self.observe("jobs_survived") == 4
        assert self.healthy.jobs_lost() == []


def test_a_preset_by_name() -> None:
    run(PresetMachine, settings=settings(QUICK, max_examples=5, stateful_step_count=2))


class HandBuilt(FabricStateMachine):
    """A fabric built by hand: the search works, but no file can name the fabric."""

    fabric = two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8, storage=False)
    jobs = ("per-su",)
    fault_kinds = ("kill",)
    expectations: ClassVar[Mapping[str, Any]] = {"jobs_lost": 0}


def test_a_hand_built_fabric_gets_no_file(tmp_path: Path) -> None:
    with pytest.raises(InvariantViolation) as info:
        run(HandBuilt, settings=QUICK, save_reproducer=tmp_path)
    text = reproducer_of(info.value)
    assert text.startswith("# No reproducer file: Found by hypothesis: HandBuilt.")
    assert "set `fabric` to a preset name or a FabricRef" in text
    assert list(tmp_path.iterdir()) == []


def test_a_fabric_needs_naming() -> None:
    class Nameless(FabricStateMachine):
        pass

    with pytest.raises(ScenarioError, match="Nameless needs a fabric: set `fabric = "):
        Nameless()


def test_an_unknown_built_fabric_cannot_be_written_back() -> None:
    copy = dataclasses.replace(build_fabric(SMALL_SEED))  # same design, not remembered
    with pytest.raises(ScenarioError, match="cannot tell how fabric 'two-tier' was built"):
        fabric_ref(copy)
    assert fabric_ref(preset("seed-a800")) == FabricRef(preset="seed-a800")


# -- reproducer round trip: any fault set, written and read back, is the same fault state --------


def state_of(f: Fabric, faults: list[Any]) -> FaultState:
    s = FaultState.healthy(f)
    for fault in faults:
        s = s.inject(fault)
    return s


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_scenario_yaml_round_trip(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(storage=True), label="fabric")
    kinds = ("kill", "drain", "cut", "optic", "degrade", "bond-member")
    faults = data.draw(hst.fault_sets(f, kinds=kinds, max_size=4), label="faults")
    applied = [fault.resolve(f) for fault in faults]
    text = scenario_yaml(
        name="Round Trip!",
        description="Every fault\nwritten back.",
        fabric=f,
        faults=[*applied[:2], *faults[2:]],  # applied faults and plain faults both
        expect={"jobs_lost": 0, "job_busbw_ratio": expectation_raw("x", ">= 0.5", {"job": "su01"})},
        jobs=[JobSpec(per_su=True)],
    )
    (scenario,) = load_text(text)
    assert scenario.name == "round-trip"
    steps = [s for s in scenario.steps if isinstance(s, InjectStep)]
    assert len(steps) == len(faults)
    again = build_fabric(scenario.fabric)
    ours, theirs = state_of(f, faults), state_of(again, [s.fault for s in steps])
    assert again.ids == f.ids
    assert np.array_equal(ours.element_up, theirs.element_up)
    assert np.array_equal(ours.link_capacity, theirs.link_capacity)


def test_scenario_yaml_keeps_selectors_of_plain_faults() -> None:
    text = scenario_yaml(
        name="spines",
        description="one spine left",
        fabric="seed-a800",
        faults=[
            Fault.parse({"kill": {"tier": "spine", "all-but": 1}}),
            Fault.parse({"optic": {"between": ["su01/node01", "su01/leaf-r0"], "end": "upper"}}),
            Fault.parse({"cut": {"tier": "leaf-spine", "random": {"count": 3, "seed": 7}}}),
            Fault.parse({"degrade": {"target": "su01/node01/gpu0--su01/node01/nvsw0", "lanes": 1}}),
        ],
        expect={"leaf_uplink_ratio": 0.05},
    )
    doc = yaml.safe_load(text)
    assert doc["fabric"] == {"preset": "seed-a800"}
    assert [s.get("inject") for s in doc["steps"][:4]] == [
        {"kill": {"tier": "spine", "all-but": 1}},
        {"optic": {"between": ["su01/node01", "su01/leaf-r0"], "end": "upper"}},
        {"cut": {"tier": "leaf-spine", "random": {"count": 3, "seed": 7}}},
        {"degrade": {"target": "su01/node01/gpu0--su01/node01/nvsw0", "lanes": 1}},
    ]
    (scenario,) = load_text(text)
    assert len(scenario.steps) == 5
    with pytest.raises(ScenarioError, match="needs at least one expectation"):
        scenario_yaml(name="x", description="x", fabric="seed-a800", faults=[], expect={})
