"""Fixtures for the importer tests: where the data lives and the design of the ibsim dumps."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from harness.fabric import Fabric
from harness.fabric import two_tier

DATA = Path(__file__).resolve().parents[1] / "data"
DUMPS = DATA / "importers"
# Third-party files (provenance and licences: tests/data/third_party/README.md).
THIRD_PARTY = DATA / "third_party"


def rail2x2_design() -> Fabric:
    """The fabric the rail2x2 ibsim nets mirror (see tests/data/importers/README.md)."""
    return two_tier(
        sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False,
        node_overrides={"rails": 2}, name="rail2x2",
    )  # fmt: skip


@pytest.fixture(scope="session")
def design() -> Fabric:
    return rail2x2_design()


@pytest.fixture(scope="session")
def make_nets() -> ModuleType:
    """tests/data/importers/make_nets.py, imported from its path."""
    spec = importlib.util.spec_from_file_location("make_nets", DUMPS / "make_nets.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
