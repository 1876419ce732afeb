"""Observations of capacity: what the fabric and its servers can carry (pod to pod, a
leaf's uplinks, the bisection, NVLink per GPU, a server's rail NICs); leaf uplinks are
also measured, by link rates or by flows that fill them.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from harness.backends.measurement import MeasurePlan
from harness.errors import ScenarioError
from harness.fabric.model import Kind
from harness.invariants.analysis import Analysis
from harness.observations.bandwidth import refuse_lossy
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import MeasureInput
from harness.observations.observation import Observed
from harness.observations.observation import PlanInput
from harness.observations.plans import uplink_flow_group
from harness.observations.plans import uplink_links

FAMILY = Family("capacity")


def _pods(args: Mapping[str, Any]) -> tuple[int, int] | None:
    pods = args.get("pods")
    if pods is None:
        return None
    if not (isinstance(pods, list | tuple) and len(pods) == 2
            and all(isinstance(p, int) and not isinstance(p, bool) for p in pods)):  # fmt: skip
        msg = f"pods is two pod numbers, e.g. pods: [1, 2]; got {pods!r}"
        raise ScenarioError(msg)
    return int(pods[0]), int(pods[1])


@FAMILY.predicts("pod_pair_gbps", "live capacity from one pod to another, up-down paths (Gb/s)",
                 {"pods": list}, ("pods",))  # fmt: skip
def _pod_pair_gbps(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    gbps, ratio, which = a.pod_pair(_pods(args))
    return Observed(gbps, f"{which}: {ratio:.4g} of what a pod can send")


@FAMILY.predicts("pod_pair_ratio",
                 "pod-to-pod capacity / what a pod can send (default: worst pair)",
                 {"pods": list})  # fmt: skip
def _pod_pair_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    gbps, ratio, which = a.pod_pair(_pods(args))
    return Observed(ratio, f"{which}: {gbps:.6g} Gb/s")


@FAMILY.predicts("leaf_uplink_ratio", "live / healthy uplink capacity (min over live leaves)",
                 {"leaf": str})  # fmt: skip
def _uplink(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    if args.get("leaf") is not None:  # measured with flows filling its uplinks
        refuse_lossy(a, "leaf_uplink_ratio")
    return Observed(a.leaf_uplink_ratio(args.get("leaf")))


@FAMILY.predicts("bisection_gbps", "max-flow between the two halves of the SUs (Gb/s)")
def _bisection(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return Observed(a.bisection_gbps)


@FAMILY.predicts("bisection_ratio", "bisection bandwidth as a ratio to healthy")
def _bisection_ratio(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    base = a.healthy.bisection_gbps
    return Observed(a.bisection_gbps / base if base else 0.0)


def _element(a: Analysis, name: str, kind: Kind) -> int:
    i = a.fabric.index.get(name)
    if i is None or a.fabric.kind[i] != int(kind):
        msg = f"{name!r} is not a {kind.label} of fabric {a.fabric.name!r}"
        raise ScenarioError(msg)
    return i


@FAMILY.predicts(
    "nvlink_gbs_per_gpu", "bidirectional NVLink bandwidth per GPU (GB/s)", {"gpu": str}
)
def _nvlink(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    if args.get("gpu"):
        return Observed(a.nvlink_gbs(_element(a, args["gpu"], Kind.GPU)))
    live = [g for g in a.fabric.gpus.tolist() if a.up[g]]
    vals = [(a.nvlink_gbs(g), g) for g in live]
    value, g = min(vals) if vals else (0.0, -1)
    return Observed(value, f"lowest: {a.fabric.ids[g]}" if g >= 0 else "")


def node_or_min(a: Analysis, args: Mapping[str, Any], fn: Callable[[int], float]) -> Observed:
    """``fn`` of the ``node`` argument's server, else the lowest over the live servers (and
    which)."""
    if args.get("node"):
        return Observed(fn(_element(a, args["node"], Kind.NODE)))
    vals = [(fn(s), s) for s in a.fabric.servers.tolist() if a.up[s]]
    value, s = min(vals) if vals else (0.0, -1)
    return Observed(value, f"lowest: {a.fabric.ids[s]}" if s >= 0 else "")


@FAMILY.predicts("node_nic_gbs", "usable rail NIC bandwidth of a server (GB/s)", {"node": str})
def _node_nic(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return node_or_min(a, args, a.node_nic_gbs)


@FAMILY.predicts("node_nic_ratio", "usable rail NIC bandwidth as a ratio to healthy", {"node": str})
def _node_nic_ratio(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    h = a.healthy

    def ratio(s: int) -> float:
        base = h.node_nic_gbs(s)
        return a.node_nic_gbs(s) / base if base else 0.0

    return node_or_min(a, args, ratio)


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


@FAMILY.measures("leaf_uplink_ratio", _uplink_plan, tolerance=0.1)
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
