"""``--jobs`` with a scheduler's saved view, as a user runs ``harness risk``: a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "jobs"
RISK = [sys.executable, "-m", "harness", "risk", "seed-a800", "--change", "kill su01/leaf-r0"]
# switches only in the N+1 margin: the same comparison, in about two seconds a run
FAST = ["--elements", "switches", "--json"]


def _start(*jobs_args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*RISK, *FAST, *jobs_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _answer(proc: subprocess.Popen[str]) -> tuple[int, dict[str, Any], str]:
    out, err = proc.communicate(timeout=120)
    doc: dict[str, Any] = json.loads(out)
    doc.get("margin", {}).pop("seconds", None)
    doc.pop("seconds", None)
    return proc.returncode, doc, err


def test_a_saved_squeue_json_gives_the_answer_of_the_jobs_yaml() -> None:
    runs = [
        _start("--jobs", str(DATA / "jobs-cross-su.yaml")),
        _start("--jobs", str(DATA / "squeue-23.11.json")),
    ]
    (code, want, _), *others = [_answer(p) for p in runs]
    assert code == 1  # the dead leaf loses train-a and eval-e under the default budget
    assert {"train-a", "eval-e"} <= set(want["after"]["jobs_lost"])
    for got_code, got, err in others:
        assert (got_code, got) == (code, want)
        assert "6 running jobs read; left out (not running):" in err


def test_an_unknown_node_is_exit_2_with_file_line_and_the_closest_servers(tmp_path: Path) -> None:
    listing = tmp_path / "squeue.txt"
    listing.write_text("4101|train-a|su01-node[01-02]\n4102|train-b|su01-nod03,su02-node01\n")
    out = subprocess.run(
        [*RISK, "--jobs", str(listing)], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 2, out.stderr
    assert (
        f"error: {listing}:2: job 'train-b': node 'su01-nod03' is not a server of fabric "
        "seed-a800; closest: su01-node03"
    ) in out.stderr
    assert "--node-map FILE" in out.stderr
    assert "Traceback" not in out.stderr


def test_sweep_takes_the_same_listings() -> None:
    sweep = [sys.executable, "-m", "harness", "sweep", "seed-a800", "--elements", "switches"]
    runs = [
        subprocess.Popen(
            [*sweep, "--json", "--jobs", str(DATA / name)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("jobs-cross-su.yaml", "squeue.txt")
    ]
    docs = []
    for proc in runs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        doc = json.loads(out)
        doc.pop("seconds", None)
        docs.append(doc)
    assert docs[0] == docs[1]
    assert "2 PENDING" in err  # the squeue run's note
