"""What a ``--state`` value is (harness.planning.audit.state): faults, a state file or a dump."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.fabric.presets import preset
from harness.planning.audit import state
from harness.planning.audit.state import state_faults


def test_the_docstring_examples() -> None:
    result = doctest.testmod(state, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_none_inline_faults_and_a_state_file(tmp_path: Path) -> None:
    fabric = preset("seed-a800")
    assert state_faults(fabric, None) == ([], [])
    inline, notes = state_faults(fabric, "kill spine-05; kill spine-06")
    assert [f.kind.value for f in inline] == ["kill", "kill"]
    assert notes == []
    path = tmp_path / "state.yaml"
    path.write_text("- kill: spine-05\n", encoding="utf-8")
    from_file, _ = state_faults(fabric, str(path))
    assert [f.kind.value for f in from_file] == ["kill"]


def test_a_missing_file_name_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file; give a state file"):
        state_faults(preset("seed-a800"), str(tmp_path / "state.yaml"))
