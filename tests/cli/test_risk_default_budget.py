"""The default budget of ``harness risk`` and ``harness sweep``'s ranking, as a user runs them.

A real ``python -m harness`` process each: the exit code is the gate a change
pipeline reads.  Issue 19 item 2: draining every spine of seed-a800 loses no
per-SU job but cuts every SU off from the others, so the default budget
(no job lost, no GPU pair cut, 90 % of the surviving jobs' bandwidth) refuses
it and names the pairs; draining one spine passes.  Item 4: the sweep ranks by
the GPUs whose jobs are lost and groups cases alike by symmetry.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HARNESS = [sys.executable, "-m", "harness"]
RULE = (
    "budget: default: the change passes only if it loses no running job, cuts off no GPU "
    "pair that was connected, and leaves every surviving job at least 90% of the bus "
    "bandwidth it had before (jobs_lost 0, gpu_pairs_disconnected 0, bandwidth >= 0.9)"
)
ASSUMED = "jobs assumed: one per SU (no --jobs given); traffic between SUs is not represented"


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, *args], capture_output=True, text=True, check=False)


def flat(text: str) -> str:
    return " ".join(text.split())


def jobs_file(tmp_path: Path) -> str:
    """Three jobs across SUs: 480 GPUs on su01..03, 320 on su04..05, 160 on su09."""
    path = tmp_path / "jobs.yaml"
    path.write_text(
        '- {name: big, nodes: "su0[1-3]/*"}\n'
        '- {name: mid, nodes: "su0[4-5]/*"}\n'
        '- {name: small, nodes: "su09/*"}\n',
        encoding="utf-8",
    )
    return str(path)


def test_draining_every_spine_breaks_the_default_budget_and_names_the_cut_pairs() -> None:
    done = harness("risk", "seed-a800", "--change", "drain {tier: spine}")
    assert done.returncode == 1, done.stderr
    text = flat(done.stdout)
    assert text.startswith("BREAKS THE BUDGET seed-a800: drained spine-01")
    assert RULE in text
    assert ASSUMED in text
    assert "the change loses no job" in text  # per-SU jobs never cross a spine ...
    # ... but every SU is cut off from the others: 10 x 160 GPUs, 45 pairs of SUs
    assert "the change cuts off 1,152,000 GPU pairs (PXN allowed): su01..10 (160 GPUs " \
           "each): no two of these can reach each other" in text  # fmt: skip
    assert "the change breaks the budget: gpu_pairs_disconnected 0" in text


def test_draining_one_spine_under_per_su_jobs_is_within_the_default_budget() -> None:
    done = harness("risk", "seed-a800", "--change", "drain spine-03")
    assert done.returncode == 0, done.stderr
    text = flat(done.stdout)
    assert text.startswith("WITHIN BUDGET seed-a800: drained spine-03")
    assert RULE in text
    assert "the change cuts off" not in text


def test_the_json_report_carries_the_rule_the_cut_groups_and_the_assumed_jobs() -> None:
    done = harness("risk", "seed-a800", "--change", "drain {tier: spine}", "--json")
    assert done.returncode == 1, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    assert doc["budget"] == ["jobs_lost 0", "gpu_pairs_disconnected 0", "bandwidth >= 0.9"]
    assert doc["budget_rule"] == RULE.removeprefix("budget: ")
    assert doc["jobs_assumed"] is True
    assert doc["jobs_note"] == ASSUMED
    cut = doc["gpu_pairs_cut"]
    assert cut["pairs"] == 1_152_000
    assert len(cut["groups"]) == 45  # every pair of SUs
    assert cut["groups"][0] == {"a": "su01", "a_gpus": 160, "b": "su02", "b_gpus": 160,
                                "pairs": 25_600}  # fmt: skip
    assert sum(g["pairs"] for g in cut["groups"]) == 1_152_000
    assert doc["added"]["jobs_lost"] == doc["added"]["jobs_unplaceable"] == []


def test_given_jobs_are_not_called_assumed_and_the_slowest_survivor_is_named(
    tmp_path: Path,
) -> None:
    # the N+1 margin over switches only: jobs across SUs are the slow case of the margin
    args = ("risk", "seed-a800", "--change", "kill su01/leaf-r0", "--elements", "switches",
            "--jobs", jobs_file(tmp_path))  # fmt: skip
    done = harness(*args, "--json")
    assert done.returncode == 1, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    assert doc["jobs_assumed"] is False
    assert doc["jobs_note"] is None
    assert doc["added"]["jobs_lost"] == ["big"]
    # big is lost, not slow: the bandwidth is of the jobs that survive, and says whose
    assert doc["after"]["min_job_busbw_job"] in {"mid", "small"}
    assert doc["after"]["min_job_busbw_ratio"] > 0
    assert doc["budget_broken_by_change"] == ["jobs_lost 0"]
    assert "jobs assumed" not in harness(*args).stdout


def test_sweep_ranks_by_gpus_lost_and_groups_alike_cases(tmp_path: Path) -> None:
    jobs = jobs_file(tmp_path)
    done = harness("sweep", "seed-a800", "--jobs", jobs, "--elements", "switches", "--top", "5")
    assert done.returncode == 0, done.stderr
    text = flat(done.stdout)
    assert "jobs assumed" not in text
    assert "worst cases (top 5 of" in text
    rows = [flat(x) for x in done.stdout.splitlines() if x.startswith("│ ")]
    assert len(rows) == 2 + 5  # the table by category (leaf, spine); --top counts groups
    worst = rows[2:]
    # the leaves of big's SUs (480 GPUs) first, one row per rail, then mid's (320)
    assert [r.split(" │ ")[0] for r in worst] == [
        "│ su01..03/leaf-r0: 3 alike", "│ su01..03/leaf-r1: 3 alike",
        "│ su01..03/leaf-r2: 3 alike", "│ su01..03/leaf-r3: 3 alike",
        "│ su04..05/leaf-r0: 2 alike",
    ]  # fmt: skip
    assert worst[0].split(" │ ")[1:3] == ["480", "big"]
    assert worst[4].split(" │ ")[1:3] == ["320", "mid"]
    csv_path = tmp_path / "cases.csv"
    doc = json.loads(harness("sweep", "seed-a800", "--jobs", jobs, "--elements", "switches",
                             "--json", "--csv", str(csv_path)).stdout)  # fmt: skip
    assert doc["jobs_assumed"] is False
    assert len(doc["rows"]) == 60  # every case kept
    assert [g["alike"] for g in doc["groups"][:5]] == [3, 3, 3, 3, 2]
    assert sum(g["alike"] for g in doc["groups"]) == 60
    assert doc["rows"][0]["gpus_lost"] == 480
    assert doc["rows"][0]["jobs_unplaceable"] == ["big"]
    with csv_path.open(encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 60
    assert {"group", "gpus_lost", "jobs_unplaceable", "min_busbw_job"} <= set(table[0])
    assert table[0]["group"] == "0"


def test_sweep_without_jobs_says_they_are_assumed() -> None:
    done = harness("sweep", "seed-a800", "--elements", "switches", "--top", "1")
    assert done.returncode == 0, done.stderr
    assert ASSUMED in flat(done.stdout)
    assert "su01..10/leaf-r0: 10 alike" in done.stdout
    doc = json.loads(harness("sweep", "seed-a800", "--elements", "switches", "--json").stdout)
    assert doc["jobs_note"] == ASSUMED
