"""The crash rule (harness.invariants.timeline.stall_crashes) is stated once, and the timeline of
a scenario run and the risk check's N+1 margin agree on it at its edges: a stall equal to the
timeout crashes the job (to the nanosecond), one just below is survived, one just above crashes.

The fabric: 2 SUs x 2 A800 servers under 4 spines, one job across both SUs.  The stall is a
reroute (a spine killed under the job, which stays connected through the other spines): the
timeline judges it when a scenario kills the spine, the margin when it weighs that kill as a
further failure on top of a drained spine, and ibsim's job judge when OpenSM took as long to
route around a cable its tables sent the job over.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import cast

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.backends.ibsim.jobs import TableJobs
from harness.backends.ibsim.walk import Routes
from harness.fabric import Fabric
from harness.fabric import two_tier
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.routing import DEFAULT
from harness.invariants.timeline import CLOCK_RESOLUTION_S
from harness.invariants.timeline import Timeline
from harness.invariants.timeline import stall_crashes
from harness.planning.risk import assess
from harness.run.scenario import run_scenario
from harness.scenario.load import load_text

REROUTE_S = 1.0

#: (the job's timeout, whether a 1 s reroute crashes it)
EDGES = [
    (REROUTE_S, True),  # stall == timeout: crashes
    (REROUTE_S + CLOCK_RESOLUTION_S / 4, True),  # equal to the nanosecond: crashes
    (REROUTE_S - 1e-3, True),  # the stall just above the timeout: crashes
    (REROUTE_S + 1e-3, False),  # the stall just below the timeout: survived
    (REROUTE_S + 2 * CLOCK_RESOLUTION_S, False),  # two nanoseconds short: survived
]


@functools.cache
def fabric() -> Fabric:
    return two_tier(sus=2, nodes_per_su=2, spines=4, leaf_radix=8, storage=False)


def job(timeout: float) -> tuple[Job, ...]:
    return tuple(resolve_jobs([JobSpec(name="train", nodes=("*",), timeout=timeout)], fabric()))


def test_the_rule_at_its_edges() -> None:
    for timeout, crashed in EDGES:
        assert stall_crashes(REROUTE_S, timeout) is crashed, timeout
    assert stall_crashes(math.inf, 34.36)
    assert not stall_crashes(0.0, 34.36)


def test_a_clock_summed_from_waits_meets_a_timeout_written_with_the_same_digits() -> None:
    # 0.1 s then 0.2 s after a cut-off at t=0.1 s: 0.20000000000000004 s of float clock
    t = Timeline.start([Job("j", (0, 1), timeout=0.2)]).after(0.1, ())
    t = t.changed({"j"}).after(0.2, {"j"})
    assert t.fate("j").lost
    # and 0.3 - 0.1 (0.19999999999999998 s) against 0.2 s is equal too
    assert stall_crashes(0.3 - 0.1, 0.2)


def _margin_loses(timeout: float) -> bool:
    """Whether the N+1 margin over ``drain spine-01`` says killing spine-02 loses the job."""
    routing = dataclasses.replace(DEFAULT, reroute=REROUTE_S)
    report = assess(fabric(), job(timeout), "drain spine-01", "jobs_lost=0",
                    margin_categories=("switches",), routing=routing)  # fmt: skip
    assert report.ok  # a drain stalls nothing
    assert report.margin_after is not None
    lost = {c.ids: c.jobs_lost for c, _ in report.margin_after.breaking}
    return lost.get(("spine-02",)) == ("train",)


SCENARIO = """
name: crash-rule-edge
description: a spine drained, then another killed under a job across SUs
fabric: {generator: two-tier, params: {sus: 2, nodes_per_su: 2, spines: 4, leaf_radix: 8,
         storage: false}}
routing: {reroute: 1s}
jobs: [{name: train, nodes: "*", timeout: TIMEOUT}]
steps:
  - inject: {drain: spine-01}
  - inject: {kill: spine-02}
  - expect: {jobs_lost: LOST}
"""


def _timeline_loses(timeout: float) -> bool:
    """Whether a scenario run (the runner's timeline) loses the job when spine-02 is killed."""
    for lost in (0, 1):
        text = SCENARIO.replace("TIMEOUT", repr(timeout)).replace("LOST", str(lost))
        (scenario,) = load_text(text)
        result = run_scenario(scenario)
        if result.status == "passed":
            return lost == 1
    pytest.fail(f"timeout {timeout!r}: the scenario neither lost the job nor kept it")


@pytest.mark.parametrize(("timeout", "crashed"), EDGES, ids=[f"{t!r}" for t, _ in EDGES])
def test_the_timeline_and_the_margin_agree_at_the_edges(timeout: float, crashed: bool) -> None:
    assert _timeline_loses(timeout) is crashed
    assert _margin_loses(timeout) is crashed


class _Tables:
    """OpenSM's tables as ibsim's job judge reads them: every NIC pair routed, up through
    ``spine-01`` (a stand-in for :class:`~harness.backends.ibsim.walk.Routes`)."""

    def routed_many(
        self, src: npt.NDArray[np.intp], dst: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.bool_]:
        return np.ones(len(src), dtype=bool)

    def path(self, src: int, dst: int) -> list[str]:
        return ["leaf-a", "spine-01", "leaf-b"]


def _ibsim_loses(timeout: float) -> bool:
    """Whether ibsim's judge crashes the job when OpenSM takes 1 s to route around a cable
    its tables sent the job over."""
    tables = _Tables()
    judge = TableJobs(fabric(), job(timeout), lambda: cast(Routes, tables), clock=lambda: 0.0)
    judge.before([frozenset({"leaf-a", "spine-01"})], up=False)
    judge.after(started=0.0, routed_s=REROUTE_S, what="a cut of leaf-a--spine-01")
    return not judge.run("train").alive


@pytest.mark.parametrize(("timeout", "crashed"), EDGES, ids=[f"{t!r}" for t, _ in EDGES])
def test_ibsims_measured_stall_is_judged_by_the_same_rule(timeout: float, crashed: bool) -> None:
    assert _ibsim_loses(timeout) is crashed


@given(st.floats(0.0, 3.0), st.floats(1e-3, 3.0))
def test_every_judgement_of_a_stall_is_the_rule(stall: float, timeout: float) -> None:
    """A reroute stall and a cut-off of the same length are judged alike, by the rule."""
    start = Timeline.start([Job("j", (0, 1), timeout=timeout)])
    by_reroute = start.changed((), stalls={"j": stall})
    by_cut_off = start.changed({"j"}).after(stall, {"j"})
    expected = stall > 0 and stall_crashes(stall, timeout)
    assert by_reroute.fate("j").lost is expected
    assert by_cut_off.fate("j").lost is (stall_crashes(stall, timeout))
