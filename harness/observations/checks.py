"""The observation registry: every name a scenario may ``expect`` (core, pure).

Each :class:`ObservationDef` names its arguments (for validation and the JSON
Schema), a ``predict`` function ``(Analysis, ctx, args) -> Observed`` (the
model's answer from the fault state) and, where a backend can measure it, a
:class:`MeasureDef`: a ``plan`` (what to measure, :mod:`harness.observations.plans`) and a
``measure`` function, pure, from the :class:`~harness.backends.measurement.Measurements`
to the observed value (``None`` when the measurements cannot say).  The same
predict functions serve scenarios, ``harness risk --budget`` and the Python API.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from harness.backends.measurement import Flow
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.errors import ScenarioError
from harness.fabric.jobs import COLLECTIVES
from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.faults.fault import percent
from harness.faults.selectors import KIND_NAMES
from harness.invariants import bandwidth
from harness.invariants.analysis import Analysis
from harness.invariants.timeline import JobFate
from harness.observations.compare import agree
from harness.observations.compare import agree_fraction
from harness.observations.plans import MeasureOptions
from harness.observations.plans import collective_flow_group
from harness.observations.plans import connectivity_plan
from harness.observations.plans import island_plan
from harness.observations.plans import path_plan
from harness.observations.plans import uplink_flow_group
from harness.observations.plans import uplink_links


@dataclass(frozen=True, slots=True)
class CheckpointSpec:
    """Checkpoint of one job: size of the whole checkpoint, sharded or not.

    ``shards_per_server``: streams each server writes when sharded (None: one
    per GPU, one per rank).
    """

    size_gb: float
    sharded: bool = True
    interval_s: float | None = None
    shards_per_server: int | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """Scenario-level inputs some observations need.

    ``fates``: each job's history so far (:mod:`harness.invariants.timeline`), when the
    caller keeps a clock (the runner does); without one a job is lost exactly
    when the fault state cuts it off.
    """

    checkpoint: CheckpointSpec | None = None
    fates: tuple[JobFate, ...] | None = None


@dataclass(frozen=True, slots=True)
class Observed:
    """A value plus what it is about (shown when an expectation fails)."""

    value: Any
    detail: str = ""
    involved: tuple[str, ...] = ()
    samples: int = 0  # a measured fraction: the trials it was counted over (0: exact)


ArgType = type | tuple[type, ...]
ObsFn = Callable[[Analysis, Context, Mapping[str, Any]], Observed]


@dataclass(frozen=True, slots=True)
class PlanInput:
    """What a plan is made from: the prediction for the step, the arguments, the options."""

    analysis: Analysis
    args: Mapping[str, Any]
    options: MeasureOptions


@dataclass(frozen=True, slots=True)
class MeasureInput:
    """What a measure function reads: this step's measurements, the preflight's, its plan."""

    measured: Measurements
    baseline: Measurements  # the healthy fabric, measured at preflight
    plan: MeasurePlan  # what this observation asked for (a part of what was measured)
    fabric: Fabric
    args: Mapping[str, Any]


PlanFn = Callable[[PlanInput], MeasurePlan]
MeasureFn = Callable[[MeasureInput], "Observed | None"]
AgreeFn = Callable[[Any, "Observed"], bool]


@dataclass(frozen=True, slots=True)
class MeasureDef:
    """How to measure an observation: what to ask the backend, and how to read it.

    ``tolerance``: the relative difference between prediction and measurement
    still counted as agreement (0: exact; rates measured on shaped links are
    not exact).  ``agree``, when set, decides instead, from the prediction and
    the measured :class:`Observed` (a counted fraction: a binomial test).
    """

    plan: PlanFn
    measure: MeasureFn
    tolerance: float = 0.0
    agree: AgreeFn | None = None

    def agrees(self, predicted: Any, got: Observed) -> bool:
        """Whether the measurement ``got`` is the prediction (within what it allows)."""
        if self.agree is not None:
            return self.agree(predicted, got)
        return agree(predicted, got.value, self.tolerance)


@dataclass(frozen=True, slots=True)
class ObservationDef:
    name: str
    doc: str
    predict: ObsFn
    args: Mapping[str, ArgType] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    value_type: str = "number"  # number | integer | boolean | string | list
    measure: MeasureDef | None = None
    value_range: tuple[float, float] = (-math.inf, math.inf)  # what a number can be (VALUE_RANGES)


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


def _lost(a: Analysis, ctx: Context) -> tuple[list[str], str, tuple[str, ...]]:
    """The jobs lost (crashed), what happened to them, and the culprits."""
    if ctx.fates is None:
        detail, culprits = _lost_detail(a)
        return a.jobs_lost(), detail, culprits
    names = [f.name for f in ctx.fates if f.lost]
    lines = [f.describe() for f in ctx.fates if f.lost or f.rerouted_s]
    blamed = [c for v in a.verdicts if v.name in names for c in v.culprits]
    return names, "; ".join(lines[:6]), tuple(dict.fromkeys(blamed))[:12]


#: The observations about running jobs: an expect step with one of them watches
#: the jobs for their timeout, so a job cut off then is seen to crash.
JOB_OBSERVATIONS = frozenset({"jobs_lost", "jobs_lost_names", "jobs_survived"})


@_register("jobs_lost", "number of running jobs lost (crashed; they stay lost until restarted)",
           value_type="integer")  # fmt: skip
def _jobs_lost(a: Analysis, ctx: Context, __: Mapping[str, Any]) -> Observed:
    names, detail, culprits = _lost(a, ctx)
    return Observed(len(names), detail, culprits)


@_register("jobs_lost_names", "names of the running jobs lost", value_type="list")
def _jobs_lost_names(a: Analysis, ctx: Context, __: Mapping[str, Any]) -> Observed:
    names, detail, culprits = _lost(a, ctx)
    return Observed(names, detail, culprits)


@_register("jobs_survived", "number of jobs still running", value_type="integer")
def _jobs_survived(a: Analysis, ctx: Context, __: Mapping[str, Any]) -> Observed:
    names, detail, _ = _lost(a, ctx)
    return Observed(len(a.jobs) - len(names), detail)


@_register("jobs_unplaceable", "number of jobs that could not start now (their NICs cannot "
           "reach each other)", value_type="integer")  # fmt: skip
def _jobs_unplaceable(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    detail, culprits = _lost_detail(a)
    return Observed(len(a.jobs_lost()), detail, culprits)


@_register("jobs_unplaceable_names", "names of the jobs that could not start now",
           value_type="list")  # fmt: skip
def _jobs_unplaceable_names(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    detail, culprits = _lost_detail(a)
    return Observed(a.jobs_lost(), detail, culprits)


def _bandwidth(
    a: Analysis, args: Mapping[str, Any], fn: Callable[[Job, Collective | None], float]
) -> Observed:
    """A job's (or the lowest job's) bus bandwidth figure, with what its collectives get."""
    collective = args.get("collective")
    if collective is not None and collective not in COLLECTIVES:
        msg = f"collective is one of {', '.join(COLLECTIVES)}, got {collective!r}"
        raise ScenarioError(msg)
    got = _job_or_min(a, args, lambda j: fn(j, collective))
    job = a.job(got.involved[0]) if got.involved else None
    if job is None or len(job.servers) < 2:
        return got
    detail = f"{got.detail}, {bandwidth.describe(a.job_traffic(job), a.job_uplink_ratio(job))}"
    if a.verdicts[a.jobs.index(job)].lost:
        detail = f"{got.detail} is lost"
    return Observed(got.value, detail, got.involved)


BUSBW_ARGS: dict[str, ArgType] = {"job": str, "collective": str}


def refuse_lossy(a: Analysis, name: str) -> None:
    """Refuse an achieved-bandwidth observation while a link loses packets (``flaky``).

    What loss costs depends on the transport: TCP halves its window at each
    loss, RoCE's go-back-N resends everything in flight, InfiniBand's reliable
    connection waits for a timeout; even capacity x (1 - loss) is only an upper
    bound, far above what they get.  The model does not guess: it says so.
    """
    lossy = a.lossy_links()
    if not lossy:
        return
    f = a.fabric
    link = lossy[0]
    worst = float(a.obs.link_loss.max(axis=1)[link]) if a.obs.link_loss is not None else 0.0
    msg = (
        f"{name}: the model does not predict bandwidth through a lossy link "
        f"({f.link_ids[link]} loses {percent(worst)} of its packets, flaky): what retransmissions "
        "cost depends on the transport (RoCE's go-back-N loses far more than the loss "
        "fraction), so no figure would be honest. Expect link_loss, reachability and "
        "jobs_lost while it is flaky, and bandwidth after restoring it"
    )
    raise ScenarioError(msg)


@_register("job_busbw_gbs", "bus bandwidth of the job's worst collective (GB/s)", BUSBW_ARGS)
def _busbw(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    refuse_lossy(a, "job_busbw_gbs")
    return _bandwidth(a, args, a.job_busbw_gbs)


@_register("job_busbw_ratio", "bus bandwidth as a ratio to healthy", BUSBW_ARGS)
def _busbw_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    refuse_lossy(a, "job_busbw_ratio")
    return _bandwidth(a, args, a.job_busbw_ratio)


@_register("min_job_busbw_ratio", "minimum bus bandwidth ratio over all jobs (lost: 0)")
def _min_busbw(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    refuse_lossy(a, "min_job_busbw_ratio")
    return _bandwidth(a, {}, a.job_busbw_ratio)


def _pods(args: Mapping[str, Any]) -> tuple[int, int] | None:
    pods = args.get("pods")
    if pods is None:
        return None
    if not (isinstance(pods, list | tuple) and len(pods) == 2
            and all(isinstance(p, int) and not isinstance(p, bool) for p in pods)):  # fmt: skip
        msg = f"pods is two pod numbers, e.g. pods: [1, 2]; got {pods!r}"
        raise ScenarioError(msg)
    return int(pods[0]), int(pods[1])


@_register("pod_pair_gbps", "live capacity from one pod to another, up-down paths (Gb/s)",
           {"pods": list}, ("pods",))  # fmt: skip
def _pod_pair_gbps(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    gbps, ratio, which = a.pod_pair(_pods(args))
    return Observed(gbps, f"{which}: {ratio:.4g} of what a pod can send")


@_register("pod_pair_ratio", "pod-to-pod capacity / what a pod can send (default: worst pair)",
           {"pods": list})  # fmt: skip
def _pod_pair_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    gbps, ratio, which = a.pod_pair(_pods(args))
    return Observed(ratio, f"{which}: {gbps:.6g} Gb/s")


@_register("leaf_uplink_ratio", "live / healthy uplink capacity (min over live leaves)",
           {"leaf": str})  # fmt: skip
def _uplink(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    if args.get("leaf") is not None:  # measured with flows filling its uplinks
        refuse_lossy(a, "leaf_uplink_ratio")
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


# -- measured observations ------------------------------------------------------------------
# Each function reads only the measurements (and the fabric's static wiring); ``None``
# means the measurements cannot answer (the report then shows the prediction only).
def _measured(
    name: str, plan: PlanFn, tolerance: float = 0.0, agree_fn: AgreeFn | None = None
) -> Callable[[MeasureFn], MeasureFn]:
    def deco(fn: MeasureFn) -> MeasureFn:
        d = OBSERVATIONS[name]
        measure_def = MeasureDef(plan, fn, tolerance, agree_fn)
        OBSERVATIONS[name] = dataclasses.replace(d, measure=measure_def)
        return fn

    return deco


def measure(name: str, inp: MeasureInput) -> Observed | None:
    """Compute one named observation from measurements (``None``: not measurable)."""
    d = OBSERVATIONS[name].measure
    return None if d is None else d.measure(inp)


def plan_for(name: str, inp: PlanInput) -> MeasurePlan | None:
    """What to measure for one observation (``None``: it has no measurement)."""
    d = OBSERVATIONS[name].measure
    return None if d is None else d.plan(inp)


def _failed(m: MeasureInput) -> list[tuple[str, str]]:
    out = []
    for a, b in m.plan.probes:
        p = m.measured.probe(a, b)
        if p is None or not p.ok:
            out.append((a, b))
    return out


def _no_pxn(p: PlanInput) -> bool:
    return not p.args.get("pxn")


def _gpu_pairs_plan(p: PlanInput) -> MeasurePlan:
    if not _no_pxn(p):  # PXN crosses NVLink, which stays in the model
        return MeasurePlan()
    return connectivity_plan(p.analysis, p.options, cross_rail=True)


@_measured("all_gpus_connected", _gpu_pairs_plan)
def _m_all_connected(m: MeasureInput) -> Observed | None:
    if not m.plan.probes:
        return None
    bad = _failed(m)
    detail = "; ".join(f"{a} -> {b}" for a, b in bad[:6])
    return Observed(
        not bad,
        f"{len(bad)} of {len(m.plan.probes)} probed NIC pairs failed: {detail}" if bad else "",
    )


def _rails_plan(p: PlanInput) -> MeasurePlan:
    return connectivity_plan(p.analysis, p.options, cross_rail=False)


@_measured("rails_connected", _rails_plan)
def _m_rails(m: MeasureInput) -> Observed | None:
    f = m.fabric
    broken: set[int] = set()
    seen: set[int] = set()
    for a, b in m.plan.probes:
        ra, rb = int(f.rail[f.index[a]]), int(f.rail[f.index[b]])
        if ra != rb:
            continue
        seen.add(ra)
        probe = m.measured.probe(a, b)
        if probe is None or not probe.ok:
            broken.add(ra)
    if len(seen) < f.rails:
        return None
    return Observed([r for r in range(f.rails) if r not in broken])


def _islands_plan(p: PlanInput) -> MeasurePlan:
    return island_plan(p.analysis, p.options) if _no_pxn(p) else MeasurePlan()


def _island_groups(m: MeasureInput) -> tuple[list[list[str]], list[str]]:
    """Measured islands over the planned NICs (union of successful probes), and isolated NICs."""
    nics = list(dict.fromkeys(x for pair in m.plan.probes for x in pair))
    parent = {n: n for n in nics}
    touched: set[str] = set()

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in m.plan.probes:
        p = m.measured.probe(a, b)
        if p is not None and p.ok:
            touched.update((a, b))
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra
    groups: dict[str, list[str]] = {}
    for n in nics:
        groups.setdefault(find(n), []).append(n)
    return sorted(groups.values(), key=len, reverse=True), [n for n in nics if n not in touched]


@_measured("islands", _islands_plan)
def _m_islands(m: MeasureInput) -> Observed | None:
    if not m.plan.probes:
        return None
    groups, _ = _island_groups(m)
    sizes = ", ".join(str(len(g)) for g in groups[:8])
    return Observed(len(groups), f"measured island sizes: {sizes}")


@_measured("nics_isolated", lambda p: island_plan(p.analysis, p.options))
def _m_isolated(m: MeasureInput) -> Observed | None:
    if not m.plan.probes:
        return None
    _, isolated = _island_groups(m)
    return Observed(len(isolated), ", ".join(isolated[:8]), tuple(isolated[:12]))


def _path_plan(p: PlanInput) -> MeasurePlan:
    if not _no_pxn(p):
        return MeasurePlan()
    x, y = _between(p.args)
    a = p.analysis
    return path_plan(a, a.fabric.index.get(x, -1), a.fabric.index.get(y, -1))


def _traced(m: MeasureInput) -> tuple[str, int] | None:
    """(path class, switches) of the traced path between the two GPUs' NICs."""
    if not m.plan.paths:
        return None
    f = m.fabric
    src, dst = m.plan.paths[0]
    t = m.measured.path(src, dst)
    if t is None:
        return None
    if not t.complete:
        return "disconnected", -1
    hops = len(t.hops)
    if hops == 1:
        return "rail-local", 1
    if any(f.kind[f.index[h]] == int(Kind.CORE) for h in t.hops):
        return "cross-pod", hops
    sa, sb = (int(f.parent[f.index[n]]) for n in (src, dst))
    return ("cross-rail" if f.su[sa] == f.su[sb] else "cross-su"), hops


@_measured("path_class", _path_plan)
def _m_path_class(m: MeasureInput) -> Observed | None:
    got = _traced(m)
    if got is None:
        return None
    src, dst = m.plan.paths[0]
    t = m.measured.path(src, dst)
    return Observed(got[0], f"traced {src} -> {dst}: {' > '.join(t.hops) if t else ''}")


@_measured("hops", _path_plan)
def _m_hops(m: MeasureInput) -> Observed | None:
    got = _traced(m)
    return None if got is None else Observed(got[1], f"traced: {got[0]}")


def _jobs_plan(p: PlanInput) -> MeasurePlan:
    return MeasurePlan(jobs=tuple(j.name for j in p.analysis.jobs),
                       job_seconds=p.options.job_seconds)  # fmt: skip


def _dead_jobs(m: MeasureInput) -> list[str] | None:
    runs = [m.measured.job(j) for j in m.plan.jobs]
    if not runs or any(r is None for r in runs):
        return None
    return [r.name for r in runs if r is not None and not r.alive]


def _job_detail(m: MeasureInput, dead: list[str]) -> str:
    parts = []
    for name in dead[:6]:
        r = m.measured.job(name)
        if r is not None:
            parts.append(f"{name}: {r.ended} after {r.seconds:.1f} s" + (
                f" ({r.detail})" if r.detail else ""))  # fmt: skip
    running = [r for j in m.plan.jobs if (r := m.measured.job(j)) is not None and r.alive]
    rates = [f"{r.name} {r.iterations_per_s:g} it/s" for r in running if r.iterations_per_s]
    if rates:  # what the surviving jobs achieved (a backend that runs them says)
        parts.append("running: " + ", ".join(rates[:6]) + (" ..." if len(rates) > 6 else ""))
    return "; ".join(parts)


@_measured("jobs_lost", _jobs_plan)
def _m_jobs_lost(m: MeasureInput) -> Observed | None:
    dead = _dead_jobs(m)
    return None if dead is None else Observed(len(dead), _job_detail(m, dead), tuple(dead))


@_measured("jobs_lost_names", _jobs_plan)
def _m_jobs_lost_names(m: MeasureInput) -> Observed | None:
    dead = _dead_jobs(m)
    return None if dead is None else Observed(dead, _job_detail(m, dead), tuple(dead))


@_measured("jobs_survived", _jobs_plan)
def _m_jobs_survived(m: MeasureInput) -> Observed | None:
    dead = _dead_jobs(m)
    return None if dead is None else Observed(len(m.plan.jobs) - len(dead))


TRAFFIC_SECONDS = 4.0  # at least, for a collective's flows


def _busbw_plan(p: PlanInput) -> MeasurePlan:
    """The job runs and, for one named job, its collectives' flows (``traffic``)."""
    a = p.analysis
    names = [p.args["job"]] if p.args.get("job") else [j.name for j in a.jobs]
    plan = MeasurePlan(jobs=tuple(names), job_seconds=p.options.job_seconds)
    if not p.args.get("job"):
        return plan  # every job's collectives at once would not be one job's bus bandwidth
    job = a.job(str(p.args["job"]))
    wanted = p.args.get("collective")
    collectives = [wanted] if wanted in COLLECTIVES else list(job.collectives)
    groups = [collective_flow_group(a, job, c) for c in collectives]
    traffic = tuple(g for g in groups if g.pairs)
    # tens of flows start one by one on a loaded host: run them long enough to overlap
    seconds = max(p.options.flow_seconds, TRAFFIC_SECONDS)
    return plan | MeasurePlan(traffic=traffic, flow_seconds=seconds)


def _paced(flows: tuple[Flow, ...], f: Fabric) -> tuple[float, str] | None:
    """What a collective gets from the links its flows share, per full NIC, and where.

    A flow between NICs that carry ``k`` of the collective's flows (out at the
    sender or in at the receiver) asks for ``1/k`` of a NIC, as the flow
    engine's demand says.  Each leaf's uplinks (up, and down at the far leaf;
    pooled, as a flow's streams spread over them) carried what the flows
    crossing them got in all; against what those flows asked, that is the
    share of a NIC the collective got there, and the least of them paces it
    (NCCL splits a collective evenly over its channels).  Totals, not each
    flow's own rate: TCP splits a shared link unevenly for seconds, the way
    NCCL's channels do not.  A collective within one leaf is paced by its
    NICs, counted the same way.

    No collective runs faster than its NICs: the pace is at most the most any
    one NIC sent or received in all (a flow whose NIC's other flows are held
    back at their far ends takes the spare line rate, beyond what it asked).

    >>> from harness.fabric.generators import two_tier
    >>> fab = two_tier(sus=2, nodes_per_su=2, node="a800", spines=2, leaf_radix=8)
    >>> a, b = "su01/node01/nic0", "su02/node01/nic0"
    >>> _paced((Flow("g", a, b, 50.0, 4.0), Flow("g", b, a, 48.0, 4.0)), fab)
    (48.0, 'su02/leaf-r0 uplinks')
    >>> c = "su01/node02/nic0"  # a to c in the leaf: a's NIC sends 190 in all
    >>> _paced((Flow("g", a, b, 120.0, 4.0), Flow("g", a, c, 70.0, 4.0)), fab)
    (190.0, 'su01/node01/nic0 out (line rate)')
    """
    if not flows:
        return None
    out = Counter(x.src for x in flows)
    into = Counter(x.dst for x in flows)
    got: dict[str, float] = {}
    asked: dict[str, float] = {}
    cross = any(_leaf_of(f, x.src) != _leaf_of(f, x.dst) for x in flows)
    line: dict[str, float] = {}  # what each NIC sent or received in all
    for x in flows:
        line[f"{x.src} out"] = line.get(f"{x.src} out", 0.0) + x.gbps
        line[f"{x.dst} in"] = line.get(f"{x.dst} in", 0.0) + x.gbps
        ls, ld = _leaf_of(f, x.src), _leaf_of(f, x.dst)
        if cross:
            where = [f"{ls} uplinks", f"{ld} downlinks"] if ls != ld else []
        else:
            where = [f"{x.src} out", f"{x.dst} in"]
        for r in where:
            got[r] = got.get(r, 0.0) + x.gbps
            asked[r] = asked.get(r, 0.0) + 1.0 / max(out[x.src], into[x.dst])
    pace = min(((got[r] / asked[r], r) for r in got), key=lambda t: t[0])
    most = max(line.items(), key=lambda t: t[1])
    return pace if pace[0] <= most[1] else (most[1], f"{most[0]} (line rate)")


def _leaf_of(f: Fabric, nic_id: str) -> str:
    """The leaf a rail NIC's first port is cabled to (healthy wiring)."""
    nic = f.index[nic_id]
    for link in f.links_at(nic).tolist():
        if int(f.link_kind[link]) == int(LinkKind.ACCESS):
            return f.ids[f.other_end(link, nic)]
    return ""


def _traffic_ratio(m: MeasureInput) -> Observed | None:
    """A job's collective measured by its traffic pattern, against the healthy fabric."""
    name = m.plan.jobs[0]
    run = m.measured.job(name)
    if run is None:
        return None
    if not run.alive:
        return Observed(0.0, f"job {name} is lost", (name,))
    values = []
    for group in m.plan.traffic:
        now = _paced(m.measured.flow_group(group.name), m.fabric)
        base = _paced(m.baseline.flow_group(group.name), m.fabric)
        if now is None or base is None or base[0] <= 0:
            return None
        values.append((now[0] / base[0], group.name, now, base[0], len(group.pairs)))
    if not values:
        return None
    ratio, group_name, (got, where), healthy, n = min(values, key=lambda v: v[0])
    return Observed(
        ratio,
        f"{group_name}: {n} flows at once (iperf3), paced by {where} at {got:.1f} Gb/s per "
        f"full NIC, {healthy:.1f} healthy (measured by the collective's traffic pattern, "
        "not by the job)",
        (name,),
    )


# A collective's flows measured with TCP on a shared 2-core host vary by up to a quarter
# from run to run (the healthy baseline too), so 0.3: still far from telling a ring over
# one spine (0.25) from one that is not slowed (1.0), or a tree at 0.5 from either.
@_measured("job_busbw_ratio", _busbw_plan, tolerance=0.3)
def _m_busbw_ratio(m: MeasureInput) -> Observed | None:
    """Measured bus bandwidth against the preflight's (a lost job: 0).

    From the job's collectives' flows when the backend ran them (``traffic``);
    else only from jobs whose backend measures a bandwidth-bound collective
    (``JobRun.busbw_gbs``); an iteration rate is not a bandwidth.
    """
    if m.plan.traffic:
        return _traffic_ratio(m)
    values = []
    for name in m.plan.jobs:
        now, base = m.measured.job(name), m.baseline.job(name)
        if now is None or base is None or base.busbw_gbs is None:
            return None
        if not now.alive:
            values.append((0.0, name))
        elif now.busbw_gbs is None or base.busbw_gbs <= 0:
            return None
        else:
            values.append((now.busbw_gbs / base.busbw_gbs, name))
    if not values:
        return None
    value, name = min(values)
    return Observed(value, f"job {name}: bus bandwidth against the healthy run", (name,))


def _uplink_plan(p: PlanInput) -> MeasurePlan:
    a = p.analysis
    leaf = p.args.get("leaf")
    if leaf is None:
        return MeasurePlan(links=uplink_links(a))
    i = a.fabric.index.get(leaf)
    if i is None or a.fabric.kind[i] != int(Kind.LEAF):
        return MeasurePlan()  # predict reports the bad name
    group = uplink_flow_group(a, i)
    if not group.pairs:
        return MeasurePlan()
    return MeasurePlan(flows=(group,), flow_seconds=p.options.flow_seconds)


@_measured("leaf_uplink_ratio", _uplink_plan, tolerance=0.1)
def _m_uplink(m: MeasureInput) -> Observed | None:
    if m.plan.flows:  # one leaf: the flows that fill its uplinks, against the preflight's
        group = m.plan.flows[0]
        now = m.measured.flow_group(group.name)
        base = m.baseline.flow_group(group.name)
        total = sum(x.gbps for x in base)
        if not now or not base or total <= 0:
            return None
        got = sum(x.gbps for x in now)
        return Observed(
            got / total, f"{group.name}: {len(now)} flows, {got:.1f} of {total:.1f} Gb/s"
        )
    if not m.plan.links:
        return None
    f = m.fabric
    live: dict[int, float] = {}
    full: dict[int, float] = {}
    for link_id in m.plan.links:
        now_s, base_s = m.measured.link(link_id), m.baseline.link(link_id)
        if now_s is None or base_s is None:
            return None
        leaf = int(f.link_a[f.link_index[link_id]])
        live[leaf] = live.get(leaf, 0.0) + (now_s.gbps if now_s.up else 0.0)
        full[leaf] = full.get(leaf, 0.0) + base_s.gbps
    ratios = [(live[x] / full[x], x) for x in full if full[x] > 0]
    if not ratios:
        return None
    value, leaf = min(ratios)
    return Observed(value, f"lowest: {f.ids[leaf]} (link rates)", (f.ids[leaf],))


def _link(a: Analysis, args: Mapping[str, Any]) -> int:
    name = str(args.get("link", ""))
    i = a.fabric.link_index.get(name)
    if i is None:
        msg = f"{name!r} is not a link of fabric {a.fabric.name!r} (write A:PORT--B:PORT)"
        raise ScenarioError(msg)
    return i


@_register("link_gbps", "live rate of one link (Gb/s; 0: down)", {"link": str}, ("link",))
def _link_gbps(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    i = _link(a, args)
    return Observed(float(a.cap[i]), a.fabric.link_ids[i], (a.fabric.link_ids[i],))


def _link_plan(p: PlanInput) -> MeasurePlan:
    return MeasurePlan(links=(p.analysis.fabric.link_ids[_link(p.analysis, p.args)],))


@_measured("link_gbps", _link_plan, tolerance=0.1)
def _m_link_gbps(m: MeasureInput) -> Observed | None:
    s = m.measured.link(m.plan.links[0])
    if s is None:
        return None
    return Observed(s.gbps if s.up else 0.0, f"{s.link}: {'up' if s.up else 'down'}", (s.link,))


def _loss_args(a: Analysis, args: Mapping[str, Any]) -> tuple[int, int]:
    """(link index, sending end's element index) of a link_loss expectation."""
    i = _link(a, args)
    f = a.fabric
    sender = str(args.get("from", ""))
    ends = (int(f.link_a[i]), int(f.link_b[i]))
    s = f.index.get(sender, -1)
    if s not in ends:
        msg = (
            f"link_loss from: {sender!r} is not an end of {f.link_ids[i]}; write "
            f"from: {f.ids[ends[0]]} or from: {f.ids[ends[1]]} (the end that sends)"
        )
        raise ScenarioError(msg)
    return i, s


@_register("link_loss", "fraction of the packets one end of a link sends that are lost "
           "(flaky; 1: down)", {"link": str, "from": str}, ("link", "from"))  # fmt: skip
def _link_loss(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    i, s = _loss_args(a, args)
    f = a.fabric
    lost = a.link_loss(i, s)
    return Observed(lost, f"{f.link_ids[i]}, sent by {f.ids[s]}", (f.link_ids[i],))


def _loss_plan(p: PlanInput) -> MeasurePlan:
    i, s = _loss_args(p.analysis, p.args)
    f = p.analysis.fabric
    return MeasurePlan(losses=((f.link_ids[i], f.ids[s]),))


def _agree_loss(predicted: Any, got: Observed) -> bool:
    return agree_fraction(float(predicted), float(got.value), got.samples)


@_measured("link_loss", _loss_plan, agree_fn=_agree_loss)
def _m_link_loss(m: MeasureInput) -> Observed | None:
    link, sender = m.plan.losses[0]
    x = m.measured.loss(link, sender)
    if x is None:
        return None
    if x.sent == 0:
        return Observed(x.loss, f"{link}, sent by {sender}", (link,))
    lost = round(x.loss * x.sent)
    return Observed(
        x.loss,
        f"{link}: {lost} of {x.sent} packets sent by {sender} lost (agreement: within 4 binomial "
        "standard deviations)",
        (link,),
        samples=x.sent,
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
    "min_job_busbw_ratio": _RATIO,
    "link_loss": _RATIO,
    "leaf_uplink_ratio": _RATIO,
    "bisection_ratio": _RATIO,
    "node_nic_ratio": _RATIO,
    "pod_pair_ratio": _RATIO,
}
for _name, _range in VALUE_RANGES.items():
    OBSERVATIONS[_name] = replace(OBSERVATIONS[_name], value_range=_range)
