"""Output that survives a pipe, progress for long work, and the words in between."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.fabric import preset
from harness.reporting.console import PIPE_WIDTH
from harness.reporting.console import make_console
from harness.reporting.progress import ProgressReporter
from harness.words import plural

HARNESS = [str(Path(sys.executable).parent / "harness")]


def _harness(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command with stdout and stderr to pipes, as in a CI log, on an 80-column 'terminal'."""
    environ = {**os.environ, "COLUMNS": "80", **env}
    environ.pop("FORCE_COLOR", None)
    return subprocess.run(
        [*HARNESS, *args], capture_output=True, text=True, env=environ, check=False
    )


# -- full ids off a terminal -------------------------------------------------------------
def test_sweep_table_prints_every_nic_group_in_full_through_a_pipe() -> None:
    """Alike NICs (one NIC index on the servers of one SU) are one row, named whole."""
    done = _harness("sweep", "seed-a800", "--elements", "nics", "--top", "800")
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    f = preset("seed-a800")
    groups = sorted({re.sub(r"node\d+", "node01..20", f.ids[i]) for i in f.nics.tolist()})
    rows = re.findall(r"^│ (su\d+/node01\.\.20/nic\d+): 20 alike +│", done.stdout, re.M)
    assert sorted(rows) == groups
    assert len(rows) == 40
    assert "su05/node01..20/nic1" in rows


def test_run_prints_full_ids_through_a_pipe(tmp_path: Path) -> None:
    path = tmp_path / "optic.yaml"
    path.write_text(
        "name: a-scenario-with-a-rather-long-name-that-would-not-fit-a-narrow-table-column\n"
        "description: one access optic\n"
        "fabric: {preset: seed-a800}\n"
        "jobs: [per-su]\n"
        "steps:\n"
        "  - inject: {optic: {tier: access, su: 5, node: 7, rail: 1, end: lower}}\n"
        "  - expect: {jobs_lost: 0}\n",
        encoding="utf-8",
    )
    done = _harness("run", str(path))
    assert done.returncode == 1
    assert "…" not in done.stdout
    assert "optic failed on su05/node07/nic1:1" in done.stdout
    assert "stalled 1 of 10 jobs: su05" in done.stdout
    assert "su05 crashed at t=34.36 s: su05/node07/nic1 (rail 1)" in done.stdout
    table_rows = [line for line in done.stdout.splitlines() if line.startswith("│ a-scenario")]
    assert len(table_rows) == 1
    assert (
        "a-scenario-with-a-rather-long-name-that-would-not-fit-a-narrow-table-column"
        in (table_rows[0])
    )


def test_make_console_is_wide_off_a_terminal_and_keeps_a_terminal_width() -> None:
    assert make_console(io.StringIO()).width == PIPE_WIDTH

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = make_console(Tty())
    assert tty.is_terminal
    assert tty.width != PIPE_WIDTH


# -- progress ---------------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_lines_every_interval_and_a_last_one() -> None:
    out, clock = io.StringIO(), Clock()
    with ProgressReporter("sweep", "case", stream=out, interval=5, clock=clock) as progress:
        for done in range(0, 10_001, 1000):
            progress(done, 10_000)
            clock.now += 2.0  # 2 s per 1,000 cases
    assert out.getvalue().splitlines() == [
        "sweep: 3,000 of 10,000 cases (30%), 6.0 s",
        "sweep: 6,000 of 10,000 cases (60%), 12.0 s",
        "sweep: 9,000 of 10,000 cases (90%), 18.0 s",
        "sweep: 10,000 of 10,000 cases (100%), 22.0 s",
    ]


def test_quick_work_prints_no_progress() -> None:
    out = io.StringIO()
    with ProgressReporter("sweep", "case", stream=out, interval=5, clock=Clock()) as progress:
        progress(0, 1)
        progress(1, 1)
    assert out.getvalue() == ""


def test_progress_can_be_silenced_and_says_one_case() -> None:
    out = io.StringIO()
    with ProgressReporter("x", "case", stream=out, interval=0, enabled=False) as progress:
        progress(1, 1)
    assert out.getvalue() == ""
    with ProgressReporter("x", "case", stream=out, interval=0) as progress:
        progress(1, 1)
    assert out.getvalue() == "x: 1 of 1 case (100%), 0.0 s\n"


def test_progress_on_a_terminal_draws_a_bar_not_lines() -> None:
    out = io.StringIO()
    with ProgressReporter("sweep", "case", stream=out, interval=0, terminal=True) as progress:
        assert progress._bar is not None
        progress(5, 10)
        progress(10, 10)
    assert "sweep: " not in out.getvalue()


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (["sweep", "seed-a800", "--elements", "switches"], "sweep"),
        (["risk", "seed-a800", "--change", "drain spine-03", "--elements", "switches"],
         "N+1 margin"),
    ],
)  # fmt: skip
def test_cli_prints_progress_lines_to_stderr_off_a_terminal(args: list[str], label: str) -> None:
    done = _harness(*args, "--json", HARNESS_PROGRESS_INTERVAL="0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.lstrip().startswith("{")  # stdout keeps the JSON document only
    lines = done.stderr.splitlines()
    assert lines
    assert all(
        re.fullmatch(rf"{re.escape(label)}: [\d,]+ of [\d,]+ cases \(\d+%\), [\d.]+ s", x)
        for x in lines
    )
    assert re.search(r"of ([\d,]+) cases \(100%\)", lines[-1])


def test_bad_progress_interval_is_bad_input(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("HARNESS_PROGRESS_INTERVAL", "soon")
    assert main(["sweep", "seed-a800", "--elements", "switches"]) == 2
    assert "HARNESS_PROGRESS_INTERVAL='soon'" in capsys.readouterr().err


# -- words ---------------------------------------------------------------------------------------
ONE = """\
name: one
description: one job, one spine
fabric: {preset: seed-a800}
jobs:
  - {name: big, nodes: "su0[1-2]/*"}
steps:
  - inject: {drain: spine-02}
    as: s
  - expect: {jobs_lost: 0}
  - restore: s
"""


def test_singular_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(ONE, encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == "1 scenario in 1 file is valid\n"
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the job survives" in out
    assert "all 1 jobs" not in out
    assert "restore spine-02 back in service" in out
    assert "restored" not in out
    assert "1 passed, 0 failed, 0 errors in" in out


def test_restore_words_per_fault_kind() -> None:
    from harness.faults.fault import Fault

    f = preset("seed-a800")
    said = {
        "kill": "spine-05 back up",
        "drain": "spine-05 back in service",
    }
    for kind, text in said.items():
        assert Fault.parse({kind: "spine-05"}).resolve(f).describe_restore(f) == text
    cable = "su01/leaf-r0:21--spine-01:1"
    assert Fault.parse({"cut": cable}).resolve(f).describe_restore(f) == f"{cable} reconnected"
    assert Fault.parse({"optic": "spine-01:1"}).resolve(f).describe_restore(f) == (
        "optic replaced on spine-01:1"
    )
    degrade = Fault.parse({"degrade": {"target": cable, "fraction": 0.5}})
    assert degrade.resolve(f).describe_restore(f) == f"{cable} back to full speed"


def test_plural() -> None:
    assert [plural(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]
    assert plural(12_345, "case") == "12,345 cases"
    assert plural(2, "switch") == "2 switches"
