"""A drill's probes sampled on a run session: the model's value beside the backend's
(run stage).

A probe that names a registered observation is sampled as an ``expect`` of it is
judged (:meth:`~harness.run.session.RunSession.observe_one`: predicted, and measured
where the backend can measure it); the drill's own kinds: ``reachability`` is the
fraction of a seeded sample of rail NIC pairs (plus the pairs the model says are
cut) that reach each other, probed by the backend (:mod:`harness.run.drill.reach`);
``flow`` the total rate of a group of bulk flows kept running through the drill
(:mod:`harness.run.drill.flow`); ``job_rate`` a job's bus bandwidth against the
healthy fabric's, 0 while it is stalled (cut off, or waiting for a reroute or a link
to come up) and once it has crashed, measured as the real job's rate where a backend
runs it; ``job_ratio`` one job's rate over a control job's (Netflix ChAP: an
experiment and a control compared at the same moment, so what moves both -- a busy
host, a slow emulation -- cancels); ``settle`` is judged per action (the seconds the
backend took to converge, or the model's reroute window).
"""

from __future__ import annotations

from harness.observations.expect import Expect
from harness.run.drill.flow import FlowLook
from harness.run.drill.reach import Reach
from harness.run.drill.results import Sample
from harness.run.drill.results import Series
from harness.run.session import RunSession
from harness.scenario.drill_model import Probe
from harness.scenario.model import Expectation

_ANY = Expect.parse(">= -1e300")
#: The probe kinds sampled by a look of their own at the fabric (the runner's).
LOOK_PROBES = ("reachability", "flow")


def _number(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    return None


def job_rate(session: RunSession, job: str) -> float:
    """``job``'s bus bandwidth against healthy now; 0 while stalled and once crashed."""
    fate = session.timeline.fate(job)
    now = session.timeline.now
    until = fate.stalled_until()  # 0: no bounded stall
    if fate.state != "running" or (until and now < until - 1e-9):
        return 0.0
    a = session.analysis()
    return float(a.job_busbw_ratio(a.job(job)))


def sample(
    session: RunSession,
    probe: Probe,
    t: float,
    series: Series,
    *,
    rate: float | None = None,
    look: Reach | FlowLook | None = None,
) -> Sample:
    """Sample ``probe`` at drill time ``t`` and judge it against its tolerance; ``rate``: a
    ``job_rate`` probe's measured rate (the real job's iterations/s against its baseline's,
    from the runner's watch of the jobs), None where no backend runs the job; ``look``: a
    ``reachability`` probe's look at its pairs (:class:`~harness.run.drill.reach.ReachProbe`)
    or a ``flow`` probe's at its flows (:class:`~harness.run.drill.flow.FlowProbe`)."""
    predicted: float | None
    measured: float | None = None
    mismatch = False
    detail = ""
    if probe.kind in LOOK_PROBES:
        if look is None:
            msg = f"probe {probe.name}: a {probe.kind} sample needs its look at the fabric"
            raise ValueError(msg)
        predicted, measured = look.predicted, look.measured
        mismatch, detail = look.mismatch, look.detail()
    elif probe.kind in ("job_rate", "job_ratio"):
        args = dict(probe.args)
        predicted = job_rate(session, str(args["job"]))
        if probe.kind == "job_ratio":  # the experiment over the control, at the same moment
            control = job_rate(session, str(args["control"]))
            predicted = predicted / control if control > 0 else None
        measured = rate
        if rate is not None and predicted is not None:
            # moving against stalled is a disagreement; how fast is the job's own business
            # (a gloo job's iterations are not bound by the fabric's bandwidth)
            mismatch = (predicted > 0) != (rate > 0)
    else:
        tol = probe.tolerance
        ex = tol.expect if tol is not None and not tol.relative else _ANY
        got = session.observe_one(Expectation(probe.kind, ex, probe.args, probe.where))
        predicted = _number(got.predicted)
        measured = _number(got.measured) if got.measured_by else None
        mismatch = got.mismatch
    value = measured if measured is not None else predicted
    ok = True
    if probe.tolerance is not None and value is not None:
        ok = probe.tolerance.check(value, series.baseline)
    return Sample(t, value, ok, predicted, measured, mismatch, detail)


def record(probe: Probe, series: Series, s: Sample, *, judge: bool = True) -> None:
    """Add ``s`` to ``series``; a probe fails at its ``fail_after``-th miss in a row (not
    while ``judge`` is off: the recovery window, which judges only how soon it recovers)."""
    series.samples.append(s)
    if s.ok:
        series.misses = 0
        return
    series.misses += 1
    if judge and series.misses >= probe.fail_after and series.failed_at is None:
        series.failed_at = s.t
        tol = probe.tolerance.describe() if probe.tolerance else ""
        series.why = (f"{probe.name} out of tolerance ({tol}) for {series.misses} sample(s) "
                      f"in a row at t={s.t:g} s (value {s.value})")  # fmt: skip
