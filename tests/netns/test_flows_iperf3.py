"""iperf3 flows on netns (root): the rates the model predicts, at the scale factor.

The flows that fill one leaf's uplinks (two spines: two flows) carry the
healthy capacity in fabric units; degrading one of the two uplinks to half
leaves 0.75 of it, as the model says; nothing is left running afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.measurement import MeasurePlan
from harness.backends.model_measure import predict_flows
from harness.backends.netns.backend import NetnsBackend
from harness.backends.processes import process_alive
from harness.fabric.generators import two_tier
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.plans import uplink_flow_group
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like

pytestmark = pytest.mark.privileged

FABRIC = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False, name="flows")


def test_a_degraded_uplink_leaves_the_ratio_the_model_predicts(state_dir: Path, host: Host) -> None:
    healthy_state = FaultState.healthy(FABRIC)
    healthy = Analysis(FABRIC, Observation.from_state(healthy_state))
    group = uplink_flow_group(healthy, FABRIC.index["su01/leaf-r0"])
    assert len(group.pairs) == 2
    uplink = next(x for x in FABRIC.link_ids if x.startswith("su01/leaf-r0:") and "spine" in x)
    degrade = Fault.parse({"degrade": {"target": uplink, "fraction": 0.5}}).resolve(FABRIC)
    slow = Analysis(FABRIC, Observation.from_state(healthy_state.inject(degrade)))
    be = NetnsBackend()
    with be:
        be.apply(FABRIC)
        be.settle(30)
        plan = MeasurePlan(flows=(group,), flow_seconds=2.0)
        before = be.measure(plan)
        be.inject(degrade)
        be.settle(30)
        after = be.measure(plan)
        assert be.emu is not None
        assert be.emu.ledger is not None
        led, rid = be.emu.ledger, be.emu.ledger.run_id
        iperf = [e for e in led.entries("process") if "iperf3" in e.data["what"]]
    want_before = sum(x.gbps for x in predict_flows(healthy, group, 2.0))
    want_after = sum(x.gbps for x in predict_flows(slow, group, 2.0))
    got_before = sum(x.gbps for x in before.flows)
    got_after = sum(x.gbps for x in after.flows)
    assert before.scale == 0.001
    assert want_before == 400.0  # two 200 Gb/s NICs: fabric units, not the shaped 200 Mb/s
    assert 0.85 * want_before <= got_before <= 1.02 * want_before, before.flows
    assert want_after / want_before == 0.75
    assert got_after / got_before == pytest.approx(0.75, abs=0.06), (before.flows, after.flows)
    assert all(f.seconds >= 1.0 for f in after.flows)
    assert len(iperf) == 8  # a server and a client per flow, twice, all in the ledger first
    assert not any(process_alive(int(e.name), e.data["start_ticks"]) for e in iperf)
    assert_host_like(host, [rid])
