"""Prepare a drill: its scenario prepared, its timeline expanded and every event's fault
resolved on the fabric (scenario stage, pure).

What :func:`~harness.scenario.prepare.prepare` does for steps, done for a
drill's events and probes: every problem (a selector that selects nothing, a
probe's ``job:``, ``link:`` or flow NIC that does not exist) reported at once, located,
before anything runs.

>>> from harness.scenario.load import load_text
>>> (s,) = load_text('''
... name: d
... description: drain a spine for 10 s
... fabric: {preset: seed-a800}
... drill:
...   time_limit: 1m
...   timeline: [{at: 0s, inject: {drain: spine-05}, hold: 10s}]
... ''')
>>> p = prepare_drill(s)
>>> [(e.event.at_s, e.event.action, e.applied.describe(p.prepared.fabric)) for e in p.events]
[(0.0, 'inject', 'drained spine-05'), (10.0, 'restore', 'drained spine-05')]
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.model import Kind
from harness.faults.fault import AppliedFault
from harness.scenario.drill_events import DrillEvent
from harness.scenario.drill_events import expand
from harness.scenario.drill_model import JOB_PROBES
from harness.scenario.drill_model import PROBE_KINDS
from harness.scenario.drill_model import Drill
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import Scenario
from harness.scenario.prepare import Prepared
from harness.scenario.prepare import check_expectations
from harness.scenario.prepare import element_of_kind
from harness.scenario.prepare import located
from harness.scenario.prepare import prepare


@dataclass(frozen=True, slots=True)
class ResolvedEvent:
    """One drill event with its fault resolved on the fabric."""

    event: DrillEvent
    applied: AppliedFault


@dataclass(frozen=True, slots=True)
class PreparedDrill:
    """A drill checked against its fabric, ready to run."""

    prepared: Prepared
    drill: Drill
    events: tuple[ResolvedEvent, ...]

    @property
    def scenario(self) -> Scenario:
        """The drill's scenario."""
        return self.prepared.scenario


def probe_expectations(drill: Drill) -> list[Expectation]:
    """The probes that sample a registered observation, as expectations (their tolerance, or
    any value), for the checks every expectation gets."""
    from harness.observations.expect import Expect

    out = []
    for p in drill.probes:
        if p.kind in PROBE_KINDS:
            continue
        ex = p.tolerance.expect if p.tolerance is not None and not p.tolerance.relative else None
        out.append(Expectation(p.kind, ex or Expect.parse(">= -1e300"), p.args, p.where))
    return out


def prepare_drill(scenario: Scenario) -> PreparedDrill:
    """Prepare ``scenario``'s drill; raise one :class:`ScenarioError` with every problem."""
    if scenario.drill is None:
        msg = f"{scenario.name}: has no drill: section (harness run runs its steps)"
        raise ScenarioError([Problem(msg, scenario.where.path, scenario.where.line)])
    drill = scenario.drill
    prepared = prepare(scenario)
    fabric = prepared.fabric
    assert fabric is not None  # a drill cannot expect a fabric error (the loader refuses it)
    problems: list[Problem] = []
    resolved: dict[str, AppliedFault] = {}
    failed: set[int] = set()  # entries whose fault does not resolve: reported once
    events: list[ResolvedEvent] = []
    for e in expand(drill):
        applied = resolved.get(e.label)
        if applied is None:
            if e.entry in failed:
                continue
            try:
                applied = resolved[e.label] = e.fault.resolve(fabric)
            except ScenarioError as err:
                problems.extend(located(err, e.where))
                failed.add(e.entry)
                continue
        events.append(ResolvedEvent(e, applied))
    checks = [*probe_expectations(drill), *drill.expect]
    if checks:
        check_expectations(ExpectStep(tuple(checks)), fabric, prepared.jobs, problems)
    jobs = {j.name for j in prepared.jobs}
    for p in drill.probes:
        for key in JOB_PROBES.get(p.kind, ()):
            job = dict(p.args).get(key)
            if job not in jobs:
                problems.append(Problem(
                    f"probe {p.name}: no job named {job!r} "
                    f"(jobs: {', '.join(sorted(jobs)) or 'none'})",
                    p.where.path, p.where.line, p.where.column,
                ))  # fmt: skip
        if p.kind == "flow":
            for src, dst in dict(p.args)["pairs"]:
                for nic in (src, dst):
                    try:
                        element_of_kind(fabric, nic, Kind.NIC)
                    except ScenarioError as err:
                        problems.append(Problem(f"probe {p.name}: {err}", p.where.path,
                                                p.where.line, p.where.column))  # fmt: skip
    for rule in drill.abort:
        if rule.job_lost not in (None, "any") and rule.job_lost not in jobs:
            problems.append(Problem(
                f"abort: no job named {rule.job_lost!r} "
                f"(jobs: {', '.join(sorted(jobs)) or 'none'})",
                rule.where.path, rule.where.line, rule.where.column,
            ))  # fmt: skip
    if problems:
        raise ScenarioError(problems)
    return PreparedDrill(prepared, drill, tuple(events))
