"""Where an input came from: the file, line and column a scenario or fabric reference was read at.

Results and errors name ``file:line:column`` through it.

>>> str(Location("s.yaml", 4, 3))
's.yaml:4:3'
>>> str(Location("s.yaml"))
's.yaml'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was written: file, line and column (line 0: the file only)."""

    path: str = ""
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}" if self.line else self.path
