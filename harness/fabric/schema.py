"""JSON Schema of fabric files, and the fabric pieces scenario files share (routing, params).

Built from the tables the fabric-file loader (:mod:`harness.fabric.fabric_file`)
uses: switch and link kinds, node templates and their override fields,
generators and presets with their parameters (:mod:`harness.fabric.params`),
and the ``routing:`` settings (:mod:`harness.fabric.routing`).  The scenario
file's schema (:mod:`harness.scenario.schema`) reuses :func:`routing_schema`
and :func:`params_by_source`; ``python -m harness.scenario.schema fabric``
writes this one.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence

from harness.fabric.explicit_file import LINK_KINDS
from harness.fabric.explicit_file import NODE_OVERRIDE_FIELDS
from harness.fabric.explicit_file import SWITCH_KINDS
from harness.fabric.generators import GENERATORS
from harness.fabric.model import BOND_HASHES
from harness.fabric.model import Fabric
from harness.fabric.nodes import NODE_TEMPLATES
from harness.fabric.params import generator_function
from harness.fabric.params import generator_params
from harness.fabric.presets import PRESETS
from harness.fabric.routing import BFD_WORDS
from harness.fabric.routing import CHOICES
from harness.fabric.routing import DOCS as ROUTING_DOCS
from harness.fabric.routing import DURATIONS as ROUTING_DURATIONS
from harness.fabric.routing import ENGINE_PATHS
from harness.fabric.routing import SHORTHAND
from harness.inputs.durations import DURATION_PATTERN
from harness.inputs.json_schema import DIALECT
from harness.inputs.json_schema import NAME_PATTERN
from harness.inputs.json_schema import NOT_BLANK
from harness.inputs.json_schema import Schema
from harness.inputs.json_schema import type_schema

# -- generator parameters ---------------------------------------------------------------


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


def params_by_source(*, exclude_name: bool, require: bool) -> list[Schema]:
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


# -- routing: ----------------------------------------------------------------------------


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
            "properties": {
                k: {"enum": list(BOND_HASHES)} if k == "bond_hash" else type_schema(t)
                for k, t in NODE_OVERRIDE_FIELDS.items()
            },
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
        "allOf": params_by_source(exclude_name=True, require=False),
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
