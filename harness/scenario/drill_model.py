"""Drills as frozen dataclasses (scenario stage, pure): a scenario's ``drill:`` section.

A drill is a campaign in time: probes measured before (the baseline and the
gate), during and after a timeline of faults, each fault restored by itself
after its ``hold``, abort rules that stop the method, a guard (a risk budget)
that refuses an action predicted to break it, and a recovery window.  The
loader (:mod:`harness.scenario.drill_check`) reads the section, the timeline
expands to concrete, seeded events (:mod:`harness.scenario.drill_events`), and
the runner (:mod:`harness.run.drill`) plays them on a backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from harness.faults.fault import Fault
from harness.inputs.location import Location
from harness.observations.expect import Expect

if TYPE_CHECKING:
    from harness.scenario.model import Expectation

#: Probe kinds beyond the observation registry's names (any numeric or boolean observation is a
#: probe kind too): the fraction of sampled rail NIC pairs that reach each other, a job's rate
#: against its baseline, an experiment job's rate over a control job's at the same moment
#: (Netflix ChAP), each action's settle (convergence) time, and the total rate of a group of
#: bulk flows kept running through the drill (``flow``, ``pairs: [[SRC, DST], ...]``).
PROBE_KINDS = ("reachability", "job_rate", "job_ratio", "settle", "flow")
#: The probe kinds that name jobs, and the arguments that do.
JOB_PROBES = {"job_rate": ("job",), "job_ratio": ("job", "control")}
#: When a probe is judged: ``before`` is a gate (nothing is injected if it fails), ``after``
#: once the recovery window is over, ``edge`` both, ``continuous`` throughout, ``during-fault``
#: while a fault is applied.
PROBE_MODES = ("before", "after", "edge", "continuous", "during-fault")
#: How a drill may be declared to end (``outcome:``): a shipped drill that shows an abort
#: or a refusal passes when it ends that way, and fails when it does not.
OUTCOMES = ("passed", "failed", "aborted")


@dataclass(frozen=True, slots=True)
class Tolerance:
    """What a probe's value must be: an :class:`Expect`, on the value or (``relative``) on the
    value over the probe's baseline (``>= 0.7 baseline``)."""

    expect: Expect
    relative: bool = False

    def describe(self) -> str:
        """The tolerance as written (``>= 0.7 baseline``)."""
        return self.expect.describe() + (" baseline" if self.relative else "")

    def check(self, value: Any, baseline: Any) -> bool:
        """Whether ``value`` is within the tolerance (a relative one against ``baseline``)."""
        if not self.relative:
            return self.expect.check(value)
        base = float(baseline) if baseline is not None else 0.0
        if base == 0.0:  # nothing to be a fraction of: the value itself must be 0 or more
            return self.expect.check(float(value) if value is not None else 0.0)
        return self.expect.check(float(value) / base)


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe: what it observes, how often, when it is judged and within what."""

    name: str
    kind: str  # a PROBE_KINDS name or an observation's
    args: tuple[tuple[str, Any], ...] = ()
    tolerance: Tolerance | None = None
    mode: str = "continuous"
    every_s: float = 1.0
    fail_after: int = 1  # consecutive samples out of tolerance that fail it
    where: Location = Location()

    def describe(self) -> str:
        """``reach: reachability(sample=32) every 0.2 s, >= 0.99``."""
        args = ", ".join(f"{k}={v}" if k != "pairs" else f"{len(v)} pairs" for k, v in self.args)
        what = f"{self.kind}({args})" if args else self.kind
        tol = f", {self.tolerance.describe()}" if self.tolerance else ""
        return f"{self.name}: {what} {self.mode} every {self.every_s:g} s{tol}"


@dataclass(frozen=True, slots=True)
class AbortRule:
    """One abort condition: a probe below (or above) a value for a while, or a job lost."""

    probe: str | None = None
    below: float | None = None
    above: float | None = None
    for_s: float = 0.0
    job_lost: str | None = None  # a job name, or "any"
    where: Location = Location()

    def describe(self) -> str:
        """``reach below 0.9 for 2 s`` or ``train lost``."""
        if self.job_lost is not None:
            return "any job lost" if self.job_lost == "any" else f"{self.job_lost} lost"
        bound = f"below {self.below:g}" if self.below is not None else f"above {self.above:g}"
        held = f" for {self.for_s:g} s" if self.for_s else ""
        return f"{self.probe} {bound}{held}"


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One entry of ``timeline:`` as written: a fault, when it starts, how long it is held."""

    fault: Fault
    hold_s: float
    name: str | None = None  # ``as:``
    at_s: float | None = None
    after: str | None = None  # starts when that entry's last fault is restored ...
    wait_s: float = 0.0  # ... plus this
    every_s: float | None = None  # repeated every this ...
    for_s: float | None = None  # ... for this long
    where: Location = Location()


@dataclass(frozen=True, slots=True)
class Drill:
    """A scenario's ``drill:`` section."""

    time_limit_s: float
    timeline: tuple[TimelineEntry, ...]
    baseline_s: float = 0.0
    recover_within_s: float = 0.0
    guard: str | None = None  # a budget (``jobs_lost=0``) predicted before every inject
    probes: tuple[Probe, ...] = ()
    abort: tuple[AbortRule, ...] = ()
    expect: tuple[Expectation, ...] = ()  # judged at the end, as a scenario's expect
    outcome: str = "passed"  # how the drill is expected to end (OUTCOMES)
    where: Location = Location()

    def probe(self, name: str) -> Probe:
        """The probe called ``name``."""
        return next(p for p in self.probes if p.name == name)
