"""Prediction against measurement (observations stage, pure).

:func:`agree` decides whether an observation's measured value is the predicted
one (exact for counts, booleans, names and lists; within a relative tolerance
for rates).  :func:`disagreements` compares measurement records one by one
with the model's records for the same plan: the preflight uses it to refuse a
healthy fabric that does not match its description.

>>> agree(0.5, 0.52, 0.1), agree(3, 4, 0.1), agree([0, 1], (0, 1), 0.0)
(True, False, True)

A measured fraction (a packet loss counted over ``n`` packets) is judged by
:func:`agree_fraction`, a binomial test, not a relative tolerance.
"""

from __future__ import annotations

import math
from typing import Any

from harness.backends.measurement import Measurements

RATE_TOLERANCE = 0.25  # preflight: a shaped link within 25 % of its rate is healthy
FRACTION_Z = 4.0  # standard deviations: a faithful backend is called a mismatch 1 in ~16,000


def fraction_tolerance(predicted: float, n: int, z: float = FRACTION_Z) -> float:
    """How far a fraction counted over ``n`` trials may lie from ``predicted``.

    ``z`` binomial standard deviations, ``sqrt(p (1 - p) / n)``, plus half a
    trial (continuity); ``p`` is kept at least ``1/n`` from 0 and 1, so a
    prediction of exactly 0 still allows a stray loss or two (a host under load
    drops a packet now and then; 1000 packets: up to 4 lost).

    >>> round(fraction_tolerance(0.05, 1000), 4), round(fraction_tolerance(0.0, 1000), 4)
    (0.0281, 0.0045)
    """
    if n <= 0:
        return 0.0
    p = min(max(predicted, 1 / n), 1 - 1 / n)
    return float(z * math.sqrt(p * (1 - p) / n) + 0.5 / n)


def agree_fraction(predicted: float, measured: float, n: int) -> bool:
    """Whether a fraction counted over ``n`` trials agrees with ``predicted`` (``n`` 0: exact).

    >>> agree_fraction(0.05, 0.043, 1000), agree_fraction(0.05, 0.0, 1000)
    (True, False)
    >>> agree_fraction(0.0, 0.002, 1000), agree_fraction(0.0, 0.02, 1000)
    (True, False)
    """
    if n <= 0:
        return agree(float(predicted), float(measured), 1e-9)
    return abs(float(predicted) - float(measured)) <= fraction_tolerance(float(predicted), n)


def agree(predicted: Any, measured: Any, tolerance: float) -> bool:
    """Whether a measured value is the predicted one (``tolerance``: relative, for numbers)."""
    if isinstance(predicted, bool) or isinstance(measured, bool):
        return bool(predicted) == bool(measured) and type(predicted) is type(measured)
    if isinstance(predicted, int | float) and isinstance(measured, int | float):
        p, m = float(predicted), float(measured)
        if math.isinf(p) or math.isinf(m):
            return p == m
        if isinstance(predicted, int) and isinstance(measured, int):
            return predicted == measured
        return abs(p - m) <= tolerance * max(abs(p), abs(m)) + 1e-9
    if isinstance(predicted, list | tuple) and isinstance(measured, list | tuple):
        return len(predicted) == len(measured) and all(
            agree(a, b, tolerance) for a, b in zip(predicted, measured, strict=True)
        )
    return bool(predicted == measured)


def _flow_disagreements(predicted: Measurements, measured: Measurements) -> list[str]:
    """Each flow runs or not as predicted; each group's total rate is the predicted total.

    Flows sharing a bottleneck split it as TCP does, not in the model's fair
    shares (a flow whose connections started late gets less for seconds), so
    rates are compared per group -- what the group's links carried.
    """
    out: list[str] = []
    measured_flows = {(f.group, f.src, f.dst): f for f in measured.flows}
    totals: dict[str, list[float]] = {}
    for fl in predicted.flows:
        got_flow = measured_flows.get((fl.group, fl.src, fl.dst))
        if got_flow is None:
            out.append(f"flow {fl.src} -> {fl.dst}: not measured")
            continue
        if (fl.gbps > 0) != (got_flow.gbps > 0):
            out.append(
                f"flow {fl.src} -> {fl.dst}: {got_flow.gbps:.1f} Gb/s, "
                f"the model says {fl.gbps:.1f} Gb/s"
            )
        total = totals.setdefault(fl.group, [0.0, 0.0])
        total[0] += fl.gbps
        total[1] += got_flow.gbps
    for group, (want, got) in totals.items():
        if not agree(want, got, RATE_TOLERANCE):
            out.append(f"flow group {group}: {got:.1f} Gb/s in all, the model says {want:.1f} Gb/s")
    return out


def disagreements(predicted: Measurements, measured: Measurements, limit: int = 20) -> list[str]:
    """Records where the measurement is not what the model predicts, in plain words."""
    out: list[str] = []
    for p in predicted.probes:
        got = measured.probe(p.src, p.dst)
        if got is None:
            out.append(f"{p.src} -> {p.dst}: not probed")
        elif got.ok != p.ok:
            verb = "does not reach" if p.ok else "reaches"
            should = "should" if p.ok else "should not"
            out.append(f"{p.src} {verb} {p.dst} (the model says it {should})")
    for t in predicted.paths:
        got_path = measured.path(t.src, t.dst)
        if got_path is None:
            out.append(f"path {t.src} -> {t.dst}: not traced")
        elif got_path.complete != t.complete or len(got_path.hops) != len(t.hops):
            out.append(
                f"path {t.src} -> {t.dst}: {len(got_path.hops)} switches "
                f"({'arrived' if got_path.complete else 'lost'}), the model says {len(t.hops)}"
            )
    out += _flow_disagreements(predicted, measured)
    for j in predicted.jobs:
        got_job = measured.job(j.name)
        if got_job is None:
            out.append(f"job {j.name}: not reported")
        elif got_job.alive != j.alive:
            state = "alive" if got_job.alive else f"stopped ({got_job.ended}: {got_job.detail})"
            out.append(f"job {j.name} is {state}, the model says {'alive' if j.alive else 'lost'}")
    for s in predicted.links:
        got_link = measured.link(s.link)
        if got_link is None:
            out.append(f"link {s.link}: not reported")
        elif got_link.up != s.up or not agree(s.gbps, got_link.gbps, RATE_TOLERANCE):
            out.append(
                f"link {s.link}: {'up' if got_link.up else 'down'} at {got_link.gbps:g} Gb/s, "
                f"the model says {'up' if s.up else 'down'} at {s.gbps:g} Gb/s"
            )
    for x in predicted.losses:
        got_loss = measured.loss(x.link, x.sender)
        if got_loss is None:
            out.append(f"loss on {x.link} from {x.sender}: not measured")
        elif not agree_fraction(x.loss, got_loss.loss, got_loss.sent):
            out.append(
                f"{x.link}: {got_loss.loss:.2%} of {got_loss.sent} packets from {x.sender} lost, "
                f"the model says {x.loss:.2%}"
            )
    return out[:limit] if len(out) <= limit else [*out[:limit], f"... {len(out) - limit} more"]
