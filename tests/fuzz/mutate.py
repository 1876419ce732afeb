"""Hypothesis strategies that break shipped input files (for the fuzz suite).

Two families:

* :func:`mutated_yaml` parses a shipped YAML file, then deletes, duplicates,
  retypes or renames nodes and injects hostile values (huge, negative and
  non-finite numbers, booleans, range and comparison strings, deep lists);
* :func:`mutated_bytes` works on the raw bytes of any file (dumps too):
  splices garbage bytes, truncates, deletes, duplicates or garbles a line.
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import strategies as st

HOSTILE: tuple[Any, ...] = (
    None, True, False, 0, -1, -(10**9), 10**30, 2**63, 40_000, 1e308, -1e308,
    float("inf"), float("-inf"), float("nan"), "", "x", "::::", "e..e", "1..2..3",
    "!= nan", "< 0", ">= inf", "*", "su99/*", "spine-99", "gpu40000 mlx5_0",
    [], {}, [[[[[]]]]], {"a": {"b": 1}}, [None], {"kill": "spine-01", "cut": "x"},
)  # fmt: skip

hostile_values = st.one_of(
    st.sampled_from(HOSTILE),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)


def _paths(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*here, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*here, i))
    return out


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def _mutate_tree(draw: st.DrawFn, data: Any) -> Any:
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "delete", "duplicate", "rename", "wrap"]))
        if not path:
            if op == "replace":
                data = draw(hostile_values)
            continue
        parent, key = _get(data, path[:-1]), path[-1]
        if op == "replace":
            parent[key] = draw(hostile_values)
        elif op == "delete":
            del parent[key]
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, yaml.safe_load(yaml.safe_dump(parent[key])))
        elif op == "rename" and isinstance(parent, dict):
            parent[f"{key}{draw(st.sampled_from(['s', '_', 'x', '2']))}"] = parent.pop(key)
        elif op == "wrap":
            parent[key] = [parent[key]] if draw(st.booleans()) else {"is": parent[key]}
    return data


def mutated_yaml(text: str) -> st.SearchStrategy[str]:
    """YAML text: ``text`` parsed, mutated as a tree, written back."""
    base = yaml.safe_load(text)

    def dump(data: Any) -> str:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)

    return st.builds(lambda: yaml.safe_load(yaml.safe_dump(base))).flatmap(_mutate_tree).map(dump)


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """Raw bytes: garbage spliced in, truncated, or a line deleted, duplicated or garbled."""
    op = draw(st.sampled_from(["splice", "truncate", "delete", "duplicate", "garble", "append"]))
    lines = data.split(b"\n")
    if op == "splice":
        at = draw(st.integers(min_value=0, max_value=len(data)))
        return data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
    if op == "append":
        return data + draw(st.binary(min_size=1, max_size=64))
    if op == "truncate":
        return data[: draw(st.integers(min_value=0, max_value=len(data)))]
    k = draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
    if op == "delete":
        del lines[k]
    elif op == "duplicate":
        lines.insert(k, lines[k])
    else:
        words = lines[k].split(b" ")
        w = draw(st.integers(min_value=0, max_value=max(len(words) - 1, 0)))
        words[w] = str(draw(hostile_values)).encode("utf-8", "replace")
        lines[k] = b" ".join(words)
    return b"\n".join(lines)
