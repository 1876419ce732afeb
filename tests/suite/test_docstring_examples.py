"""Every example in a docstring runs as written: one test collects every module that has one.

A module is collected when its source holds a ``>>>`` line, so a new example is run
without being registered anywhere.  Examples use ``...`` (ELLIPSIS) where a value depends
on the host (the backends available here, addresses).
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "harness"


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


MODULES = _modules_with_examples()


def test_examples_are_found() -> None:
    assert len(MODULES) >= 60, MODULES  # 60 modules carried examples at the layout move


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name}: its '>>>' lines are not in a docstring doctest reads"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
