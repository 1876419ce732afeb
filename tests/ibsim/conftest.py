"""Fixtures for the ibsim backend tests (ibsim, OpenSM and infiniband-diags; run in CI)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def state_root(tmp_path: Path) -> Path:
    """A ledger root of this test's own (other engineers' runs never show up in it)."""
    root = tmp_path / "state"
    root.mkdir()
    return root
