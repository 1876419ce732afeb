"""``@pytest.mark.alone``: under ``pytest -n 2`` no other test runs while it does.

A real ``pytest -n 2`` session over tests that write when they start and end:
the ``alone`` test's interval overlaps no other test's, while the other tests do
run side by side (the lock is shared for them).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = """
import json, os, time
from pathlib import Path

import pytest

LOG = Path(os.environ["ALONE_LOG"])


def _spell(name: str, seconds: float) -> None:
    start = time.monotonic()
    time.sleep(seconds)
    with LOG.open("a") as fh:
        fh.write(json.dumps([name, start, time.monotonic()]) + "\\n")


@pytest.mark.parametrize("k", range(6))
def test_shared(k: int) -> None:
    _spell(f"shared{k}", 0.4)


@pytest.mark.alone
def test_alone() -> None:
    _spell("alone", 1.0)
"""


def test_an_alone_test_overlaps_no_other(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    conftest = Path(__file__).parents[1] / "support" / "alone.py"
    pytester.makeconftest(conftest.read_text())
    pytester.makeini(
        "[pytest]\nmarkers =\n    alone: runs alone\n    privileged: root\n"
        "    needs_tools(*commands, install): tools\n"
    )
    pytester.makepyfile(test_spells=TESTS)
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("ALONE_LOG", str(log))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "-p", "no:harness")
    result.assert_outcomes(passed=7)
    spans = {name: (a, b) for name, a, b in map(json.loads, log.read_text().splitlines())}
    a0, a1 = spans.pop("alone")
    assert all(b <= a0 or a >= a1 for a, b in spans.values()), (spans, (a0, a1))
    shared = sorted(spans.values())
    assert any(b > a for (_, b), (a, _) in itertools.pairwise(shared)), shared
