"""Did-you-mean: the closest match first, numbers compared as numbers."""

from __future__ import annotations

import pytest

from harness.errors import ScenarioError
from harness.fabric import preset
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.selectors import select
from harness.inputs.suggest import closest
from harness.inputs.suggest import did_you_mean


@pytest.mark.parametrize(
    ("word", "first"),
    [
        ("spine-5", "spine-05"),
        ("spine05", "spine-05"),
        ("Spine-05", "spine-05"),
        ("su1/leaf-r0", "su01/leaf-r0"),
        ("su01/node1/gpu3", "su01/node01/gpu3"),
        ("su01/node01/nic9", "su01/node01/nic3"),  # equally close text: the nearest number
    ],
)
def test_closest_first(word: str, first: str) -> None:
    assert closest(word, preset("seed-a800").ids)[0] == first


def test_the_issue_example_ranks_spine_05_first() -> None:
    """Once: spine-15, spine-05, spine-20 (difflib's order)."""
    with pytest.raises(ScenarioError) as info:
        select("spine-5", preset("seed-a800"))
    assert str(info.value).endswith("closest: spine-05, spine-15, spine-04")


def test_nothing_close_suggests_nothing() -> None:
    assert closest("zzzzzz", ["spine-01", "spine-02"]) == []
    assert did_you_mean("zzzzzz", ["spine-01"]) == ""


def test_ties_keep_the_order_given() -> None:
    assert closest("ab", ["ac", "ad"], n=2, cutoff=0.4) == ["ac", "ad"]


def test_job_patterns_suggest_the_closest_servers() -> None:
    with pytest.raises(ScenarioError) as info:
        resolve_jobs([JobSpec(name="j", nodes=("su1/node01",))], preset("seed-a800"))
    assert "closest: su01/node01, " in str(info.value)
