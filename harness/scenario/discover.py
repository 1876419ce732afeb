"""Scenario files on disk: which files a list of paths names (directories searched).

>>> discover([Path("scenarios")])[0].name
'clos-100k-pod-pairs.yaml'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.errors import Problem
from harness.errors import ScenarioError

YAML_SUFFIXES = (".yaml", ".yml")


def discover(paths: Sequence[Path]) -> list[Path]:
    """Scenario files under ``paths``: directories expand to sorted ``*.yaml``/``*.yml``.

    A path that does not exist is a :class:`ScenarioError` (all of them listed).
    """
    found: list[Path] = []
    missing: list[Problem] = []
    for p in paths:
        if p.is_dir():
            files = [
                f
                for f in p.rglob("*")
                if f.suffix in YAML_SUFFIXES
                and f.is_file()
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            ]
            found.extend(sorted(files))
        elif p.is_file() or p.exists():
            found.append(p)  # not a regular file: the reader says what it is
        else:
            missing.append(Problem("no such file or directory; check the path", str(p)))
    if missing:
        raise ScenarioError(missing)
    return list(dict.fromkeys(found))
