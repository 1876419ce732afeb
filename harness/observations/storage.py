"""Observations of storage: a server's storage bond bandwidth and the stall and
background time of a job's checkpoint (``checkpoint:`` in the scenario); predicted only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.invariants.analysis import Analysis
from harness.observations.capacity import node_or_min
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import Observed

FAMILY = Family("storage")


@FAMILY.predicts("storage_gbps", "live storage bond bandwidth of a server (Gb/s)", {"node": str})
def _storage(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return node_or_min(a, args, a.storage_gbps)


def _checkpoint(a: Analysis, ctx: Context, args: Mapping[str, Any], which: int) -> Observed:
    if ctx.checkpoint is None:
        msg = "checkpoint observations need `checkpoint: {size_gb: ...}` in the scenario"
        raise ScenarioError(msg)
    ck = ctx.checkpoint

    def one(job: Job) -> float:
        return a.checkpoint(
            job, ck.size_gb, sharded=ck.sharded, shards_per_server=ck.shards_per_server
        )[which]

    if args.get("job") is not None:
        job = a.job(args["job"])
        return Observed(one(job), f"job {job.name}")
    if not a.jobs:
        msg = "checkpoint observations need jobs: add `jobs:` to the scenario"
        raise ScenarioError(msg)
    value, name = max((one(j), j.name) for j in a.jobs)
    detail = f"slowest: job {name}"
    if which == 2 and ck.interval_s is not None and value > ck.interval_s:
        detail += f"; does not fit the {ck.interval_s:g} s checkpoint interval"
    return Observed(value if math.isfinite(value) else float("inf"), detail)


@FAMILY.predicts("checkpoint_sync_stall_s", "synchronous checkpoint stall (s)", {"job": str})
def _ck_sync(a: Analysis, ctx: Context, args: Mapping[str, Any]) -> Observed:
    return _checkpoint(a, ctx, args, 0)


@FAMILY.predicts("checkpoint_async_stall_s", "two-phase save: phase-1 stall, GPU -> host (s)",
                 {"job": str})  # fmt: skip
def _ck_async(a: Analysis, ctx: Context, args: Mapping[str, Any]) -> Observed:
    return _checkpoint(a, ctx, args, 1)


@FAMILY.predicts("checkpoint_background_s", "two-phase save: phase 2, host -> storage (s)",
                 {"job": str})  # fmt: skip
def _ck_bg(a: Analysis, ctx: Context, args: Mapping[str, Any]) -> Observed:
    return _checkpoint(a, ctx, args, 2)
