"""JSON Schema (draft 2020-12) of scenario files, for editors; writes both committed schemas.

Built from the same tables the loaders use: backends, jobs (failovers,
collectives, rank orders), the fabric reference with its presets, generators
and their parameters, and ``routing:`` (:mod:`harness.fabric.schema`), plus
the steps' faults, selectors and observations (:mod:`harness.scenario.step_schema`).
The fabric file's schema is :func:`harness.fabric.schema.fabric_schema`.  The
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
from collections.abc import Callable
from collections.abc import Sequence

from harness.backends import BACKENDS
from harness.fabric.generators import GENERATORS
from harness.fabric.jobs import COLLECTIVES
from harness.fabric.jobs import DEFAULT_COLLECTIVES
from harness.fabric.jobs import DEFAULT_TIMEOUT_S
from harness.fabric.jobs import FAILOVERS
from harness.fabric.jobs import RANK_ORDERS
from harness.fabric.presets import PRESETS
from harness.fabric.schema import fabric_schema
from harness.fabric.schema import params_by_source
from harness.fabric.schema import routing_schema
from harness.inputs.durations import DURATION_PATTERN
from harness.inputs.json_schema import DIALECT
from harness.inputs.json_schema import NAME_PATTERN
from harness.inputs.json_schema import NOT_BLANK
from harness.inputs.json_schema import Schema
from harness.inputs.json_schema import one_or_many
from harness.inputs.json_schema import ref
from harness.scenario.drill_schema import drill_schema
from harness.scenario.step_schema import selector_defs
from harness.scenario.step_schema import step_defs

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
    "drill": "A drill: probes, aborts, a guard and a timeline of faults (harness drill).",
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
                    "nodes": one_or_many({"type": "string", "minLength": 1}),
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
        "name": ref("name"),
        "description": NOT_BLANK,
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "backends": {
            "type": "array",
            "items": {"enum": list(BACKENDS)},
            "minItems": 1,
            "uniqueItems": True,
        },
        "fabric": ref("fabric"),
        "routing": ref("routing"),
        "expect_fabric_error": NOT_BLANK,
        "jobs": {"type": "array", "items": ref("job")},
        "checkpoint": checkpoint,
        "steps": {"type": "array", "items": ref("step")},
        "drill": drill_schema(),
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
            "anyOf": [{"required": ["steps"]}, {"required": ["drill"]}],
            "properties": {
                "steps": {"minItems": 1},
                "fabric": {"allOf": params_by_source(exclude_name=False, require=True)},
            },
        },
    }
    return {
        "$schema": DIALECT,
        "$id": "urn:harness:schema:scenario",
        "title": "harness scenario file",
        "description": "One scenario, or a list of scenarios (docs/scenario-format.md).",
        "anyOf": [
            ref("scenario"),
            {"type": "array", "minItems": 1, "items": ref("scenario")},
        ],
        "$defs": {
            "name": {"type": "string", "pattern": NAME_PATTERN},
            "scenario": scenario,
            "fabric": _fabric_ref_schema(),
            "routing": routing_schema(),
            "job": _job_schema(),
            **selector_defs(),
            **step_defs(),
        },
    }


SCHEMAS: dict[str, Callable[[], Schema]] = {"scenario": scenario_schema, "fabric": fabric_schema}


def render(which: str = "scenario") -> str:
    """The schema as committed: 2-space JSON with a final newline."""
    return json.dumps(SCHEMAS[which](), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the JSON Schema named by the argument (``scenario``, the default, or ``fabric``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    which = args[0] if args else "scenario"
    if len(args) > 1 or which not in SCHEMAS:
        sys.stderr.write(f"usage: python -m harness.scenario.schema [{'|'.join(SCHEMAS)}]\n")
        return 2
    sys.stdout.write(render(which))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
