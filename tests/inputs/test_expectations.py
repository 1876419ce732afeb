"""Expectations that cannot be vacuous: strict ranges, no nan, bounds inside what can be seen."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.observations.expect import Expect
from harness.observations.registry import OBSERVATIONS
from harness.observations.registry import VALUE_RANGES
from harness.scenario.load import load_text

SCENARIO = """\
name: x
description: d
fabric: {preset: seed-a800}
jobs: [per-su]
checkpoint: {size_gb: 100, sharded: true, interval_s: 600}
steps:
  - expect: {EXPECT}
"""


def problem(expect: str) -> str:
    with pytest.raises(ScenarioError) as info:
        load_text(SCENARIO.replace("EXPECT", expect))
    (p,) = info.value.problems
    assert p.line == 7
    return p.message


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("jobs_lost: 'e..e'",
         "range 'e..e': both ends must be finite numbers, e.g. '0.9..1.0' (not nan, inf or words)"),
        ("jobs_lost: '1..2..3'", "range '1..2..3' has 2 '..'; a range is LOW..HIGH"),
        ("jobs_lost: '..'", "range '..': both ends must be finite numbers"),
        ("jobs_lost: 'nan..1'", "range 'nan..1': both ends must be finite numbers"),
        ("min_job_busbw_ratio: '!= nan'",
         "'!= nan': != needs a number, e.g. '>= 0.9'; a comparison with nan or inf checks nothing"),
        ("min_job_busbw_ratio: '< inf'", "'< inf': < needs a number"),
        ("min_job_busbw_ratio: .nan", "cannot expect nan: give a finite number"),
        ("min_job_busbw_ratio: .inf", "cannot expect inf: give a finite number"),
        ("node_nic_gbs: '< 0'",
         "node_nic_gbs is 0 or more, so '< 0' can never hold; expect a value inside that range"),
        ("job_busbw_gbs: '-5..-1'", "job_busbw_gbs is 0 or more, so '-5..-1' can never hold"),
        ("bisection_ratio: '> 1'", "bisection_ratio is from 0 to 1, so '> 1' can never hold"),
        ("bisection_ratio: '<= 2'",
         "bisection_ratio is from 0 to 1, so '<= 2' always holds and checks nothing"),
        ("jobs_lost: '>= 0'", "jobs_lost is 0 or more, so '>= 0' always holds and checks nothing"),
        ("jobs_lost: -1", "jobs_lost is 0 or more, so '-1' can never hold"),
        ("checkpoint_sync_stall_s: '< -1'", "checkpoint_sync_stall_s is 0 or more, so '< -1'"),
        ("jobs_lost: '>= lots'", "'>= lots': >= needs a number, e.g. '>= 0.9'"),
    ],
)  # fmt: skip
def test_vacuous_or_broken_expectations_are_located_errors(expect: str, message: str) -> None:
    assert problem(expect).startswith(message)


@pytest.mark.parametrize(
    "expect",
    ["jobs_lost: 0", "min_job_busbw_ratio: '>= 0.9'", "bisection_ratio: '0.5..1'",
     "node_nic_gbs: '> 10'", "checkpoint_sync_stall_s: '< 60'", "jobs_lost: '-1..0'",
     "bisection_ratio: 1", "jobs_lost: '!= 0'"],
)  # fmt: skip
def test_meaningful_expectations_still_load(expect: str) -> None:
    assert load_text(SCENARIO.replace("EXPECT", expect))


def test_every_numeric_observation_declares_its_range() -> None:
    numeric = {n for n, d in OBSERVATIONS.items() if d.value_type in ("number", "integer")}
    assert numeric <= set(VALUE_RANGES)
    for name, (low, high) in VALUE_RANGES.items():
        assert OBSERVATIONS[name].value_range == (low, high)
        assert low <= high


def test_vacuity_rules() -> None:
    r = (0.0, 1.0)
    assert Expect.parse("< 0").vacuity(*r) == "'< 0' can never hold"
    assert Expect.parse("<= 0").vacuity(*r) is None
    assert Expect.parse("> 1").vacuity(*r) == "'> 1' can never hold"
    assert Expect.parse(">= 1").vacuity(*r) is None
    assert Expect.parse("!= 3").vacuity(*r) == "'!= 3' always holds and checks nothing"
    assert Expect.parse("0..1").vacuity(*r) == "'0..1' always holds and checks nothing"
    assert Expect.parse("0.5..7").vacuity(*r) is None
    assert Expect.parse("cross-su").vacuity(*r) is None
    assert Expect.parse([1, 2]).vacuity(0, math.inf) is None


def test_a_bad_range_in_a_collected_scenario_is_a_pytest_error_not_a_traceback(
    tmp_path: Path,
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "bad.yaml").write_text(SCENARIO.replace("EXPECT", "jobs_lost: 'e..e'"))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    registered = any(  # the installed plugin (pytest11), else load it by name
        ep.value.startswith("harness.pytest_plugin") for ep in entry_points(group="pytest11")
    )
    plugin = [] if registered else ["-p", "harness.pytest_plugin"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugin, "-q", "scenarios"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "bad.yaml:7:25" in out
    assert "range 'e..e'" in out
    assert "ValueError" not in out


@pytest.mark.parametrize(
    ("checkpoint", "message"),
    [
        ("{size_gb: .inf}", "checkpoint size_gb must be a finite number > 0 (GB), got inf"),
        ("{size_gb: .nan}", "checkpoint size_gb must be a finite number > 0 (GB), got nan"),
        ("{size_gb: 10, interval_s: .inf}", "interval_s must be a finite number of seconds > 0"),
    ],
)
def test_non_finite_checkpoint_sizes_and_intervals(checkpoint: str, message: str) -> None:
    text = SCENARIO.replace("{size_gb: 100, sharded: true, interval_s: 600}", checkpoint)
    with pytest.raises(ScenarioError, match=re.escape(message)):
        load_text(text.replace("EXPECT", "checkpoint_sync_stall_s: '< 60'"))


def test_non_finite_generator_parameters() -> None:
    text = SCENARIO.replace(
        "{preset: seed-a800}", "{preset: seed-a800, params: {uplink_gbps: .inf}}"
    )
    with pytest.raises(ScenarioError, match=r"3:\d+: .*must be a finite number > 0, got inf"):
        load_text(text.replace("EXPECT", "jobs_lost: 0"))
