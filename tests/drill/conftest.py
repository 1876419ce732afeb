"""Drill test helpers: a small fabric and drills written inline."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.scenario.load import load_text
from harness.scenario.model import Scenario

SMALL = """\
fabric:
  generator: two-tier
  params: {sus: 2, nodes_per_su: 4, node: a800, spines: 4, leaf_radix: 8}
jobs:
  - {name: train, nodes: "*", timeout: 5s}
"""


def drill_text(body: str, *, name: str = "d", head: str = SMALL) -> str:
    """A scenario file with one drill: the small fabric, a job over all 8 servers."""
    return (f"name: {name}\ndescription: a drill under test\n{head}drill:\n"
            + textwrap.indent(textwrap.dedent(body), "  "))  # fmt: skip


def drill(body: str, **kw: str) -> Scenario:
    """The drill scenario of :func:`drill_text`."""
    (s,) = load_text(drill_text(body, **kw), Path("inline.yaml"))
    return s


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state root of the test's own (the halt lever lives beside it)."""
    root = tmp_path / "state"
    monkeypatch.setenv("HARNESS_STATE_DIR", str(root))
    return root
