"""The drill clock on the wall clock, and the real jobs looked at without a watch window
(run stage).

On an emulated backend a drill runs in real time: the clock follows the wall (an
action waits for the backend to settle, a look at the jobs takes time), and the
real jobs are looked at, at once, at every probe sample: their rate against
their baseline's, and their crash when a rank reports it (on the host's
monotonic clock, mapped to drill time).  On the model nothing is watched: the
prediction is all there is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from dataclasses import field

from harness.backends.measurement import JobRun
from harness.backends.measurement import MeasurePlan
from harness.run.drill.journal import Journal
from harness.run.drill.results import TIME_TOLERANCE
from harness.run.session import RunSession


@dataclass
class Watch:
    """The clock and the real jobs of one drill run."""

    session: RunSession
    journal: Journal
    t0_wall: float | None = None  # the wall clock (monotonic) at drill t=0
    runs: dict[str, JobRun] = field(default_factory=dict)  # the real jobs at the last look
    rate_base: dict[str, list[float]] = field(default_factory=dict)  # baseline iterations/s
    observed_crash: dict[str, float] = field(default_factory=dict)  # job -> drill time

    @property
    def t(self) -> float:
        """The drill's clock (0: the end of the baseline)."""
        return self.session.timeline.now

    @property
    def emulated(self) -> bool:
        """The backend runs in real time (its wait waits): the drill clock follows the wall."""
        return self.session.backend.name != "model"

    @property
    def watches_jobs(self) -> bool:
        """The backend runs the jobs for real: their fates are observed, not only predicted."""
        return self.emulated and bool(self.session.jobs) and "jobs" in self.session.measures

    def sync(self) -> None:
        """On an emulated backend, move the drill clock to the wall clock (a measurement, a
        settle or an action took real time the clock has not counted yet)."""
        if self.emulated and self.t0_wall is not None:
            lag = (time.monotonic() - self.t0_wall) - self.t
            if lag > 1e-3:
                self.session.catch_up(lag)

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` of drill time pass (on an emulated backend: until the wall clock
        is there, however long the work in between took)."""
        if self.emulated and self.t0_wall is not None:
            self.sync()
            left = (self.t0_wall + self.t + seconds) - time.monotonic()
            self.session.advance(max(0.0, min(seconds, left)))
            self.sync()
            return
        self.session.advance(seconds)

    def look(self) -> None:
        """Look at the real jobs (at once, no window) and note the crashes observed."""
        if not self.watches_jobs:
            return
        names = tuple(j.name for j in self.session.jobs)
        got = self.session.backend.measure(MeasurePlan(jobs=names, job_now=True))
        for run in got.jobs:
            self.runs[run.name] = run
            if not run.alive and run.ended in ("timeout", "error", "exited"):
                if run.name not in self.observed_crash:
                    at = (run.ended_at - self.t0_wall if run.ended_at is not None and
                          self.t0_wall is not None else self.t)  # fmt: skip
                    self.observed_crash[run.name] = at
                    self.journal.write("observed", job=run.name, crashed_at=at,
                                       ended=run.ended, detail=run.detail)  # fmt: skip
            elif run.iterations_per_s and (self.t < 0 or run.name not in self.rate_base):
                self.rate_base.setdefault(run.name, []).append(run.iterations_per_s)

    def rate(self, job: str) -> float | None:
        """The real job's rate against its baseline (None: not measured, or in the baseline)."""
        run = self.runs.get(job)
        if run is None or self.t < 0:
            return None
        if not run.alive:
            return 0.0
        base = self.rate_base.get(job)
        if not base or run.iterations_per_s is None:
            return 1.0  # moving, at a rate not (yet) known: an emulation without a real job
        return run.iterations_per_s / (sum(base) / len(base))

    def checks(self) -> tuple[tuple[str, bool], ...]:
        """Each real job's observed fate beside the predicted one: a crash must be observed
        where it is predicted, within 10 % of the job's timeout (at least 0.5 s: the watch's
        resolution); a crash where none is predicted, or none where one is, is a mismatch."""
        if not self.watches_jobs:
            return ()
        out = []
        for f in self.session.timeline.fates:
            pred, obs = f.crashed_at, self.observed_crash.get(f.name)
            if pred is None and obs is None:
                continue
            if pred is None:
                out.append((f"predicted: {f.name} keeps running; observed: it crashed at "
                            f"t={obs:.3g} s", True))  # fmt: skip
                continue
            if obs is None:
                out.append((f"predicted: {f.name} crashes at t={pred:.3g} s; observed: it kept "
                            "running", True))  # fmt: skip
                continue
            bound = max(TIME_TOLERANCE * f.timeout, 0.5)
            out.append((f"predicted: {f.name} crashes at t={pred:.3g} s; observed: it timed out "
                        f"at t={obs:.3g} s", abs(obs - pred) > bound))  # fmt: skip
        return tuple(out)
