"""Observations of elements and links: how many elements are down, a link's live rate and
the fraction of the packets one end sends that are lost; measured on the backend's links.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.backends.measurement import MeasurePlan
from harness.errors import ScenarioError
from harness.faults.selectors import KIND_NAMES
from harness.invariants.analysis import Analysis
from harness.observations.compare import agree_fraction
from harness.observations.observation import Context
from harness.observations.observation import Family
from harness.observations.observation import MeasureInput
from harness.observations.observation import Observed
from harness.observations.observation import PlanInput

FAMILY = Family("links")


@FAMILY.predicts("elements_down", "number of elements down", {"kind": str}, value_type="integer")
def _down(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    mask = ~a.up
    if args.get("kind"):
        kind = KIND_NAMES.get(args["kind"])
        if kind is None:
            msg = f"unknown kind {args['kind']!r} (known: {', '.join(KIND_NAMES)})"
            raise ScenarioError(msg)
        mask = mask & (a.fabric.kind == int(kind))
    return Observed(int(mask.sum()))


def _link(a: Analysis, args: Mapping[str, Any]) -> int:
    name = str(args.get("link", ""))
    i = a.fabric.link_index.get(name)
    if i is None:
        msg = f"{name!r} is not a link of fabric {a.fabric.name!r} (write A:PORT--B:PORT)"
        raise ScenarioError(msg)
    return i


@FAMILY.predicts("link_gbps", "live rate of one link (Gb/s; 0: down)", {"link": str}, ("link",))
def _link_gbps(a: Analysis, _: Context, args: Mapping[str, Any]) -> Observed:
    i = _link(a, args)
    return Observed(float(a.cap[i]), a.fabric.link_ids[i], (a.fabric.link_ids[i],))


def _link_plan(p: PlanInput) -> MeasurePlan:
    return MeasurePlan(links=(p.analysis.fabric.link_ids[_link(p.analysis, p.args)],))


@FAMILY.measures("link_gbps", _link_plan, tolerance=0.1)
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


@FAMILY.predicts("link_loss", "fraction of the packets one end of a link sends that are lost "
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


@FAMILY.measures("link_loss", _loss_plan, agree_fn=_agree_loss)
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
