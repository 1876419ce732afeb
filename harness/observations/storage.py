"""Observations of storage: a server's storage bond bandwidth, where its bond's transmit
hash puts its checkpoint streams, and the stall and background time of a job's checkpoint
(``checkpoint:`` in the scenario); predicted only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from harness.errors import ScenarioError
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import Job
from harness.fabric.model import Kind
from harness.invariants.analysis import Analysis
from harness.observations.capacity import node_or_min
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import Observed

FAMILY = Family("storage")


@FAMILY.predicts("storage_gbps", "live storage bond bandwidth of a server (Gb/s)", {"node": str})
def _storage(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return node_or_min(a, args, a.storage_gbps)


@FAMILY.predicts(
    "bond_streams",
    "checkpoint streams a server's bond hash puts on one storage NIC",
    {"node": str, "member": str},
)
def _bond_streams(a: Analysis, ctx: Context, args: Mapping[str, Any]) -> Observed:
    if ctx.checkpoint is None:
        msg = "bond_streams needs `checkpoint: {size_gb: ...}` in the scenario (its streams)"
        raise ScenarioError(msg)
    f = a.fabric
    node, nic = f.index.get(args.get("node") or ""), f.index.get(args.get("member") or "")
    if node is None or f.kind[node] != int(Kind.NODE):
        msg = (
            f"bond_streams needs `node:` naming a server of fabric {f.name!r}, "
            f"got {args.get('node')!r}"
        )
        raise ScenarioError(msg)
    if nic is None or f.kind[nic] != int(Kind.STORAGE_NIC) or int(f.parent[nic]) != node:
        msg = (
            f"bond_streams needs `member:` naming a storage NIC of {f.ids[node]}, "
            f"got {args.get('member')!r}"
        )
        raise ScenarioError(msg)
    streams = _streams(a, ctx.checkpoint, node)
    return Observed(float(a.bond_streams(node, streams).get(nic, 0)), _spread(a, node, streams))


def _streams(a: Analysis, ck: CheckpointSpec, server: int) -> int:
    """How many checkpoint streams a writing server sends."""
    return (ck.shards_per_server or max(a.fabric.node_spec(server).gpus, 1)) if ck.sharded else 1


def _spread(a: Analysis, server: int, streams: int) -> str:
    """Where a server's bond hash puts its streams: "8 streams, hash layer2 (stor0: 0, ...)"."""
    f = a.fabric
    placed = a.bond_streams(server, streams)
    spread = ", ".join(f"{f.ids[m].rsplit('/', 1)[-1]}: {n}" for m, n in placed.items())
    return f"{streams} streams, hash {f.node_spec(server).bond_hash}" + (
        f" ({spread})" if spread else "; no live member"
    )


def _slowest_writer(a: Analysis, ck: CheckpointSpec, job: Job) -> str:
    """The server whose bond write ends last, and where its streams are."""
    writers = list(job.servers) if ck.sharded else list(job.servers[:1])
    share = ck.size_gb / len(writers)
    server = max(writers, key=lambda s: a.write_s(s, share, _streams(a, ck, s)))  # first on ties
    return f"slowest writer {a.fabric.ids[server]}: {_spread(a, server, _streams(a, ck, server))}"


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
        writer = f"; {_slowest_writer(a, ck, job)}" if which != 1 else ""
        return Observed(one(job), f"job {job.name}{writer}")
    if not a.jobs:
        msg = "checkpoint observations need jobs: add `jobs:` to the scenario"
        raise ScenarioError(msg)
    value, name = max((one(j), j.name) for j in a.jobs)
    detail = f"slowest: job {name}"
    if which != 1:  # the write to storage: say where the slowest server's streams went
        detail += f"; {_slowest_writer(a, ck, a.job(name))}"
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
