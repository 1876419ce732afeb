"""Observations of bandwidth: a job's bus bandwidth (GB/s, and as a ratio to healthy),
predicted from its collectives' traffic and measured by the job or by its collectives' flows,
paced by the links they share (:func:`_paced`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from harness.backends.measurement import Flow
from harness.backends.measurement import MeasurePlan
from harness.errors import ScenarioError
from harness.fabric.jobs import COLLECTIVES
from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind
from harness.faults.fault import percent
from harness.invariants import bandwidth
from harness.invariants.analysis import Analysis
from harness.invariants.figures import job_figures
from harness.invariants.figures import line_rate_gbs
from harness.observations.observation import ArgType
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import MeasureInput
from harness.observations.observation import Observed
from harness.observations.observation import PlanInput
from harness.observations.plans import collective_flow_group

FAMILY = Family("bandwidth")


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
    detail = (f"{got.detail}: {job_figures(a, job).describe()}; "
              f"{bandwidth.describe(a.job_traffic(job), a.job_uplink_ratio(job))}")  # fmt: skip
    if a.verdicts[a.jobs.index(job)].lost:
        detail = f"{got.detail} is lost"
    return Observed(got.value, detail, got.involved)


BUSBW_ARGS: dict[str, ArgType] = {"job": str, "collective": str}


#: The observations refused while a link loses packets (:func:`refuse_lossy`), always.
LOSSLESS_ONLY = frozenset(
    {"job_busbw_gbs", "job_busbw_ratio", "job_busbw_line_ratio", "min_job_busbw_ratio"}
)


def refuses_lossy(name: str, args: Mapping[str, Any]) -> bool:
    """Whether observation ``name`` with ``args`` is refused while a link loses packets:
    a job's bus bandwidth, and ``leaf_uplink_ratio`` of one ``leaf`` (flows fill its
    uplinks).  :func:`harness.scenario.prepare.prepare` asks it of every expectation, so a
    scenario that expects one while a ``flaky`` fault holds is refused before it runs."""
    return name in LOSSLESS_ONLY or (name == "leaf_uplink_ratio" and args.get("leaf") is not None)


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


@FAMILY.predicts("job_busbw_gbs", "bus bandwidth of the job's worst collective (GB/s)", BUSBW_ARGS)
def _busbw(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    refuse_lossy(a, "job_busbw_gbs")
    return _bandwidth(a, args, a.job_busbw_gbs)


@FAMILY.predicts("job_busbw_ratio", "bus bandwidth as a ratio to healthy", BUSBW_ARGS)
def _busbw_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    refuse_lossy(a, "job_busbw_ratio")
    return _bandwidth(a, args, a.job_busbw_ratio)


@FAMILY.predicts(
    "job_busbw_line_ratio",
    "bus bandwidth as a ratio to the job's line rate (its NICs with no link shared)",
    BUSBW_ARGS,
)
def _busbw_line_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    refuse_lossy(a, "job_busbw_line_ratio")

    def ratio(job: Job, collective: Collective | None) -> float:
        line = line_rate_gbs(a, job, collective)
        return a.job_busbw_gbs(job, collective) / line if line > 0 else 0.0

    return _bandwidth(a, args, ratio)


@FAMILY.predicts("min_job_busbw_ratio", "minimum bus bandwidth ratio over all jobs (lost: 0)")
def _min_busbw(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    refuse_lossy(a, "min_job_busbw_ratio")
    return _bandwidth(a, {}, a.job_busbw_ratio)


#: At least this long, for a collective's flows: a 5 s iperf3 test (with the warm-up and the
#: slack, harness/backends/netns/flows.py), whose common window was 2.1-4.0 s in 50 groups
#: and resolved every referee as the 4 s asked before did (docs/netns.md).  4 s dated from
#: when a group's processes were launched one by one; they are now released together, and a
#: group whose flows did not overlap is run again.
TRAFFIC_SECONDS = 2.0


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
@FAMILY.measures("job_busbw_ratio", _busbw_plan, tolerance=0.3)
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
