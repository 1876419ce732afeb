"""JSON Schemas (draft 2020-12) of scenario and fabric files, for editors (scenario layer).

Built from the same tables the loaders use: fault kinds (:data:`harness.faults.fault.FAULT_KINDS`),
selector keys, observations and their arguments
(:data:`harness.observations.registry.OBSERVATIONS`), presets, generators and their
parameters, backends and node templates.  The
committed copies in ``harness/schema/`` are regenerated with::

    python -m harness.scenario.schema > harness/schema/scenario.schema.json
    python -m harness.scenario.schema fabric > harness/schema/fabric.schema.json

The loaders remain the authority (they also check what a schema cannot say,
such as ``restore:`` naming an earlier step); the schemas catch typos while
typing.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from harness.backends import BACKENDS
from harness.fabric.fabric_file import LINK_KINDS
from harness.fabric.fabric_file import NODE_OVERRIDE_FIELDS
from harness.fabric.fabric_file import SWITCH_KINDS
from harness.fabric.generators import GENERATORS
from harness.fabric.jobs import COLLECTIVES
from harness.fabric.jobs import DEFAULT_COLLECTIVES
from harness.fabric.jobs import DEFAULT_TIMEOUT_S
from harness.fabric.jobs import FAILOVERS
from harness.fabric.jobs import RANK_ORDERS
from harness.fabric.model import Fabric
from harness.fabric.nodes import NODE_TEMPLATES
from harness.fabric.presets import PRESETS
from harness.fabric.routing import BFD_WORDS
from harness.fabric.routing import CHOICES
from harness.fabric.routing import DOCS as ROUTING_DOCS
from harness.fabric.routing import DURATIONS as ROUTING_DURATIONS
from harness.fabric.routing import ENGINE_PATHS
from harness.fabric.routing import SHORTHAND
from harness.faults.fault import FAULT_KINDS
from harness.faults.selectors import ELEMENT_TIERS
from harness.faults.selectors import KIND_NAMES
from harness.faults.selectors import LINK_TIERS
from harness.faults.selectors import STRUCT_KEYS
from harness.inputs.durations import DURATION_PATTERN
from harness.observations.observation import ObservationDef
from harness.observations.registry import OBSERVATIONS
from harness.scenario.load import NAME_RE
from harness.scenario.load import RESTORE_WORDS
from harness.scenario.load import generator_function
from harness.scenario.load import generator_params

Schema = dict[str, Any]

DIALECT = "https://json-schema.org/draft/2020-12/schema"
NAME_PATTERN = f"^{NAME_RE.pattern}$"
NUM = r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
OP_PATTERN = rf"^\s*(?:>=|<=|!=|==|>|<)\s*{NUM}\s*$"
RANGE_PATTERN = rf"^\s*{NUM}\s*\.\.\s*{NUM}\s*$"
NOT_BLANK = {"type": "string", "pattern": r"\S"}

SCENARIO_DOCS = {
    "name": "Unique name: lowercase letters, digits, '.', '_', '-'.",
    "description": "Plain words: what the scenario breaks and why.",
    "tags": "Free-form tags, e.g. [seed, connectivity].",
    "backends": "Backends to run on (default [model]).",
    "fabric": "The fabric: exactly one of preset, file or generator, plus params.",
    "routing": "How the fabric is routed: a control plane (sm or bgp) or {control: ...}; "
    "overrides the fabric file's routing:.",
    "expect_fabric_error": "Building the fabric must fail with a message containing this text.",
    "jobs": "Training jobs: per-su, or {name, nodes, failover, timeout, collectives, ranks}.",
    "checkpoint": "Checkpoint of one job, for the checkpoint_* observations.",
    "steps": "inject / restore / expect steps, run in order.",
}


# -- building blocks ----------------------------------------------------------------


def _ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def _one_or_many(item: Schema) -> Schema:
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


def _positive(schema: Schema) -> Schema:
    """Numbers > 0, as the loaders require of generator parameters."""
    if schema.get("type") in ("integer", "number"):
        return {**schema, "exclusiveMinimum": 0}
    if "items" in schema:
        return {**schema, "items": _positive(schema["items"])}
    if "anyOf" in schema:
        return {**schema, "anyOf": [_positive(s) for s in schema["anyOf"]]}
    return schema


def params_schema(
    gen: Callable[..., Fabric], *, exclude: Sequence[str] = (), require: bool = False
) -> Schema:
    """The keyword parameters of a generator (or a preset's generator)."""
    info = generator_params(gen, exclude=exclude)
    out: Schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {k: _positive(type_schema(hint)) for k, (hint, _) in info.items()},
    }
    required = [k for k, (_, req) in info.items() if req]
    if require and required:
        out["required"] = required
    return out


def _params_by_source(*, exclude_name: bool, require: bool) -> list[Schema]:
    """``if generator/preset is X then params follow X's signature``."""
    rules: list[Schema] = []
    for g in GENERATORS:
        excl = ("name",) if exclude_name else ()
        rules.append(
            {
                "if": {"required": ["generator"], "properties": {"generator": {"const": g}}},
                "then": {
                    "properties": {
                        "params": params_schema(
                            generator_function(g), exclude=excl, require=require
                        )
                    }
                },
            }
        )
    for p, (gen, _) in PRESETS.items():
        rules.append(
            {
                "if": {"required": ["preset"], "properties": {"preset": {"const": p}}},
                "then": {"properties": {"params": params_schema(gen, exclude=("name",))}},
            }
        )
    return rules


# -- scenario pieces -------------------------------------------------------------------


def _selector_defs() -> dict[str, Schema]:
    strings = _one_or_many({"type": "string", "minLength": 1})
    ints = _one_or_many({"type": "integer"})
    props: dict[str, Schema] = {
        "id": strings,
        "ids": strings,
        "glob": strings,
        "kind": _one_or_many({"enum": list(KIND_NAMES)}),
        "tier": _one_or_many({"enum": sorted({*ELEMENT_TIERS, *LINK_TIERS})}),
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
                {"type": "array", "minItems": 1, "items": _ref("selector")},
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
                "target": _ref("selector"),
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
                "target": _ref("selector"),
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
                k: _ref(k) if k in ("degrade", "flaky") else _ref("selector") for k in FAULT_KINDS
            },
        },
    }


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


def _step_defs() -> dict[str, Schema]:
    return {
        "step": {
            "type": "object",
            "oneOf": [
                {
                    "required": ["inject"],
                    "properties": {
                        "inject": _ref("fault"),
                        "as": {**_ref("name"), "not": {"enum": list(RESTORE_WORDS)}},
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
                    "properties": {"expect": _ref("expect")},
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


def _job_schema() -> Schema:
    failover = {"enum": list(FAILOVERS)}
    timeout = {
        "description": "NCCL-equivalent timeout: seconds, or a duration such as 5s, 500ms, 2m "
        f"(default {DEFAULT_TIMEOUT_S:.1f} s from NCCL_IB_TIMEOUT=20, NCCL_IB_RETRY_CNT=7).",
        "anyOf": [
            {"type": "number", "exclusiveMinimum": 0},
            {"type": "string", "pattern": DURATION_PATTERN},
        ],
    }
    collective = {"enum": list(COLLECTIVES)}
    collectives = {
        "description": "Collectives the job runs; its bandwidth is the worst of them "
        f"(default {list(DEFAULT_COLLECTIVES)}).",
        "anyOf": [collective, {"type": "array", "items": collective, "minItems": 1,
                               "uniqueItems": True}],
    }  # fmt: skip
    ranks = {
        "description": "Rank order: given (the order of nodes:, default) or sorted (by id).",
        "enum": list(RANK_ORDERS),
    }
    return {
        "description": "per-su, {per-su: true}, or {name, nodes, failover, timeout, "
        "collectives, ranks}.",
        "anyOf": [
            {"const": "per-su"},
            {
                "type": "object",
                "required": ["per-su"],
                "properties": {
                    "per-su": {"const": True},
                    "failover": failover,
                    "timeout": timeout,
                    "collectives": collectives,
                },
                "additionalProperties": False,
            },
            {
                "type": "object",
                "required": ["name", "nodes"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "nodes": _one_or_many({"type": "string", "minLength": 1}),
                    "failover": failover,
                    "timeout": timeout,
                    "collectives": collectives,
                    "ranks": ranks,
                    "per-su": {"const": False},
                },
                "additionalProperties": False,
            },
        ],
    }


def routing_schema() -> Schema:
    """``routing:``: a control plane, or a mapping of settings (:mod:`harness.fabric.routing`)."""
    return {
        "description": "A control plane (shorthand for {control: ...}) or a mapping of settings.",
        "anyOf": [
            {"enum": list(CHOICES[SHORTHAND])},
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    **{
                        key: {"enum": list(choices), "description": ROUTING_DOCS[key]}
                        for key, choices in CHOICES.items()
                    },
                    **{
                        key: {
                            "anyOf": [
                                {"type": "number", "minimum": 0},
                                {"type": "string", "pattern": DURATION_PATTERN},
                            ],
                            "description": ROUTING_DOCS[key],
                        }
                        for key in ROUTING_DURATIONS
                    },
                    "bfd": {
                        "anyOf": [
                            {"enum": list(BFD_WORDS)},
                            {"type": "boolean"},
                            {"type": "number", "exclusiveMinimum": 0},
                            {"type": "string", "pattern": DURATION_PATTERN},
                        ],
                        "description": ROUTING_DOCS["bfd"],
                    },
                },
                "allOf": [
                    {
                        "if": {
                            "required": ["engine", "paths"],
                            "properties": {"engine": {"enum": engines}},
                        },
                        "then": {"properties": {"paths": {"const": rule}}},
                    }
                    for rule, engines in _engines_by_rule().items()
                ],
            },
        ],
    }


def _engines_by_rule() -> dict[str, list[str]]:
    """Path rule -> the OpenSM engines that route by it (an engine must agree with paths)."""
    out: dict[str, list[str]] = {}
    for engine, rule in ENGINE_PATHS.items():
        out.setdefault(rule, []).append(engine)
    return out


def _fabric_ref_schema() -> Schema:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "preset": {"enum": list(PRESETS)},
            "file": {"type": "string", "minLength": 1, "description": "Relative to this file."},
            "generator": {"enum": list(GENERATORS)},
            "params": {"type": "object", "description": "Generator parameters."},
        },
        "oneOf": [{"required": ["preset"]}, {"required": ["file"]}, {"required": ["generator"]}],
    }


def scenario_schema() -> Schema:
    """The JSON Schema of a scenario file (one scenario or a list of them)."""
    checkpoint: Schema = {
        "type": "object",
        "required": ["size_gb"],
        "additionalProperties": False,
        "properties": {
            "size_gb": {"type": "number", "exclusiveMinimum": 0},
            "sharded": {"type": "boolean"},
            "shards_per_server": {
                "type": "integer",
                "minimum": 1,
                "maximum": 65536,
                "description": "Streams each server writes when sharded (default: one per GPU).",
            },
            "interval_s": {"type": "number", "exclusiveMinimum": 0},
        },
    }
    props: dict[str, Schema] = {
        "name": _ref("name"),
        "description": NOT_BLANK,
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "backends": {
            "type": "array",
            "items": {"enum": list(BACKENDS)},
            "minItems": 1,
            "uniqueItems": True,
        },
        "fabric": _ref("fabric"),
        "routing": _ref("routing"),
        "expect_fabric_error": NOT_BLANK,
        "jobs": {"type": "array", "items": _ref("job")},
        "checkpoint": checkpoint,
        "steps": {"type": "array", "items": _ref("step")},
    }
    for key, schema in props.items():
        props[key] = {**schema, "description": SCENARIO_DOCS[key]}
    scenario: Schema = {
        "type": "object",
        "required": ["name", "description", "fabric"],
        "additionalProperties": False,
        "properties": props,
        "if": {"required": ["expect_fabric_error"]},
        "else": {
            "required": ["steps"],
            "properties": {
                "steps": {"minItems": 1},
                "fabric": {"allOf": _params_by_source(exclude_name=False, require=True)},
            },
        },
    }
    return {
        "$schema": DIALECT,
        "$id": "urn:harness:schema:scenario",
        "title": "harness scenario file",
        "description": "One scenario, or a list of scenarios (docs/scenario-format.md).",
        "anyOf": [
            _ref("scenario"),
            {"type": "array", "minItems": 1, "items": _ref("scenario")},
        ],
        "$defs": {
            "name": {"type": "string", "pattern": NAME_PATTERN},
            "scenario": scenario,
            "fabric": _fabric_ref_schema(),
            "routing": routing_schema(),
            "job": _job_schema(),
            **_selector_defs(),
            **_step_defs(),
        },
    }


# -- fabric files -------------------------------------------------------------------------


def fabric_schema() -> Schema:
    """The JSON Schema of a fabric file (generator/preset form or explicit form)."""
    small = {"type": "integer", "minimum": 0}
    element_id = {
        "type": "string",
        "pattern": r"^[A-Za-z0-9][A-Za-z0-9._/-]*$",
        "not": {"pattern": "--"},
    }
    node_props: Schema = {
        "id": element_id,
        "model": {"enum": list(NODE_TEMPLATES)},
        "su": small,
        "node": small,
        "pod": small,
        "overrides": {
            "type": "object",
            "description": "NodeSpec fields to change (and cpus).",
            "additionalProperties": False,
            "properties": {k: type_schema(t) for k, t in NODE_OVERRIDE_FIELDS.items()},
        },
    }
    switch_props: Schema = {
        "id": element_id,
        "kind": {"enum": list(SWITCH_KINDS)},
        "ports": {"type": "integer", "minimum": 0, "description": "The radix."},
        "su": small,
        "rail": {"type": "integer", "minimum": -1},
        "pod": small,
        "plane": small,
    }
    link_props: Schema = {
        "a": {"type": "string", "minLength": 1},
        "b": {"type": "string", "minLength": 1},
        "kind": {"enum": list(LINK_KINDS)},
        "gbps": {"type": "number", "exclusiveMinimum": 0, "description": "Per direction, Gb/s."},
        "a_port": {"type": "integer", "minimum": 1},
        "b_port": {"type": "integer", "minimum": 1},
        "count": {"type": "integer", "minimum": 1, "description": "Parallel cables."},
        "lanes": {"type": "integer", "minimum": 1, "description": "Default 4 (storage: 1)."},
    }
    common = {
        "name": {"type": "string", "pattern": NAME_PATTERN},
        "description": NOT_BLANK,
        "routing": routing_schema(),
    }
    generator_form: Schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **common,
            "generator": {"enum": list(GENERATORS)},
            "preset": {"enum": list(PRESETS)},
            "params": {"type": "object"},
        },
        "oneOf": [{"required": ["generator"]}, {"required": ["preset"]}],
        "allOf": _params_by_source(exclude_name=True, require=False),
    }
    explicit_form: Schema = {
        "type": "object",
        "required": ["nodes"],
        "additionalProperties": False,
        "properties": {
            **common,
            "tiers": {"enum": [2, 3]},
            "nodes": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["id", "model"],
                    "additionalProperties": False,
                    "properties": node_props,
                },
            },
            "switches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "kind"],
                    "additionalProperties": False,
                    "properties": switch_props,
                    "if": {"not": {"properties": {"kind": {"const": "storage"}}}},
                    "then": {"required": ["ports"], "properties": {"ports": {"minimum": 1}}},
                },
            },
            "links": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["a", "b", "kind", "gbps"],
                    "additionalProperties": False,
                    "properties": link_props,
                },
            },
        },
    }
    return {
        "$schema": DIALECT,
        "$id": "urn:harness:schema:fabric",
        "title": "harness fabric file",
        "description": "generator/preset + params, or explicit nodes, switches and links.",
        "oneOf": [generator_form, explicit_form],
    }


SCHEMAS: dict[str, Callable[[], Schema]] = {"scenario": scenario_schema, "fabric": fabric_schema}


def render(which: str = "scenario") -> str:
    """The schema as committed: 2-space JSON with a final newline."""
    return json.dumps(SCHEMAS[which](), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    which = args[0] if args else "scenario"
    if len(args) > 1 or which not in SCHEMAS:
        sys.stderr.write(f"usage: python -m harness.scenario.schema [{'|'.join(SCHEMAS)}]\n")
        return 2
    sys.stdout.write(render(which))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
