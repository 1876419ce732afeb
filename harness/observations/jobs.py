"""Observations of jobs: which running jobs were lost (crashed), survived, or could not be
placed now; predicted from the jobs' fates on the clock, measured by running the jobs.
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

FAMILY = Family("jobs")


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


@FAMILY.predicts("jobs_lost",
                 "number of running jobs lost (crashed; they stay lost until restarted)",
                 value_type="integer")  # fmt: skip
def _jobs_lost(a: Analysis, ctx: Context, __: Mapping[str, Any]) -> Observed:
    names, detail, culprits = _lost(a, ctx)
    return Observed(len(names), detail, culprits)


@FAMILY.predicts("jobs_lost_names", "names of the running jobs lost", value_type="list")
def _jobs_lost_names(a: Analysis, ctx: Context, __: Mapping[str, Any]) -> Observed:
    names, detail, culprits = _lost(a, ctx)
    return Observed(names, detail, culprits)


@FAMILY.predicts("jobs_survived", "number of jobs still running", value_type="integer")
def _jobs_survived(a: Analysis, ctx: Context, __: Mapping[str, Any]) -> Observed:
    names, detail, _ = _lost(a, ctx)
    return Observed(len(a.jobs) - len(names), detail)


@FAMILY.predicts("jobs_unplaceable", "number of jobs that could not start now (their NICs cannot "
                 "reach each other)", value_type="integer")  # fmt: skip
def _jobs_unplaceable(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    detail, culprits = _lost_detail(a)
    return Observed(len(a.jobs_lost()), detail, culprits)


@FAMILY.predicts("jobs_unplaceable_names", "names of the jobs that could not start now",
                 value_type="list")  # fmt: skip
def _jobs_unplaceable_names(a: Analysis, _: Context, __: Mapping[str, Any]) -> Observed:
    detail, culprits = _lost_detail(a)
    return Observed(a.jobs_lost(), detail, culprits)


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


@FAMILY.measures("jobs_lost", _jobs_plan)
def _m_jobs_lost(m: MeasureInput) -> Observed | None:
    dead = _dead_jobs(m)
    return None if dead is None else Observed(len(dead), _job_detail(m, dead), tuple(dead))


@FAMILY.measures("jobs_lost_names", _jobs_plan)
def _m_jobs_lost_names(m: MeasureInput) -> Observed | None:
    dead = _dead_jobs(m)
    return None if dead is None else Observed(dead, _job_detail(m, dead), tuple(dead))


@FAMILY.measures("jobs_survived", _jobs_plan)
def _m_jobs_survived(m: MeasureInput) -> Observed | None:
    dead = _dead_jobs(m)
    return None if dead is None else Observed(len(m.plan.jobs) - len(dead))
