"""``harness risk``, ``harness sweep`` and ``harness audit``: exit codes, JSON, files, messages."""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main

DUMPS = Path(__file__).resolve().parents[1] / "data" / "importers"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# The design the rail2x2 ibsim dumps mirror (tests/data/importers/README.md), as a fabric file.
RAIL2X2 = """\
name: rail2x2
description: 2 SUs x 2 hosts x 2 rails, 2 spines; what the rail2x2 ibsim dumps were made from
generator: two-tier
params:
  sus: 2
  nodes_per_su: 2
  spines: 2
  leaf_radix: 8
  storage: false
  node_overrides: {rails: 2}
"""

Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def design(tmp_path: Path) -> str:
    path = tmp_path / "rail2x2.yaml"
    path.write_text(RAIL2X2, encoding="utf-8")
    return str(path)


def dump(name: str) -> str:
    return str(DUMPS / f"{name}.ibnetdiscover")


def run_json(capsys: Capsys, argv: list[str], code: int) -> dict[str, Any]:
    assert main(argv) == code, capsys.readouterr().err
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def run_error(capsys: Capsys, argv: list[str], code: int = 2) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


# -- harness risk -----------------------------------------------------------------------


def test_risk_within_budget_exits_0(capsys: Capsys) -> None:
    argv = ["risk", "seed-a800", "--change", "drain spine-05,spine-06",
            "--budget", "jobs_lost=0,bandwidth>=0.9"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "WITHIN BUDGET" in out
    assert "drained spine-05, spine-06" in out
    assert "spine │ 0 of 20 │ 0 of 18 │ +0" in " ".join(out.split())


def test_risk_json(capsys: Capsys) -> None:
    doc = run_json(capsys, ["risk", "seed-a800", "--change", "drain spine-05,spine-06",
                            "--budget", "jobs_lost=0,bandwidth>=0.9", "--json"], 0)  # fmt: skip
    assert {"ok", "before", "after", "margin_after"} <= set(doc)
    assert doc["ok"] is True
    assert doc["after"]["jobs_lost"] == []
    assert doc["after"]["leaf_uplink_ratio"] == pytest.approx(0.9)
    assert doc["before"]["leaf_uplink_ratio"] == 1.0
    assert doc["margin_after"]["by_category"]["cable (access)"] == {"breaking": 800, "of": 800}


def test_risk_with_n_plus_1_required_exits_1(capsys: Capsys) -> None:
    """Absolute rules: after the change no single further failure may lose a job."""
    doc = run_json(capsys, ["risk", "seed-a800", "--change", "drain spine-05,spine-06",
                            "--budget", "abs:jobs_lost=0,bandwidth>=0.9", "--require-margin", "1",
                            "--json"], 1)  # fmt: skip
    assert doc["ok"] is False
    assert doc["require_margin"] == 1
    assert doc["budget"] == ["abs:jobs_lost 0", "bandwidth >= 0.9"]
    assert doc["budget_broken_by_change"] == []
    assert doc["margin_after"]["breaking"] > 0
    assert doc["margin"]["added"] == 0  # the drain itself makes no further failure worse
    assert doc["margin"]["blocking"] == doc["margin_after"]["breaking"]


def test_risk_with_n_plus_1_required_on_what_the_change_adds_exits_0(capsys: Capsys) -> None:
    """Relative rules: access failures lose a job before and after; the drain adds none."""
    doc = run_json(capsys, ["risk", "seed-a800", "--change", "drain spine-05,spine-06",
                            "--budget", "jobs_lost=0,bandwidth>=0.9", "--require-margin", "1",
                            "--json"], 0)  # fmt: skip
    assert doc["ok"] is True
    assert doc["margin"]["added"] == 0
    assert doc["margin"]["blocking"] == 0
    assert doc["margin_after"]["breaking"] == 3240


def test_risk_change_that_breaks_the_budget_exits_1(capsys: Capsys) -> None:
    assert main(["risk", "seed-a800", "--change", "kill su03/leaf-r2"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "BREAKS THE BUDGET" in out
    assert "the change loses 1 job: su03" in out
    assert "leaf su03/leaf-r2 is down" in out
    assert "the change breaks the budget: jobs_lost 0" in out


def test_risk_state_file_before_state_already_loses_a_job(tmp_path: Path, capsys: Capsys) -> None:
    state = tmp_path / "state.yaml"
    state.write_text("- kill: su02/leaf-r1\n", encoding="utf-8")
    doc = run_json(capsys, ["risk", "seed-a800", "--change", "drain spine-05", "--state",
                            str(state), "--json"], 0)  # fmt: skip
    assert doc["state"] == ["killed su02/leaf-r1"]
    assert doc["before"]["jobs_lost"] == ["su02"]
    assert doc["before"]["nics_cut"] == 20
    assert doc["added"]["jobs_lost"] == []
    assert doc["budget_broken_by_change"] == []
    # an absolute budget counts the state's own loss
    doc = run_json(capsys, ["risk", "seed-a800", "--change", "drain spine-05", "--state",
                            str(state), "--budget", "abs:jobs_lost=0", "--json"], 1)  # fmt: skip
    assert doc["budget_broken_by_change"] == ["abs:jobs_lost 0"]


def test_risk_jobs_file(tmp_path: Path, capsys: Capsys) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("- {name: big, nodes: 'su0[1-4]/*'}\n", encoding="utf-8")
    doc = run_json(capsys, ["risk", "seed-a800", "--change", "kill su05/leaf-r0", "--jobs",
                            str(jobs), "--json"], 0)  # fmt: skip
    assert list(doc["after"]["job_busbw_ratio"]) == ["big"]
    assert doc["after"]["jobs_lost"] == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--change", "dran spine-05"],
         "error: --change: unknown fault kind 'dran'; did you mean 'drain'?"),
        (["--change", "drain"], "error: --change: 'drain' names no target; write e.g."),
        (["--change", "drain spine-99"],
         "error: --change: selector 'spine-99' matches no elements; closest:"),
        (["--change", "degrade spine-05"],
         "error: --change: 'degrade spine-05': degrade needs how much is left: write "
         "'degrade TARGETS 0.25'"),
        (["--change", "drain spine-05", "--budget", "job_lost=0"],
         "error: --budget: unknown metric 'job_lost'; did you mean 'jobs_lost'?"),
        (["--change", "drain spine-05", "--budget", "jobs_lost"],
         "error: --budget: cannot read 'jobs_lost'; write e.g. jobs_lost=0,bandwidth>=0.9"),
        (["--change", "drain spine-05", "--elements", "switchs"],
         "error: --elements: unknown category 'switchs'; did you mean 'switches'?"),
        (["--change", "drain spine-05", "--state", "/no/such/state.yaml"],
         "error: --state /no/such/state.yaml: no such file; give a state file"),
        (["--change", "drain spine-05", "--require-margin", "2"],
         "argument --require-margin: invalid choice: 2"),
    ],
)  # fmt: skip
def test_risk_bad_input_exits_2(argv: list[str], message: str, capsys: Capsys) -> None:
    assert message in run_error(capsys, ["risk", "seed-a800", *argv])


def test_risk_unknown_preset_exits_2(capsys: Capsys) -> None:
    err = run_error(capsys, ["risk", "seed-a801", "--change", "drain spine-05"])
    assert "error: unknown fabric preset 'seed-a801'; did you mean 'seed-a800'?" in err


def test_risk_bad_state_file_exits_2_at_file_and_line(tmp_path: Path, capsys: Capsys) -> None:
    state = tmp_path / "state.yaml"
    state.write_text("- kill: su02/leaf-r1\n- drain: spine-01\n- kil: spine-02\n", encoding="utf-8")
    err = run_error(capsys, ["risk", "seed-a800", "--change", "drain spine-05", "--state",
                             str(state)])  # fmt: skip
    assert err.splitlines() == [
        f"error: {state}:3:3: unknown fault kind 'kil'; did you mean 'kill'? "
        "(known: kill, drain, cut, optic, degrade, bond-member, flaky, hang)"
    ]


def test_risk_bad_jobs_file_exits_2_at_file_and_line(tmp_path: Path, capsys: Capsys) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("- {name: a, nodes: 'su01/*'}\n- {name: b, nodes: 'su99/*'}\n")
    err = run_error(capsys, ["risk", "seed-a800", "--change", "drain spine-05", "--jobs",
                             str(jobs)])  # fmt: skip
    assert f"error: {jobs}:2:3: job 'b': nodes 'su99/*' match no server" in err


def test_risk_state_from_a_live_dump_turns_differences_into_faults(
    design: str, capsys: Capsys
) -> None:
    doc = run_json(capsys, ["risk", design, "--change", "drain spine-01", "--state",
                            dump("rail2x2_spine_down"), "--budget", "gpu_pairs_disconnected=0",
                            "--json"], 1)  # fmt: skip
    assert doc["state"] == [
        "killed spine-02",
        "cut su01/leaf-r0:4--spine-02:1",
        "cut su01/leaf-r1:4--spine-02:2",
        "cut su02/leaf-r0:4--spine-02:3",
        "cut su02/leaf-r1:4--spine-02:4",
    ]
    assert doc["before"]["leaf_uplink_ratio"] == 0.5
    assert doc["before"]["gpu_pairs_disconnected"] == 0
    # with the other spine drained too, the two SUs are cut apart: 8 GPUs x 2 hosts each side
    assert doc["after"]["gpu_pairs_disconnected"] == 16 * 16
    assert doc["budget_broken_by_change"] == ["gpu_pairs_disconnected 0"]


def test_risk_state_from_a_miscabled_dump_moves_the_cable(design: str, capsys: Capsys) -> None:
    """A wrong-rail NIC is modelled where it is plugged (NCCL crosses the spines), not cut."""
    assert main(["risk", design, "--change", "drain spine-01", "--state",
                 dump("rail2x2_wrong_rail"), "--json"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "note: su01/node02/nic1 (rail 1) is cabled to su01/leaf-r0 (rail 0): modelled cabled "
        "there (NCCL sends its rail-1 traffic across the spines)",
    ]
    doc = json.loads(out)
    assert doc["state"] == []  # the cable is moved, not cut
    assert doc["before"]["jobs_lost"] == []  # it was counted lost
    assert doc["already_lost"] == []
    assert doc["added"]["jobs_lost"] == []


def test_sweep_state_from_a_miscabled_dump_moves_the_cable(design: str, capsys: Capsys) -> None:
    """The sweep judges the re-cabled design, as risk does: both NICs of su01/node02 are on
    su01/leaf-r0 now, so losing that leaf cuts its 8 GPUs off the other 24, even with PXN."""
    argv = ["sweep", design, "--elements", "switches", "--json"]
    assert main([*argv, "--state", dump("rail2x2_wrong_rail")]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "note: su01/node02/nic1 (rail 1) is cabled to su01/leaf-r0 (rail 0): modelled cabled "
        "there (NCCL sends its rail-1 traffic across the spines)",
    ]
    live = {r["case"]: r["gpu_pairs_disconnected"] for r in json.loads(out)["rows"]}
    assert main(argv) == 0
    cabled = {
        r["case"]: r["gpu_pairs_disconnected"] for r in json.loads(capsys.readouterr().out)["rows"]
    }
    assert live["su01/leaf-r0"] == 8 * 24
    assert cabled["su01/leaf-r0"] == 0  # as designed, PXN saves every pair
    assert {k: v for k, v in live.items() if k != "su01/leaf-r0"} == {
        k: v for k, v in cabled.items() if k != "su01/leaf-r0"
    }


# -- harness sweep ----------------------------------------------------------------------


def test_sweep_json_known_counts(capsys: Capsys) -> None:
    doc = run_json(capsys, ["sweep", "seed-a800", "--json"], 0)
    assert (doc["cases"], doc["disconnecting"], doc["job_losing"]) == (2460, 0, 1640)
    assert len(doc["rows"]) == 2460
    assert doc["depth"] == 1
    assert doc["sampled_pairs"] == 0


def test_sweep_human_summary(capsys: Capsys) -> None:
    assert main(["sweep", "seed-a800", "--elements", "switches", "--top", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "seed-a800: 60 cases (depth 1, elements switches): 40 lose a job, 0 disconnect" in out
    # ranked groups of alike cases: a leaf of one rail in any SU, any spine
    assert "worst cases (top 3 of 5 groups of alike cases, 60 cases; ranked by GPUs of the " \
           "jobs lost, GPU pairs cut, surviving bandwidth)" in out  # fmt: skip
    assert ("su01..10/leaf-r0: 10 alike │ 160 │ 1 each: su01..10 │ 1 │ 0 │ 100.0% (su02; 100.0% "
            "of line rate)") in out  # fmt: skip
    assert "base state: slowest job's bus bandwidth: su01 100 GB/s (static) = 100.0% of line " \
           "rate (100 GB/s), 100.0% of healthy (100 GB/s under static)" in out  # fmt: skip


def test_sweep_csv_and_plot(tmp_path: Path, capsys: Capsys) -> None:
    table, png = tmp_path / "cases.csv", tmp_path / "sweep.png"
    assert main(["sweep", "seed-a800", "--csv", str(table), "--plot", str(png), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    with table.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == doc["cases"] == 2460
    assert [r["case"] for r in rows] == [r["case"] for r in doc["rows"]]
    data = png.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 10_000


def test_sweep_depth_2_reports_the_sampled_pairs(capsys: Capsys) -> None:
    argv = ["sweep", "seed-a800", "--depth", "2", "--pairs", "50", "--seed", "3"]
    doc = run_json(capsys, [*argv, "--json"], 0)
    switches = 60
    assert doc["sampled_pairs"] == 50
    assert doc["pair_sample_seed"] == 3
    assert doc["depth"] == 2
    assert doc["cases"] == 2460 + switches * (switches - 1) // 2 + 50
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4,280 cases (depth 2, elements switches,cables,nics, 50 sampled pairs, seed 3)" in out


def test_sweep_same_seed_same_pairs(capsys: Capsys) -> None:
    argv = ["sweep", "seed-a800", "--elements", "cables", "--depth", "2", "--pairs", "20", "--json"]
    a = run_json(capsys, [*argv, "--seed", "1"], 0)
    b = run_json(capsys, [*argv, "--seed", "1"], 0)
    c = run_json(capsys, [*argv, "--seed", "2"], 0)
    assert a["sampled_pairs"] == c["sampled_pairs"] == 20
    sampled = [
        {r["case"] for r in d["rows"] if "--" in r["case"] and " + " in r["case"]}
        for d in (a, b, c)
    ]
    assert len(sampled[0]) == 20
    assert sampled[0] == sampled[1] != sampled[2]


def test_sweep_only_element_categories_sample_the_pairs_asked_for(capsys: Capsys) -> None:
    argv = ["sweep", "seed-a800", "--elements", "nics", "--depth", "2", "--pairs", "20"]
    doc = run_json(capsys, [*argv, "--json"], 0)
    assert doc["sampled_pairs"] == 20
    assert doc["by_category"]["nic + nic"]["cases"] == 20


def test_sweep_bisection_on_every_row(design: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["sweep", design, "--bisection", "--json"], 0)
    ratios = {r["case"]: r["bisection_ratio"] for r in doc["rows"]}
    assert None not in ratios.values()
    assert ratios["su01/node01/nic0"] == 0.75  # one of SU 1's 4 NIC ports of 200 Gb/s
    assert ratios["spine-01"] == 0.5


def test_sweep_two_workers_same_rows(capsys: Capsys) -> None:
    one = run_json(capsys, ["sweep", "seed-a800", "--json"], 0)
    two = run_json(capsys, ["sweep", "seed-a800", "--workers", "2", "--json"], 0)
    assert two["rows"] == one["rows"]
    assert two["by_category"] == one["by_category"]


def test_sweep_with_a_state_file(tmp_path: Path, capsys: Capsys) -> None:
    state = tmp_path / "state.yaml"
    state.write_text("- kill: su02/leaf-r1\n", encoding="utf-8")
    doc = run_json(capsys, ["sweep", "seed-a800", "--elements", "switches", "--state", str(state),
                            "--json"], 0)  # fmt: skip
    # su02 is lost already: the other leaves of su02 lose nothing more
    assert doc["cases"] == 60
    assert doc["job_losing"] == 40 - 4
    rows = {r["case"]: r for r in doc["rows"]}
    assert rows["su02/leaf-r0"]["jobs_lost"] == []
    assert rows["su03/leaf-r0"]["jobs_lost"] == ["su03"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--elements", "switchs,cables"],
         "error: --elements: unknown category 'switchs'; did you mean 'switches'? (known: "),
        (["--elements", "cabels"], "did you mean 'cables'?"),
        (["--workers", "0"], "argument --workers: must be >= 1, got 0"),
        (["--depth", "3"], "argument --depth: invalid choice: 3"),
        (["--jobs", "/no/such/jobs.yaml"],
         "error: /no/such/jobs.yaml: cannot read the jobs file: file not found"),
    ],
)  # fmt: skip
def test_sweep_bad_input_exits_2(argv: list[str], message: str, capsys: Capsys) -> None:
    assert message in run_error(capsys, ["sweep", "seed-a800", *argv])


def test_sweep_unknown_preset_exits_2(capsys: Capsys) -> None:
    err = run_error(capsys, ["sweep", "seed-a80"])
    assert "did you mean 'seed-a800'?" in err


def test_sweep_a_fabric_file(design: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["sweep", design, "--json"], 0)
    # 4 leaves, 2 spines, 8 access and 8 leaf-spine cables, 8 NICs
    assert doc["fabric"] == "rail2x2"
    assert doc["cases"] == 4 + 2 + 8 + 8 + 8
    assert doc["job_losing"] == 4 + 8 + 8


# -- harness audit ----------------------------------------------------------------------


def test_audit_says_which_stage_it_is_at(
    design: str, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_PROGRESS_INTERVAL", "0")  # a line at every step, off a terminal
    assert main(["audit", dump("rail2x2"), "--design", design, "--json"]) == 0
    err = capsys.readouterr().err.splitlines()
    stages = [line.rsplit(", ", 1)[0] for line in err if line.startswith("audit (")]
    assert stages == [
        f"audit (design, dump, comparison): {n} of 3 stages ({n / 3:.0%})" for n in range(4)
    ]


def test_audit_clean_dump_exits_0(design: str, capsys: Capsys) -> None:
    assert main(["audit", dump("rail2x2"), "--design", design]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "matches the design rail2x2" in out
    assert "WITHIN BUDGET" in out


def test_audit_clean_dump_json(design: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["audit", dump("rail2x2"), "--design", design, "--json"], 0)
    assert doc["ok"] is True
    assert doc["differences"] == []
    assert doc["not_modelled"] == []
    assert doc["design"] == "rail2x2"
    assert doc["risk"]["ok"] is True
    assert doc["risk"]["change"] == []


def test_audit_broken_dump_exits_1_listing_the_difference_and_the_jobs_exposed(
    design: str, capsys: Capsys
) -> None:
    assert main(["audit", dump("rail2x2_nic_down"), "--design", design]) == 1
    out = capsys.readouterr().out
    assert "  missing link su02/node02/nic1:1--su02/leaf-r1:2" in out.splitlines()
    flat = " ".join(out.split())
    assert "1 difference between" in flat
    assert "BREAKS THE BUDGET" in flat
    assert "the live state loses 1 job: su02" in flat
    assert "change" not in flat  # an audit has no change


def test_audit_broken_dump_json(design: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["audit", dump("rail2x2_nic_down"), "--design", design, "--json"], 1)
    assert doc["ok"] is False
    assert doc["differences"] == ["missing link su02/node02/nic1:1--su02/leaf-r1:2"]
    assert doc["risk"]["change"] == ["cut su02/node02/nic1:1--su02/leaf-r1:2"]
    assert doc["risk"]["after"]["jobs_lost"] == ["su02"]
    assert doc["risk"]["budget_broken_by_change"] == ["jobs_lost 0"]


@pytest.mark.parametrize(
    ("name", "difference"),
    [
        ("rail2x2_unlinked", "missing link su01/leaf-r1:4--spine-02:2"),
        ("rail2x2_spine_down", "missing switch spine-02"),
        ("rail2x2_degraded", "degraded link su02/node01/nic0:1--su02/leaf-r0:1: 50 of 200 Gb/s"),
    ],
)
def test_audit_differences_that_lose_no_job_still_exit_1(
    name: str, difference: str, design: str, capsys: Capsys
) -> None:
    doc = run_json(capsys, ["audit", dump(name), "--design", design, "--json"], 1)
    assert difference in doc["differences"]
    assert doc["ok"] is False
    assert doc["risk"]["ok"] is True  # within the default budget jobs_lost=0
    assert doc["risk"]["after"]["jobs_lost"] == []


def test_audit_wrong_rail_is_noted(design: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["audit", dump("rail2x2_wrong_rail"), "--design", design, "--json"], 1)
    assert (
        "wrong rail: su01/node02/nic1 (rail 1) is cabled to su01/leaf-r0 (rail 0), "
        "expected su01/leaf-r1"
    ) in doc["differences"]
    # NCCL sends its rail-1 traffic across the spines: the job runs (it was counted lost)
    assert doc["not_modelled"] == []
    assert doc["risk"]["after"]["jobs_lost"] == []
    assert doc["wrong_rail"] == [{
        "nic": "su01/node02/nic1", "leaf": "su01/leaf-r0", "job": "su01", "lost": False,
        "busbw_ratio": 1.0,
        "line": "su01/node02/nic1 is cabled to rail 0's leaf su01/leaf-r0: its rail-1 traffic "
                "crosses the spines, job su01 runs at its full bandwidth (the uplinks carry the "
                "extra hops)",
    }]  # fmt: skip


def test_audit_budget_applies_to_the_live_state(design: str, capsys: Capsys) -> None:
    doc = run_json(capsys, ["audit", dump("rail2x2_degraded"), "--design", design, "--budget",
                            "bandwidth>=0.5", "--json"], 1)  # fmt: skip
    assert doc["risk"]["ok"] is False
    assert doc["risk"]["after"]["min_job_busbw_ratio"] == 0.25  # 50 of 200 Gb/s
    assert doc["risk"]["budget_broken_by_change"] == ["bandwidth >= 0.5"]


def test_audit_bad_input_exits_2(design: str, tmp_path: Path, capsys: Capsys) -> None:
    err = run_error(capsys, ["audit", str(tmp_path / "nope.ibnetdiscover"), "--design", design])
    assert "cannot read the dump file" in err
    err = run_error(capsys, ["audit", dump("rail2x2"), "--design", "seed-a80"])
    assert "did you mean 'seed-a800'?" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent(RAIL2X2).replace("spines: 2", "spinez: 2"), encoding="utf-8")
    err = run_error(capsys, ["audit", dump("rail2x2"), "--design", str(bad)])
    assert f"error: {bad}:" in err


def test_audit_judges_with_the_design_files_routing(tmp_path: Path, capsys: Capsys) -> None:
    # the design file's routing: is the one routing of the audit: the wrong-rail cost and the
    # N+1 margin are both judged under it (they were judged under the defaults)
    text = Path("docs/examples/rail2x2.yaml").read_text(encoding="utf-8")
    for forwarding in ("ecmp", "adaptive"):
        design = tmp_path / f"rail2x2-{forwarding}.yaml"
        design.write_text(f"{text}routing: {{forwarding: {forwarding}, reroute: 3s}}\n")
        doc = run_json(capsys, ["audit", dump("rail2x2_wrong_rail"), "--design", str(design),
                                "--json"], 1)  # fmt: skip
        assert doc["risk"]["routing"]["forwarding"] == forwarding
        assert doc["risk"]["routing"]["reroute"] == "3s"
