"""``harness reliability``: text, JSON, --compare, --workers, and bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

Capsys = pytest.CaptureFixture[str]
ROOT = Path(__file__).resolve().parents[2]
LAB = str(ROOT / "fabrics" / "lab-2su.yaml")
RATES = """\
name: lab
source: "a test: cables and GPUs"
classes:
  - {class: cable, fault: cut, select: {tier: access}, per: link, rate_per_month: 0.02,
     repair: {dist: lognormal, median: 2d, p90: 9d}}
  - {class: gpu, fault: kill, select: {kind: gpu}, per: server, rate_per_month: 0.07,
     repair: {dist: exponential, mean: 17h}}
restart: {after: 20m, spares: true, checkpoint: 1h}
"""


@pytest.fixture
def rates(tmp_path: Path) -> str:
    path = tmp_path / "rates.yaml"
    path.write_text(RATES, encoding="utf-8")
    return str(path)


def run(capsys: Capsys, argv: list[str], code: int = 0) -> tuple[str, str]:
    got = main(["reliability", *argv])
    out, err = capsys.readouterr()
    assert got == code, err
    assert "Traceback" not in err
    return out, err


def test_the_text_names_the_figures_the_classes_and_the_jobs(capsys: Capsys, rates: str) -> None:
    out, _ = run(capsys, [LAB, "--rates", rates, "--runs", "20", "--months", "6"])
    assert (
        "lab-2su: 2 job(s), rates lab (a test: cables and GPUs), 6 months x 20 runs, seed 0" in out
    )
    assert "job interruptions per month, fabric-wide: " in out
    assert "95% CI" in out
    assert "by class: cable " in out
    assert ", gpu " in out
    assert "  su01: " in out
    assert "effective" in out


def test_json_is_the_same_study_and_workers_change_nothing(capsys: Capsys, rates: str) -> None:
    argv = [LAB, "--rates", rates, "--runs", "8", "--seed", "3", "--json"]
    serial = json.loads(run(capsys, argv)[0])
    sharded = json.loads(run(capsys, [*argv, "--workers", "2"])[0])
    # the work done differs (each process has its own cache), the study does not
    assert serial.pop("states_analysed") >= 0
    assert sharded.pop("states_analysed") >= 0
    assert serial == sharded
    assert serial["runs"] == 8
    assert len(serial["per_run"]) == 8
    assert set(serial["by_class"]) == {"cable", "gpu"}
    total = serial["interruptions_per_month"]
    assert total["ci95"][0] <= total["mean"] <= total["ci95"][1]
    assert sum(serial["per_run"]) / 8 / 12 == pytest.approx(total["mean"])


def test_compare_gives_the_difference_with_its_interval(
    capsys: Capsys, rates: str, tmp_path: Path
) -> None:
    small = tmp_path / "lab-small.yaml"
    text = Path(LAB).read_text(encoding="utf-8")
    small.write_text(text.replace("name: lab-2su", "name: lab-small").replace(
        "nodes_per_su: 4", "nodes_per_su: 2"), encoding="utf-8")  # fmt: skip
    argv = [LAB, "--rates", rates, "--runs", "30", "--compare", str(small), "--json"]
    doc = json.loads(run(capsys, argv)[0])
    other = doc["compare"]["other"]
    assert other["fabric"] == "lab-small"
    diff = doc["compare"]["difference"]
    mean = other["interruptions_per_month"]["mean"] - doc["interruptions_per_month"]["mean"]
    assert diff["mean"] == pytest.approx(mean)
    assert diff["ci95"][0] < diff["mean"] < diff["ci95"][1] < 0  # half the servers: fewer
    out, _ = run(capsys, argv[:-1])
    assert "lab-small minus lab-2su: -" in out
    assert " fewer per month" in out


def test_bad_rates_are_bad_input_with_every_line(
    capsys: Capsys, tmp_path: Path, rates: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(RATES.replace("per: link", "per: wire").replace("2d", "soon"), "utf-8")
    _, err = run(capsys, [LAB, "--rates", str(bad), "--runs", "4"], code=2)
    lines = [x for x in err.splitlines() if x.startswith("error: ")]
    assert len(lines) == 2
    assert "bad.yaml:4:" in lines[0]
    assert "per: is the unit the rate counts" in lines[0]
    assert "bad.yaml:5:" in lines[1]
    assert "median 'soon' is not a duration" in lines[1]
    _, err = run(capsys, [LAB, "--rates", rates, "--runs", "1"], code=2)
    assert "--runs takes a whole number of runs from 2" in err
    _, err = run(capsys, [LAB, "--rates", str(tmp_path / "none.yaml"), "--runs", "4"], code=2)
    assert "none.yaml" in err
