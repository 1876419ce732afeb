"""Where an input came from: the file, line and column a scenario or fabric reference was read at.

Results and errors name ``file:line:column`` through it.

>>> str(Location("s.yaml", 4, 3))
's.yaml:4:3'
>>> str(Location("s.yaml"))
's.yaml'
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was written: file, line and column (line 0: the file only)."""

    path: str = ""
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}" if self.line else self.path


def first_lines(pattern: re.Pattern[str], text: str) -> dict[str, int]:
    r"""Each value of ``pattern``'s first group -> the line it is first written on (one pass).

    How a reader of JSON (which keeps no line numbers) locates an item for an error:

    >>> first_lines(re.compile(r'"id": (\d+)'), '{\n"id": 7,\n"id": 8, "id": 7}')
    {'7': 2, '8': 3}
    """
    out: dict[str, int] = {}
    line, at = 1, 0
    for m in pattern.finditer(text):
        line += text.count("\n", at, m.start())
        at = m.start()
        out.setdefault(m.group(1), line)
    return out
