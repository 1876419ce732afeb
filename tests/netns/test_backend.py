"""The netns backend on the protocol (root): every netns scenario, measured, 0 mismatches."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends import make_backend
from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import sample_pairs
from harness.backends.model_measure import predict_measurements
from harness.backends.netns.backend import NetnsBackend
from harness.fabric.generators import two_tier
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.compare import disagreements
from harness.run.scenario import run_scenario
from harness.scenario.load import load_file
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like

pytestmark = pytest.mark.privileged

SCENARIOS = sorted(Path(__file__).parents[2].joinpath("scenarios").glob("netns-*.yaml"))


def test_at_least_six_netns_scenarios() -> None:
    names = {p.stem for p in SCENARIOS}
    assert len(names) >= 6
    for path in SCENARIOS:
        for sc in load_file(path):
            assert "netns" in sc.backends


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_netns_scenario_measured_without_mismatch(path: Path) -> None:
    for sc in load_file(path):
        result = run_scenario(sc, "netns")
        assert result.status == "passed", result.to_dict()
        measured = [
            e.measured for s in result.steps for e in s.expectations if e.measured_by == "netns"
        ]
        assert measured, "nothing was measured: the verdict would be the model's"


def test_a_fault_the_model_does_not_know_of_is_a_disagreement(host: Host) -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    be = NetnsBackend()
    with be:
        be.apply(f)
        assert be.emu is not None
        rid = be.emu.ledger.run_id if be.emu.ledger else ""
        plan = MeasurePlan(probes=sample_pairs(f, None, 0), links=f.link_ids[:0])
        healthy = Analysis(f, Observation.from_state(FaultState.healthy(f)))
        assert disagreements(predict_measurements(healthy, plan), be.measure(plan)) == []
        be.inject(Fault.parse({"kill": "su01/leaf-r0"}).resolve(f))  # the model is not told
        be.settle(30)
        bad = disagreements(predict_measurements(healthy, plan), be.measure(plan))
        assert bad
        assert "su01/node01/nic0" in " ".join(bad)
    assert_host_like(host, [rid])


def test_unsupported_fault_is_a_skip_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "gpu.yaml"
    path.write_text(
        "name: gpu-kill\ndescription: a GPU cannot die in a namespace\nbackends: [netns]\n"
        "fabric: {generator: two-tier, params: {sus: 1, nodes_per_su: 2, spines: 1,"
        " leaf_radix: 8}}\nsteps:\n  - inject: {kill: su01/node01/gpu0}\n"
        "  - expect: {elements_down: 1}\n"
    )
    (sc,) = load_file(path)
    result = run_scenario(sc, make_backend("netns"))
    assert result.status == "skipped"
    assert "not supported on netns" in result.error
