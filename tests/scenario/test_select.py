"""Scenarios chosen by ``-k`` and ``--tag`` (harness.scenario.select), as ``harness run`` does."""

from __future__ import annotations

import doctest
import re

import pytest

from harness.errors import ScenarioError
from harness.fabric.resolve import FabricRef
from harness.scenario import select as select_module
from harness.scenario.model import Scenario
from harness.scenario.select import NameFilter
from harness.scenario.select import select


def scenario(name: str, *tags: str) -> Scenario:
    return Scenario(name, "", FabricRef(preset="seed-a800"), (), tags=tags)


def test_the_docstring_examples() -> None:
    result = doctest.testmod(select_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize(
    ("expr", "chosen"),
    [
        ("spine", ["kill-spine", "spine-and-core"]),
        ("SPINE and not core", ["kill-spine"]),
        ("not (spine or core)", ["drain-leaf"]),
        ("leaf or core", ["spine-and-core", "drain-leaf"]),
    ],
)
def test_k_expressions(expr: str, chosen: list[str]) -> None:
    found = [scenario("kill-spine"), scenario("spine-and-core"), scenario("drain-leaf")]
    assert [s.name for s in select(found, expr)] == chosen


def test_tags_are_any_of_and_combine_with_k() -> None:
    found = [scenario("a-spine", "seed"), scenario("b-spine", "hpn"), scenario("c-leaf", "seed")]
    assert [s.name for s in select(found, None, ["seed", "hpn"])] == [
        "a-spine",
        "b-spine",
        "c-leaf",
    ]
    assert [s.name for s in select(found, "spine", ["seed"])] == ["a-spine"]


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        ("", "is empty"),
        ("spine and", "ends too early"),
        ("(spine", "misses a ')'"),
        ("spine core", "has an unexpected 'core'"),
        ("or spine", "has an unexpected 'or'"),
    ],
)
def test_a_malformed_expression_is_bad_input_before_anything_runs(expr: str, why: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(f"-k {expr!r} {why}")):
        NameFilter(expr)
