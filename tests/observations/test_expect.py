"""Expectations: how a scenario's expected value is compared with an observation."""

from __future__ import annotations

from typing import Any

import pytest

from harness.errors import ScenarioError
from harness.observations.expect import Expect


@pytest.mark.parametrize(
    ("raw", "observed", "ok"),
    [
        (0, 0, True),
        (0, 0.0, True),
        (0, 1, False),
        (0.05, 200 / 4000, True),  # the seed's one-spine uplink ratio
        (0.1, 0.1 + 1e-12, True),  # relative tolerance 1e-9
        (0.1, 0.1001, False),
        (0.0, 1e-13, True),  # absolute tolerance near zero
        ("cross-su", "cross-su", True),
        ("cross-su", "cross-rail", False),
        (None, None, True),
    ],
)
def test_scalars_mean_equal(raw: Any, observed: Any, ok: bool) -> None:
    assert Expect.parse(raw).check(observed) is ok


@pytest.mark.parametrize(
    ("raw", "observed", "ok"),
    [
        (True, True, True),
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (False, False, True),
    ],
)
def test_booleans_are_not_numbers(raw: Any, observed: Any, ok: bool) -> None:
    assert Expect.parse(raw).check(observed) is ok


@pytest.mark.parametrize(
    ("raw", "observed", "ok"),
    [
        (">= 0.9", 0.95, True),
        (">= 0.9", 0.9, True),
        (">= 0.9", 0.9 - 1e-12, True),  # within tolerance counts as equal
        (">= 0.9", 0.89, False),
        ("> 0.9", 0.9, False),
        ("<= 5", 5, True),
        ("< 5", 4, True),
        ("< 5", 5, False),
        ("!= 0", 1, True),
        ("!= 0", 0, False),
        ("== 3", 3, True),
        ("== 3", 3.0, True),
        ("  >=   2  ", 2, True),
        (">= 0", True, False),  # a boolean is not a number
        ("< 5", "3", False),  # nor is a string
    ],
)
def test_operators(raw: str, observed: Any, ok: bool) -> None:
    assert Expect.parse(raw).check(observed) is ok


@pytest.mark.parametrize(
    ("raw", "observed", "ok"),
    [
        ("0.9..1.0", 1.0, True),
        ("0.9..1.0", 0.9, True),
        ("0.9..1.0", 0.89, False),
        ("-1..1", 0, True),
        ("1e-3..1e-2", 0.005, True),
        ("0.9..1.0", "1", False),
        ("1..2", True, False),  # booleans are not numbers here either
    ],
)
def test_ranges_are_inclusive(raw: str, observed: Any, ok: bool) -> None:
    assert Expect.parse(raw).check(observed) is ok


@pytest.mark.parametrize(
    ("raw", "observed", "ok"),
    [
        ([0, 2, 3], [3, 2, 0], True),
        ([0, 2, 3], (0, 2, 3), True),
        ([0, 2], [0, 2, 3], False),
        (["su01", "su02"], ["su02", "su01"], True),
        ([], [], True),
        ([1], 1, False),
    ],
)
def test_lists_ignore_order(raw: list[Any], observed: Any, ok: bool) -> None:
    assert Expect.parse(raw).check(observed) is ok


def test_parsed_forms() -> None:
    assert Expect.parse(">= 0.9") == Expect(">=", 0.9)
    assert Expect.parse("< 5") == Expect("<", 5)
    assert Expect.parse("0.9..1.0") == Expect("range", 0.9, 1.0)
    assert Expect.parse([1, 2]) == Expect("list", (1, 2))
    assert Expect.parse("cross-su") == Expect("==", "cross-su")
    assert Expect.parse(3) == Expect("==", 3)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (">= 0.9", ">= 0.9"),
        ("0.9..1.0", "0.9..1.0"),
        ([0, 2], "[0, 2]"),
        ("cross-su", "'cross-su'"),
        (0, "0"),
        (True, "True"),
        ("!= 0", "!= 0"),
    ],
)
def test_describe(raw: Any, text: str) -> None:
    assert Expect.parse(raw).describe() == text


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("5..1", "range '5..1' is empty: write LOW..HIGH"),
        (">= abc", "'>= abc': >= needs a number, e.g. '>= 0.9'"),
        ({"a": 1}, "cannot read expectation {'a': 1}: use a value, '>= N', '< N', 'LOW..HIGH'"),
    ],
)
def test_errors(raw: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        Expect.parse(raw)
    assert message in str(info.value)
