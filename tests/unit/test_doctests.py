"""The examples in the docstrings of the CLI-facing core modules run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = (
    "harness.inputs.suggest",
    "harness.words",
    "harness.faults.selectors",
    "harness.scenario.prepare",
    "harness.reporting.progress",
    "harness.pytest_plugin",
    "harness.planning.sweep.records",
    "harness.invariants.analysis",
    "harness.invariants.topology",
    "harness.invariants.servers",
    "harness.invariants.reach",
    "harness.fabric.routing",
    "harness.backends.netns.bgp",
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
