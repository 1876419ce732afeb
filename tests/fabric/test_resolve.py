"""What a FABRIC name means (harness.fabric.resolve): a preset, a file, or bad input.

One rule for every caller: the CLI's FABRIC arguments, ``export``'s dumps and the
sweep's workers.
"""

from __future__ import annotations

import doctest
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.fabric import resolve
from harness.fabric.presets import preset
from harness.fabric.resolve import fabric_ref_for
from harness.fabric.resolve import resolve_fabric
from harness.planning.sweep.run import SweepSpec
from harness.planning.sweep.run import build_fabric_for

Capsys = pytest.CaptureFixture[str]
DUMPS = Path(__file__).resolve().parents[1] / "data" / "importers"
LAB = "preset: seed-a800\nparams: {sus: 2}\n"


def gpus(name: str) -> int:
    return int(resolve_fabric(name).summary()["gpus"])


def test_the_docstring_examples() -> None:
    result = doctest.testmod(resolve, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_a_bare_name_is_a_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert fabric_ref_for("seed-a800").preset == "seed-a800"
    assert resolve_fabric("seed-a800").name == "seed-a800"


def test_a_name_with_a_slash_or_a_suffix_is_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lab.yaml").write_text(LAB, encoding="utf-8")
    (tmp_path / "seed-a800").write_text(LAB, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    small = int(preset("seed-a800", sus=2).summary()["gpus"])
    assert gpus(str(tmp_path / "lab.yaml")) == small
    assert gpus("lab.yaml") == small
    assert gpus("./lab.yaml") == small
    assert gpus("./seed-a800") == small  # a file named like a preset, written as a path
    assert fabric_ref_for("lab.yaml").file == Path("lab.yaml")


def test_a_bare_name_that_is_no_preset_but_a_file_is_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lab").write_text(LAB, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert fabric_ref_for("lab").file == Path("lab")
    assert gpus("lab") == int(preset("seed-a800", sus=2).summary()["gpus"])


def test_a_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"fabric file .*none\.yaml does not exist"):
        resolve_fabric(str(tmp_path / "none.yaml"))


def test_a_preset_that_is_also_a_file_here_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capsys
) -> None:
    (tmp_path / "seed-a800").write_text(LAB, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for argv in (
        ["show", "seed-a800"],
        ["risk", "seed-a800", "--change", "kill spine-05"],
        ["sweep", "seed-a800"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "'seed-a800' is both a preset and the file ./seed-a800" in err
        assert "write ./seed-a800 for the file or rename it" in err
        assert "Traceback" not in err
    assert main(["show", "./seed-a800"]) == 0
    with pytest.raises(ScenarioError, match="both a preset and the file"):
        build_fabric_for(SweepSpec("seed-a800"))  # a sweep worker reads the name alike


def test_a_worker_that_read_a_name_before_reads_it_anew_after_a_change_of_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep's caches keep fabrics, never what a name meant in another directory."""
    monkeypatch.chdir(tmp_path)
    assert build_fabric_for(SweepSpec("seed-a800")).name == "seed-a800"  # cached now
    (tmp_path / "seed-a800").write_text(LAB, encoding="utf-8")
    with pytest.raises(ScenarioError, match="both a preset and the file"):
        build_fabric_for(SweepSpec("seed-a800"))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "lab.yaml").write_text(LAB.replace("sus: 2", "sus: 3"), "utf-8")
    (tmp_path / "lab.yaml").write_text(LAB, encoding="utf-8")
    here = build_fabric_for(SweepSpec("lab.yaml"))
    monkeypatch.chdir(tmp_path / "other")
    there = build_fabric_for(SweepSpec("lab.yaml"))
    assert (here.summary()["sus"], there.summary()["sus"]) == (2, 3)


def test_an_edited_fabric_file_is_built_anew(tmp_path: Path) -> None:
    lab = tmp_path / "lab.yaml"
    lab.write_text(LAB, encoding="utf-8")
    first = build_fabric_for(SweepSpec(str(lab)))
    assert build_fabric_for(SweepSpec(str(lab))) is first  # unchanged: shared
    lab.write_text(LAB.replace("sus: 2", "sus: 3") + "# edited\n", encoding="utf-8")
    assert build_fabric_for(SweepSpec(str(lab))).summary()["sus"] == 3


def test_an_unknown_name_is_an_unknown_preset_with_a_did_you_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["show", "seed-a80"]) == 2
    err = capsys.readouterr().err
    assert "unknown fabric preset 'seed-a80'; did you mean 'seed-a800'?" in err


def test_export_reads_a_dump_by_the_same_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capsys
) -> None:
    out = tmp_path / "topology.conf"
    dump = DUMPS / "prod_hdr.ibnetdiscover"
    assert main(["export", str(dump), "--format", "slurm", "-o", str(out)]) == 0
    spines = "SwitchName=spines Switches=su[01-04]\n"
    assert out.read_text(encoding="utf-8").endswith(spines)
    monkeypatch.chdir(tmp_path)
    shutil.copy(dump, tmp_path / "live")  # a bare name that is no preset: the file
    assert main(["export", "live", "--format", "slurm", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").endswith(spines)
    shutil.copy(dump, tmp_path / "seed-a800")  # named like a preset: ambiguous
    assert main(["export", "seed-a800", "--format", "slurm", "-o", str(out)]) == 2
    assert "write ./seed-a800 for the file" in capsys.readouterr().err
    assert main(["export", "./seed-a800", "--format", "slurm", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").endswith(spines)
