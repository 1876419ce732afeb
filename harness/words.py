"""Counted nouns in plain English (pure).

>>> plural(1, "scenario"), plural(2, "scenario"), plural(0, "file")
('1 scenario', '2 scenarios', '0 files')
>>> plural(3, "switch"), plural(1, "NIC island"), plural(2, "analysis", "analyses")
('3 switches', '1 NIC island', '2 analyses')
>>> plural(1_200, "GPU pair")
'1,200 GPU pairs'
"""

from __future__ import annotations

_SIBILANT = ("s", "x", "z", "ch", "sh")


def noun(count: int, word: str, many: str | None = None) -> str:
    """``word`` in the singular when ``count`` is 1, else its plural.

    ``many`` gives an irregular plural; otherwise ``-es`` follows s, x, z, ch
    and sh, ``-s`` anything else.
    """
    if count == 1:
        return word
    if many is not None:
        return many
    return word + ("es" if word.endswith(_SIBILANT) else "s")


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` (thousands separated) and ``word``, in the plural unless ``count`` is 1."""
    return f"{count:,} {noun(count, word, many)}"
