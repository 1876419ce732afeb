"""The observation registry: every name a scenario may ``expect`` (core, pure).

Each :class:`ObservationDef` names its arguments (for validation and the JSON
Schema) and a function ``(Analysis, ctx, args) -> Observed``.  The same
functions serve scenarios, ``harness risk --budget`` and the Python API.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from harness.analysis import Analysis
from harness.errors import ScenarioError
from harness.fabric.model import Kind
from harness.jobs import Job
from harness.selectors import KIND_NAMES


@dataclass(frozen=True, slots=True)
class CheckpointSpec:
    """Checkpoint of one job: size of the whole checkpoint, sharded or not."""

    size_gb: float
    sharded: bool = True
    interval_s: float | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """Scenario-level inputs some observations need."""

    checkpoint: CheckpointSpec | None = None


@dataclass(frozen=True, slots=True)
class Observed:
    """A value plus what it is about (shown when an expectation fails)."""

    value: Any
    detail: str = ""
    involved: tuple[str, ...] = ()


ArgType = type | tuple[type, ...]
ObsFn = Callable[[Analysis, Context, Mapping[str, Any]], Observed]


@dataclass(frozen=True, slots=True)
class ObservationDef:
    name: str
    doc: str
    fn: ObsFn
    args: Mapping[str, ArgType] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    value_type: str = "number"  # number | integer | boolean | string | list


OBSERVATIONS: dict[str, ObservationDef] = {}


def _register(
    name: str,
    doc: str,
    args: Mapping[str, ArgType] | None = None,
    required: tuple[str, ...] = (),
    value_type: str = "number",
) -> Callable[[ObsFn], ObsFn]:
    def deco(fn: ObsFn) -> ObsFn:
        OBSERVATIONS[name] = ObservationDef(name, doc, fn, args or {}, required, value_type)
        return fn

    return deco


PXN = {"pxn": bool}


def _job_or_min(a: Analysis, args: Mapping[str, Any], fn: Callable[[Job], float]) -> Observed:
    if args.get("job") is not None:
        job = a.job(args["job"])
        return Observed(fn(job), f"job {job.name}", (job.name,))
    if not a.jobs:
        msg = "this observation needs jobs: add `jobs:` to the scenario"
        raise ScenarioError(msg)
    values = [(fn(j), j.name) for j in a.jobs]
    value, name = min(values)
    return Observed(value, f"lowest: job {name}", (name,))


@_register("all_gpus_connected", "every GPU pair can talk", PXN, value_type="boolean")
def _all_connected(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    bad = a.gpu_pairs_disconnected(pxn=bool(args.get("pxn")))
    islands = [i.label for i in a.islands(pxn=bool(args.get("pxn")))]
    detail = f"{bad} GPU pairs cannot talk; NIC islands: " + "; ".join(islands[:6])
    if len(islands) > 6:
        detail += f"; ... {len(islands) - 6} more"
    return Observed(bad == 0, detail if bad else "")


@_register("gpu_pairs_disconnected", "GPU pairs that cannot talk", PXN, value_type="integer")
def _pairs(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return Observed(a.gpu_pairs_disconnected(pxn=bool(args.get("pxn"))))


@_register("islands", "NIC islands", PXN, value_type="integer")
def _islands(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    isl = a.islands(pxn=bool(args.get("pxn")))
    return Observed(len(isl), "; ".join(i.label for i in isl[:8]))


@_register("rails_connected", "rails whose NICs all reach each other", value_type="list")
def _rails(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return Observed(a.rails_connected())


@_register("nics_isolated", "live NICs that reach no other NIC", value_type="integer")
def _nics_isolated(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return Observed(a.nics_isolated())


@_register("gpus_isolated", "GPUs that reach no GPU on another server", PXN, value_type="integer")
def _gpus_isolated(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return Observed(a.gpus_isolated(pxn=bool(args.get("pxn"))))


def _between(args: Mapping[str, Any]) -> tuple[str, str]:
    pair = args.get("between")
    if not (isinstance(pair, list | tuple) and len(pair) == 2):
        msg = "needs between: [GPU_A, GPU_B]"
        raise ScenarioError(msg)
    return str(pair[0]), str(pair[1])


@_register("path_class", "class of the best live path between two GPUs",
           {"between": list, "pxn": bool}, ("between",), "string")  # fmt: skip
def _path_class(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    x, y = _between(args)
    cls, hops = a.path(x, y, pxn=bool(args.get("pxn")))
    return Observed(cls, f"{x} -> {y}: {cls}, {hops} switch(es)", (x, y))


@_register("hops", "switches traversed on the best live path (0: NVLink)",
           {"between": list, "pxn": bool}, ("between",), "integer")  # fmt: skip
def _hops(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    x, y = _between(args)
    cls, hops = a.path(x, y, pxn=bool(args.get("pxn")))
    return Observed(hops, f"{x} -> {y}: {cls}", (x, y))


def _lost_detail(a: Analysis) -> tuple[str, tuple[str, ...]]:
    lines = []
    culprits: list[str] = []
    for v in a.verdicts:
        if v.lost:
            lines.append(f"{v.name}: {v.reasons[0]}" + (
                f" (+{len(v.reasons) - 1} more)" if len(v.reasons) > 1 else ""))  # fmt: skip
            culprits.extend(v.culprits)
    return "; ".join(lines[:6]), tuple(dict.fromkeys(culprits))[:12]


@_register("jobs_lost", "number of jobs lost", value_type="integer")
def _jobs_lost(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    detail, culprits = _lost_detail(a)
    return Observed(len(a.jobs_lost()), detail, culprits)


@_register("jobs_lost_names", "names of the jobs lost", value_type="list")
def _jobs_lost_names(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    detail, culprits = _lost_detail(a)
    return Observed(a.jobs_lost(), detail, culprits)


@_register("jobs_survived", "number of jobs still running", value_type="integer")
def _jobs_survived(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return Observed(len(a.jobs) - len(a.jobs_lost()))


@_register("job_busbw_gbs", "ring all-reduce bus bandwidth estimate (GB/s)", {"job": str})
def _busbw(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return _job_or_min(a, args, a.job_busbw_gbs)


@_register("job_busbw_ratio", "bus bandwidth as a ratio to healthy", {"job": str})
def _busbw_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return _job_or_min(a, args, a.job_busbw_ratio)


@_register("min_job_busbw_ratio", "minimum bus bandwidth ratio over all jobs (lost: 0)")
def _min_busbw(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return _job_or_min(a, {}, a.job_busbw_ratio)


@_register("leaf_uplink_ratio", "live / healthy uplink capacity (min over live leaves)",
           {"leaf": str})  # fmt: skip
def _uplink(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return Observed(a.leaf_uplink_ratio(args.get("leaf")))


@_register("bisection_gbps", "max-flow between the two halves of the SUs (Gb/s)")
def _bisection(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return Observed(a.bisection_gbps)


@_register("bisection_ratio", "bisection bandwidth as a ratio to healthy")
def _bisection_ratio(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    base = a.healthy.bisection_gbps
    return Observed(a.bisection_gbps / base if base else 0.0)


def _element(a: Analysis, name: str, kind: Kind) -> int:
    i = a.fabric.index.get(name)
    if i is None or a.fabric.kind[i] != int(kind):
        msg = f"{name!r} is not a {kind.label} of fabric {a.fabric.name!r}"
        raise ScenarioError(msg)
    return i


@_register("nvlink_gbs_per_gpu", "bidirectional NVLink bandwidth per GPU (GB/s)", {"gpu": str})
def _nvlink(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    if args.get("gpu"):
        return Observed(a.nvlink_gbs(_element(a, args["gpu"], Kind.GPU)))
    live = [g for g in a.fabric.gpus.tolist() if a.up[g]]
    vals = [(a.nvlink_gbs(g), g) for g in live]
    value, g = min(vals) if vals else (0.0, -1)
    return Observed(value, f"lowest: {a.fabric.ids[g]}" if g >= 0 else "")


def _node_or_min(a: Analysis, args: Mapping[str, Any], fn: Callable[[int], float]) -> Observed:
    if args.get("node"):
        return Observed(fn(_element(a, args["node"], Kind.NODE)))
    vals = [(fn(s), s) for s in a.fabric.servers.tolist() if a.up[s]]
    value, s = min(vals) if vals else (0.0, -1)
    return Observed(value, f"lowest: {a.fabric.ids[s]}" if s >= 0 else "")


@_register("node_nic_gbs", "usable rail NIC bandwidth of a server (GB/s)", {"node": str})
def _node_nic(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return _node_or_min(a, args, a.node_nic_gbs)


@_register("node_nic_ratio", "usable rail NIC bandwidth as a ratio to healthy", {"node": str})
def _node_nic_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    h = a.healthy

    def ratio(s: int) -> float:
        base = h.node_nic_gbs(s)
        return a.node_nic_gbs(s) / base if base else 0.0

    return _node_or_min(a, args, ratio)


@_register("storage_gbps", "live storage bond bandwidth of a server (Gb/s)", {"node": str})
def _storage(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return _node_or_min(a, args, a.storage_gbps)


def _checkpoint(a: Analysis, ctx: Context, args: Mapping[str, Any], which: int) -> Observed:
    if ctx.checkpoint is None:
        msg = "checkpoint observations need `checkpoint: {size_gb: ...}` in the scenario"
        raise ScenarioError(msg)
    ck = ctx.checkpoint

    def one(job: Job) -> float:
        return a.checkpoint(job, ck.size_gb, sharded=ck.sharded)[which]

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


@_register("checkpoint_sync_stall_s", "synchronous checkpoint stall (s)", {"job": str})
def _ck_sync(a: Analysis, ctx: Context, args: Mapping[str, Any]) -> Observed:
    return _checkpoint(a, ctx, args, 0)


@_register("checkpoint_async_stall_s", "two-phase save: phase-1 stall, GPU -> host (s)",
           {"job": str})  # fmt: skip
def _ck_async(a: Analysis, ctx: Context, args: Mapping[str, Any]) -> Observed:
    return _checkpoint(a, ctx, args, 1)


@_register("checkpoint_background_s", "two-phase save: phase 2, host -> storage (s)",
           {"job": str})  # fmt: skip
def _ck_bg(a: Analysis, ctx: Context, args: Mapping[str, Any]) -> Observed:
    return _checkpoint(a, ctx, args, 2)


@_register("elements_down", "number of elements down", {"kind": str}, value_type="integer")
def _down(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    mask = ~a.up
    if args.get("kind"):
        kind = KIND_NAMES.get(args["kind"])
        if kind is None:
            msg = f"unknown kind {args['kind']!r} (known: {', '.join(KIND_NAMES)})"
            raise ScenarioError(msg)
        mask = mask & (a.fabric.kind == int(kind))
    return Observed(int(mask.sum()))


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
    return d.fn(analysis, ctx or Context(), args or {})


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
