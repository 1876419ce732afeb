"""Names in dumps: the sort order of numbered names, element ids made from free text, and
which descriptions are names at all."""

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


_VENDOR_DEFAULT = re.compile(
    r"(?i)^\s*$"  # empty
    r"|(?:Mellanox|NVIDIA)\s+Technologies\s*$"  # "SwitchIB Mellanox Technologies", "MT4129 ..."
    r"|^(?:0x)?[0-9a-f]{16}$"  # a bare GUID
)


def is_name(desc: str) -> bool:
    """Whether a node description names the node (not a vendor default or a bare GUID).

    >>> is_name("A10-P1-IBSPINE-01"), is_name("SwitchIB Mellanox Technologies")
    (True, False)
    >>> is_name("SwitchX -  Mellanox Technologies"), is_name("0x0002c90200402f48")
    (False, False)
    """
    return _VENDOR_DEFAULT.search(desc) is None
