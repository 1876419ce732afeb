"""The observation registry: every name a scenario may ``expect``, from every family.

``OBSERVATIONS`` maps each name to its :class:`~harness.observations.observation.ObservationDef`,
in the order of :data:`FAMILIES` and, within a family, of its module.  The registry
imports every family and builds the map from them, so it is whole whichever module is
imported first.  The same predict functions serve scenarios, ``harness risk --budget``
and the Python API.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from harness.backends.measurement import MeasurePlan
from harness.errors import ScenarioError
from harness.invariants.analysis import Analysis
from harness.observations import bandwidth
from harness.observations import capacity
from harness.observations import connectivity
from harness.observations import jobs
from harness.observations import links
from harness.observations import paths
from harness.observations import storage
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import MeasureInput
from harness.observations.observation import ObservationDef
from harness.observations.observation import Observed
from harness.observations.observation import PlanInput

#: Every family of observations, in the order their names are listed (schema, docs, help).
FAMILIES: tuple[Family, ...] = (
    connectivity.FAMILY,
    paths.FAMILY,
    jobs.FAMILY,
    bandwidth.FAMILY,
    capacity.FAMILY,
    storage.FAMILY,
    links.FAMILY,
)

# -- what each numeric observation can be ------------------------------------------------
# (counts and bandwidths are never negative; ratios to the healthy fabric lie in 0..1).
# The scenario loader rejects an expectation that can never hold or always holds for
# these ranges (``node_nic_gbs: '< 0'``), naming the range.

_COUNT = (0.0, math.inf)
_AMOUNT = (0.0, math.inf)  # a bandwidth (GB/s, Gb/s) or a duration (s)
_RATIO = (0.0, 1.0)
VALUE_RANGES: dict[str, tuple[float, float]] = {
    "gpu_pairs_disconnected": _COUNT,
    "islands": _COUNT,
    "nics_isolated": _COUNT,
    "gpus_isolated": _COUNT,
    "hops": _COUNT,
    "jobs_lost": _COUNT,
    "jobs_survived": _COUNT,
    "jobs_unplaceable": _COUNT,
    "elements_down": _COUNT,
    "bond_streams": _COUNT,
    "job_busbw_gbs": _AMOUNT,
    "bisection_gbps": _AMOUNT,
    "nvlink_gbs_per_gpu": _AMOUNT,
    "node_nic_gbs": _AMOUNT,
    "storage_gbps": _AMOUNT,
    "link_gbps": _AMOUNT,
    "pod_pair_gbps": _AMOUNT,
    "checkpoint_sync_stall_s": _AMOUNT,
    "checkpoint_async_stall_s": _AMOUNT,
    "checkpoint_background_s": _AMOUNT,
    "job_busbw_ratio": _RATIO,
    "job_busbw_line_ratio": _RATIO,
    "min_job_busbw_ratio": _RATIO,
    "link_loss": _RATIO,
    "leaf_uplink_ratio": _RATIO,
    "bisection_ratio": _RATIO,
    "node_nic_ratio": _RATIO,
    "pod_pair_ratio": _RATIO,
}


def _gather(families: tuple[Family, ...]) -> dict[str, ObservationDef]:
    """Every family's definitions in order, each numeric one with its value range."""
    out: dict[str, ObservationDef] = {}
    for family in families:
        for name, d in family.definitions.items():
            if name in out:
                msg = f"observation {name!r} is defined twice (family {family.name})"
                raise ValueError(msg)
            out[name] = d
    for name, value_range in VALUE_RANGES.items():
        out[name] = replace(out[name], value_range=value_range)
    return out


OBSERVATIONS: dict[str, ObservationDef] = _gather(FAMILIES)


def observe(name: str, analysis: Analysis, ctx: Context | None = None,
            args: Mapping[str, Any] | None = None) -> Observed:  # fmt: skip
    """Compute one named observation."""
    try:
        d = OBSERVATIONS[name]
    except KeyError:
        import difflib

        near = difflib.get_close_matches(name, OBSERVATIONS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = f"unknown observation {name!r}{hint}"
        raise ScenarioError(msg) from None
    return d.predict(analysis, ctx or Context(), args or {})


def check_args(name: str, args: Mapping[str, Any]) -> list[str]:
    """Problems with an observation's arguments (empty when fine)."""
    d = OBSERVATIONS[name]
    problems = []
    for key, value in args.items():
        if key not in d.args:
            import difflib

            near = difflib.get_close_matches(key, list(d.args), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            known = ", ".join(d.args) or "none"
            problems.append(f"{name} takes no argument {key!r}{hint} (arguments: {known})")
        elif not isinstance(value, d.args[key]) or (
            d.args[key] is not bool and isinstance(value, bool)
        ):
            want = d.args[key]
            tname = want.__name__ if isinstance(want, type) else "/".join(t.__name__ for t in want)
            problems.append(f"{name}: argument {key!r} must be a {tname}, got {value!r}")
    for key in d.required:
        if key not in args:
            problems.append(f"{name} needs argument {key!r}")
    return problems


def measure(name: str, inp: MeasureInput) -> Observed | None:
    """Compute one named observation from measurements (``None``: not measurable)."""
    d = OBSERVATIONS[name].measure
    return None if d is None else d.measure(inp)


def plan_for(name: str, inp: PlanInput) -> MeasurePlan | None:
    """What to measure for one observation (``None``: it has no measurement)."""
    d = OBSERVATIONS[name].measure
    return None if d is None else d.plan(inp)
