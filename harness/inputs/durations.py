"""Durations as scenario files write them: ``5s``, ``500ms``, ``2m``, ``1h`` or seconds.

>>> parse_duration("40s", "wait"), parse_duration(1.5, "wait"), parse_duration("2m", "wait")
(40.0, 1.5, 120.0)
>>> parse_duration("soon", "wait")
Traceback (most recent call last):
...
harness.errors.ScenarioError: wait 'soon' is not a duration; write e.g. 5s, 500ms, 2m or 34.4
"""

from __future__ import annotations

import re
from typing import Any

from harness.errors import ScenarioError

_UNITS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
#: The JSON Schema pattern of a duration string.
DURATION_PATTERN = r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ms|s|min|m|h)?\s*$"
_DURATION = re.compile(DURATION_PATTERN)


def parse_duration(raw: Any, what: str, *, zero: bool = False) -> float:
    """``raw`` in seconds; ``what`` names the setting in the error.  ``zero``: 0 allowed."""
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        msg = f"{what} is seconds or a duration such as 5s, 500ms, 2m; got {raw!r}"
        raise ScenarioError(msg)
    if isinstance(raw, str):
        m = _DURATION.match(raw)
        if m is None:
            msg = f"{what} {raw!r} is not a duration; write e.g. 5s, 500ms, 2m or 34.4"
            raise ScenarioError(msg)
        value = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    else:
        value = float(raw)
    if not ((value >= 0 if zero else value > 0) and value < float("inf")):
        least = "0 or more" if zero else "a positive number of"
        msg = f"{what} must be {least} seconds, got {raw!r}"
        raise ScenarioError(msg)
    return value
