"""Observations of connectivity: which GPUs, NICs and rails still reach each other, and the
NIC islands; predicted from the fault state, measured by probing NIC pairs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.backends.measurement import MeasurePlan
from harness.invariants.analysis import Analysis
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import MeasureInput
from harness.observations.observation import Observed
from harness.observations.observation import PlanInput
from harness.observations.plans import connectivity_plan
from harness.observations.plans import island_plan

FAMILY = Family("connectivity")


PXN = {"pxn": bool}


@FAMILY.predicts("all_gpus_connected", "every GPU pair can talk", PXN, value_type="boolean")
def _all_connected(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    bad = a.gpu_pairs_disconnected(pxn=bool(args.get("pxn")))
    islands = [i.label for i in a.islands(pxn=bool(args.get("pxn")))]
    detail = f"{bad} GPU pairs cannot talk; NIC islands: " + "; ".join(islands[:6])
    if len(islands) > 6:
        detail += f"; ... {len(islands) - 6} more"
    return Observed(bad == 0, detail if bad else "")


@FAMILY.predicts("gpu_pairs_disconnected", "GPU pairs that cannot talk", PXN, value_type="integer")
def _pairs(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return Observed(a.gpu_pairs_disconnected(pxn=bool(args.get("pxn"))))


@FAMILY.predicts("islands", "NIC islands", PXN, value_type="integer")
def _islands(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    isl = a.islands(pxn=bool(args.get("pxn")))
    return Observed(len(isl), "; ".join(i.label for i in isl[:8]))


@FAMILY.predicts("rails_connected", "rails whose NICs all reach each other", value_type="list")
def _rails(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return Observed(a.rails_connected())


@FAMILY.predicts("nics_isolated", "live NICs that reach no other NIC", value_type="integer")
def _nics_isolated(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    return Observed(a.nics_isolated())


@FAMILY.predicts(
    "gpus_isolated", "GPUs that reach no GPU on another server", PXN, value_type="integer"
)
def _gpus_isolated(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    return Observed(a.gpus_isolated(pxn=bool(args.get("pxn"))))


def _failed(m: MeasureInput) -> list[tuple[str, str]]:
    out = []
    for a, b in m.plan.probes:
        p = m.measured.probe(a, b)
        if p is None or not p.ok:
            out.append((a, b))
    return out


def no_pxn(p: PlanInput) -> bool:
    """Whether the observation is asked without PXN (its ``pxn`` argument unset or false)."""
    return not p.args.get("pxn")


def _gpu_pairs_plan(p: PlanInput) -> MeasurePlan:
    if not no_pxn(p):  # PXN crosses NVLink, which stays in the model
        return MeasurePlan()
    return connectivity_plan(p.analysis, p.options, cross_rail=True)


@FAMILY.measures("all_gpus_connected", _gpu_pairs_plan)
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


@FAMILY.measures("rails_connected", _rails_plan)
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
    return island_plan(p.analysis, p.options) if no_pxn(p) else MeasurePlan()


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


@FAMILY.measures("islands", _islands_plan)
def _m_islands(m: MeasureInput) -> Observed | None:
    if not m.plan.probes:
        return None
    groups, _ = _island_groups(m)
    sizes = ", ".join(str(len(g)) for g in groups[:8])
    return Observed(len(groups), f"measured island sizes: {sizes}")


@FAMILY.measures("nics_isolated", lambda p: island_plan(p.analysis, p.options))
def _m_isolated(m: MeasureInput) -> Observed | None:
    if not m.plan.probes:
        return None
    _, isolated = _island_groups(m)
    return Observed(len(isolated), ", ".join(isolated[:8]), tuple(isolated[:12]))
