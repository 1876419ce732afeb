"""What ``harness reliability`` prints: interruptions per month, attribution, availability.

(Reporting stage.)  :func:`reliability_lines` is the text for people, :func:`to_json` the
document for machines; both take an :class:`~harness.planning.reliability.montecarlo.Outcome`
and, with ``--compare``, the other design's and their difference.
"""

from __future__ import annotations

from typing import Any

from harness.planning.reliability.montecarlo import Comparison
from harness.planning.reliability.montecarlo import Figure
from harness.planning.reliability.montecarlo import Outcome
from harness.planning.reliability.rates import span_text


def figure_text(f: Figure, digits: int = 3) -> str:
    """``0.46 (95% CI 0.41-0.52; p5 0.2, p50 0.42, p95 0.71)``.

    >>> figure_text(Figure(0.5, (0.4, 0.6), 0.0, 0.5, 1.0))
    '0.5 (95% CI 0.4..0.6; runs p5 0, p50 0.5, p95 1)'
    """
    g = f"{{:.{digits}g}}"
    return (f"{g.format(f.mean)} (95% CI {g.format(f.ci[0])}..{g.format(f.ci[1])}; runs p5 "
            f"{g.format(f.p5)}, p50 {g.format(f.p50)}, p95 {g.format(f.p95)})")  # fmt: skip


def _every(per_month: float) -> str:
    if per_month <= 0:
        return "none seen"
    hours = 730.5 / per_month
    return f"one every {span_text(hours * 3600)}"


def reliability_lines(o: Outcome, *, top: int = 10) -> list[str]:
    """The text of one design's study."""
    s = o.study
    r = s.rates
    out = [
        f"{s.fabric.name}: {len(s.jobs)} job(s), rates {r.name} ({r.source}), "
        f"{s.months:g} months x {s.runs} runs, seed {s.seed}; {r.restart.describe()}",
        f"job interruptions per month, fabric-wide: {figure_text(o.total)} "
        f"-- {_every(o.total.mean)}",
        "by class: " + ", ".join(f"{name} {f.mean:.3g}" for name, f in o.per_source().items()),
    ]
    per_job = o.per_job()
    avail = o.availability()
    eff = o.effective()
    worst = sorted(per_job, key=lambda j: -per_job[j].mean)
    out.append(f"per job (worst {min(top, len(worst))} of {len(worst)}):")
    for j in worst[:top]:
        line = (f"  {j}: {figure_text(per_job[j])} per month; runs {avail[j].mean:.4%} of the "
                "time")  # fmt: skip
        if r.restart.checkpoint_s:
            line += f", effective {eff[j].mean:.4%}"
        out.append(line)
    out.append(f"({o.states_analysed} distinct fault states judged)")
    return out


def comparison_lines(c: Comparison) -> list[str]:
    """The lines of ``--compare``: the other design, then the difference."""
    d = c.difference
    sign = "more" if d.mean > 0 else "fewer"
    return [
        *reliability_lines(c.other),
        f"{c.other.study.fabric.name} minus {c.base.study.fabric.name}: {d.mean:+.3g} "
        f"interruptions per month (95% CI {d.ci[0]:+.3g}..{d.ci[1]:+.3g}): "
        f"{abs(d.mean):.3g} {sign} per month"
        + ("" if d.ci[0] > 0 or d.ci[1] < 0 else "; the interval holds 0: no clear difference"),
    ]


def _outcome_json(o: Outcome) -> dict[str, Any]:
    s = o.study
    return {
        "fabric": s.fabric.name,
        "rates": {"name": s.rates.name, "source": s.rates.source, "path": s.rates.path},
        "months": s.months,
        "runs": s.runs,
        "seed": s.seed,
        "jobs": [j.name for j in s.jobs],
        "interruptions_per_month": o.total.to_json(),
        "by_class": {k: v.to_json() for k, v in o.per_source().items()},
        "per_job": {k: v.to_json() for k, v in o.per_job().items()},
        "availability": {k: v.to_json() for k, v in o.availability().items()},
        "effective": {k: v.to_json() for k, v in o.effective().items()},
        "states_analysed": o.states_analysed,
        "per_run": [r.total for r in o.results],
    }


def to_json(o: Outcome, c: Comparison | None = None) -> dict[str, Any]:
    """The study (and the comparison) as a JSON document."""
    doc = _outcome_json(o)
    if c is not None:
        doc["compare"] = {"other": _outcome_json(c.other), "difference": c.difference.to_json()}
    return doc
