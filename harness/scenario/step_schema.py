"""JSON Schema of scenario steps: faults and their selectors, expectations of observations.

The ``$defs`` that :mod:`harness.scenario.schema` puts into the scenario file's
schema for ``steps:``: ``step`` (inject / restore / expect / wait / restart),
``fault``, ``selector``, ``degrade``, ``flaky`` and ``expect``.  Built from the
fault kinds (:data:`harness.faults.fault.FAULT_KINDS`), the selector keys and
the observations with their arguments
(:data:`harness.observations.registry.OBSERVATIONS`), so the schema and the step
checks (:mod:`harness.scenario.steps`, :mod:`harness.scenario.expectations`)
read the same tables.
"""

from __future__ import annotations

from typing import Any

from harness.faults.fault import FAULT_KINDS
from harness.faults.selectors import ELEMENT_TIERS
from harness.faults.selectors import KIND_NAMES
from harness.faults.selectors import LINK_TIERS
from harness.faults.selectors import STRUCT_KEYS
from harness.inputs.durations import DURATION_PATTERN
from harness.inputs.json_schema import Schema
from harness.inputs.json_schema import one_or_many
from harness.inputs.json_schema import ref
from harness.inputs.json_schema import type_schema
from harness.observations.observation import ObservationDef
from harness.observations.registry import OBSERVATIONS
from harness.scenario.steps import RESTORE_WORDS

NUM = r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
OP_PATTERN = rf"^\s*(?:>=|<=|!=|==|>|<)\s*{NUM}\s*$"
RANGE_PATTERN = rf"^\s*{NUM}\s*\.\.\s*{NUM}\s*$"

# -- faults -------------------------------------------------------------------------


def selector_defs() -> dict[str, Schema]:
    """``selector`` and the faults that take one (``fault``, ``degrade``, ``flaky``)."""
    strings = one_or_many({"type": "string", "minLength": 1})
    ints = one_or_many({"type": "integer"})
    props: dict[str, Schema] = {
        "id": strings,
        "ids": strings,
        "glob": strings,
        "kind": one_or_many({"enum": list(KIND_NAMES)}),
        "tier": one_or_many({"enum": sorted({*ELEMENT_TIERS, *LINK_TIERS})}),
        **{k: ints for k in STRUCT_KEYS},
        "between": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "minItems": 2,
            "maxItems": 2,
        },
        "end": {"enum": ["lower", "upper"]},
        "all-but": {"type": "integer", "minimum": 0},
        "random": {
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": 1}, "seed": {"type": "integer"}},
            "required": ["count"],
            "additionalProperties": False,
        },
    }
    return {
        "selector": {
            "description": "An id, a glob, a list of selectors (union) or a mapping of filters.",
            "anyOf": [
                {"type": "string", "pattern": r"\S"},
                {"type": "array", "minItems": 1, "items": ref("selector")},
                {
                    "type": "object",
                    "minProperties": 1,
                    "additionalProperties": False,
                    "properties": props,
                    "not": {"required": ["all-but", "random"]},
                },
            ],
        },
        "degrade": {
            "type": "object",
            "description": "Keep the links running at a fraction of their speed, or on N lanes.",
            "required": ["target"],
            "additionalProperties": False,
            "properties": {
                "target": ref("selector"),
                "fraction": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "lanes": {"type": "integer", "minimum": 1},
            },
            "oneOf": [{"required": ["fraction"]}, {"required": ["lanes"]}],
        },
        "flaky": {
            "type": "object",
            "description": "The links stay up but lose a fraction of their packets, both ways "
            "or only those sent by one end (from:).",
            "required": ["target", "loss"],
            "additionalProperties": False,
            "properties": {
                "target": ref("selector"),
                "loss": {
                    "anyOf": [
                        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                        {"type": "string", "pattern": r"^\s*[0-9.]+\s*%\s*$"},
                    ]
                },
                "from": {"type": "string", "pattern": r"\S"},
            },
        },
        "fault": {
            "type": "object",
            "description": "Exactly one fault: " + ", ".join(FAULT_KINDS) + ".",
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": False,
            "properties": {
                k: ref(k) if k in ("degrade", "flaky") else ref("selector") for k in FAULT_KINDS
            },
        },
    }


# -- expectations ---------------------------------------------------------------------


def _value_schema(value_type: str) -> Schema:
    if value_type == "boolean":
        return {"type": "boolean"}
    if value_type in ("number", "integer"):
        return {
            "anyOf": [
                {"type": "number"},
                {"type": "string", "pattern": OP_PATTERN},
                {"type": "string", "pattern": RANGE_PATTERN},
            ]
        }
    if value_type == "list":
        return {"type": "array"}
    return {"type": "string", "not": {"pattern": r"^\s*(?:>=|<=|!=|==|>|<)"}}


def _arg_schema(name: str, kind: Any) -> Schema:
    if name == "between":
        return {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
    if name == "kind":
        return {"enum": list(KIND_NAMES)}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    parts = [type_schema(k) for k in kinds]
    return parts[0] if len(parts) == 1 else {"anyOf": parts}


def _observation_schema(d: ObservationDef) -> Schema:
    value = _value_schema(d.value_type)
    with_args: Schema = {
        "type": "object",
        "properties": {**{k: _arg_schema(k, t) for k, t in d.args.items()}, "is": value},
        "required": ["is", *d.required],
        "additionalProperties": False,
    }
    args = ", ".join(d.args) or "none"
    description = f"{d.doc} ({d.value_type}; arguments: {args})"
    if d.required:
        return {**with_args, "description": description}
    if not d.args:
        return {**value, "description": description}
    return {"description": description, "anyOf": [value, with_args]}


# -- steps ----------------------------------------------------------------------------


def step_defs() -> dict[str, Schema]:
    """``step`` (one of its five actions) and ``expect`` (every observation)."""
    return {
        "step": {
            "type": "object",
            "oneOf": [
                {
                    "required": ["inject"],
                    "properties": {
                        "inject": ref("fault"),
                        "as": {**ref("name"), "not": {"enum": list(RESTORE_WORDS)}},
                    },
                    "additionalProperties": False,
                },
                {
                    "required": ["restore"],
                    "properties": {
                        "restore": {
                            "type": "string",
                            "minLength": 1,
                            "description": "A name given with 'as:', or all, or last.",
                        }
                    },
                    "additionalProperties": False,
                },
                {
                    "required": ["expect"],
                    "properties": {"expect": ref("expect")},
                    "additionalProperties": False,
                },
                {
                    "required": ["wait"],
                    "properties": {
                        "wait": {
                            "anyOf": [
                                {"type": "number", "exclusiveMinimum": 0},
                                {"type": "string", "pattern": DURATION_PATTERN},
                            ],
                            "description": "Let the clock run: seconds or 40s, 500ms, 2m.",
                        }
                    },
                    "additionalProperties": False,
                },
                {
                    "required": ["restart"],
                    "properties": {
                        "restart": {
                            "type": "string",
                            "minLength": 1,
                            "description": "Start crashed jobs again: a job name, or all.",
                        }
                    },
                    "additionalProperties": False,
                },
            ],
        },
        "expect": {
            "type": "object",
            "description": "Observation: expectation (a value, '>= N', 'LOW..HIGH', a list, "
            "or {ARGS..., is: EXPECTATION}).",
            "minProperties": 1,
            "additionalProperties": False,
            "properties": {name: _observation_schema(d) for name, d in OBSERVATIONS.items()},
        },
    }
