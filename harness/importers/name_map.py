"""Node name maps: OpenSM's ``node-name-map`` file, node GUID -> the name a site gave it.

Sites keep one for ``ibnetdiscover --node-name-map`` and OpenSM: one node a line,
``<guid> "<name>"`` (the GUID in hex with ``0x`` or decimal), ``#`` comments and
blank lines ignored::

    # compute
    0x0002c9030008e3f0 "node01 mlx5_0"
    0xe41d2d030008a0d0 "ib-spine-01"

:func:`load_name_map` reads it; with ``InferenceRules(node_names=...)`` a dump's
node whose GUID is in the map is described by the mapped name instead of its
own description (before any inference), so unnamed HCAs group by host.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.inputs.files import MAX_YAML_BYTES
from harness.inputs.files import read_text

_LINE = re.compile(r'^\s*(0x[0-9a-fA-F]{1,16}|\d{1,20})\s+"([^"]*)"\s*(?:#.*)?$')


def parse_name_map(text: str, path: str = "<string>") -> dict[int, str]:
    """GUID -> name from node-name-map text; a bad line is an error at its file:line.

    >>> parse_name_map('# site map\\n0x0002c9030008e3f0 "node01 mlx5_0"\\n')
    {783964676088816: 'node01 mlx5_0'}
    """
    out: dict[int, str] = {}
    problems: list[Problem] = []
    seen: dict[int, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            problems.append(Problem(
                f"unreadable node-name-map line {line[:80]!r}; expected '0x<guid> \"<name>\"'",
                path=path, line=lineno,
            ))  # fmt: skip
            continue
        guid = int(m.group(1), 0)
        if guid in seen:
            problems.append(Problem(
                f"GUID {guid:#018x} is mapped twice (first at line {seen[guid]}); keep one",
                path=path, line=lineno,
            ))  # fmt: skip
            continue
        seen[guid] = lineno
        out[guid] = m.group(2)
    if problems:
        raise ScenarioError(problems[:1] if len(problems) == 1 else problems[:10])
    return out


def load_name_map(path: str | Path) -> dict[int, str]:
    """Read a node-name-map file (at most :data:`~harness.inputs.files.MAX_YAML_BYTES`)."""
    return parse_name_map(read_text(path, "node-name-map", limit=MAX_YAML_BYTES), str(path))
