"""Observations of paths: the class and switch count of the best live path between two
GPUs; predicted from the routed fabric, measured by tracing the path between their NICs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.backends.measurement import MeasurePlan
from harness.errors import ScenarioError
from harness.fabric.model import Kind
from harness.invariants.analysis import Analysis
from harness.observations.connectivity import no_pxn
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import MeasureInput
from harness.observations.observation import Observed
from harness.observations.observation import PlanInput
from harness.observations.plans import path_plan

FAMILY = Family("paths")


def _between(args: Mapping[str, Any]) -> tuple[str, str]:
    pair = args.get("between")
    if not (isinstance(pair, list | tuple) and len(pair) == 2):
        msg = "needs between: [GPU_A, GPU_B]"
        raise ScenarioError(msg)
    return str(pair[0]), str(pair[1])


@FAMILY.predicts("path_class", "class of the best live path between two GPUs",
                 {"between": list, "pxn": bool}, ("between",), "string")  # fmt: skip
def _path_class(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    x, y = _between(args)
    cls, hops = a.path(x, y, pxn=bool(args.get("pxn")))
    return Observed(cls, f"{x} -> {y}: {cls}, {hops} switch(es)", (x, y))


@FAMILY.predicts("hops", "switches traversed on the best live path (0: NVLink)",
                 {"between": list, "pxn": bool}, ("between",), "integer")  # fmt: skip
def _hops(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    x, y = _between(args)
    cls, hops = a.path(x, y, pxn=bool(args.get("pxn")))
    return Observed(hops, f"{x} -> {y}: {cls}", (x, y))


def _path_plan(p: PlanInput) -> MeasurePlan:
    if not no_pxn(p):
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


@FAMILY.measures("path_class", _path_plan)
def _m_path_class(m: MeasureInput) -> Observed | None:
    got = _traced(m)
    if got is None:
        return None
    src, dst = m.plan.paths[0]
    t = m.measured.path(src, dst)
    return Observed(got[0], f"traced {src} -> {dst}: {' > '.join(t.hops) if t else ''}")


@FAMILY.measures("hops", _path_plan)
def _m_hops(m: MeasureInput) -> Observed | None:
    got = _traced(m)
    return None if got is None else Observed(got[1], f"traced: {got[0]}")
