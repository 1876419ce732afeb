"""The scenario loader (harness.scenario.load): YAML -> frozen dataclasses, located errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.faults.fault import FaultKind
from harness.inputs.yaml import key_text
from harness.inputs.yaml import read_yaml
from harness.run.scenario import run_scenario
from harness.scenario.discover import discover
from harness.scenario.load import SCENARIO_KEYS
from harness.scenario.load import load_file
from harness.scenario.load import load_paths
from harness.scenario.load import load_text
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import RestoreStep

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "bad_scenarios"
BAD_FILES = sorted(BAD.glob("*.yaml"))

GOOD = """\
name: one-spine-left
description: >
  Drain every spine but one; every job survives on one spine.
tags: [seed, connectivity]
backends: [model]
fabric:
  preset: seed-a800
  params: {sus: 2}
jobs:
  - per-su: true
  - name: big
    nodes: "su0[1-2]/*"
    failover: port
    timeout: 5s
checkpoint: {size_gb: 112, interval_s: 3600}
steps:
  - inject: {drain: {tier: spine, all-but: 1}}
    as: spines
  - inject: {degrade: {target: {tier: leaf-spine, su: 1}, fraction: 0.5}}
  - expect:
      all_gpus_connected: true
      jobs_lost: 0
      min_job_busbw_ratio: ">= 0.01"
      job_busbw_ratio: {job: big, is: "0.5..1"}
      rails_connected: [0, 1, 2, 3]
      path_class: {between: [su01/node01/gpu0, su02/node01/gpu0], pxn: true, is: cross-su}
      checkpoint_background_s: "< 100000"
  - restore: spines
  - restore: last
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems_of(text: str, tmp_path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, text))
    return info.value


# -- good files --------------------------------------------------------------------


def test_a_full_scenario_loads_into_frozen_dataclasses(tmp_path: Path) -> None:
    (s,) = load_file(write(tmp_path, GOOD))
    assert s.name == "one-spine-left"
    assert s.description.startswith("Drain every spine")
    assert s.tags == ("seed", "connectivity")
    assert s.backends == ("model",)
    assert s.fabric.preset == "seed-a800"
    assert s.fabric.params == (("sus", 2),)
    assert [j.per_su for j in s.jobs] == [True, False]
    assert s.jobs[1].failover == "port"
    assert s.jobs[1].timeout == 5.0
    assert round(s.jobs[0].timeout, 1) == 34.4  # NCCL's IB retry default
    assert s.checkpoint is not None
    assert s.checkpoint.size_gb == 112.0
    assert s.checkpoint.interval_s == 3600.0
    kinds = [type(step) for step in s.steps]
    assert kinds == [InjectStep, InjectStep, ExpectStep, RestoreStep, RestoreStep]
    inject = s.steps[0]
    assert isinstance(inject, InjectStep)
    assert inject.name == "spines"
    assert inject.fault.kind is FaultKind.DRAIN
    degrade = s.steps[1]
    assert isinstance(degrade, InjectStep)
    assert degrade.fault.fraction == 0.5
    expect = s.steps[2]
    assert isinstance(expect, ExpectStep)
    assert [e.observation for e in expect.expectations][:3] == [
        "all_gpus_connected",
        "jobs_lost",
        "min_job_busbw_ratio",
    ]
    path_class = expect.expectations[5]
    assert dict(path_class.args) == {
        "between": ["su01/node01/gpu0", "su02/node01/gpu0"],
        "pxn": True,
    }
    assert path_class.expect.value == "cross-su"


def test_every_piece_knows_where_it_came_from(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    (s,) = load_file(path)
    assert s.where.path == str(path)
    assert (s.where.line, s.where.column) == (1, 1)
    assert s.fabric.where.line == 6
    lines = [step.where.line for step in s.steps]
    assert lines == [17, 19, 20, 28, 29]
    expect = s.steps[2]
    assert isinstance(expect, ExpectStep)
    assert [e.where.line for e in expect.expectations] == list(range(21, 28))
    assert expect.expectations[0].where.column == 7


def test_paths_below_the_cwd_are_shown_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (s,) = load_file(write(tmp_path, GOOD).resolve())
    assert s.where.path == "s.yaml"


def test_a_file_may_hold_a_list_of_scenarios(tmp_path: Path) -> None:
    text = "\n".join(
        f"- name: s{i}\n  description: number {i}\n  fabric: {{preset: seed-a800}}\n"
        "  steps: [{expect: {all_gpus_connected: true}}]"
        for i in range(3)
    )
    scenarios = load_file(write(tmp_path, text))
    assert [s.name for s in scenarios] == ["s0", "s1", "s2"]
    assert [s.where.line for s in scenarios] == [1, 5, 9]


def test_expect_fabric_error_needs_no_steps(tmp_path: Path) -> None:
    text = (
        "name: too-big\ndescription: past the two-tier limit\n"
        "fabric: {preset: seed-a800, params: {sus: 40}}\n"
        "expect_fabric_error: past its limit\n"
    )
    (s,) = load_file(write(tmp_path, text))
    assert s.steps == ()
    assert s.expect_fabric_error == "past its limit"
    result = run_scenario(s)
    assert result.passed


def test_inline_generator_checks_its_parameters(tmp_path: Path) -> None:
    text = (
        "name: gen\ndescription: inline generator\n"
        "fabric: {generator: two-tier, params: {sus: 2, nodes_per_su: [4, 3], spines: 2,"
        " leaf_radix: 8}}\nsteps: [{expect: {all_gpus_connected: true}}]\n"
    )
    (s,) = load_file(write(tmp_path, text))
    assert s.fabric.generator == "two-tier"
    err = problems_of(text.replace("spines: 2", "spines: two"), tmp_path)
    assert "parameter 'spines' of generator two-tier must be a whole number, got 'two'" in str(err)


def test_fabric_file_is_relative_to_the_scenario_file(tmp_path: Path) -> None:
    (tmp_path / "fabrics").mkdir()
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "fabrics" / "tiny.yaml").write_text(
        (ROOT / "fabrics" / "tiny-explicit.yaml").read_text()
    )
    text = (
        "name: tiny\ndescription: the tiny explicit fabric\n"
        "fabric: {file: ../fabrics/tiny.yaml}\njobs: [{name: both, nodes: 'n*'}]\n"
        "steps:\n  - inject: {kill: spine1}\n  - expect: {jobs_lost: 0, rails_connected: [0, 1]}\n"
    )
    (s,) = load_file(write(tmp_path / "scenarios", text))
    assert s.fabric.file is not None
    assert s.fabric.file.resolve() == (tmp_path / "fabrics" / "tiny.yaml").resolve()
    assert run_scenario(s).passed


def test_yaml_anchors_and_merge_keys_work(tmp_path: Path) -> None:
    text = (
        "- &base\n  name: a\n  description: first\n  fabric: {preset: seed-a800}\n"
        "  steps: [{expect: {all_gpus_connected: true}}]\n"
        "- <<: *base\n  name: b\n"
    )
    assert [s.name for s in load_file(write(tmp_path, text))] == ["a", "b"]


def test_load_text_without_a_file() -> None:
    (s,) = load_text(GOOD)
    assert s.where.path == "<string>"


# -- bad files: one per message ----------------------------------------------------------


def test_there_is_a_bad_scenario_per_message() -> None:
    assert len(BAD_FILES) >= 20


@pytest.mark.parametrize("path", BAD_FILES, ids=[p.stem for p in BAD_FILES])
def test_bad_scenario_is_reported_with_file_line_and_fix(path: Path) -> None:
    text = path.read_text()
    expected = re.search(r"^# expect: (.+)$", text, re.MULTILINE)
    assert expected, f"{path.name} needs a '# expect: <message>' first line"
    line = re.search(r"^# line: (\d+)$", text, re.MULTILINE)
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    message = str(info.value)
    assert expected.group(1) in message
    assert path.name in message
    if line:
        assert f"{path.name}:{line.group(1)}:" in message
    assert "Traceback" not in message


def test_a_file_with_three_errors_reports_all_three() -> None:
    with pytest.raises(ScenarioError) as info:
        load_file(BAD / "several-errors.yaml")
    problems = info.value.problems
    assert len(problems) == 3
    assert [p.line for p in problems] == [4, 8, 9]
    assert [p.key for p in problems] == [
        "descriptoin",
        "steps[0].inject.kil",
        "steps[1].expect.job_lost",
    ]
    assert all(p.path.endswith("several-errors.yaml") for p in problems)


def test_problems_in_several_scenarios_of_one_file_are_all_reported(tmp_path: Path) -> None:
    text = (
        "- name: a\n  description: x\n  fabric: {preset: seed-a800}\n"
        "  steps: [{expect: {jobs: 0}}]\n"
        "- name: b\n  description: y\n  fabric: {preset: nope}\n"
        "  steps: [{expect: {islands: 1}}]\n"
    )
    err = problems_of(text, tmp_path)
    assert [p.line for p in err.problems] == [4, 7]
    assert err.problems[0].key == "[0].steps[0].expect.jobs"


def test_key_paths_name_the_expectation(tmp_path: Path) -> None:
    text = GOOD.replace("jobs_lost: 0", "jobs_lost: '>= many'")
    err = problems_of(text, tmp_path)
    (problem,) = err.problems
    assert problem.key == "steps[2].expect.jobs_lost"
    assert (problem.line, problem.column) == (22, 18)


def test_unknown_keys_at_every_level_get_a_did_you_mean(tmp_path: Path) -> None:
    text = (
        GOOD.replace("preset: seed-a800", "preset: seed-a800\n  paramz: {}")
        .replace("failover: port", "failovr: port")
        .replace("interval_s", "intervall_s")
        .replace("as: spines", "aas: spines")
        .replace("all-but: 1", "allbut: 1")
        .replace("fraction: 0.5", "fractoin: 0.5")
        .replace("pxn: true", "pxm: true")
    )
    message = str(problems_of(text, tmp_path))
    for typo, fix in [
        ("paramz", "params"),
        ("failovr", "failover"),
        ("intervall_s", "interval_s"),
        ("aas", "as"),
        ("allbut", "all-but"),
        ("fractoin", "fraction"),
        ("pxm", "pxn"),
    ]:
        assert f"{typo!r}" in message
        assert f"did you mean {fix!r}?" in message


def test_duplicate_keys_are_found_in_nested_mappings(tmp_path: Path) -> None:
    text = GOOD.replace("jobs_lost: 0", "jobs_lost: 0\n      jobs_lost: 1")
    err = problems_of(text, tmp_path)
    assert "duplicate key 'jobs_lost' (also on line 22)" in str(err)
    assert err.problems[0].line == 23


def test_a_recursive_alias_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    err = problems_of("name: &a [*a]\n", tmp_path)
    assert "alias refers to itself" in str(err)


def test_deep_nesting_is_a_problem_not_a_crash() -> None:
    with pytest.raises(ScenarioError, match=r"<string>:1:65: the document is nested more than 64"):
        load_text("[" * 5000 + "]" * 5000)


def test_an_unknown_yaml_tag_is_a_problem(tmp_path: Path) -> None:
    err = problems_of(
        GOOD.replace("tags: [seed, connectivity]", "tags: !!python/name:os.system x"), tmp_path
    )
    assert "unknown tag '!!python/name:os.system'" in str(err)


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_file(path)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="file not found"):
        load_file(tmp_path / "nope.yaml")


def test_restore_follows_the_faults_that_are_applied(tmp_path: Path) -> None:
    text = GOOD.replace("  - restore: last\n", "  - restore: last\n  - restore: all\n")
    assert "no fault is applied" in str(problems_of(text, tmp_path))


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        ("as: spines", "as: all", "'all' is reserved"),
        ("backends: [model]", "backends: [model, model]", "listed twice"),
        ("backends: [model]", "backends: []", "non-empty list"),
        ("tags: [seed, connectivity]", "tags: seed", "list of words"),
        ("- per-su: true", "- per-su: true\n  - per-su", "per-su is listed twice"),
        ("- name: big", "- name: su99", "no job named 'big'"),
        ("rails_connected: [0, 1, 2, 3]", "rails_connected: 4", "rails_connected is a list"),
        ("jobs_lost: 0", "jobs_lost: [0]", "jobs_lost is a whole number, not a list"),
        ("jobs_lost: 0", "jobs_lost: cross-su", "jobs_lost is a number"),
        ("is: cross-su", "is: 3", "path_class is a word"),
        ("{tier: spine, all-but: 1}", "{tier: spine, all-but: 1, random: {count: 1}}", "either"),
        ("{tier: spine, all-but: 1}", "{ids: []}", "empty list"),
        ("{tier: spine, all-but: 1}", "", "needs a selector"),
        ("inject: {drain", "inject: {kill: x, drain", "exactly one fault"),
        ("checkpoint: {size_gb: 112, interval_s: 3600}", "checkpoint: 112", "must be a mapping"),
        (
            "checkpoint: {size_gb: 112, interval_s: 3600}",
            "checkpoint: {sharded: true}",
            "needs size_gb",
        ),
        ("description: >", "description: ''\nxdescription: >", "plain words"),
        (
            "fabric:\n  preset: seed-a800\n  params: {sus: 2}",
            "fabric: seed-a800",
            "must be a mapping",
        ),
        ("params: {sus: 2}", "params: {suss: 2}", "did you mean 'sus'?"),
        ("timeout: 5s", "timeout: 5 parsecs", "not a duration; write e.g. 5s"),
        ("timeout: 5s", "timeout: 0", "positive number of seconds"),
        ("timeout: 5s", "timeout: true", "timeout is seconds or a duration"),
        ("timeout: 5s", "timeuot: 5s", "did you mean 'timeout'?"),
        ("params: {sus: 2}", "params: [2]", "params must be a mapping"),
        (
            "params: {sus: 2}",
            "params: {sus: 0}",
            "parameter 'sus' of preset seed-a800 must be a finite number > 0",
        ),
        (
            "jobs_lost: 0\n",
            "jobs_lost: 0\n      elements_down: {kind: spin, is: 0}\n",
            "did you mean 'spine'?",
        ),
    ],
)
def test_more_problems(tmp_path: Path, before: str, after: str, message: str) -> None:
    assert before in GOOD
    assert message in str(problems_of(GOOD.replace(before, after, 1), tmp_path))


# -- never a traceback ---------------------------------------------------------------

_words = st.sampled_from(
    [
        *SCENARIO_KEYS,
        "inject",
        "expect",
        "restore",
        "as",
        "kill",
        "degrade",
        "tier",
        "all-but",
        "jobs_lost",
        "is",
        "per-su",
        "preset",
        "seed-a800",
        "spine",
        "x",
        "",
    ]
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2), _words)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_words, inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, database=None)
@given(st.dictionaries(_words, _values, max_size=8))
def test_any_shape_of_input_gives_scenario_errors_only(raw: dict[str, object]) -> None:
    import yaml

    try:
        load_text(yaml.safe_dump(raw))
    except ScenarioError as err:
        problems = err.problems
    else:
        return
    assert problems
    assert all(p.line >= 1 for p in problems)


# -- discovery -----------------------------------------------------------------------------


def test_discover_expands_directories_sorted_and_recursive(tmp_path: Path) -> None:
    for name in ["b.yaml", "a.yml", "sub/c.yaml", "sub/notes.txt", ".hidden/d.yaml"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    single = tmp_path / "sub" / "notes.txt"
    found = discover([tmp_path, single, tmp_path / "b.yaml"])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.yml",
        "b.yaml",
        "sub/c.yaml",
        "sub/notes.txt",
    ]


def test_discover_reports_every_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        discover([tmp_path / "x", tmp_path, tmp_path / "y.yaml"])
    assert len(info.value.problems) == 2
    assert "no such file or directory" in str(info.value)


def test_load_paths_reports_the_problems_of_every_file(tmp_path: Path) -> None:
    write(tmp_path, "name: [\n", "a.yaml")
    write(tmp_path, "", "b.yaml")
    write(tmp_path, GOOD, "c.yaml")
    with pytest.raises(ScenarioError) as info:
        load_paths([tmp_path])
    assert [Path(p.path).name for p in info.value.problems] == ["a.yaml", "b.yaml"]
    (tmp_path / "a.yaml").unlink()
    (tmp_path / "b.yaml").unlink()
    assert [s.name for s in load_paths([tmp_path])] == ["one-spine-left"]


# -- the YAML reader -----------------------------------------------------------------------


def test_read_yaml_keeps_positions_of_keys_and_values() -> None:
    doc = read_yaml("a:\n  b: [1, {c: 2}]\n", "x.yaml")
    assert doc.data == {"a": {"b": [1, {"c": 2}]}}
    assert doc.position(("a", "b", 1, "c")) == (2, 14)
    assert doc.position(("a", "b", 1, "c"), key=True) == (2, 11)
    assert doc.position(("a", "nope")) == (1, 1)
    assert key_text(("steps", 2, "expect", "jobs_lost")) == "steps[2].expect.jobs_lost"
    assert key_text((0, "name")) == "[0].name"


def test_a_yaml_syntax_error_is_one_located_problem() -> None:
    with pytest.raises(ScenarioError) as info:
        read_yaml("a: 1\nb: [1, 2\n", "x.yaml")
    (problem,) = info.value.problems
    assert (problem.path, problem.line) == ("x.yaml", 3)
    assert "close the '['" in problem.message


def test_a_scenario_past_the_step_limit_is_refused_at_its_steps_key() -> None:
    from harness.scenario.steps import MAX_STEPS

    steps = "".join("  - expect: {jobs_lost: 0}\n" for _ in range(MAX_STEPS + 1))
    text = f"name: long\ndescription: d\nfabric: {{preset: seed-a800}}\nsteps:\n{steps}"
    with pytest.raises(ScenarioError, match=r"^long.yaml:5:3: \[steps\] 1,001 steps is more than a "
                       r"scenario may have \(MAX_STEPS = 1,000\); split it"):  # fmt: skip
        load_text(text, "long.yaml")
    doc = Path(__file__).resolve().parents[2] / "docs" / "scenario-format.md"
    assert f"| `MAX_STEPS` | {MAX_STEPS:,} |" in doc.read_text(encoding="utf-8")
