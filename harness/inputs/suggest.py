"""Did-you-mean suggestions, closest match first (inputs stage, pure).

:func:`difflib.get_close_matches` ranks ``spine-15`` above ``spine-05`` for
``spine-5``: it compares characters, not the numbers ids carry.  Here ids are
compared after their numbers are normalised (leading zeros dropped, so
``spine-5`` and ``spine-05`` are the same word), then by difflib's ratio on
the raw text, then by the distance between the numbers, then by id order.

>>> closest("spine-5", ["spine-15", "spine-05", "spine-20", "spine-50"])
['spine-05', 'spine-15', 'spine-50']
>>> closest("su1/leaf-r0", ["su01/leaf-r0", "su10/leaf-r0", "su11/leaf-r0"], n=1)
['su01/leaf-r0']
>>> did_you_mean("kil", ["kill", "drain"])
"; did you mean 'kill'?"
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

_NUMBER = re.compile(r"\d+")


def _normal(text: str) -> str:
    """``text`` with every number written without leading zeros, lower case."""
    return _NUMBER.sub(lambda m: str(int(m.group())), text.lower())


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(m) for m in _NUMBER.findall(text))


def _number_distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    if len(a) != len(b):
        return 1 << 30
    return sum(abs(x - y) for x, y in zip(a, b, strict=True))


def closest(word: str, choices: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``choices`` similar to ``word``, the closest first.

    A choice qualifies when difflib's similarity of the normalised texts is at
    least ``cutoff``; qualifying choices are ranked by that similarity, then by
    the similarity of the raw texts, then by how far apart their numbers are.
    """
    target = _normal(word)
    numbers = _numbers(word)
    matcher = difflib.SequenceMatcher(b=target)
    raw = difflib.SequenceMatcher(b=word)
    scored: list[tuple[float, float, int, int, str]] = []
    for order, choice in enumerate(dict.fromkeys(choices)):
        matcher.set_seq1(_normal(choice))
        if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff:
            continue
        ratio = matcher.ratio()
        if ratio < cutoff:
            continue
        raw.set_seq1(choice)
        distance = _number_distance(numbers, _numbers(choice))
        scored.append((-ratio, -raw.ratio(), distance, order, choice))
    scored.sort()
    return [s[-1] for s in scored[:n]]


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest choice, or ``""`` when none is close."""
    near = closest(str(word), choices, n=1)
    return f"; did you mean {near[0]!r}?" if near else ""
