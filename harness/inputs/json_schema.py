"""JSON Schema building blocks for input files: simple type hints as schemas, names, $refs.

The schemas of scenario files (:mod:`harness.scenario.schema`) and fabric files
(:mod:`harness.fabric.schema`) are made of these, so a name, a non-blank text
or a generator parameter's type is said the same way in both.

>>> type_schema(int | None)
{'anyOf': [{'type': 'integer'}, {'type': 'null'}]}
>>> one_or_many(ref("selector"))["anyOf"][1]["items"]
{'$ref': '#/$defs/selector'}
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any

from harness.inputs.checker import NAME_RE

Schema = dict[str, Any]

DIALECT = "https://json-schema.org/draft/2020-12/schema"
NAME_PATTERN = f"^{NAME_RE.pattern}$"
NOT_BLANK = {"type": "string", "pattern": r"\S"}


def ref(name: str) -> Schema:
    """A reference to ``$defs[name]``."""
    return {"$ref": f"#/$defs/{name}"}


def one_or_many(item: Schema) -> Schema:
    """``item``, or a non-empty list of them."""
    return {"anyOf": [item, {"type": "array", "items": item, "minItems": 1}]}


def type_schema(hint: Any) -> Schema:
    """A JSON Schema for a simple Python type hint (generator parameters, node fields)."""
    members = typing.get_args(hint) if _is_union(hint) else None
    if members is not None:
        parts = [s for s in (type_schema(m) for m in members) if s]
        return parts[0] if len(parts) == 1 else {"anyOf": parts}
    origin = typing.get_origin(hint)
    if origin in (list, tuple, Sequence):
        args = typing.get_args(hint)
        return {"type": "array", "items": type_schema(args[0]) if args else {}}
    if origin is dict or hint is dict:
        return {"type": "object"}
    simple = {int: "integer", float: "number", bool: "boolean", str: "string", type(None): "null"}
    if hint in simple:
        return {"type": simple[hint]}
    return {}  # a class (e.g. NodeTemplate): not expressible in YAML


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)
