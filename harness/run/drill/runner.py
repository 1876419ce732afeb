"""One drill's run: baseline, gate, the timed method under continuous probes, abort, the
recovery window, the final expectations, and a rollback that always runs (run stage).

The drill's clock is the session's (:class:`~harness.run.session.RunSession`):
on the model it is model time (instant), on an emulated backend
``backend.wait`` waits for real, so the same loop drives both.  Drill time 0 is
the end of the baseline.  Between actions the loop samples every probe when it
is due, checks the abort rules, the halt lever and the time limit; an abort
stops scheduling at once.  Whatever ends the method (its end, an abort
condition, the halt lever, the time limit, an exception, SIGINT, SIGTERM or
SIGHUP) the rollback reverts every fault the drill applied and has not
restored, newest first, inside :func:`~harness.backends.signals.cleaning_up`
(a second signal is reported and ignored); a fault whose object is already gone
is recorded as gone.  Every action is journaled before and after it is done.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from harness.backends.protocol import Backend
from harness.backends.signals import Stopped
from harness.backends.signals import cleaning_up
from harness.errors import BackendError
from harness.errors import HarnessError
from harness.errors import ScenarioError
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.observations.budget import parse_budget
from harness.observations.plans import MeasureOptions
from harness.run.drill.flow import FlowLook
from harness.run.drill.flow import FlowProbe
from harness.run.drill.flow import grace_s
from harness.run.drill.guard import guard_breaks
from harness.run.drill.halt import HaltLever
from harness.run.drill.journal import Journal
from harness.run.drill.journal import tool_versions
from harness.run.drill.probes import LOOK_PROBES
from harness.run.drill.probes import record
from harness.run.drill.probes import sample
from harness.run.drill.reach import DEFAULT_SAMPLE
from harness.run.drill.reach import Reach
from harness.run.drill.reach import ReachProbe
from harness.run.drill.results import DrillResult
from harness.run.drill.results import EventRecord
from harness.run.drill.results import ProbeRecord
from harness.run.drill.results import Series
from harness.run.drill.settle import hang_mismatch
from harness.run.drill.settle import predicted_settle
from harness.run.drill.settle import settle_mismatch
from harness.run.drill.summary import GATE_MODES
from harness.run.drill.summary import expected
from harness.run.drill.summary import probe_records
from harness.run.drill.verdict import declared
from harness.run.drill.verdict import verdict
from harness.run.drill.verdict import with_status
from harness.run.drill.watch import Watch
from harness.run.scenario import unsupported
from harness.run.scenario import unsupported_routing
from harness.run.session import RunSession
from harness.scenario.drill_model import JOB_PROBES
from harness.scenario.drill_model import Probe
from harness.scenario.drill_prepare import PreparedDrill
from harness.scenario.drill_prepare import ResolvedEvent
from harness.scenario.model import ExpectStep

#: How late a real job is seen to stall or move again: a rank counts as moving while it
#: iterated within the last second (the netns backend's RECENT_S), so a job_rate sample
#: disagrees with the prediction only once the two differ for longer than this (and a period).
JOB_WATCH_S = 1.0
#: Probes sampled only once (their mode) are sampled at these moments.
_AFTER_MODES = ("after", "edge")


class Abort(Exception):
    """An abort condition, the halt lever or the time limit stopped the method."""


@dataclass
class _Run:
    """The mutable state of one drill run."""

    pd: PreparedDrill
    session: RunSession
    journal: Journal
    lever: HaltLever | None
    run_id: str
    wall0: float
    series: dict[str, Series]
    events: list[EventRecord] = field(default_factory=list)
    applied: dict[str, AppliedFault] = field(default_factory=dict)  # label -> applied
    refused: set[str] = field(default_factory=set)
    due: dict[str, float] = field(default_factory=dict)  # probe -> next sample's drill time
    since: dict[int, float] = field(default_factory=dict)  # abort rule -> crossed since
    settles: list[tuple[str, float]] = field(default_factory=list)
    recovering: bool = False  # in the recovery window: samples do not fail a probe
    disagree: dict[str, float] = field(default_factory=dict)  # job_rate probe -> since when
    looks: dict[str, ReachProbe | FlowProbe] = field(default_factory=dict)  # by probe name
    stall_s: tuple[float, float] = (float("-inf"), 0.0)  # the last action: at, predicted stall
    cut_short: set[str] = field(default_factory=set)  # injects a signal may have cut short
    on_event: Callable[[EventRecord], None] | None = None
    replayed_abort: tuple[float, str] | None = None  # a replay: the run's own abort
    watch: Watch = field(init=False)

    def __post_init__(self) -> None:
        self.watch = Watch(self.session, self.journal)

    @property
    def t(self) -> float:
        """The drill's clock (0: the end of the baseline; the jobs' clock is the same)."""
        return self.session.timeline.now

    @property
    def wall(self) -> float:
        return time.monotonic() - self.wall0

    # -- probes, aborts, the lever -------------------------------------------------------
    def _active(self, p: Probe) -> bool:
        if p.kind == "settle":
            return False
        if p.mode == "continuous":
            return True
        return p.mode == "during-fault" and bool(self.applied)

    def _measured(self, p: Probe) -> float | None:
        """A job probe's measured value: the real job's rate (over the control's)."""
        args = dict(p.args)
        rate = self.watch.rate(str(args["job"]))
        if p.kind == "job_rate" or rate is None:
            return rate
        control = self.watch.rate(str(args["control"]))
        return rate / control if control else None

    def _look(self, p: Probe) -> Reach | FlowLook | None:
        """A reachability or flow probe's look at the fabric now (set up at the first)."""
        if p.kind not in LOOK_PROBES:
            return None
        if p.name not in self.looks:
            args = dict(p.args)
            self.looks[p.name] = (
                FlowProbe(self.session, p.name, args["pairs"]) if p.kind == "flow" else
                ReachProbe(self.session, p.name, int(args.get("sample", DEFAULT_SAMPLE)),
                           p.every_s))  # fmt: skip
        return self.looks[p.name].look(self.session)

    def _sample(self, p: Probe) -> None:
        rate = self._measured(p) if p.kind in JOB_PROBES else None
        s = sample(self.session, p, self.t, self.series[p.name], rate=rate, look=self._look(p))
        if p.kind in (*JOB_PROBES, "flow"):  # moving or not is seen late (a flow's: past a stall)
            start = self.disagree.setdefault(p.name, self.t) if s.mismatch else None
            at, stall = self.stall_s
            lag = JOB_WATCH_S + p.every_s if p.kind != "flow" else grace_s(p.every_s, 0.0)
            stalled = p.kind == "flow" and self.t - at <= grace_s(p.every_s, stall)
            if start is None:
                self.disagree.pop(p.name, None)
            elif self.t - start <= lag or stalled:  # said, not counted
                s = dataclasses.replace(
                    s,
                    mismatch=False,
                    detail=s.detail and f"{s.detail} (within the look's lag or a stall)",
                )
        record(p, self.series[p.name], s, judge=not self.recovering)
        self.journal.write("sample", durable=False, probe=p.name, **s.to_json())

    def _check(self) -> None:
        """Abort rules, the halt lever and the time limit, now (a replay: the run's own abort,
        when it came, instead of the rules: it was observed)."""
        drill = self.pd.drill
        if self.replayed_abort is not None:
            at, said = self.replayed_abort
            if self.t >= at - 1e-9:
                raise Abort(said)
        for i, rule in enumerate(() if self.replayed_abort is not None else drill.abort):
            if rule.job_lost is not None:
                # where the backend runs the jobs their crash is observed, else predicted
                lost = (list(self.watch.observed_crash) if self.watch.watches_jobs
                        else self.session.timeline.lost())  # fmt: skip
                if lost and (rule.job_lost == "any" or rule.job_lost in lost):
                    who = rule.job_lost if rule.job_lost != "any" else lost[0]
                    fate = self.session.timeline.fate(who)
                    seen = (f"observed: {who} crashed at t={self.watch.observed_crash[who]:.3g} s; "
                            f"predicted: " if who in self.watch.observed_crash else "")  # fmt: skip
                    msg = f"abort ({rule.describe()}): {seen}{fate.describe()}"
                    raise Abort(msg)
                continue
            series = self.series[str(rule.probe)]
            if not series.samples or series.samples[-1].value is None:
                continue
            v = series.samples[-1].value
            crossed = (rule.below is not None and v < rule.below) or (
                rule.above is not None and v > rule.above)  # fmt: skip
            if not crossed:
                self.since.pop(i, None)
                continue
            start = self.since.setdefault(i, self.t)
            if self.t - start >= rule.for_s - 1e-9:
                msg = (
                    f"abort ({rule.describe()}): {rule.probe} was {v:.4g} "
                    f"from t={start:.4g} s to t={self.t:.4g} s"
                )
                raise Abort(msg)  # fmt: skip
        if self.lever is not None:
            why = self.lever.requested(self.run_id)
            if why is not None:
                msg = f"halted by {why}"
                raise Abort(msg)
        # from the baseline's start (an emulation's bring-up and preflight do not count)
        t0 = self.watch.t0_wall
        wall = time.monotonic() - t0 + drill.baseline_s if t0 is not None else 0.0
        elapsed = max(wall, self.t + drill.baseline_s)
        if elapsed > drill.time_limit_s + 1e-9:
            msg = f"time_limit reached ({drill.time_limit_s:g} s)"
            raise Abort(msg)

    def advance_to(self, until: float, *, stop: Callable[[], bool] | None = None) -> None:
        """Let the drill clock reach ``until``, sampling the probes that fall due (a replay stops
        at the run's own abort, to the instant)."""
        if self.replayed_abort is not None and self.replayed_abort[0] < until:
            self.advance_to(self.replayed_abort[0], stop=stop)  # raises Abort there
        probes = [p for p in self.pd.drill.probes if self._active(p)]
        while True:
            self.watch.look()
            self._check()
            if stop is not None and stop():
                return
            due = [(self.due.get(p.name, self.t), p) for p in probes]
            nxt = min((d for d, _ in due), default=until + 1.0)
            if nxt > until + 1e-9:
                break
            self.watch.wait(nxt - self.t)
            for d, p in due:
                if d <= nxt + 1e-9:
                    self._sample(p)
                    nd = d + p.every_s
                    while nd <= self.t + 1e-9:  # behind (a slow action): skip, do not bunch
                        nd += p.every_s
                    self.due[p.name] = nd
        self.watch.wait(until - self.t)
        self.watch.look()
        self._check()

    # -- actions ---------------------------------------------------------------------------
    def _fates(self) -> tuple[str, ...]:
        return tuple(f.describe() for f in self.session.timeline.fates if f.state != "running"
                     or f.rerouted_s)  # fmt: skip

    def _log(self, rec: EventRecord, kind: str = "event") -> None:
        self.events.append(rec) if kind == "event" else None
        self.journal.write(kind, **rec.to_json())
        if self.on_event is not None:
            self.on_event(rec)

    def act(self, r: ResolvedEvent, rules: Any) -> None:
        """Do one event (an inject the guard may refuse, or its restore)."""
        e, fabric = r.event, self.session.fabric
        text = r.applied.describe(fabric)
        if e.action == "inject":
            guard = ""
            if rules:
                broken = guard_breaks(self.session, r.applied, rules)
                if broken:
                    self.refused.add(e.label)
                    self._log(EventRecord(e.at_s, self.t, "inject", e.label, text, "refused",
                                          guard=f"refused: the model predicts it breaks "
                                          f"{', '.join(broken)}", wall_s=self.wall))  # fmt: skip
                    return
                guard = "within the guard"
            self.journal.write("action", label=e.label, action="inject", fault=text)
            predicted = predicted_settle(self.session, r.applied)
            self.stall_s = (self.t, predicted)
            step_settle = self._inject(e.label, r.applied)
            settle = step_settle if self.session.backend.name != "model" else predicted
            self.settles.append((e.label, settle))
            period = max((p.every_s for p in self.pd.drill.probes if p.kind != "settle"),
                         default=0.0)  # fmt: skip
            mismatch = (hang_mismatch(self.session, r.applied, predicted, step_settle) or
                        settle_mismatch(self.session, predicted, step_settle))  # fmt: skip
            self._log(EventRecord(e.at_s, self.t, "inject", e.label, text, "applied",
                                  settle, self._fates(), guard=guard,
                                  mismatch=mismatch,
                                  wall_s=self.wall,
                                  outage_s=predicted + period if predicted else None,
                                  ))  # fmt: skip
            return
        if e.label in self.refused:
            self._log(EventRecord(e.at_s, self.t, "restore", e.label, text, "skipped",
                                  wall_s=self.wall))  # fmt: skip
            return
        applied = self.applied.pop(e.label, None)
        if applied is None:
            return
        self.journal.write("action", label=e.label, action="restore", fault=text)
        status = self._revert(applied)
        self._log(EventRecord(e.at_s, self.t, "restore", e.label,
                              applied.describe_restore(fabric), status, None, self._fates(),
                              wall_s=self.wall))  # fmt: skip

    def _inject(self, label: str, applied: AppliedFault) -> float:
        s = self.session
        self.applied[label] = applied
        s.applied.append((label, applied))  # recorded before it is done
        before = s.analysis()
        self.cut_short.add(label)  # until the backend and the prediction both have it
        s.backend.inject(applied)
        s.state = s.state.inject(applied)
        self.cut_short.discard(label)
        return s._changed(applied, before)

    def _revert(self, applied: AppliedFault, label: str = "") -> str:
        s = self.session
        for i, (_, a) in enumerate(s.applied):
            if a is applied:
                del s.applied[i]
                break
        status = "restored"
        self.stall_s = (self.t, s.routing.link_up_s)
        try:
            s.backend.revert(applied)
        except (BackendError, ScenarioError) as err:
            if label in self.cut_short:  # a signal cut its inject short: maybe never applied
                status = "not applied (its inject was cut short)"
            elif not isinstance(err, BackendError) or (
                "gone" not in str(err).lower() and "no such" not in str(err).lower()
            ):
                raise
            else:
                status = "gone"
        if any(a is applied for a in s.state.applied):
            s.state = s.state.revert(applied)
        s._changed(restored=(applied,))
        return status

    def rollback(self) -> list[EventRecord]:
        """Revert what the drill applied and has not restored, newest first."""
        out: list[EventRecord] = []
        fabric = self.session.fabric
        for label in reversed(list(self.applied)):
            applied = self.applied.pop(label)
            self.journal.write("action", label=label, action="rollback",
                               fault=applied.describe_restore(fabric))  # fmt: skip
            try:
                status = self._revert(applied, label)
            except Exception as err:  # keep rolling back; the journal says which failed
                status = f"failed: {err}"
            rec = EventRecord(self.t, self.t, "rollback", label, applied.describe_restore(fabric),
                              "rolled back" if status == "restored" else status,
                              wall_s=self.wall)  # fmt: skip
            out.append(rec)
            self._log(rec, "rollback")
        return out

    # -- the phases ------------------------------------------------------------------------
    def baseline(self) -> None:
        """Sample every probe over the baseline; each probe's baseline is its mean there
        (or its first value when the baseline is instant)."""
        drill = self.pd.drill
        probes = [p for p in drill.probes if p.kind != "settle"]
        start = -drill.baseline_s
        tl = self.session.timeline  # the baseline runs before t=0
        self.session.timeline = dataclasses.replace(tl, now=start, sweep_start=start,
                                                    sweep_end=start)  # fmt: skip
        self.watch.look()  # waits for the real jobs to be up, before the clock starts
        for p in (p for p in probes if p.kind == "flow"):
            self._look(p)  # and for the flows' streams to report
        self.watch.t0_wall = time.monotonic() + drill.baseline_s
        for p in probes:
            self.due[p.name] = start
        t = start
        while True:
            due = [p for p in probes if self.due[p.name] <= t + 1e-9]
            self.watch.look()
            for p in due:
                s = sample(self.session, p, self.t, self.series[p.name], look=self._look(p))
                self.series[p.name].samples.append(s)
                self.journal.write("sample", durable=False, probe=p.name, phase="baseline",
                                   **s.to_json())  # fmt: skip
                nd = self.due[p.name] + p.every_s
                while nd <= self.t + 1e-9:  # behind: skip, do not bunch
                    nd += p.every_s
                self.due[p.name] = nd
            nxt = min((self.due[p.name] for p in probes), default=0.0)
            if nxt >= -1e-9 or not probes:
                break
            self.watch.wait(nxt - self.t)
            t = nxt
        self.watch.wait(-self.t)
        self.watch.look()
        for p in probes:
            vals = [s.value for s in self.series[p.name].samples if s.value is not None]
            self.series[p.name].baseline = sum(vals) / len(vals) if vals else None
            for i, s in enumerate(self.series[p.name].samples):  # judged against the baseline
                ok = p.tolerance is None or s.value is None or p.tolerance.check(
                    s.value, self.series[p.name].baseline)  # fmt: skip
                self.series[p.name].samples[i] = dataclasses.replace(s, ok=ok)
            self.due[p.name] = max(self.due[p.name], 0.0)

    def gate(self) -> str:
        """Why the gate (the before/edge probes at the baseline) refuses the method ("")."""
        for p in self.pd.drill.probes:
            if p.mode in GATE_MODES and p.kind != "settle":
                last = self.series[p.name].samples[-1:]
                if last and not last[0].ok:
                    tol = p.tolerance.describe() if p.tolerance else ""
                    return (f"gate: {p.name} is {last[0].value} before anything is injected "
                            f"(tolerance {tol}); nothing was injected")  # fmt: skip
        return ""

    def recover(self, window: float) -> float | None:
        """After the last restore: when every continuous probe was within tolerance again
        (seconds after the restore), sampling for at most ``window``."""
        start = self.t
        cont = [p for p in self.pd.drill.probes if p.mode == "continuous"]

        def steady() -> bool:
            return all(self.series[p.name].samples and self.series[p.name].samples[-1].ok
                       and self.series[p.name].samples[-1].t >= start - 1e-9
                       for p in cont)  # fmt: skip

        if not cont:
            return 0.0
        self.recovering = True
        try:
            self.advance_to(start + window, stop=steady)
        finally:
            self.recovering = False
        return self.t - start if steady() else None

    def after_probes(self) -> None:
        """The after/edge probes, sampled once at the end."""
        for p in self.pd.drill.probes:
            if p.mode in _AFTER_MODES and p.kind != "settle":
                self._sample(p)


def drill_unsupported(pd: PreparedDrill, backend: Backend) -> str | None:
    """Why ``backend`` cannot run this drill's faults or routing (None: it can)."""
    fabric = pd.prepared.fabric
    assert fabric is not None
    return unsupported(backend, [r.applied for r in pd.events], fabric) or unsupported_routing(
        backend, pd.prepared.routing)  # fmt: skip


def run_drill(
    pd: PreparedDrill,
    backend: Backend,
    *,
    routing: Routing,
    journal_dir: Path | None = None,
    lever: HaltLever | None = None,
    options: MeasureOptions | None = None,
    dry_run: bool = False,
    on_event: Callable[[EventRecord], None] | None = None,
    source_text: str = "",
    at: Mapping[tuple[str, str], float] | None = None,
    abort_at: tuple[float, str] | None = None,
) -> DrillResult:
    """Run one prepared drill on ``backend`` (entered here); the result, also journaled.

    ``lever``: the halt lever to register with (None: the drill cannot be halted from
    outside, as in a ``--dry-run``).  Signals propagate after the rollback (the CLI maps
    them to exit codes); the journal then says ``aborted``.  ``at``: (label, action) -> the
    drill time to do that event at instead of its planned one, and ``abort_at``: when (and
    why) to stop the method instead of the abort rules (a replay of an emulated run: its
    actions happened when the backend had settled, its abort when it was observed).
    """
    scenario = pd.scenario
    fabric = pd.prepared.fabric
    assert fabric is not None
    run_id = f"drill-{uuid.uuid4().hex[:8]}"
    journal = Journal(journal_dir)
    wall0 = time.monotonic()
    status, reason = "passed", ""
    events: list[EventRecord] = []
    rollback: list[EventRecord] = []
    probes: tuple[ProbeRecord, ...] = ()
    expectations: tuple[Any, ...] = ()
    recovered: float | None = None
    fates: tuple[str, ...] = ()
    interrupted: BaseException | None = None
    versions = tool_versions(emulated=backend.name != "model")
    journal.write("start", run=run_id, drill=scenario.name, path=str(scenario.where.path or ""),
                  backend=backend.name, dry_run=dry_run, routing=routing.describe(),
                  versions=versions)  # fmt: skip
    if backend.name == "model":  # instant and touching nothing: nothing to halt or refuse
        lever = None
    if lever is not None:
        refusal = lever.refusal()
        if refusal is not None:
            raise BackendError(refusal)
        lever.register(run_id, scenario.name)
    run: _Run | None = None
    checks: tuple[tuple[str, bool], ...] = ()
    crashes: tuple[tuple[str, float | None, float | None], ...] = ()
    stopped: tuple[float, str] | None = None
    try:
        with backend:
            backend.apply(fabric, pd.prepared.jobs, routing=routing)
            session = RunSession(scenario, backend, fabric, pd.prepared.jobs,
                                 options or MeasureOptions(), routing=routing)  # fmt: skip
            run = _Run(
                pd,
                session,
                journal,
                lever,
                run_id,
                wall0,
                {p.name: Series(p.name) for p in pd.drill.probes},
                on_event=on_event,
                replayed_abort=abort_at,
            )
            rules = parse_budget(pd.drill.guard) if pd.drill.guard else ()
            try:
                session.preflight()
                run.baseline()
                reason = run.gate()
                if reason:
                    status = "failed"
                else:
                    for r in pd.events:
                        e = r.event
                        run.advance_to(at.get((e.label, e.action), e.at_s) if at else e.at_s)
                        run.act(r, rules)
                    if pd.drill.recover_within_s or pd.drill.probes:
                        recovered = run.recover(pd.drill.recover_within_s)
                    run.after_probes()
                    if pd.drill.expect:
                        res = session.expect(ExpectStep(pd.drill.expect))
                        expectations = res.expectations
            except Abort as err:
                status, reason = "aborted", str(err)
                stopped = (run.t, reason)
                journal.write(
                    "abort", reason=reason, t=run.t, wall_s=run.wall, monotonic=time.monotonic()
                )
            except (KeyboardInterrupt, Stopped) as err:
                interrupted = err
                name = "SIGINT" if isinstance(err, KeyboardInterrupt) else err.signame
                status, reason = "aborted", f"interrupted by {name}"
                stopped = (run.t, reason)
                journal.write(
                    "abort", reason=reason, t=run.t, wall_s=run.wall, monotonic=time.monotonic()
                )
            except HarnessError as err:
                status, reason = "error", str(err)
                journal.write(
                    "abort", reason=reason, t=run.t, wall_s=run.wall, monotonic=time.monotonic()
                )
            finally:
                with cleaning_up():
                    rollback = run.rollback()
            events = expected(pd.drill, run.series, run.events)
            fates = tuple(f.describe() for f in session.timeline.fates)
            probes = probe_records(pd.drill, run.series, run.settles, run.events)
            checks = run.watch.checks()
            seen = run.watch.observed_crash
            crashes = tuple((f.name, f.crashed_at, seen.get(f.name))
                            for f in session.timeline.fates
                            if f.crashed_at is not None or f.name in seen)  # fmt: skip
    except BaseException as err:  # before the method (apply, the session): journaled, closed
        journal.write("end", status="error", reason=str(err) or type(err).__name__)
        journal.close()
        raise
    finally:
        if lever is not None:
            lever.unregister(run_id)
    if status == "passed":
        status, reason = verdict(probes, expectations, recovered, pd.drill.recover_within_s,
                                  pd.drill.probes, events)  # fmt: skip
    status, reason = declared(pd.drill.outcome, status, reason)
    result = DrillResult(
        scenario.name, str(scenario.where.path or ""), backend.name, status, tuple(events),
        probes, tuple(rollback), expectations, reason, recovered, fates, dry_run,
        time.monotonic() - wall0, str(journal_dir or ""), routing.describe(), checks, crashes,
        stopped,
    )  # fmt: skip
    if result.mismatches and status in ("passed", "failed"):
        result = with_status(result, "mismatch")
    from harness.run.drill.document import journal_document

    journal.write("end", status=result.status, reason=result.reason)
    journal.finish(journal_document(result, pd, run_id, versions, source_text))
    if interrupted is not None:
        raise interrupted
    return result
