"""ECMP figures as ``harness risk`` and ``harness sweep`` state them: expected, slowest job,
each against line rate and against the same fabric healthy.

Twenty 2-node jobs between SU 1 and SU 2 of seed-a800 under per-flow ECMP: on the healthy
fabric 20 flows per leaf hash onto 20 uplinks and collide, so the slowest job's expected
bandwidth is far below line rate while it is 100 % of the healthy fabric's (the same
hashing).  The JSON names say what each figure is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main

FIELDS = {"expected_busbw_gbs", "worst_draw_busbw_gbs", "line_rate_gbs",
          "healthy_expected_busbw_gbs", "expected_vs_line_rate", "expected_vs_healthy",
          "hash_draws", "job", "lost", "forwarding"}  # fmt: skip


@pytest.fixture
def pairs(tmp_path: Path) -> str:
    path = tmp_path / "pairs.yaml"
    jobs = [f"- {{name: pair-{k:02d}, nodes: [su01/node{k:02d}, su02/node{k:02d}]}}\n"
            for k in range(1, 21)]  # fmt: skip
    path.write_text("".join(jobs), encoding="utf-8")
    return str(path)


def test_risk_states_the_slowest_job_against_line_rate_and_healthy(
    pairs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["risk", "seed-a800", "--forwarding", "ecmp", "--jobs", pairs, "--change",
            "kill spine-05", "--margin", "none"]  # fmt: skip
    assert main(args) == 1  # the surviving jobs lose more than 10 %
    out = " ".join(capsys.readouterr().out.split())
    for state in ("before", "after"):
        assert f"{state}: slowest job's bus bandwidth: pair-" in out
    assert "mean of 16 hash draws" in out
    assert "of line rate (100 GB/s)" in out
    got = subprocess.run([sys.executable, "-m", "harness", *args, "--json"],
                         capture_output=True, text=True, check=False, timeout=60)  # fmt: skip
    assert got.returncode == 1, got.stderr
    doc: dict[str, Any] = json.loads(got.stdout)
    before, after = doc["before"]["slowest_job_busbw"], doc["after"]["slowest_job_busbw"]
    assert set(before) == set(after) == FIELDS
    assert before["expected_vs_healthy"] == 1.0 > before["expected_vs_line_rate"]
    assert after["expected_vs_healthy"] < 0.9
    assert after["line_rate_gbs"] == 100.0
    assert after["expected_vs_line_rate"] == pytest.approx(after["expected_busbw_gbs"] / 100, 1e-5)
    assert len(doc["after"]["job_busbw_figures"]) == 20
    ring = doc["after"]["job_traffic"][after["job"]]["collectives"]["ring"]
    assert {"expected_busbw_gbs", "worst_draw_busbw_gbs", "line_rate_gbs"} <= set(ring)


def test_sweep_rows_state_the_slowest_job_against_line_rate(
    pairs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sweep", "seed-a800", "--forwarding", "ecmp", "--jobs", pairs, "--elements",
            "switches", "--json"]  # fmt: skip
    assert main(argv) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    figures = doc["job_busbw_figures"]
    assert set(figures["pair-01"]) == FIELDS
    assert figures["pair-01"]["hash_draws"] == 16
    for r in doc["rows"]:
        if r["min_busbw_job"]:
            x = figures[r["min_busbw_job"]]
            want = r["min_busbw_ratio"] * x["healthy_expected_busbw_gbs"] / x["line_rate_gbs"]
            assert r["min_busbw_job_vs_line_rate"] == pytest.approx(want, abs=2e-6)
