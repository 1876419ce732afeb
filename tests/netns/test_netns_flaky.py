"""Flaky links on netns (root): nftables loss on the right device only, measured, reverted,
written to the ledger first, gone after SIGKILL + ``harness clean``; under sm and bgp."""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.ledger import clean
from harness.backends.ledger import run_ids
from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import sample_pairs
from harness.backends.netns import frr
from harness.backends.netns import nsutil
from harness.backends.netns.backend import NetnsBackend
from harness.backends.netns.bgp import Bgp
from harness.backends.netns.nft import LEDGER_KIND
from harness.backends.netns.nft import LossRules
from harness.backends.netns.nft import parse_tables
from harness.backends.netns.nft import threshold
from harness.backends.netns.routing import compute
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.observations.compare import agree_fraction
from harness.run.scenario import run_scenario
from harness.scenario.load import load_file
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like
from tests.netns.conftest import start_runner

pytestmark = pytest.mark.privileged

SCENARIOS = Path(__file__).parents[2] / "scenarios"
LINK = "su01/leaf-r0:3--spine-01:1"  # leaf end: port 3 of su01/leaf-r0; spine end: port 1
LEAF, SPINE = "su01/leaf-r0", "spine-01"


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False, name="flaky")


@pytest.fixture(scope="module")
def be(fabric: Fabric) -> Iterator[NetnsBackend]:
    with NetnsBackend() as backend:
        backend.apply(fabric)
        backend.settle(30)
        yield backend


def _flaky(f: Fabric, loss: str, sender: str | None = None) -> AppliedFault:
    body: dict[str, object] = {"target": LINK, "loss": loss}
    if sender is not None:
        body["from"] = sender
    return Fault.parse({"flaky": body}).resolve(f)


def _rules(be: NetnsBackend) -> LossRules:
    assert be.engine is not None
    return be.engine._rules or LossRules(be.engine.emu)


def _everywhere(be: NetnsBackend) -> dict[str, dict[str, tuple[str, int]]]:
    """Every namespace of the emulation -> the loss tables the kernel lists there."""
    assert be.emu is not None
    rules = _rules(be)
    names = be.emu.built.namespaces
    listed = {names[ns].name: rules.listed(ns) for ns in range(len(names))}
    return {ns: tables for ns, tables in listed.items() if tables}


def _ns_name(be: NetnsBackend, element: str) -> str:
    assert be.emu is not None
    plan = be.emu.built
    return plan.namespaces[plan.ns_of[plan.fabric.index[element]]].name


def _losses(be: NetnsBackend) -> dict[str, tuple[float, int]]:
    got = be.measure(MeasurePlan(losses=((LINK, LEAF), (LINK, SPINE)))).losses
    return {x.sender: (x.loss, x.sent) for x in got}


def test_one_way_loss_is_an_ingress_drop_on_the_far_end_only(
    be: NetnsBackend, fabric: Fabric
) -> None:
    assert _everywhere(be) == {}
    fault = _flaky(fabric, "10%", SPINE)  # what the spine sends is lost at the leaf
    be.inject(fault)
    try:
        be.settle(30)
        tables = _everywhere(be)
        assert list(tables) == [_ns_name(be, LEAF)], tables
        ((name, where),) = tables[_ns_name(be, LEAF)].items()
        assert where == ("p3", threshold(0.1)) == ("p3", 1000)
        assert be.emu is not None
        assert be.emu.ledger is not None
        assert name.startswith(f"{be.emu.ledger.run_id}_loss")
        loss = _losses(be)
        assert loss[SPINE][1] == loss[LEAF][1] == 1000
        assert agree_fraction(0.1, loss[SPINE][0], 1000), loss
        assert 0.05 < loss[SPINE][0] < 0.15, loss
        assert loss[LEAF][0] <= 0.004, loss  # the other way: nothing lost
        # the link stays up, at its rate, and routed: every pair still reaches every pair
        (state,) = be.measure(MeasurePlan(links=(LINK,))).links
        assert state.up
        assert state.gbps == pytest.approx(fabric.link_capacity[fabric.link_index[LINK]])
        probes = be.measure(MeasurePlan(probes=sample_pairs(fabric, None, 0))).probes
        assert all(p.ok for p in probes), [p for p in probes if not p.ok][:3]
    finally:
        be.revert(fault)
    be.settle(30)
    assert _everywhere(be) == {}  # the revert deleted its table
    after = _losses(be)
    assert after[SPINE][0] <= 0.004, after


def test_overlapping_faults_compound_and_revert_one_by_one(
    be: NetnsBackend, fabric: Fabric
) -> None:
    one_way = _flaky(fabric, "10%", LEAF)
    both = _flaky(fabric, "20%")
    be.inject(one_way)
    be.inject(both)
    try:
        be.settle(30)
        tables = _everywhere(be)
        assert {ns: sorted(t.values()) for ns, t in tables.items()} == {
            _ns_name(be, SPINE): [("p1", 1000), ("p1", 2000)],
            _ns_name(be, LEAF): [("p3", 2000)],
        }
        loss = _losses(be)
        assert agree_fraction(1 - 0.9 * 0.8, loss[LEAF][0], 1000), loss  # 28 %: independent
        assert agree_fraction(0.2, loss[SPINE][0], 1000), loss
        be.revert(both)
        be.settle(30)
        assert {ns: list(t.values()) for ns, t in _everywhere(be).items()} == {
            _ns_name(be, SPINE): [("p1", 1000)]
        }
        loss = _losses(be)
        assert agree_fraction(0.1, loss[LEAF][0], 1000), loss
        assert agree_fraction(0.0, loss[SPINE][0], 1000), loss
    finally:
        be.revert(one_way)
    assert _everywhere(be) == {}


def test_a_down_link_loses_every_datagram(be: NetnsBackend, fabric: Fabric) -> None:
    cut = Fault.parse({"cut": LINK}).resolve(fabric)
    be.inject(cut)
    try:
        be.settle(30)
        loss = _losses(be)
        assert loss[LEAF][0] == loss[SPINE][0] == 1.0, loss
    finally:
        be.revert(cut)
    be.settle(30)
    assert _losses(be)[LEAF][0] <= 0.004


def test_the_table_is_in_the_ledger_before_nft_runs(
    be: NetnsBackend, fabric: Fabric, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert be.emu is not None
    ledger = be.emu.ledger
    assert ledger is not None
    seen: list[tuple[list[str], set[str]]] = []
    real = LossRules._run

    def spy(self: LossRules, ns: int, argv: list[str], script: str = "") -> str:
        creating = {
            line.split()[2] for line in script.splitlines() if line.startswith("table netdev ")
        }
        if creating:
            seen.append((argv, creating - {e.name for e in ledger.entries(LEDGER_KIND)}))
        return real(self, ns, argv, script)

    monkeypatch.setattr(LossRules, "_run", spy)
    fault = _flaky(fabric, "5%")
    be.inject(fault)
    be.revert(fault)
    assert len(seen) == 2  # one nft run per receiving namespace (both ends)
    assert all(missing == set() for _, missing in seen), seen  # every table recorded first
    entries = ledger.entries(LEDGER_KIND)[-2:]
    assert {(e.data["netns"], e.data["device"]) for e in entries} == {
        (_ns_name(be, LEAF), "p3"),
        (_ns_name(be, SPINE), "p1"),
    }
    nft_runs = [e for e in ledger.entries("process") if "nft" in e.data.get("what", "")]
    assert nft_runs  # nft itself is a process of the run, in its ledger before it ran


def test_a_link_that_stays_in_the_model_is_not_supported(fabric: Fabric) -> None:
    pcie = next(x for x in fabric.link_ids if "gpu0--" in x and "pcie" in x)
    fault = Fault.parse({"flaky": {"target": pcie, "loss": "5%"}}).resolve(fabric)
    with NetnsBackend() as be:
        assert "flaky" in be.capabilities.faults
        assert be.capabilities.unsupported(fault, fabric) == f"flaky of a pcie link ({pcie})"


_RUNNER = textwrap.dedent(
    """
    import time
    from harness.backends.netns.backend import NetnsBackend
    from harness.fabric.generators import two_tier
    from harness.faults.fault import Fault
    f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    be = NetnsBackend()
    be.apply(f)
    link = next(x for x in f.link_ids if "spine-01" in x)
    be.inject(Fault.parse({"flaky": {"target": link, "loss": "5%"}}).resolve(f))
    print(be.emu.ledger.run_id, flush=True)
    time.sleep(60)
    """
)


def test_sigkill_with_a_flaky_link_then_clean_leaves_the_host_as_it_was(
    state_dir: Path, host: Host, tmp_path: Path
) -> None:
    proc, rid = start_runner(_RUNNER, tmp_path)
    lossy = [n for n in nsutil.list_netns() if n.startswith(f"{rid}-")]
    listed = {}
    for name in lossy:
        out = subprocess.run(
            ["ip", "netns", "exec", name, "nft", "list", "ruleset", "netdev"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        listed.update(parse_tables(out))
    assert len(listed) == 2, listed  # both ends of the link
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    report = clean()  # what `harness clean` runs
    removed = " ".join(report.removed[rid])
    assert all(f"nft table {t} (with netns {rid}-" in removed for t in listed), removed
    assert_host_like(host, [rid])
    assert run_ids() == []


# -- the scenarios, under both control planes ----------------------------------------------------
def test_flaky_scenarios_pass_on_bgp() -> None:
    for stem in ("netns-flaky-uplink", "netns-flaky-one-way"):
        (sc,) = load_file(SCENARIOS / f"{stem}.yaml")
        result = run_scenario(sc, "netns", routing=RoutingOverride.control("bgp"))
        assert result.status == "passed", result.to_dict()
        assert result.routing == Routing("bgp")
        assert not result.mismatches
        losses = [
            e for s in result.steps for e in s.expectations if e.observation.startswith("link_loss")
        ]
        assert losses
        assert all(e.measured_by == "netns" for e in losses)


def _dropped(bgp: Bgp) -> int:
    """BGP sessions every live bgpd has seen drop so far."""
    total = 0
    for ns in bgp.dirs:
        summary = json.loads(frr.vtysh(bgp.dirs[ns], ["show bgp summary json"], daemon="bgpd"))
        for family in summary.values():
            if isinstance(family, dict):
                total += sum(
                    int(p.get("connectionsDropped", 0)) for p in family.get("peers", {}).values()
                )
    return total


def test_bgp_sessions_stay_up_over_a_5_percent_lossy_link() -> None:
    """The sessions over a lossy link stay up (TCP retransmits; keepalives every 3 s, hold
    9 s).  BFD is left out: with another emulation on the other core its 300 ms sessions
    flap from load alone (docs/netns.md has what BFD did over a lossy link, measured alone)."""
    f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False, name="flakybgp")
    with NetnsBackend() as be:
        be.apply(f, routing=Routing("bgp"))
        be.settle(90)
        assert be.emu is not None
        bgp = be.emu.bgp
        assert bgp is not None
        dropped = _dropped(bgp)
        fault = Fault.parse({"flaky": {"target": LINK, "loss": "5%"}}).resolve(f)
        be.inject(fault)
        be.settle(60)  # the FIBs still hold every route, over the lossy link too
        time.sleep(12)  # four keepalives, more than a hold time
        assert _dropped(bgp) == dropped
        engine = be.engine
        assert engine is not None  # every FIB still holds the healthy tables, the link's too
        bgp.converge(compute(be.emu.built, engine.alive()), engine.live_switches(), 10)
        be.revert(fault)
