"""Time made visible (issue 19 item 7): every step of a run says the scenario clock before and
after it, and an ``expect`` that watches the jobs says how far it moved the clock and why.

The fabric is fabrics/tiny-explicit.yaml (2 servers, 2 rails, 1 spine) under one job over both
servers; a cut access cable cuts the job off until it is reconnected.
"""

from __future__ import annotations

import html
import itertools
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.run.results import ScenarioResult
from harness.run.scenario import run_scenario
from harness.scenario.load import load_text

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "fabrics" / "tiny-explicit.yaml"
CUT = "n1/nic0:1--leaf-r0:1"


def scenario(steps: str, jobs: str = '[{name: train, nodes: "*", timeout: 10s}]') -> str:
    return (
        "name: clock\ndescription: a flap under a job\n"
        f"fabric: {{file: {TINY}}}\njobs: {jobs}\nsteps:\n{steps}"
    )


UNWATCHED = scenario(f"""\
  - inject: {{cut: "{CUT}"}}
    as: flap
  - wait: 2s
  - restore: flap
  - expect: {{jobs_lost: 0}}
""")
WATCHED = scenario(f"""\
  - inject: {{cut: "{CUT}"}}
    as: flap
  - wait: 2s
  - expect: {{jobs_lost_names: [train]}}
  - restore: flap
  - expect: {{jobs_lost: 1, jobs_unplaceable: 0}}
""")


def run(text: str) -> ScenarioResult:
    (s,) = load_text(text, Path("clock.yaml"))
    return run_scenario(s)


def test_a_flap_is_survived_and_every_step_says_the_clock() -> None:
    result = run(UNWATCHED)
    assert result.status == "passed", result.failures
    assert [s.clock for s in result.steps] == [(0, 0), (0, 2), (2, 2), (2, 2)]
    assert [s.clock_text for s in result.steps][1] == "t=0 s -> 2 s"
    assert result.steps[1].text == "waited 2 s"
    assert not any(s.clock_note for s in result.steps)  # no job was stalled when watched


def test_a_job_check_in_the_middle_watches_the_job_time_out_and_says_so() -> None:
    result = run(WATCHED)
    assert result.status == "passed", result.failures
    assert not result.mismatches  # the model backend's clock moved with the runner's
    assert [s.clock for s in result.steps] == [(0, 0), (0, 2), (2, 10), (10, 10), (10, 10)]
    watch = result.steps[2]
    assert watch.kind == "expect"
    note = "watched the jobs for their 10 s timeout: the clock moved 8 s, until train crashed"
    assert watch.clock_note == f"{note} (t=10 s)"
    (lost,) = watch.expectations
    assert "train crashed at t=10 s" in lost.detail
    assert result.to_dict()["steps"][2]["clock"] == {
        "before_s": 2.0, "after_s": 10.0, "moved_s": 8.0, "why": watch.clock_note,
    }  # fmt: skip


def test_the_watch_lasts_until_the_last_job_it_sees_crash() -> None:
    jobs = ('[{name: quick, nodes: "*", timeout: 3s}, {name: slow, nodes: "*", timeout: 20s},'
            ' {name: alone, nodes: n2}]')  # fmt: skip
    text = scenario(f"""\
  - inject: {{cut: "{CUT}"}}
  - wait: 1s
  - expect: {{jobs_lost_names: [quick, slow]}}
  - inject: {{kill: n2/nvsw0}}
  - expect: {{jobs_lost: 3}}
""", jobs)  # fmt: skip
    result = run(text)
    assert result.status == "passed", result.failures
    watch = result.steps[2]
    assert watch.clock == (1.0, 20.0)  # slow, cut off since t=0, crashes at its 20 s timeout
    assert watch.clock_note.startswith("watched the jobs for their 3 s / 20 s timeout: the clock "
                                       "moved 19 s, until quick, slow crashed")  # fmt: skip
    # an NVSwitch lost under a running job crashes it at once: nothing to wait for
    assert result.steps[4].clock == (20.0, 20.0)
    assert result.steps[4].clock_note == ""


def test_a_reroute_crash_is_seen_at_its_timeout() -> None:
    text = """
name: reroute-watch
description: a spine killed under a job across SUs whose timeout is below the reroute
fabric: {generator: two-tier, params: {sus: 2, nodes_per_su: 1, spines: 2, leaf_radix: 8,
         storage: false}}
routing: {reroute: 1s}
jobs: [{name: train, nodes: "*", timeout: 0.5s}]
steps:
  - wait: 3s
  - inject: {kill: spine-01}
  - expect: {jobs_lost: 1}
"""
    result = run(text)
    assert result.status == "passed", result.failures
    # the kill at t=3 s stalls the job for the 1 s reroute: it gives up at 3.5 s
    assert result.steps[2].clock == (3.0, 3.5)
    assert "the clock moved 0.5 s, until train crashed (t=3.5 s)" in result.steps[2].clock_note


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["cut", "restore", "watch", "check"]),
                          st.integers(1, 12)), min_size=1, max_size=6))  # fmt: skip
def test_the_clock_runs_forward_step_after_step(events: list[tuple[str, int]]) -> None:
    """The clock never runs back, each step starts where the last ended, it moves only by a
    wait or a watch that saw a job crash, and no job has crashed later than the clock after a
    watch."""
    lines, cut = [], False
    for what, seconds in events:
        if what == "cut" and not cut:
            lines.append(f'  - inject: {{cut: "{CUT}"}}\n    as: c')
            cut = True
        elif what == "restore" and cut:
            lines.append("  - restore: c")
            cut = False
        elif what == "watch":
            lines.append("  - expect: {jobs_lost: 0}")  # may fail: the clock is judged
        else:
            lines.append("  - expect: {nics_isolated: 0}")
        lines.append(f"  - wait: {seconds}s")
    result = run(scenario("\n".join(lines) + "\n"))
    assert result.status in ("passed", "failed")
    assert not result.mismatches  # the model backend's clock and the runner's agree
    clocks = [s.clock for s in result.steps]
    assert all(a <= b for a, b in clocks)
    assert all(prev[1] == nxt[0] for prev, nxt in itertools.pairwise(clocks))
    for step in result.steps:
        moved = step.clock[1] - step.clock[0]
        if step.kind != "wait":
            assert (moved > 0) == bool(step.clock_note), step
        if step.clock_note:
            assert step.kind == "expect"
            assert f"the clock moved {moved:g} s" in step.clock_note


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True,
                          text=True, check=False, timeout=120)  # fmt: skip


def test_the_console_junit_and_html_show_the_clock(tmp_path: Path) -> None:
    path = tmp_path / "watched.yaml"
    path.write_text(WATCHED, encoding="utf-8")
    done = _harness("run", str(path), "--junit-xml", str(tmp_path / "j.xml"),
                    "--report", str(tmp_path / "html"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [" ".join(line.split()) for line in done.stdout.splitlines()]
    assert "wait waited 2 s t=0 s -> 2 s" in lines
    assert "expect checked 1/1 expectation t=2 s -> 10 s" in lines
    note = ("watched the jobs for their 10 s timeout: the clock moved 8 s, until train crashed "
            "(t=10 s)")  # fmt: skip
    assert lines[lines.index("expect checked 1/1 expectation t=2 s -> 10 s") + 1] == note
    assert "expect checked 2/2 expectations t=10 s -> 10 s" in lines

    out = ET.parse(tmp_path / "j.xml").getroot().find("testsuite/testcase/system-out")
    assert out is not None
    assert out.text is not None
    assert "watched.yaml:9:5: expect: checked 1/1 expectation (t=2 s -> 10 s)" in out.text
    assert f"    {note}" in out.text.splitlines()

    page = html.unescape((tmp_path / "html" / "index.html").read_text(encoding="utf-8"))
    assert "t=2 s -> 10 s" in page
    assert note in page
