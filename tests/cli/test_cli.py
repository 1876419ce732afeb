"""The ``harness`` command: every subcommand, exit codes and output formats."""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness import cli
from harness.cli import main
from harness.errors import BackendError
from harness.fabric.presets import PRESETS
from harness.run import scenario as run_stage

PASSING = """\
name: one-spine
description: Kill one spine; every job survives and every GPU pair can talk.
tags: [seed, spine]
fabric:
  preset: seed-a800
jobs:
  - per-su: true
steps:
  - inject: {kill: spine-05}
  - expect:
      jobs_lost: 0
      all_gpus_connected: true
"""

FAILING = """\
name: wrong-hope
description: Kill one spine and (wrongly) hope the leaves keep all their uplinks.
tags: [seed]
fabric:
  preset: seed-a800
steps:
  - inject: {kill: spine-05}
  - expect:
      leaf_uplink_ratio: 1.0
"""

NETNS_ONLY = """\
name: needs-netns
description: Only meaningful with real routing.
backends: [netns]
fabric:
  preset: seed-a800
steps:
  - inject: {kill: spine-05}
  - expect:
      jobs_lost: 0
"""

# Line 8 has the typo ('kil'), line 9 an unknown key.
BAD = """\
name: bad-one
description: A fault kind with a typo.
fabric:
  preset: seed-a800
jobs:
  - per-su: true
steps:
  - inject: {kil: spine-05}
  - expectt:
      jobs_lost: 0
"""

# Loads fine; only the run finds that no element matches.
NO_MATCH = """\
name: no-such-spine
description: A selector that matches nothing.
fabric:
  preset: seed-a800
steps:
  - inject: {kill: spine-99}
  - expect:
      jobs_lost: 0
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path / "scenarios", {"one.yaml": PASSING, "sub/netns.yml": NETNS_ONLY})


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    return write(tmp_path / "scenarios", {"one.yaml": PASSING, "two.yaml": FAILING})


# -- run ---------------------------------------------------------------------------------
def test_run_all_pass_exits_0(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(good)]) == 0
    out, err = capsys.readouterr()
    assert "PASSED  one-spine  seed-a800" in out
    assert "killed spine-05" in out
    assert "1 passed, 0 failed, 0 errors, 1 skipped" in out
    assert "note: skipped needs-netns: runs on netns, not on backend model" in err


def test_run_a_failed_expectation_exits_1(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(mixed)]) == 1
    out, _ = capsys.readouterr()
    assert "FAILED  wrong-hope" in out
    assert "expectation failed: leaf_uplink_ratio" in out
    assert "two.yaml:" in out
    assert "1 passed, 1 failed, 0 errors" in out


def test_run_json(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(mixed), "--json"]) == 1
    out, _ = capsys.readouterr()
    doc = json.loads(out)  # stdout carries the JSON document only
    assert (doc["passed"], doc["failed"], doc["errors"], doc["total"]) == (1, 1, 0, 2)
    assert doc["backend"] == "model"
    names = {s["name"]: s for s in doc["scenarios"]}
    assert names["wrong-hope"]["status"] == "failed"
    (failure,) = [e for s in names["wrong-hope"]["steps"] for e in s["expectations"]]
    assert failure["observed"] == pytest.approx(0.95)
    assert failure["where"].startswith(str(mixed / "two.yaml") + ":")


def test_run_junit_xml(mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "reports" / "harness.xml"
    assert main(["run", str(mixed), "--quiet", "--junit-xml", str(target)]) == 1
    root = ET.parse(target).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    counts = (suite.attrib["tests"], suite.attrib["failures"], suite.attrib["errors"])
    assert counts == ("2", "1", "0")
    failures = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.attrib["name"] for c in failures] == ["wrong-hope"]
    out, _ = capsys.readouterr()
    assert "PASSED" not in out  # quiet


def test_run_junit_xml_unwritable_is_an_environment_error(
    mixed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["run", str(mixed), "-q", "--junit-xml", str(blocker / "x.xml")]) == 3
    assert "error: environment: cannot write the JUnit report" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("expr", "ran"),
    [
        ("one", ["one-spine"]),
        ("ONE or hope", ["one-spine", "wrong-hope"]),
        ("spine and not wrong", ["one-spine"]),
        ("not (one or wrong)", []),
    ],
)
def test_run_k_filter(
    mixed: Path, expr: str, ran: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(mixed), "-k", expr, "--json"])
    out, err = capsys.readouterr()
    if not ran:
        assert code == 2
        assert f"error: nothing ran: no scenario in 2 files matched -k {expr!r}" in err
        return
    assert sorted(s["name"] for s in json.loads(out)["scenarios"]) == ran


@pytest.mark.parametrize("expr", ["", "and one", "(one", "one two", "one or", "not", "one )"])
def test_run_bad_k_expression_exits_2(
    mixed: Path, expr: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(mixed), "-k", expr]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: -k {expr!r}")
    assert "Traceback" not in err


def test_run_tag_filter(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(mixed), "--tag", "spine", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in doc["scenarios"]] == ["one-spine"]
    assert main(["run", str(mixed), "--tag", "nope", "--tag", "seed", "--json"]) == 1


def test_run_bad_file_exits_2_with_located_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write(tmp_path / "scenarios", {"bad.yaml": BAD, "one.yaml": PASSING})
    assert main(["run", str(root)]) == 2
    out, err = capsys.readouterr()
    bad = str(root / "bad.yaml")
    assert f"error: {bad}:8:" in err
    assert "Traceback" not in err + out
    assert "PASSED  one-spine" in out  # the good file still ran
    assert "ERROR   bad.yaml" in out


def test_run_bad_file_is_an_error_in_json_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write(tmp_path / "scenarios", {"bad.yaml": BAD})
    xml = tmp_path / "junit.xml"
    assert main(["run", str(root), "--json", "--junit-xml", str(xml)]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert (doc["errors"], doc["total"]) == (1, 1)
    case = ET.parse(xml).getroot().find("testsuite/testcase")
    assert case is not None
    error = case.find("error")
    assert error is not None
    assert f"{root / 'bad.yaml'}:8:" in (error.text or "")


def test_run_selector_matching_nothing_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write(tmp_path / "scenarios", {"nomatch.yaml": NO_MATCH, "one.yaml": PASSING})
    assert main(["run", str(root)]) == 2
    out, err = capsys.readouterr()
    assert "spine-99" in err
    assert f"{root / 'nomatch.yaml'}:" in err
    assert "Traceback" not in err + out
    assert "PASSED  one-spine" in out


def test_run_missing_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert "Traceback" not in err


def test_run_empty_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path)]) == 2
    assert "error: no scenario files (*.yaml, *.yml) under" in capsys.readouterr().err


def test_backend_error_anywhere_exits_3(
    good: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_: object, **__: object) -> None:
        msg = "ip link add failed"
        raise BackendError(msg, OSError(1, "Operation not permitted"))

    monkeypatch.setattr(run_stage, "run_scenario", broken)
    assert main(["run", str(good)]) == 3
    assert "error: environment: ip link add failed: [Errno 1]" in capsys.readouterr().err


def test_keyboard_interrupt_exits_130(
    good: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_stage, "run_scenario", interrupted)
    assert main(["run", str(good)]) == 130
    assert "error: interrupted" in capsys.readouterr().err


# -- validate ----------------------------------------------------------------------------
def test_validate_valid(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(good)]) == 0
    assert capsys.readouterr().out == "2 scenarios in 2 files are valid\n"


def test_validate_reports_every_problem_of_every_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write(
        tmp_path / "scenarios",
        {"a.yaml": BAD, "b.yaml": BAD.replace("bad-one", "bad-two"), "c.yaml": PASSING},
    )
    assert main(["validate", str(root / "a.yaml"), str(root)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("error: ")
    assert lines[0].endswith("in 2 of 3 files")
    for name in ("a.yaml", "b.yaml"):
        located = [line for line in lines if line.startswith(f"error: {root / name}:")]
        assert any(":8:" in line for line in located)  # the typo
        assert any(":9:" in line for line in located)  # the unknown key
    assert "Traceback" not in err


# -- show --------------------------------------------------------------------------------
def test_show_json_seed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "seed-a800", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {k: doc[k] for k in ("nodes", "gpus", "rails", "leaves", "spines", "cores")}
    assert got == {"nodes": 200, "gpus": 1600, "rails": 4, "leaves": 40, "spines": 20, "cores": 0}
    assert doc["links"] > 0
    assert doc["name"] == "seed-a800"
    tiers = {t["tier"]: t for t in doc["tier_usage"]}
    assert tiers["leaf"]["oversubscription"] == pytest.approx(1.0)


def test_show_human(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "seed-a800"]) == 0
    out = capsys.readouterr().out
    assert "fabric seed-a800" in out
    assert "1,600" in out
    assert "ports per tier" in out


def test_show_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "--list"]) == 0
    out = capsys.readouterr().out
    for name in PRESETS:
        assert name in out
    assert main(["show", "--list", "--json"]) == 0
    descriptions = json.loads(capsys.readouterr().out)
    assert set(descriptions) == set(PRESETS)
    assert descriptions["seed-a800"].startswith("the seed cluster: 10 SUs x 20 A800 nodes")
    assert all("\n" not in d for d in descriptions.values())


def test_show_unknown_preset_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "seed-a80"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown fabric preset 'seed-a80'; did you mean 'seed-a800'?")


def test_show_needs_a_fabric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show"]) == 2
    assert "error: show needs a FABRIC" in capsys.readouterr().err


def test_show_missing_fabric_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(tmp_path / "lab.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err


# -- the parser --------------------------------------------------------------------------
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["run"]) == 2
    assert main(["run", "x", "--backend", "nope"]) == 2
    assert main(["frobnicate"]) == 2
    assert "usage: harness" in capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in cli.COMMANDS:
        assert cmd.name in out


def test_entrypoint_raises_system_exit(
    good: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["harness", "validate", str(good)])
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        with pytest.raises(SystemExit) as info:
            cli.entrypoint()
        assert info.value.code == 0
        assert "valid" in capsys.readouterr().out
        # the process ends now: a late stop signal is ignored process-wide (finalization
        # would put back the default actions of Python's handlers: killed, status -15)
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in saved)
    finally:
        for s, h in saved.items():
            signal.signal(s, h)  # this pytest worker's own
    child = subprocess.run(
        ["sh", "-c", "kill -TERM $$; sleep 5"], timeout=10, check=False
    )  # put back, a child of this process dies of SIGTERM again
    assert child.returncode == -signal.SIGTERM


def test_a_command_that_cleaned_up_ignores_a_late_signal_but_its_children_do_not(
    good: Path,
) -> None:
    """``main(exiting=True)`` (before the process ends) leaves a do-nothing handler, not
    ``SIG_IGN``: a child started then still dies of SIGTERM."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        assert main(["validate", str(good)], exiting=True) == 0
        assert all(signal.getsignal(s) not in (signal.SIG_IGN, h) for s, h in saved.items())
        child = subprocess.run(["sh", "-c", "kill -TERM $$; sleep 5"], timeout=10, check=False)
        assert child.returncode == -signal.SIGTERM
    finally:
        for s, h in saved.items():
            signal.signal(s, h)


LAB = """\
name: lab
description: two SUs of four A800 servers
generator: two-tier
params: {sus: 2, nodes_per_su: 4, node: a800, spines: 2, leaf_radix: 8}
"""


def test_show_fabric_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB)
    assert main(["show", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["nodes"], doc["gpus"], doc["rails"], doc["leaves"], doc["spines"]) == (
        8,
        64,
        4,
        8,
        2,
    )
    assert main(["show", str(path)]) == 0
    assert "ports per tier" in capsys.readouterr().out


def test_show_bad_fabric_file_exits_2_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB.replace("params:", "parms:"))
    assert main(["show", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert all(line.startswith(f"error: {path}:") for line in lines)
    assert any(line.startswith(f"error: {path}:4:1: [parms]") for line in lines)
    assert not any("Traceback" in line for line in lines)


def test_python_dash_m_harness_is_the_same_command_line() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "harness", "show", "seed-a800", "--json"],
                          capture_output=True, text=True, check=False, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "seed-a800"
    bad = subprocess.run([sys.executable, "-m", "harness", "show", "seed-a900"],
                         capture_output=True, text=True, check=False, timeout=120)  # fmt: skip
    assert bad.returncode == 2
    assert "seed-a800" in bad.stderr  # the did-you-mean of the real CLI
