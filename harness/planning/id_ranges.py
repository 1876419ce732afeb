"""Many ids written as one: ``su01/node01..20/nic0`` for twenty NICs (pure).

:func:`compress_numbers` writes a set of numbers as ranges; :func:`compress_ids`
writes ids that differ only in their numbers as one id with ranges where they
differ, or, when their shapes differ, as the first few and a count.

>>> compress_numbers(["01", "02", "03", "05", "07", "08"])
'01..03,05,07..08'
>>> compress_ids([f"su01/node{i:02d}/nic0" for i in range(1, 21)])
'su01/node01..20/nic0'
>>> compress_ids(["su01/leaf-r0", "su03/leaf-r0", "su04/leaf-r0"])
'su01,03..04/leaf-r0'
>>> compress_ids(["spine-01", "core-02", "x"])
'spine-01, core-02, x'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_NUMBER = re.compile(r"(\d+)")
SHOWN = 3  # ids of unlike shapes shown before "... (N in all)"


def compress_numbers(numbers: Sequence[str]) -> str:
    """Numbers (as written, zero-padded or not) as ranges: ``01..03,05`` (sorted, each once)."""
    values = sorted({int(n): n for n in numbers}.items())
    runs: list[list[tuple[int, str]]] = []
    for v, text in values:
        if runs and v == runs[-1][-1][0] + 1:
            runs[-1].append((v, text))
        else:
            runs.append([(v, text)])
    return ",".join(r[0][1] if len(r) == 1 else f"{r[0][1]}..{r[-1][1]}" for r in runs)


def compress_ids(ids: Sequence[str]) -> str:
    """Ids as one: alike shapes with ranges where their numbers differ, else a short list."""
    if not ids:
        return ""
    if len(ids) == 1:
        return ids[0]
    parts = [_NUMBER.split(i) for i in ids]
    shape = [p[0::2] for p in parts]
    if any(s != shape[0] for s in shape) or any(len(p) != len(parts[0]) for p in parts):
        more = f" ... ({len(ids)} in all)" if len(ids) > SHOWN else ""
        return ", ".join(ids[:SHOWN]) + more
    out = []
    for k, piece in enumerate(parts[0]):
        if k % 2 == 0:
            out.append(piece)
            continue
        column = [p[k] for p in parts]
        out.append(column[0] if len(set(column)) == 1 else compress_numbers(column))
    return "".join(out)
