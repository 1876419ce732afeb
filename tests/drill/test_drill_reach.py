"""A drill's reachability probe: a fixed seeded sample plus the model's cut pairs, probed by
the backend; a pair measured otherwise than predicted is a mismatch that names it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.model import ModelBackend
from harness.faults.fault import Fault
from harness.observations.plans import MeasureOptions
from harness.run.drill.journal import read_journal
from harness.run.drill.reach import ReachProbe
from harness.run.drill.reach import probe_wait
from harness.run.drill.results import DrillResult
from harness.run.drill.runner import run_drill
from harness.run.session import RunSession
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.model import Scenario
from tests.drill.conftest import drill

LEAF = """\
time_limit: 1m
baseline: 1s
probes:
  - {name: reach, probe: reachability, every: 500ms}
timeline:
  - {at: 2s, inject: {kill: su01/leaf-r0}, hold: 3s}
"""


def _run(s: Scenario, backend: ModelBackend | None = None, **kw: object) -> DrillResult:
    pd = prepare_drill(s)
    return run_drill(pd, backend or ModelBackend(), routing=pd.prepared.routing, **kw)  # type: ignore[arg-type]


def _session(seed: int = 0) -> RunSession:
    pd = prepare_drill(drill(LEAF))
    p = pd.prepared
    return RunSession(p.scenario, ModelBackend(), p.fabric, p.jobs, MeasureOptions(seed=seed),
                      routing=p.routing)  # fmt: skip


def test_a_leaf_loss_reads_as_the_fraction_of_the_probed_pairs_it_cuts() -> None:
    """8 servers, 4 rails: 28 NIC pairs a rail, all probed (32 a rail asked for); su01's
    rail-0 leaf carries 22 of rail 0's (every pair with an su01 NIC): 90 of 112 reach."""
    r = _run(drill(LEAF))
    assert r.status == "passed"
    (reach,) = r.probes
    values = {round(s.t, 3): s.value for s in reach.samples}
    assert values[1.5] == 1.0
    assert {v for t, v in values.items() if 2.0 < t < 5.0} == {90 / 112}
    assert all(s.measured is None and not s.mismatch for s in reach.samples)  # the model


def test_the_sample_is_seeded_and_fixed_and_the_cut_pairs_are_always_probed() -> None:
    s = _session()
    a, b = ReachProbe(s, "reach", 1, 0.5), ReachProbe(s, "reach", 1, 0.5)
    assert a.sample == b.sample  # the same draw
    assert len(a.sample) == 4  # one pair a rail
    assert ReachProbe(_session(seed=5), "reach", 1, 0.5).sample  # another seed: a draw too
    healthy = a.look(s)
    assert (healthy.predicted, healthy.pairs) == (1.0, 4)
    kill = Fault.parse({"kill": "su01/leaf-r0"}).resolve(s.fabric)
    s.state = s.state.inject(kill)
    s._current = None
    cut = a.look(s)
    assert cut.pairs > 4  # the witnesses: pairs the model says are cut now
    assert cut.predicted < 1.0
    assert a.sample == b.sample  # the sample itself did not move


def test_a_pair_measured_otherwise_than_predicted_is_a_mismatch_that_names_it(
    tmp_path: Path,
) -> None:
    """A fake backend that moves packets finds one pair the model says reaches cut while
    the leaf is down: those samples are mismatches, each naming the pair, the drill's status says
    so, and every probe plan waited as the probe's period allows."""
    waits: set[float | None] = set()

    class OnePairDark(ModelBackend):
        name = "fake-probing"

        def measure(self, plan: MeasurePlan) -> Measurements:
            m = super().measure(plan)
            if "predicted-cut" in plan.note:  # the probe's plans (not the preflight's)
                waits.add(plan.probe_wait_s)
            if self.state.is_healthy or not m.probes:  # from the inject on
                return m
            i = next(i for i, p in enumerate(m.probes) if p.ok)  # one the model says reaches
            dark = dataclasses.replace(m.probes[i], ok=False)
            return dataclasses.replace(m, probes=(*m.probes[:i], dark, *m.probes[i + 1 :]))

    backend = OnePairDark()
    r = _run(drill(LEAF), backend, journal_dir=tmp_path)
    assert r.status == "mismatch"
    (reach,) = r.probes
    bad = [s for s in reach.samples if s.mismatch]
    assert [s.t for s in bad] == [2.5, 3.0, 3.5, 4.0, 4.5, 5.0]
    assert r.mismatches >= len(bad)
    assert all(s.measured is not None and s.predicted is not None for s in reach.samples)
    assert all(s.measured < s.predicted for s in bad)  # type: ignore[operator]
    first = bad[0].detail
    assert first.startswith("1 of "), first
    assert "predicted reachable, unreachable" in first, first
    assert waits == {probe_wait(0.5)} == {0.125}
    doc = read_journal(tmp_path)
    samples = next(p for p in doc["probes"] if p["name"] == "reach")["samples"]
    assert any("detail" in x for x in samples)
    assert all("detail" not in x for x in samples if not x["mismatch"])
