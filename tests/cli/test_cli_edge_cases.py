"""Edge cases of the change commands: unwritable outputs, located YAML errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.errors import ScenarioError
from harness.faults.state_file import load_state_file


@pytest.mark.parametrize("option", ["--csv", "--plot"])
def test_sweep_unwritable_output_exits_3(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unwritable ``--csv`` / ``--plot`` file is an environment error (exit 3, one
    ``error: environment: ...`` line), as ``run --junit-xml`` does.
    """
    blocker = tmp_path / "file"
    blocker.write_text("")
    target = blocker / ("out.csv" if option == "--csv" else "out.png")
    assert main(["sweep", "seed-a800", "--elements", "switches", option, str(target)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: environment: ")
    assert str(target) in err


def test_state_file_yaml_error_has_a_1_based_column(tmp_path: Path) -> None:
    """A YAML error in a state file is located as the scenario loader locates it:
    1-based line and column (here ``FILE:3:8:``).
    """
    text = "- kill: su02/leaf-r1\n- kill: [spine-01\n- drain: x\n"
    path = tmp_path / "state.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(yaml.MarkedYAMLError) as mark_info:
        yaml.compose(text, Loader=yaml.SafeLoader)
    mark = mark_info.value.problem_mark
    assert mark is not None
    with pytest.raises(ScenarioError) as info:
        load_state_file(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.column) == (mark.line + 1, mark.column + 1)
    assert str(info.value).startswith(
        f"{path}:{mark.line + 1}:{mark.column + 1}: YAML syntax error"
    )


@pytest.mark.parametrize("fmt", ["containerlab", "graphml", "ibsim"])
def test_export_writes_a_file_that_reads_back(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"lab.{fmt}"
    assert main(["export", "seed-a800", "--format", fmt, "-o", str(out)]) == 0
    assert f"wrote seed-a800 as {fmt}" in capsys.readouterr().out
    text = out.read_text(encoding="utf-8")
    if fmt == "containerlab":
        doc = yaml.safe_load(text)
        assert len(doc["topology"]["nodes"]) == 200 + 40 + 20
        assert len(doc["topology"]["links"]) == 800 + 800
    elif fmt == "graphml":
        import networkx as nx

        g = nx.read_graphml(out)
        assert g.number_of_nodes() > 5000
    else:
        assert text.count("Switch") >= 60


def test_export_then_audit_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "seed.clab.yml"
    assert main(["export", "seed-a800", "--format", "containerlab", "-o", str(out)]) == 0
    assert main(["audit", str(out), "--design", "seed-a800", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert doc["ok"] is True
    assert doc["differences"] == []


def test_export_to_an_unwritable_path_exits_3(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["export", "seed-a800", "--format", "ibsim", "-o", str(blocker / "x")]) == 3
