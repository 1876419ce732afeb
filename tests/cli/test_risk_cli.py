"""``harness risk`` judged on what the change adds, with the full fault syntax in ``--change``.

The cases of issue 6 item 3, through the command line: a state that already
loses a job, a change that loses nothing new (exit 0, the old loss named with
its reason), a change that loses a new one (exit 1, named), ``--change`` as
YAML, short form with a structural selector, ``@file.yaml`` and ``degrade``,
and the N+1 table of before / after / added.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main

Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def state(tmp_path: Path) -> str:
    """S: the state file of the issue, one leaf of su02 killed."""
    path = tmp_path / "state.yaml"
    path.write_text("- kill: su02/leaf-r1\n", encoding="utf-8")
    return str(path)


def run(capsys: Capsys, argv: list[str], code: int) -> str:
    got = main(["risk", "seed-a800", *argv])
    out, err = capsys.readouterr()
    assert got == code, err
    assert "Traceback" not in err
    return out


def flat(text: str) -> str:
    return " ".join(text.split())


def run_json(capsys: Capsys, argv: list[str], code: int) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run(capsys, [*argv, "--json"], code))
    return doc


def test_a_change_that_loses_nothing_new_is_within_the_default_budget(
    state: str, capsys: Capsys
) -> None:
    out = run(capsys, ["--change", "drain spine-03", "--state", state], 0)
    lines = out.splitlines()
    assert lines[0] == "WITHIN BUDGET  seed-a800: drained spine-03"
    text = flat(out)
    assert "already down: killed su02/leaf-r1" in text
    assert "already lost before the change: 1 job" in text
    assert "su02: su02/node01/nic1 (rail 1) cannot reach the job's other NICs: leaf " \
           "su02/leaf-r1 is down" in text  # fmt: skip
    assert "budget: default: the change passes only if it loses no running job, cuts off no " \
           "GPU pair that was connected, and leaves every surviving job at least 90% of the " \
           "bus bandwidth it had before (jobs_lost 0, gpu_pairs_disconnected 0, " \
           "bandwidth >= 0.9)" in text  # fmt: skip
    assert "the change loses no job" in text
    assert "BREAKS" not in text
    assert "jobs lost (running jobs that die) │ 1 │ 1 │ +0" in text
    assert "jobs unplaceable (could not start now) │ 1 │ 1 │ +0" in text
    # su02 is lost, not slow: the bandwidth is of the jobs that survive, and names one
    assert "min bus bandwidth of surviving jobs │ 100.0% (su01) │ 100.0% (su01) │" in text
    assert "jobs assumed: one per SU (no --jobs given); traffic between SUs is not " \
           "represented" in text  # fmt: skip
    assert "min leaf uplink capacity │ 100.0% │ 95.0% │ 95.0% of before" in text
    assert "1 jobs" not in text


def test_the_n_plus_1_margin_is_one_table_of_before_after_added(state: str, capsys: Capsys) -> None:
    text = flat(run(capsys, ["--change", "drain spine-03", "--state", state], 0))
    assert "N+1: single further failures that would break the budget" in text
    assert "category ┃ before ┃ after ┃ added" in text
    # 780 access cables are live (20 end on the dead leaf); the other 60 of su02 cannot lose
    # su02 again, so 720 of them break the budget, before the drain as after it
    assert "cable (access) │ 720 of 780 │ 720 of 780 │ +0" in text
    assert "spine │ 0 of 20 │ 0 of 19 │ +0" in text
    assert "780 of 780" not in text
    assert "after this change" not in text


def test_the_issue_s_structural_selector_short_form(state: str, capsys: Capsys) -> None:
    out = run(capsys, ["--change", "drain {tier: spine, all-but: 1}", "--state", state], 0)
    text = flat(out)
    assert text.startswith("WITHIN BUDGET seed-a800: drained spine-02, spine-03")
    assert "and 13 more" in text
    assert "already lost before the change: 1 job su02:" in text
    # with one spine left, killing it cuts every pair between SUs: the default budget says no
    assert "spine │ 0 of 20 │ 1 of 1 │ +1" in text


def test_yaml_flow_mapping_change_is_the_same_change(state: str, capsys: Capsys) -> None:
    short = run_json(capsys, ["--change", "drain {tier: spine, all-but: 1}", "--state", state], 0)
    yaml = run_json(capsys, ["--change", "drain: {tier: spine, all-but: 1}", "--state", state], 0)
    assert short["change"] == yaml["change"]
    assert short["added"] == yaml["added"]
    assert yaml["added"]["leaf_uplink_ratio"] == pytest.approx(0.05)  # 1 of 20 uplinks left


def test_a_change_that_loses_a_new_job_exits_1_and_names_it(state: str, capsys: Capsys) -> None:
    out = run(capsys, ["--change", "kill su03/leaf-r2", "--state", state], 1)
    text = flat(out)
    assert out.splitlines()[0] == "BREAKS THE BUDGET  seed-a800: killed su03/leaf-r2"
    assert "the change loses 1 job: su03" in text
    assert "leaf su03/leaf-r2 is down" in text
    assert "the change breaks the budget: jobs_lost 0" in text
    assert "already lost before the change: 1 job su02:" in text
    assert "jobs lost (running jobs that die) │ 1 │ 2 │ +1" in text
    assert "the change itself breaks the budget, so every further failure" in text


def test_json_carries_before_after_added(state: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["--change", "kill su03/leaf-r2", "--state", state], 1)
    assert doc["before"]["jobs_lost"] == ["su02"]
    assert doc["after"]["jobs_lost"] == ["su02", "su03"]
    assert doc["added"]["jobs_lost"] == ["su03"]
    assert doc["added"]["nics_cut"] == 20
    assert doc["already_lost"][0]["job"] == "su02"
    assert "leaf su02/leaf-r1 is down" in doc["already_lost"][0]["reasons"][0]
    assert doc["budget_broken_by_change"] == ["jobs_lost 0"]
    spine = doc["margin"]["by_category"]["spine"]
    assert spine == {"before": {"breaking": 0, "of": 20}, "after": {"breaking": 20, "of": 20},
                     "added": 20}  # fmt: skip


def test_change_from_a_file(tmp_path: Path, state: str, capsys: Capsys) -> None:
    change = tmp_path / "change.yaml"
    change.write_text("- drain: spine-03\n- drain: {glob: 'spine-0[12]'}\n")
    doc = run_json(capsys, ["--change", f"@{change}", "--state", state], 0)
    assert doc["change"] == ["drained spine-03", "drained spine-01, spine-02"]
    assert doc["added"]["leaf_uplink_ratio"] == pytest.approx(17 / 20)


def test_change_file_errors_name_the_file_and_line(tmp_path: Path, capsys: Capsys) -> None:
    change = tmp_path / "change.yaml"
    change.write_text("- drain: spine-03\n- dran: spine-04\n- drain: spine-99\n")
    assert main(["risk", "seed-a800", "--change", f"@{change}"]) == 2
    err = capsys.readouterr().err
    assert f"error: {change}:2:3: unknown fault kind 'dran'; did you mean 'drain'?" in err
    change.write_text("- drain: spine-03\n- drain: spine-99\n")
    assert main(["risk", "seed-a800", "--change", f"@{change}"]) == 2
    err = capsys.readouterr().err
    assert f"error: {change}:2:3: selector 'spine-99' matches no elements; closest:" in err
    assert main(["risk", "seed-a800", "--change", f"@{tmp_path / 'none.yaml'}"]) == 2
    err = capsys.readouterr().err
    none = tmp_path / "none.yaml"
    assert f"error: {none}: cannot read the fault list file: file not found" in err


@pytest.mark.parametrize(
    "change",
    [
        "degrade {tier: leaf-spine, su: 1} 0.5",
        "degrade {tier: leaf-spine, su: 1} 50%",
        "degrade {tier: leaf-spine, su: 1} fraction=0.5",
        "degrade: {target: {tier: leaf-spine, su: 1}, fraction: 0.5}",
    ],
)
def test_degrade_by_a_fraction(change: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["--change", change, "--budget", "uplink>=0.6"], 1)
    assert doc["change"][0].startswith("degraded su01/leaf-r0:21--spine-01:1, ")
    assert doc["added"]["leaf_uplink_ratio"] == pytest.approx(0.5)
    assert doc["budget_broken_by_change"] == ["uplink >= 0.6"]


def test_degrade_by_lanes(capsys: Capsys) -> None:
    doc = run_json(capsys, ["--change", "degrade su01/leaf-r0:21--spine-01:1 lanes=2",
                            "--budget", "uplink>=0.9"], 0)  # fmt: skip
    assert doc["change"] == ["degraded su01/leaf-r0:21--spine-01:1"]
    assert doc["added"]["leaf_uplink_ratio"] == pytest.approx(19.5 / 20)  # 2 of its 4 lanes


def test_relative_bandwidth_ignores_what_was_already_lost(state: str, capsys: Capsys) -> None:
    """su02 is lost before and after: a lost job, not a bandwidth of 0, under either rule."""
    doc = run_json(capsys, ["--change", "drain spine-03", "--state", state,
                            "--budget", "bandwidth>=0.9,abs:bandwidth>=0.9"], 0)  # fmt: skip
    assert doc["after"]["min_job_busbw_ratio"] == 1.0  # of the jobs that survive
    assert doc["after"]["min_job_busbw_job"] == "su01"
    assert doc["after"]["jobs_lost"] == doc["after"]["jobs_unplaceable"] == ["su02"]
    assert doc["added"]["min_job_busbw_ratio"] == 1.0
    assert "su02" not in doc["added"]["job_busbw_ratio"]
    assert doc["budget_broken_by_change"] == []
    text = flat(run(capsys, ["--change", "drain spine-03", "--state", state,
                             "--budget", "abs:jobs_lost=0"], 1))  # fmt: skip
    assert "budget: abs:jobs_lost 0 (on the state after the change)" in text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("drain {tier: spine", "error: --change:1:19: YAML syntax error: expected ',' or '}'"),
        ("drain: {tier: spine, al-but: 1}",
         "error: --change:1:1: unknown selector key 'al-but'; did you mean 'all-but'?"),
        ("degrade spine-05", "error: --change: 'degrade spine-05': degrade needs how much is left"),
        ("degrade su01/leaf-r0:21--spine-01:1 1.5",
         "error: --change: degrade fraction must be a number between 0 and 1"),
        ("kill su02/leaf-r1; dran spine-05",
         "error: --change: [dran spine-05] unknown fault kind 'dran'; did you mean 'drain'?"),
        ("kill su02/leaf-r1; drain su01/node01",
         "error: --change: [drain su01/node01] drain cannot apply to su01/node01 (a node)"),
        ("@", "error: --change: '@': give a file after '@', e.g. @change.yaml"),
        (";", "error: --change is empty; write e.g. 'drain spine-05,spine-06'"),
    ],
)  # fmt: skip
def test_bad_changes_exit_2_naming_the_input(change: str, message: str, capsys: Capsys) -> None:
    assert main(["risk", "seed-a800", "--change", change]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_help_documents_the_change_syntax_and_abs_budgets(capsys: Capsys) -> None:
    assert main(["risk", "--help"]) == 0
    text = flat(capsys.readouterr().out)
    assert '"drain {tier: spine, all-but: 1}"' in text
    assert '"@faults.yaml"' in text
    assert "abs:" in text
    assert "jobs already lost are not its loss" in text
    rule = "default jobs_lost=0,gpu_pairs_disconnected=0,bandwidth>=0.9: a change passes " \
           "only if it loses no running job, cuts off no GPU pair that was connected, and " \
           "leaves every surviving job at least 90% of the bus bandwidth it had before"  # fmt: skip
    assert rule in text


def test_state_written_inline_as_for_change(capsys: Capsys) -> None:
    doc = run_json(capsys, ["--change", "drain spine-03", "--state", "kill su02/leaf-r1"], 0)
    assert doc["state"] == ["killed su02/leaf-r1"]
    assert doc["already_lost"][0]["job"] == "su02"
    assert main(["risk", "seed-a800", "--change", "drain spine-03", "--state", "kill su99/x"]) == 2
    assert "error: --state: selector 'su99/x' matches no elements" in (capsys.readouterr().err)
    assert main(["risk", "seed-a800", "--change", "drain spine-03", "--state", "none.yaml"]) == 2
    assert "error: --state none.yaml: no such file; give a state file, a topology dump or " \
           "faults such as 'kill su02/leaf-r1'" in capsys.readouterr().err  # fmt: skip
