"""A drill's flow probe: a group of bulk flows kept running through the drill, its total rate
predicted (the fair share of what is left) beside the backend's look; a flow that moves where
the model says it cannot, or stands where it should move, is a mismatch once it outlasts the
look's lag and the predicted stall."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.model import ModelBackend
from harness.errors import ScenarioError
from harness.run.drill.flow import LAG_S
from harness.run.drill.flow import grace_s
from harness.run.drill.journal import read_journal
from harness.run.drill.results import DrillResult
from harness.run.drill.runner import run_drill
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.load import load_file
from harness.scenario.model import Scenario
from tests.drill.conftest import drill

REPO = Path(__file__).resolve().parents[2]

#: Two flows from su01 to su02 on rail 0: each through su01/leaf-r0 and su02/leaf-r0.
FLOWS = """\
time_limit: 1m
baseline: 1s
probes:
  - {name: bulk, probe: flow, every: 500ms,
     pairs: [[su01/node01/nic0, su02/node01/nic0], [su01/node02/nic0, su02/node02/nic0]]}
timeline:
  - {at: 1s, inject: {kill: su01/leaf-r0}, hold: 5s}
"""


def _run(s: Scenario, backend: ModelBackend | None = None, **kw: object) -> DrillResult:
    pd = prepare_drill(s)
    return run_drill(pd, backend or ModelBackend(), routing=pd.prepared.routing, **kw)  # type: ignore[arg-type]


def test_the_shipped_flow_drill_halves_under_a_dead_spine_and_loses_the_cut_rail() -> None:
    """Four 200G flows between the two SUs (two on rail 0, two on rail 1): 800 Gb/s healthy,
    400 with one of the two spines dead (each leaf keeps half its uplinks), 800 again once it
    is back, and 400 while su01's rail-1 leaf is down (its two flows are cut)."""
    (s,) = load_file(REPO / "scenarios" / "drill-spine-loss-flows.yaml")
    r = _run(s)
    assert r.status == "passed", r.reason
    (bulk,) = r.probes
    assert bulk.baseline == 800.0
    by_t = {round(x.t, 3): x.value for x in bulk.samples}
    assert by_t[0.5] == 800.0
    assert {v for t, v in by_t.items() if 1.0 < t <= 5.0} == {400.0}
    assert {v for t, v in by_t.items() if 5.0 < t <= 7.0} == {800.0}
    assert {v for t, v in by_t.items() if 7.0 < t <= 11.0} == {400.0}
    assert all(x.measured is None and not x.mismatch for x in bulk.samples)  # the model


class _Flows(ModelBackend):
    """The model's flows, each changed by ``bend`` (flow index, its rate) once a fault is in."""

    name = "fake-flows"
    seen_now: bool = False

    def bend(self, i: int, gbps: float, injected: bool) -> float:
        return gbps

    def measure(self, plan: MeasurePlan) -> Measurements:
        m = super().measure(plan)
        if not plan.flows:
            return m
        type(self).seen_now |= plan.flow_now
        self.injected = getattr(self, "injected", False) or not self.state.is_healthy
        flows = tuple(dataclasses.replace(f, gbps=self.bend(i, f.gbps, self.injected))
                      for i, f in enumerate(m.flows))  # fmt: skip
        return dataclasses.replace(m, flows=flows)


def test_flows_that_keep_moving_through_a_cut_are_a_mismatch_past_the_grace(
    tmp_path: Path,
) -> None:
    """The fake's flows never stop: the model says the leaf kill cuts both, so the samples
    disagree from the kill on, and count as mismatches once the lag, a period and the
    kill's predicted reroute have passed; the detail names the flows."""

    class NeverCut(_Flows):
        def bend(self, i: int, gbps: float, injected: bool) -> float:
            return 200.0

    r = _run(drill(FLOWS), NeverCut(), journal_dir=tmp_path)
    assert NeverCut.seen_now  # looked at as they run, not for a window
    assert r.status == "mismatch"
    (bulk,) = r.probes
    disagree = [x for x in bulk.samples if 1.0 < x.t < 6.0]
    assert all(x.predicted == 0.0 and x.measured == 400.0 for x in disagree)
    bad = [round(x.t, 3) for x in bulk.samples if x.mismatch]
    reroute = 1.0  # the model's reroute window for the kill (sm: 1 s)
    assert bad == [t for t in (1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0)
                   if t - 1.0 > grace_s(0.5, reroute)]  # fmt: skip
    assert bad[0] == 4.0
    detail = next(x.detail for x in bulk.samples if x.mismatch)
    assert detail.startswith(
        "2 of 2 flows move otherwise: su01/node01/nic0 -> "
        "su02/node01/nic0: predicted 0 Gb/s, measured 200 Gb/s"
    ), detail
    doc = read_journal(tmp_path)
    samples = next(p for p in doc["probes"] if p["name"] == "bulk")["samples"]
    said = [x["detail"] for x in samples if x.get("detail")]
    assert len(said) == 10  # every disagreeing sample says so; the early ones are not counted
    assert sum(s.endswith("(within the look's lag or a stall)") for s in said) == 10 - len(bad)


def test_a_flow_that_stays_down_after_the_repair_is_a_mismatch_past_link_up() -> None:
    """The fake's first flow never comes back after the leaf is restored: predicted moving
    from the restore (t=6 s), it counts as a mismatch once link_up (sm: 3 s), the lag and a
    period are over, and the total is the other flow's alone."""

    class StaysDown(_Flows):
        def bend(self, i: int, gbps: float, injected: bool) -> float:
            return 0.0 if injected and i == 0 else gbps

    body = FLOWS.replace("time_limit: 1m", "time_limit: 1m\nrecover_within: 6s").replace(
        "every: 500ms,", "every: 500ms, tolerance: '>= 0.9 baseline',"
    )  # sampled to the end
    r = _run(drill(body), StaysDown())
    (bulk,) = r.probes
    after = [x for x in bulk.samples if x.t > 6.0]
    assert after
    assert all(x.predicted == 400.0 and x.measured == 200.0 for x in after)
    bad = [round(x.t, 3) for x in after if x.mismatch]
    assert bad
    assert bad[0] == 6.0 + grace_s(0.5, 3.0) + 0.5
    assert all(not x.mismatch for x in bulk.samples if x.t <= 6.0)  # cut when predicted cut
    assert r.mismatches >= len(bad)
    assert r.recovered_s is None  # and it never recovers


def test_a_short_lived_disagreement_is_the_looks_lag_not_a_mismatch() -> None:
    """A flow that reads 0 for one sample on a healthy fabric (a look that caught a stream
    restarting) is within the lag: no mismatch."""

    class Blinks(_Flows):
        looks = 0

        def bend(self, i: int, gbps: float, injected: bool) -> float:
            type(self).looks += i == 0
            return 0.0 if i == 0 and type(self).looks == 6 else gbps

    body = FLOWS.replace("  - {at: 1s, inject: {kill: su01/leaf-r0}, hold: 5s}\n",
                         "  - {at: 4s, inject: {drain: spine-01}, hold: 1s}\n")  # fmt: skip
    r = _run(drill(body), Blinks())
    (bulk,) = r.probes
    assert any(x.measured == 200.0 and x.predicted == 400.0 for x in bulk.samples)
    assert LAG_S + 0.5 > 0.5  # one sample is inside the lag
    assert not any(x.mismatch for x in bulk.samples)
    assert r.status == "passed", r.reason


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ("", "a flow probe names its flows: pairs: [["),
        ("pairs: [su01/node01/nic0]", "a flow probe's pairs are 1 to 16 [SRC, DST] lists"),
        ("pairs: []", "a flow probe's pairs are 1 to 16 [SRC, DST] lists"),
        ("pairs: [[su01/node01/nic0, su01/node01/nic0]]", "a flow runs between two NICs"),
        ("pairs: [[a, b], [a, b]]", "a flow probe lists a pair twice"),
    ],
)
def test_a_flow_probes_pairs_are_checked_at_load(pairs: str, message: str) -> None:
    both = "pairs: [[su01/node01/nic0, su02/node01/nic0], [su01/node02/nic0, su02/node02/nic0]]"
    sep = ", " if pairs else ""
    body = FLOWS.replace(both, pairs).replace(", every: 500ms,\n     ", f", every: 500ms{sep}")
    with pytest.raises(ScenarioError) as err:
        prepare_drill(drill(body))
    assert message in str(err.value), str(err.value)


def test_a_flow_probe_naming_a_nic_the_fabric_lacks_is_refused_with_its_line() -> None:
    body = FLOWS.replace("su02/node02/nic0]]", "su02/node09/nic0]]")
    with pytest.raises(ScenarioError) as err:
        prepare_drill(drill(body))
    (p,) = err.value.problems
    assert p.message.startswith("probe bulk: 'su02/node09/nic0' is not a nic of fabric"), p
    assert "did you mean" in p.message
    assert (p.path, p.line) == ("inline.yaml", 12)  # the probe's line
