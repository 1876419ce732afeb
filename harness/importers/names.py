"""Names in dumps: the sort order of numbered names, and element ids made from free text."""

from __future__ import annotations

import re


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``node2`` before ``node10``."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


def clean_id(text: str) -> str:
    """An element id made from free text: whitespace and ``:`` become ``_``."""
    out = re.sub(r"[\s:]+", "_", text.strip())
    return out.replace("--", "-") or "unnamed"
