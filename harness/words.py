"""Counted nouns in plain English (core layer, pure).

>>> plural(1, "scenario"), plural(2, "scenario"), plural(0, "file")
('1 scenario', '2 scenarios', '0 files')
>>> plural(3, "switch"), plural(1, "NIC island"), plural(2, "analysis", "analyses")
('3 switches', '1 NIC island', '2 analyses')
>>> plural(1_200, "GPU pair")
'1,200 GPU pairs'
"""

from __future__ import annotations

_SIBILANT = ("s", "x", "z", "ch", "sh")


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, in the plural unless ``count`` is 1 (thousands separated).

    ``many`` gives an irregular plural; otherwise ``-es`` follows s, x, z, ch
    and sh, ``-s`` anything else.
    """
    if count == 1:
        return f"1 {noun}"
    if many is None:
        many = noun + ("es" if noun.endswith(_SIBILANT) else "s")
    return f"{count:,} {many}"
