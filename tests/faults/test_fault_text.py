"""Fault text (the ``--change`` syntax): every form means what the state-file mapping means."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.state_file import load_state_file
from harness.faults.text import parse_faults
from harness.faults.text import resolve_faults
from harness.faults.text import split_parts
from harness.planning.risk import assess

CABLE = "su01/leaf-r0:21--spine-01:1"


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


@pytest.mark.parametrize(
    ("text", "mapping"),
    [
        ("drain spine-05,spine-06", {"drain": ["spine-05", "spine-06"]}),
        ("drain spine-05 spine-06", {"drain": ["spine-05", "spine-06"]}),
        ("drain spine-1*", {"drain": "spine-1*"}),
        ("drain {tier: spine, all-but: 1}", {"drain": {"tier": "spine", "all-but": 1}}),
        ("drain: {tier: spine, all-but: 1}", {"drain": {"tier": "spine", "all-but": 1}}),
        ("{drain: {tier: spine, all-but: 1}}", {"drain": {"tier": "spine", "all-but": 1}}),
        ("kill [su02/leaf-r1, spine-01]", {"kill": ["su02/leaf-r1", "spine-01"]}),
        (f"cut {CABLE}", {"cut": CABLE}),
        ("optic spine-03:7", {"optic": "spine-03:7"}),
        (f"degrade {CABLE} 0.25", {"degrade": {"target": CABLE, "fraction": 0.25}}),
        (f"degrade {CABLE} 25%", {"degrade": {"target": CABLE, "fraction": 0.25}}),
        (f"degrade {CABLE} fraction=0.25", {"degrade": {"target": CABLE, "fraction": 0.25}}),
        (f"degrade {CABLE} lanes=2", {"degrade": {"target": CABLE, "lanes": 2}}),
        (f"degrade {CABLE} 2 lanes", {"degrade": {"target": CABLE, "lanes": 2}}),
        ("degrade {tier: leaf-spine, su: 1} 0.5",
         {"degrade": {"target": {"tier": "leaf-spine", "su": 1}, "fraction": 0.5}}),
        (f"degrade: {{target: {CABLE}, lanes: 1}}", {"degrade": {"target": CABLE, "lanes": 1}}),
        ("bond-member su01/node01/snic0", {"bond-member": "su01/node01/snic0"}),
    ],
)  # fmt: skip
def test_every_form_is_the_state_file_mapping(text: str, mapping: dict[str, object]) -> None:
    assert parse_faults(text) == (Fault.parse(mapping),)


def test_parts_and_yaml_lists(tmp_path: Path) -> None:
    faults = parse_faults("kill su02/leaf-r1; drain: {tier: spine, all-but: 18};[{cut: x}]")
    assert faults == (
        Fault.parse({"kill": "su02/leaf-r1"}),
        Fault.parse({"drain": {"tier": "spine", "all-but": 18}}),
        Fault.parse({"cut": "x"}),
    )
    block = "- kill: su02/leaf-r1\n- degrade: {target: x, fraction: 0.5}\n"
    path = tmp_path / "faults.yaml"
    path.write_text(block, encoding="utf-8")
    assert parse_faults(block) == parse_faults(f"@{path}") == tuple(load_state_file(path))
    origins = [f.origin for f in parse_faults(f"@{path}")]
    assert [(o.path, o.line) for o in origins if o is not None] == [(str(path), 1), (str(path), 2)]


def test_split_parts_keeps_brackets_and_quotes() -> None:
    assert split_parts("a {x: 1; y}; b [1;2] ; 'c;d'") == ["a {x: 1; y}", "b [1;2]", "'c;d'"]
    assert split_parts(" ; ; ") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "--change is empty"),
        ("drain", "--change: 'drain' names no target"),
        ("dran spine-05", "--change: unknown fault kind 'dran'; did you mean 'drain'?"),
        ("reboot", "--change: unknown fault kind 'reboot' (known: kill, drain, cut"),
        ("degrade x", "--change: 'degrade x': degrade needs how much is left"),
        ("degrade x lanes=two", "--change: degrade lanes must be a whole number >= 1, got 'two'"),
        ("degrade x 0", "--change: degrade fraction must be a number between 0 and 1"),
        ("drain {tier: spine", "--change:1:19: YAML syntax error"),
        ("- kill: a\n- kil: b", "--change:2:3: unknown fault kind 'kil'; did you mean 'kill'?"),
        ("kill: a\nkill: b", "--change:2:1: [kill] duplicate key 'kill' (also on line 1)"),
        ("kill a; [x]", "--change:1:2: [[x]] an inject step takes exactly one fault"),
        ("+++", "--change: cannot read '+++': write KIND TARGETS"),
    ],
)
def test_problems_name_the_input(text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_faults(text)
    assert message in str(err.value)


def test_every_problem_at_once(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_faults("dran a; kill; degrade b")
    assert len(err.value.problems) == 3
    path = tmp_path / "empty.yaml"
    path.write_text("[]\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"empty\.yaml:1:1: the file lists no fault"):
        parse_faults(f"@{path}")


def test_resolve_locates_what_matches_nothing(tmp_path: Path) -> None:
    path = tmp_path / "change.yaml"
    path.write_text("- drain: spine-01\n- drain: spine-99\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        resolve_faults(seed(), f"@{path}; kill su99/leaf-r0", "--change")
    assert [str(p).split(";")[0] for p in err.value.problems] == [
        f"{path}:2:3: selector 'spine-99' matches no elements",
        "--change: [kill su99/leaf-r0] selector 'su99/leaf-r0' matches no elements",
    ]
    applied = resolve_faults(seed(), "drain spine-05,spine-06", "--change")
    assert [a.describe(seed()) for a in applied] == ["drained spine-05, spine-06"]
    # parsed faults and resolved ones pass through
    assert (
        resolve_faults(seed(), [Fault.parse({"drain": "spine-05"}), *applied], "x")[1:] == applied
    )


def test_assess_takes_text_or_parsed_objects() -> None:
    """The README's call: strings for the change, the budget and the state."""
    fabric = seed()
    jobs = resolve_jobs([JobSpec(per_su=True)], fabric)
    text = assess(fabric, jobs, "drain spine-05,spine-06", "jobs_lost=0", margin=False)
    parsed = assess(fabric, jobs, parse_faults("drain spine-05,spine-06"),
                    text.rules, margin=False)  # fmt: skip
    assert text.ok
    assert parsed.ok
    assert (text.after, text.added, text.change) == (parsed.after, parsed.added, parsed.change)
    with pytest.raises(ScenarioError, match="--state: selector 'su99/x' matches no"):
        assess(fabric, jobs, "drain spine-05", state="kill su99/x")
    with pytest.raises(ScenarioError, match="the budget is empty"):
        assess(fabric, jobs, "drain spine-05", ())
