"""Hostile files and values on the command line: exit 2 with the place, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main

Capsys = pytest.CaptureFixture[str]
DUMPS = Path(__file__).resolve().parents[1] / "data" / "importers"


def run_error(capsys: Capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scheduler", "::::"], "argument --scheduler: '::::' is not a scheduler address"),
        (["--plot", "out.txt"], "argument --plot: 'out.txt': a plot is written as an image"),
        (["--pairs", "-5"], "argument --pairs: must be >= 0, got -5"),
        (["--depth", "2", "--pairs", "1000000000000"],
         "argument --pairs: must be at most 1,000,000 (MAX_PAIRS), got 1000000000000"),
        (["--pairs", "10**12"], "argument --pairs: '10**12' is not a whole number"),
        (["--pairs", "true"], "argument --pairs: 'true' is not a whole number"),
        (["--top", "0"], "argument --top: must be >= 1, got 0"),
        (["--seed", "-1"], "argument --seed: must be >= 0, got -1"),
        (["--workers", "100000"], "argument --workers: must be at most 1,024 (MAX_WORKERS)"),
    ],
)  # fmt: skip
def test_sweep_values(argv: list[str], message: str, capsys: Capsys) -> None:
    assert message in run_error(capsys, ["sweep", "seed-a800", *argv])


def hostile(tmp_path: Path, kind: str) -> Path:
    p = tmp_path / f"input-{kind}"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "directory":
        p.mkdir()
    elif kind == "binary":
        p.write_bytes(b"- kill: spine-01\n\x89PNG\r\n\x1a\n\x00\x00\x00")
    elif kind == "nul":
        p.write_bytes(b"- kill: spine-01\n- kill: spine-\x0002\n")
    return p


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("fifo", "is a FIFO (named pipe), not a regular file"),
        ("directory", "is a directory, not a regular file"),
        ("binary", ":2:1: the {what} file is not UTF-8 text (byte 0x89"),
        ("nul", ":2:15: the {what} file contains a NUL byte"),
    ],
)
@pytest.mark.parametrize("option", ["--jobs", "--state"])
def test_jobs_and_state_files_that_are_not_text(
    tmp_path: Path, capsys: Capsys, kind: str, message: str, option: str
) -> None:
    path = hostile(tmp_path, kind)
    what = option.removeprefix("--")
    argv = ["risk", "seed-a800", "--change", "drain spine-05", option, str(path)]
    err = run_error(capsys, argv)
    expected = message.format(what=what)
    assert (f"{path}{expected}" if expected.startswith(":") else f"{path}: the ") in err
    assert expected.lstrip(":0123456789 ") in err


def test_an_audit_of_a_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = hostile(tmp_path, "fifo")
    result = subprocess.run(
        [sys.executable, "-c", "from harness.cli import entrypoint; entrypoint()", "audit",
         str(fifo)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert f"{fifo}: the dump file is a FIFO (named pipe), not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_state_file_problem_found_late_names_the_file_and_line(
    tmp_path: Path, capsys: Capsys
) -> None:
    state = tmp_path / "state.yaml"
    state.write_text("- kill: spine-01\n- kill: spine-99\n", encoding="utf-8")
    err = run_error(capsys, ["risk", "seed-a800", "--change", "drain spine-05",
                             "--state", str(state)])  # fmt: skip
    assert f"{state}:2:3:" in err
    assert "spine-99" in err


def test_a_jobs_file_problem_found_late_names_the_file_and_line(
    tmp_path: Path, capsys: Capsys
) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("- {name: a, nodes: 'su01/*'}\n- {name: a, nodes: 'su02/*'}\n")
    err = run_error(capsys, ["sweep", "seed-a800", "--jobs", str(jobs)])
    assert f"{jobs}:2:3: two jobs are named 'a'" in err


def test_a_dump_with_an_unknown_rate_is_not_the_design(tmp_path: Path, capsys: Capsys) -> None:
    text = (DUMPS / "rail2x2.ibnetdiscover").read_text(encoding="utf-8")
    dump = tmp_path / "bad.ibnetdiscover"
    dump.write_text(text.replace("lid 14 4xHDR", "lid 14 4xFOO", 1), encoding="utf-8")
    err = run_error(capsys, ["audit", str(dump)])
    assert f"{dump}:11:" in err
    assert "unknown link rate '4xFOO'" in err


def test_a_dump_with_binary_garbage_appended_is_not_the_design(
    tmp_path: Path, capsys: Capsys
) -> None:
    dump = tmp_path / "garbage.ibnetdiscover"
    dump.write_bytes((DUMPS / "rail2x2.ibnetdiscover").read_bytes() + os.urandom(64) + b"\x00")
    err = run_error(capsys, ["audit", str(dump)])
    assert str(dump) in err
    assert "not UTF-8 text" in err or "NUL byte" in err or "control character" in err
