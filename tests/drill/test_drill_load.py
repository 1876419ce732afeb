"""Drill files: the issue's form is accepted as written, every problem is reported at once
with its line, and the timeline expands to the same seeded events every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenario.drill_check import ABORT_KEYS
from harness.scenario.drill_check import DRILL_KEYS
from harness.scenario.drill_check import ENTRY_KEYS
from harness.scenario.drill_check import PROBE_KEYS
from harness.scenario.drill_events import expand
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.load import load_text
from harness.scenario.schema import scenario_schema
from tests.drill.conftest import drill
from tests.drill.conftest import drill_text

ISSUE_FORM = """\
time_limit: 3m             # hard wall clock; reaching it is an abort
baseline: 5s               # probes measured before the first action
recover_within: 20s        # after the last restore the steady state must hold again
guard: "jobs_lost=0"       # a risk budget predicted before every action
probes:
  - {name: reach, probe: reachability, sample: 32, every: 200ms, mode: continuous,
     tolerance: ">= 0.99", fail_after: 3}
  - {name: rate, probe: job_rate, job: train, every: 1s, mode: continuous,
     tolerance: ">= 0.7 baseline"}
  - {name: conv, probe: settle, mode: during-fault, tolerance: "<= 5s"}
abort:
  - {probe: reach, below: 0.9, for: 2s}
  - {job_lost: train}
timeline:
  - {at: 0s, inject: {drain: spine-01}, hold: 10s, as: s1}
  - {after: s1, wait: 5s, inject: {drain: spine-02}, hold: 10s}
  - {every: 30s, for: 2m, at: 30s,
     inject: {flaky: {target: {tier: leaf-spine, random: {count: 1, seed: 7}}, loss: 5%}},
     hold: 3s}
expect: {jobs_lost: 0}     # judged at the end, as today's expect
"""


def test_the_issues_form_is_accepted_and_expands() -> None:
    s = drill(ISSUE_FORM)
    d = s.drill
    assert d is not None
    assert (d.time_limit_s, d.baseline_s, d.recover_within_s) == (180, 5, 20)
    assert d.guard == "jobs_lost=0"
    assert [p.name for p in d.probes] == ["reach", "rate", "conv"]
    assert d.probes[1].tolerance is not None
    assert d.probes[1].tolerance.relative
    assert d.probes[2].tolerance is not None
    assert d.probes[2].tolerance.expect.describe() == "<= 5"
    events = expand(d)
    injects = [(e.at_s, e.label) for e in events if e.action == "inject"]
    assert injects == [(0.0, "s1"), (15.0, "timeline[1]"), (30.0, "timeline[2]#1"),
                       (60.0, "timeline[2]#2"), (90.0, "timeline[2]#3"),
                       (120.0, "timeline[2]#4")]  # fmt: skip
    assert len(events) == 2 * len(injects)  # every fault is restored by its hold


def test_the_schema_and_the_loader_share_their_keys() -> None:
    d = scenario_schema()["$defs"]["scenario"]["properties"]["drill"]
    assert tuple(d["properties"]) == DRILL_KEYS
    assert tuple(d["properties"]["timeline"]["items"]["properties"]) == ENTRY_KEYS
    assert tuple(d["properties"]["probes"]["items"]["properties"]) == PROBE_KEYS
    assert tuple(d["properties"]["abort"]["items"]["properties"]) == ABORT_KEYS


def test_every_problem_is_reported_at_once_with_its_line() -> None:
    text = drill_text("""\
        time_limit: 30s
        probes:
          - {name: p, probe: reachabilty, every: 1s}
          - {name: r, probe: job_rate, job: nobody}
          - {name: r, probe: settle, mode: continuous}
        abort:
          - {probe: missing, below: 0.5}
          - {job_lost: ghost}
        timeline:
          - {at: 0s, inject: {drain: spine-01}, hold: 40s, as: a}
          - {at: 1s, inject: {drain: spine-02}, hold: 1s, as: a}
          - {after: nope, inject: {kill: spine-03}, hold: 1s}
          - {at: 2s, inject: {kill: spine-04}}
    """)
    with pytest.raises(ScenarioError) as err:
        load_text(text, Path("bad.yaml"))
    msgs = [(p.line, p.message) for p in err.value.problems]
    text_all = "\n".join(m for _, m in msgs)
    for needle in (
        "'reachabilty' is not a probe kind; did you mean 'reachability'",
        "job_rate: no job named 'nobody'",
        "probe name 'r' is given twice",
        "restored at t=40 s",
        "its mode is during-fault",
        "probe 'missing' is not one of this drill's probes",
        "no job is named so",
        "every fault in a drill has a hold",
        "'as: a' is given twice",
        "after nope: no timeline entry has 'as: nope'",
    ):
        assert needle in text_all, needle
    assert all(line > 0 for line, _ in msgs)
    assert len(msgs) >= 10


def test_a_cycle_and_a_hold_past_the_time_limit_are_problems() -> None:
    with pytest.raises(ScenarioError) as err:
        drill("""\
            time_limit: 30s
            timeline:
              - {at: 0s, inject: {drain: spine-01}, hold: 40s}
              - {after: c2, inject: {kill: spine-03}, hold: 1s, as: c1}
              - {after: c1, inject: {kill: spine-04}, hold: 1s, as: c2}
        """)
    text = str(err.value)
    assert "wait for each other in a cycle (c1 -> c2 -> c1)" in text or "cycle" in text
    assert "restored at t=40 s" in text
    assert "past the drill's time_limit (30 s)" in text


def test_the_whole_drill_must_fit_its_time_limit() -> None:
    with pytest.raises(ScenarioError, match=r"needs 35 s \(baseline 5 \+ timeline 10 \+ "):
        drill("""\
            time_limit: 30s
            baseline: 5s
            recover_within: 20s
            timeline: [{at: 0s, inject: {drain: spine-01}, hold: 10s}]
        """)


def test_expansion_is_seeded_and_reproducible() -> None:
    body = """\
        time_limit: 5m
        timeline:
          - {at: 0s, every: 10s, for: 1m, hold: 2s,
             inject: {cut: {tier: leaf-spine, random: {count: 1, seed: 3}}}}
    """
    one, two = prepare_drill(drill(body)), prepare_drill(drill(body))
    f = one.prepared.fabric
    assert f is not None
    picks = [r.applied.describe(f) for r in one.events if r.event.action == "inject"]
    assert picks == [r.applied.describe(f) for r in two.events if r.event.action == "inject"]
    assert len(picks) == 6
    assert len(set(picks)) > 1
    seeds = [r.event.fault.target.random_seed for r in one.events if r.event.action == "inject"]
    assert seeds == [3, 4, 5, 6, 7, 8]


def test_a_drill_needs_no_steps_and_a_scenario_without_either_is_refused() -> None:
    assert drill("time_limit: 1m\ntimeline: [{at: 0s, inject: {drain: spine-01}, hold: 1s}]\n"
                 ).steps == ()  # fmt: skip
    with pytest.raises(ScenarioError, match="missing 'steps'"):
        load_text("name: x\ndescription: y\nfabric: {preset: seed-a800}\n")
