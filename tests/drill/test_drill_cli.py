"""``harness drill``, ``harness halt`` and ``harness journal`` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from harness.cli import main
from tests.drill.conftest import drill_text

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "scenarios").glob("drill-*.yaml"))


def test_the_shipped_drills_pass_on_the_model_with_journals(
    tmp_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(SHIPPED) >= 4
    code = main(["drill", *map(str, SHIPPED), "--journal", str(tmp_path / "j"),
                 "--junit-xml", str(tmp_path / "drills.xml")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    names = [p.name for p in (tmp_path / "j").iterdir()]
    assert "drill-leaf-loss" in names
    assert "drill-hung-spine-bgp-with-bfd" in names
    for d in (tmp_path / "j").iterdir():
        assert (d / "journal.json").is_file()
        assert (d / "journal.jsonl").is_file()
    leaf = json.loads((tmp_path / "j" / "drill-leaf-loss" / "journal.json").read_text())
    assert leaf["status"] == "passed"
    assert leaf["reason"].startswith("aborted as the drill expects")
    assert leaf["rollback"][0]["status"] == "rolled back"
    assert "train crashed at t=6 s" in leaf["reason"]
    assert leaf["versions"]["kernel"]
    suite = ET.parse(tmp_path / "drills.xml").getroot()
    assert suite.get("tests") == str(len(names))
    assert suite.get("failures") == "0"
    assert "PASSED drill-rolling-spine-maintenance on model" in out


def test_journal_show_diff_and_replay(
    tmp_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leaf = str(REPO / "scenarios" / "drill-leaf-loss.yaml")
    assert main(["drill", leaf, "--journal", str(tmp_path / "a")]) == 0
    assert main(["drill", leaf, "--journal", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    assert main(["journal", "show", str(tmp_path / "a")]) == 0
    shown = capsys.readouterr().out
    assert "t=1 s inject killed su01/leaf-r1 [leaf]: applied" in shown
    assert main(["journal", "diff", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "the journals agree" in capsys.readouterr().out
    doc = json.loads((tmp_path / "b" / "journal.json").read_text())
    doc["events"][0]["actual_s"] = 1.5  # 50 % later: beyond the 10 % tolerance
    doc["status"] = "failed"
    (tmp_path / "b" / "journal.json").write_text(json.dumps(doc))
    assert main(["journal", "diff", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    diff = capsys.readouterr().out
    assert "status: passed -> failed" in diff
    assert "inject leaf: actual_s 1 -> 1.5" in diff
    assert main(["drill", "--replay", str(tmp_path / "a")]) == 0
    assert "the predicted half is identical" in capsys.readouterr().out
    doc = json.loads((tmp_path / "a" / "journal.json").read_text())
    doc["events"][0]["predicted"] = ["something else"]
    (tmp_path / "a" / "journal.json").write_text(json.dumps(doc))
    assert main(["drill", "--replay", str(tmp_path / "a")]) == 1
    assert "replay differs in events" in capsys.readouterr().out


def test_json_output_and_bad_input(
    tmp_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(drill_text("time_limit: 1m\ntimeline: [{at: 0s, inject: {drain: spine-01}, "
                            "hold: 2s}]\n"))  # fmt: skip
    assert main(["drill", str(f), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["status"] for d in doc["drills"]] == ["passed"]
    assert [e["action"] for e in doc["drills"][0]["events"]] == ["inject", "restore"]
    plain = tmp_path / "plain.yaml"
    plain.write_text("name: p\ndescription: x\nfabric: {preset: seed-a800}\n"
                     "steps: [{inject: {kill: spine-01}}]\n")  # fmt: skip
    assert main(["drill", str(plain)]) == 2
    assert "no drill (a scenario with a drill: section)" in capsys.readouterr().err


def test_halt_is_idempotent_and_names_what_it_stops(
    tmp_path: Path, state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leaf = str(REPO / "scenarios" / "drill-leaf-loss.yaml")
    assert main(["halt", "--all"]) == 0
    assert main(["halt", "--all"]) == 0  # idempotent
    assert "new drills are refused until harness halt --release" in capsys.readouterr().out
    assert main(["drill", leaf]) == 0  # on the model nothing is touched: never refused
    assert main(["halt", "--release"]) == 0
    assert main(["halt", "--release"]) == 0
    assert main(["halt", "--list"]) == 0
    assert main(["halt", "nothing-runs"]) == 2
    assert "no running drill is called 'nothing-runs'" in capsys.readouterr().err


def _snapshot(root: Path) -> tuple[list[str], list[str], list[str]]:
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                           check=False).stdout.split()  # fmt: skip
    files = sorted(str(p) for p in root.rglob("*")) if root.exists() else []
    procs = sorted(p.name for p in Path("/proc").iterdir() if p.name.isdigit()
                   and p.name != str(os.getpid()))  # fmt: skip
    return netns, files, procs


def test_a_dry_run_touches_nothing_on_any_backend(tmp_path: Path) -> None:
    """``--dry-run --backend netns``: the prediction, and no namespace, ledger entry, lever file
    or process left, nothing written outside the journal directory."""
    env = {**os.environ, "HARNESS_STATE_DIR": str(tmp_path / "state" / "run")}
    before = _snapshot(tmp_path / "state")
    done = subprocess.run(
        [sys.executable, "-m", "harness", "drill", str(REPO / "scenarios" / "drill-leaf-loss.yaml"),
         "--backend", "netns", "--dry-run", "--journal", str(tmp_path / "j")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(dry run: predicted, nothing touched)" in done.stdout
    after = _snapshot(tmp_path / "state")
    assert after[0] == before[0]  # no namespace
    assert after[1] == before[1] == []  # no ledger, no lever registration
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j"]  # not even the state root
    assert sorted(p.name for p in (tmp_path / "j").iterdir()) == ["journal.json", "journal.jsonl"]
    # no process of the dry run lives on (its children would carry its state root)
    mark = str(tmp_path / "state").encode()
    left = []
    for p in (x for x in after[2] if x not in before[2]):
        try:
            if mark in Path(f"/proc/{p}/environ").read_bytes():
                left.append(p)
        except OSError:
            continue
    assert left == []


def test_the_command_line_states_the_runners_time_tolerance() -> None:
    from harness.cli import drill as cli_drill
    from harness.run.drill.results import TIME_TOLERANCE

    assert cli_drill.TIME_TOLERANCE == TIME_TOLERANCE
