"""The sweep and the risk check's N+1 margin agree on every single failure, reroute included.

Issue 19: the sweep had no reroute while the margin, built on the same
evaluator, crashed the jobs a reroute's stall reaches, so the two disagreed on
the same failure for a job whose timeout is below the reroute.  Both now add
the crashes through :mod:`harness.planning.sweep.reroute`.  On seed-a800 with a
1 s reroute, jobs with 0.5 s timeouts (some per SU, some crossing SUs, one with
the default 34 s timeout that no reroute crashes), every single failure of the
margin's categories must lose the same jobs and leave the same surviving
bandwidth (and the same slowest job) in both.
"""

from __future__ import annotations

import dataclasses

from harness.fabric import preset
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.faults.fault import FaultState
from harness.planning.risk import assess
from harness.planning.sweep.base import SweepBase
from harness.planning.sweep.categories import DEFAULT_MARGIN_CATEGORIES
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.run import SweepSpec
from harness.planning.sweep.run import run_sweep

JOBS = (
    JobSpec("cross-a", ("su01/node0[1-8]", "su02/node0[1-8]"), timeout=0.5),
    JobSpec("cross-b", ("su03/*", "su04/*", "su05/node1[0-9]"), timeout=0.5),
    JobSpec("patient", ("su06/*", "su07/*")),  # NCCL's default timeout: a reroute is survived
    JobSpec("su08", ("su08/*",), timeout=0.5),
)


def test_sweep_and_risk_margin_agree_on_every_single_failure_with_a_reroute() -> None:
    fabric = preset("seed-a800")
    jobs = resolve_jobs(JOBS, fabric)
    routing = dataclasses.replace(DEFAULT_ROUTING, reroute=1.0)
    sweep = run_sweep(SweepSpec(fabric, JOBS, categories=DEFAULT_MARGIN_CATEGORIES,
                                routing=routing))  # fmt: skip
    by_case = {c.failures: c for c in sweep.cases}
    assert len(by_case) == len(sweep.cases) == 5660
    # the margin before the change is judged on the healthy fabric, as the sweep is; with
    # jobs_lost=0 every case that loses a job breaks the budget (and only those)
    report = assess(fabric, jobs, "drain spine-05", "jobs_lost=0", routing=routing)
    assert report.margin_before is not None
    breaking = {c.failures: c for c, _ in report.margin_before.breaking}
    losing = {k for k, c in by_case.items() if c.jobs_lost}
    assert set(breaking) == losing
    crashed = 0
    for key, m in breaking.items():
        s = by_case[key]
        assert sorted(s.jobs_lost) == sorted(m.jobs_lost), key
        assert sorted(s.crashed) == sorted(m.crashed), key
        assert (s.min_busbw_ratio, s.busbw_job) == (m.min_busbw_ratio, m.busbw_job), key
        crashed += bool(s.crashed)
        assert "patient" not in s.crashed
    # the reroute matters here: many failures crash a job that no path was cut from (only
    # those whose routed flows cross what fails: under static tables not every spine)
    assert crashed > 400
    # the survivors' figure of a crashed case, from the flows the case moves, equals the
    # full analysis's (sampled: each of those costs a full analysis)
    ev = CaseEvaluator(fabric, jobs, FaultState.healthy(fabric))
    ev.prepare()
    crashes = [c for c in sweep.cases if c.crashed][::20]
    assert len(crashes) >= 20
    for c in crashes:
        assert ev.case_busbw_without(c.failures, c.jobs_lost) == SweepBase.case_busbw_without(
            ev, c.failures, c.jobs_lost
        ), c.failures
    instant = dataclasses.replace(DEFAULT_ROUTING, reroute=0.0)
    no_reroute = run_sweep(SweepSpec(fabric, JOBS, categories=DEFAULT_MARGIN_CATEGORIES,
                                     routing=instant))  # fmt: skip
    assert sum(bool(c.jobs_lost) for c in no_reroute.cases) < len(losing)
