"""Slurm hostlist expressions, both ways (inputs stage, pure).

Slurm writes a set of node names as a *hostlist*: names separated by commas,
where a bracket group stands for a list of numbers and ranges
(``gpu[001-003,007],cpu01``).  :func:`expand_hostlist` reads one back into its
names, in Slurm's order; :func:`compress_hostlist` writes one.

Rules of the expansion, as Slurm (``src/common/hostlist.c``) and
python-hostlist apply them:

* a top-level comma separates names; a comma inside brackets separates the
  numbers and ``lo-hi`` ranges of one group;
* a range is written with the width of its low end, so zero padding is kept
  (``[08-10]`` is ``08, 09, 10``; ``[9-10]`` is ``9, 10``);
* a name may hold several groups (``rack[1-2]-node[01-02]``): the product, the
  first group varying slowest;
* a name listed twice is kept once, at its first place.

>>> expand_hostlist("gpu[001-003,007],cpu01")
['gpu001', 'gpu002', 'gpu003', 'gpu007', 'cpu01']
>>> expand_hostlist("rack[1-2]-node[01-02]")
['rack1-node01', 'rack1-node02', 'rack2-node01', 'rack2-node02']
>>> expand_hostlist("n[9-11]")
['n9', 'n10', 'n11']
>>> compress_hostlist(["gpu03", "gpu01", "gpu02", "gpu07", "login", "gpu10"])
'gpu[01-03,07,10],login'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from harness.errors import ScenarioError

MAX_HOSTS = 1_000_000
"""Most names one hostlist may expand to (a typo such as ``n[1-999999999]`` is refused)."""

_EXAMPLE = "e.g. gpu[001-003,007],cpu01"
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
_TAIL_DIGITS = re.compile(r"^(.*?)(\d+)$")


def _bad(expr: str, why: str) -> ScenarioError:
    return ScenarioError(f"bad hostlist {expr!r}: {why} ({_EXAMPLE})")


def _group(expr: str, body: str) -> list[str]:
    """The numbers of one bracket group (``001-003,007``), as written."""
    out: list[str] = []
    for part in body.split(","):
        m = _RANGE.match(part.strip())
        if m is None:
            raise _bad(expr, f"[{body}] holds {part!r}, not a number or a lo-hi range")
        lo_text, hi_text = m.group(1), m.group(2)
        if hi_text is None:
            out.append(lo_text)
            continue
        lo, hi = int(lo_text), int(hi_text)
        if hi < lo:
            raise _bad(expr, f"the range {part!r} runs backwards")
        if hi - lo >= MAX_HOSTS:
            raise _bad(expr, f"the range {part!r} has more than {MAX_HOSTS:,} names")
        width = len(lo_text)
        out.extend(f"{n:0{width}d}" for n in range(lo, hi + 1))
    return out


def _name(expr: str, part: str) -> list[str]:
    """Every name of one comma-free part (``rack[1-2]-node[01-02]``)."""
    names = [""]
    rest = part
    while rest:
        open_at = rest.find("[")
        if open_at < 0:
            if "]" in rest:
                raise _bad(expr, "a ']' closes no '['")
            names = [n + rest for n in names]
            break
        close_at = rest.find("]", open_at)
        if close_at < 0:
            raise _bad(expr, "a '[' is never closed")
        literal, body = rest[:open_at], rest[open_at + 1 : close_at]
        if "]" in literal or "[" in body:
            raise _bad(expr, "brackets do not nest")
        numbers = _group(expr, body)
        if len(names) * len(numbers) > MAX_HOSTS:
            raise _bad(expr, f"it expands to more than {MAX_HOSTS:,} names")
        names = [n + literal + x for n in names for x in numbers]
        rest = rest[close_at + 1 :]
    return names


def _parts(expr: str) -> list[str]:
    """``expr`` split at its top-level commas."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise _bad(expr, "brackets do not nest")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise _bad(expr, "a ']' closes no '['")
        elif ch == "," and depth == 0:
            parts.append(expr[start:i])
            start = i + 1
    if depth:
        raise _bad(expr, "a '[' is never closed")
    parts.append(expr[start:])
    return [p.strip() for p in parts if p.strip()]


def expand_hostlist(expr: str) -> list[str]:
    """The names of a Slurm hostlist expression, in Slurm's order, each once.

    Raises :class:`~harness.errors.ScenarioError` for a malformed expression
    (unbalanced or nested brackets, a group that is not numbers and ranges, a
    backwards range) or one of more than :data:`MAX_HOSTS` names.

    >>> expand_hostlist("a[1-2],b,a1")
    ['a1', 'a2', 'b']
    >>> expand_hostlist("")
    []
    >>> try:
    ...     expand_hostlist("gpu[3-1]")
    ... except ScenarioError as err:
    ...     print(err)
    bad hostlist 'gpu[3-1]': the range '3-1' runs backwards (e.g. gpu[001-003,007],cpu01)
    """
    out: dict[str, None] = {}
    for part in _parts(expr.strip()):
        out.update(dict.fromkeys(_name(expr, part)))
        if len(out) > MAX_HOSTS:
            raise _bad(expr, f"it expands to more than {MAX_HOSTS:,} names")
    return list(out)


def _ranges(numbers: list[int], width: int) -> str:
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
        if n is not None:
            start = prev = n
    return ",".join(out)


def compress_hostlist(names: Iterable[str]) -> str:
    """A Slurm hostlist expression for ``names`` (sorted, duplicates dropped).

    Names ending in digits are grouped by their prefix and the number of digits
    (so zero padding is kept: ``c01``..``c04`` -> ``c[01-04]``); other names are
    listed as they are.  :func:`expand_hostlist` reads the expression back to
    the same set of names.

    >>> compress_hostlist(["n9", "n10", "n11"])
    'n9,n[10-11]'
    """
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in sorted(set(names)):
        m = _TAIL_DIGITS.match(name)
        if m is None or not m.group(1):
            plain.append(name)
            continue
        groups.setdefault((m.group(1), len(m.group(2))), []).append(int(m.group(2)))
    parts: list[tuple[str, str]] = []
    for (prefix, width), numbers in groups.items():
        numbers.sort()
        if len(numbers) == 1:
            parts.append((prefix, f"{prefix}{numbers[0]:0{width}d}"))
        else:
            parts.append((prefix, f"{prefix}[{_ranges(numbers, width)}]"))
    parts += [(p, p) for p in plain]
    return ",".join(text for _, text in sorted(parts, key=lambda kv: (kv[0], kv[1])))
