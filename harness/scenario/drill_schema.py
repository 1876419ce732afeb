"""The JSON Schema of a scenario's ``drill:`` section (scenario stage, pure).

Built from the loader's own key tables (:mod:`harness.scenario.drill_check`), so
the schema and the loader agree on every key (tests/scenario/test_schema.py).
"""

from __future__ import annotations

from harness.inputs.durations import DURATION_PATTERN
from harness.inputs.json_schema import NAME_PATTERN
from harness.inputs.json_schema import Schema
from harness.inputs.json_schema import ref
from harness.observations.registry import OBSERVATIONS
from harness.scenario.drill_check import KIND_ARGS
from harness.scenario.drill_model import OUTCOMES
from harness.scenario.drill_model import PROBE_KINDS
from harness.scenario.drill_model import PROBE_MODES

DURATION: Schema = {
    "anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "pattern": DURATION_PATTERN}]
}


def drill_schema() -> Schema:
    """The ``drill:`` section's schema (``ref("fault")`` and ``ref("expect")`` come from the
    scenario schema's definitions)."""
    arg_keys = sorted({*(a for args in KIND_ARGS.values() for a in args),
                       *(a for d in OBSERVATIONS.values() for a in d.args)})  # fmt: skip
    probe: Schema = {
        "type": "object",
        "required": ["name", "probe"],
        "properties": {
            "name": {"type": "string", "pattern": NAME_PATTERN},
            "probe": {"enum": [*PROBE_KINDS, *OBSERVATIONS]},
            "every": DURATION,
            "mode": {"enum": list(PROBE_MODES)},
            "tolerance": {"type": ["string", "number", "boolean"]},
            "fail_after": {"type": "integer", "minimum": 1},
        },
        "patternProperties": {f"^({'|'.join(arg_keys)})$": {}},
        "additionalProperties": False,
    }
    abort: Schema = {
        "type": "object",
        "properties": {
            "probe": {"type": "string"},
            "below": {"type": "number"},
            "above": {"type": "number"},
            "for": DURATION,
            "job_lost": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
        "oneOf": [{"required": ["job_lost"]}, {"required": ["probe"]}],
    }
    entry: Schema = {
        "type": "object",
        "required": ["inject", "hold"],
        "properties": {
            "at": DURATION,
            "after": {"type": "string", "pattern": NAME_PATTERN},
            "wait": DURATION,
            "every": DURATION,
            "for": DURATION,
            "inject": ref("fault"),
            "hold": DURATION,
            "as": {"type": "string", "pattern": NAME_PATTERN},
        },
        "additionalProperties": False,
        "oneOf": [{"required": ["at"]}, {"required": ["after"]}],
    }
    return {
        "type": "object",
        "description": "A campaign in time: probes, abort rules, a guard and a timeline of "
        "faults, each restored after its hold (docs/drills.md).",
        "required": ["time_limit", "timeline"],
        "properties": {
            "time_limit": DURATION,
            "baseline": DURATION,
            "recover_within": DURATION,
            "guard": {"type": "string", "minLength": 1},
            "probes": {"type": "array", "items": probe},
            "abort": {"type": "array", "items": abort},
            "timeline": {"type": "array", "items": entry, "minItems": 1},
            "expect": ref("expect"),
            "outcome": {"enum": list(OUTCOMES)},
        },
        "additionalProperties": False,
    }
