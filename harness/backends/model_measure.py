"""What the model says a backend should measure (backends stage, pure).

:func:`predict_measurements` answers a :class:`~harness.backends.measurement.MeasurePlan`
from an :class:`~harness.invariants.analysis.Analysis` of the fault state: it is the
model backend's ``measure`` and the reference every emulated backend's
measurements are compared with (preflight and mismatches, :mod:`harness.observations.compare`).

Semantics: a probe succeeds when both NICs are up and share a live switch
component; a traced path is one shortest live switch path (ECMP: any other of
the same length and tiers is as good); a flow gets the smallest of its two
NICs' live port rates and, when it leaves its leaf, a fair share of the live
uplinks of both leaves (and pods, on three tiers) among the flows of its group
crossing them; a job is alive when the model does not lose it; a link's rate
is its live capacity; a link's one-way loss is its flaky loss in that
direction (a down link loses everything).
"""

from __future__ import annotations

from collections import defaultdict

from harness.backends.measurement import Flow
from harness.backends.measurement import FlowGroup
from harness.backends.measurement import JobRun
from harness.backends.measurement import LinkLoss
from harness.backends.measurement import LinkState
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import Probe
from harness.backends.measurement import TracedPath
from harness.errors import ScenarioError
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants.analysis import Analysis
from harness.invariants.timeline import Timeline


def _nic(a: Analysis, nic_id: str) -> int:
    i = a.fabric.index.get(nic_id)
    if i is None or a.fabric.kind[i] != int(Kind.NIC):
        msg = f"{nic_id!r} is not a rail NIC of fabric {a.fabric.name!r}"
        raise ScenarioError(msg)
    return i


def predict_probe(a: Analysis, src: str, dst: str) -> Probe:
    """Predict whether two NICs reach each other."""
    return Probe(src, dst, a.nic_reaches(_nic(a, src), _nic(a, dst)))


def predict_path(a: Analysis, src: str, dst: str) -> TracedPath:
    """Predict the route from ``src`` to ``dst`` (incomplete and empty when there is none)."""
    route = a.nic_route(_nic(a, src), _nic(a, dst))
    if route is None:
        return TracedPath(src, dst, (), complete=False)
    return TracedPath(src, dst, tuple(a.fabric.ids[i] for i in route), complete=True)


def _port_gbps(a: Analysis) -> dict[int, float]:
    nic, cap = a.access.nic, a.access.capacity
    out: dict[int, float] = defaultdict(float)
    for n, c in zip(nic.tolist(), cap.tolist(), strict=True):
        out[n] += c
    return out


def _leaf(a: Analysis, nic: int) -> int:
    leaves = a.nic_leaves(nic)
    return leaves[0] if leaves else -1


def predict_flows(a: Analysis, group: FlowGroup, seconds: float) -> tuple[Flow, ...]:
    """Rates of the flows of one group running at once (fair share of leaf and pod uplinks)."""
    f = a.fabric
    ports = _port_gbps(a)
    ends = [(_nic(a, s), _nic(a, d)) for s, d in group.pairs]
    leaf_of = {n: _leaf(a, n) for pair in ends for n in pair}
    out_n: dict[int, int] = defaultdict(int)
    in_n: dict[int, int] = defaultdict(int)
    pod_out: dict[int, int] = defaultdict(int)
    pod_in: dict[int, int] = defaultdict(int)
    crossing = f.tiers == 3
    for s, d in ends:
        ls, ld = leaf_of[s], leaf_of[d]
        if a.nic_reaches(s, d) and ls != ld:
            out_n[ls] += 1
            in_n[ld] += 1
            if crossing and f.pod[ls] != f.pod[ld]:
                pod_out[int(f.pod[ls])] += 1
                pod_in[int(f.pod[ld])] += 1
    live, plive = a.uplink_gbps()
    flows = []
    for (s, d), (src, dst) in zip(ends, group.pairs, strict=True):
        rate = 0.0
        if a.nic_reaches(s, d):
            rate = min(ports.get(s, 0.0), ports.get(d, 0.0))
            ls, ld = leaf_of[s], leaf_of[d]
            if ls != ld:
                rate = min(rate, live[ls] / out_n[ls], live[ld] / in_n[ld])
                if crossing and f.pod[ls] != f.pod[ld]:
                    ps, pd = int(f.pod[ls]), int(f.pod[ld])
                    rate = min(rate, plive[ps] / pod_out[ps], plive[pd] / pod_in[pd])
        flows.append(Flow(group.name, src, dst, float(rate), seconds))
    return tuple(flows)


def predict_job(a: Analysis, name: str, timeline: Timeline | None = None) -> JobRun:
    """The job's run: from its history when there is a clock, else from the fault state."""
    job = a.job(name)
    if timeline is not None:
        fate = timeline.fate(name)
        if not fate.lost:
            return JobRun(name, alive=True)
        timed_out = "timeout" in fate.reason
        return JobRun(name, alive=False, ended="timeout" if timed_out else "error",
                      detail=fate.reason)  # fmt: skip
    verdict = a.verdicts[a.jobs.index(job)]
    if not verdict.lost:
        return JobRun(name, alive=True)
    return JobRun(name, alive=False, ended="error", detail=verdict.reasons[0])


def predict_link(a: Analysis, link_id: str) -> LinkState:
    """Predict a link's state: up when its capacity is above 0."""
    i = a.fabric.link_index.get(link_id)
    if i is None:
        msg = f"{link_id!r} is not a link of fabric {a.fabric.name!r}"
        raise ScenarioError(msg)
    cap = float(a.cap[i])
    return LinkState(link_id, cap > 0, cap)


def predict_loss(a: Analysis, link_id: str, sender: str) -> LinkLoss:
    """The fraction of the packets ``sender`` sends over ``link_id`` that are lost (exact)."""
    f = a.fabric
    i = f.link_index.get(link_id)
    if i is None:
        msg = f"{link_id!r} is not a link of fabric {f.name!r}"
        raise ScenarioError(msg)
    s = f.index.get(sender, -1)
    if s not in (int(f.link_a[i]), int(f.link_b[i])):
        msg = (
            f"{sender!r} is not an end of {link_id} (its ends: {f.ids[int(f.link_a[i])]}, "
            f"{f.ids[int(f.link_b[i])]})"
        )
        raise ScenarioError(msg)
    return LinkLoss(link_id, sender, a.link_loss(i, s))


def predict_measurements(
    a: Analysis, plan: MeasurePlan, backend: str = "model", timeline: Timeline | None = None
) -> Measurements:
    """What a faithful backend measures for ``plan`` in the fault state ``a`` describes
    (and, for jobs, the history ``timeline`` keeps)."""
    return Measurements(
        backend,
        probes=tuple(predict_probe(a, s, d) for s, d in plan.probes),
        paths=tuple(predict_path(a, s, d) for s, d in plan.paths),
        flows=tuple(x for g in plan.flows for x in predict_flows(a, g, plan.flow_seconds)),
        jobs=tuple(predict_job(a, j, timeline) for j in plan.jobs),
        links=tuple(predict_link(a, x) for x in plan.links),
        losses=tuple(predict_loss(a, x, s) for x, s in plan.losses),
    )


def cable_kinds() -> frozenset[str]:
    """The link kinds that are cables (what an emulated fabric realizes)."""
    return frozenset(k.label for k in LinkKind if k.is_cable)
