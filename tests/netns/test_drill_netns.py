"""Drills on netns (root, torch): the leaf-loss drill with a real gloo job, observed, and the
hung-spine drills under BGP (FRR) with and without BFD.

``scenarios/drill-leaf-loss.yaml`` on a fabric emulated in network namespaces: the
job's crash is observed (gloo's own timeout) within 10 % of its timeout of the
predicted time, the abort fires on the observed crash, the rollback restores the
leaf, probes and job fates agree with the model (0 mismatches), and the host is left
as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.backends.netns.backend import NetnsBackend
from harness.backends.netns.bgp import bfd_up
from harness.run.drill.halt import HaltLever
from harness.run.drill.results import EventRecord
from harness.run.drill.runner import run_drill
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.load import load_file
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like

pytestmark = pytest.mark.privileged

REPO = Path(__file__).resolve().parents[2]


def test_the_leaf_loss_drill_aborts_at_the_observed_crash(
    state_dir: Path, host: Host, tmp_path: Path
) -> None:
    (s,) = load_file(REPO / "scenarios" / "drill-leaf-loss.yaml")
    pd = prepare_drill(s)
    be = NetnsBackend()
    lever = HaltLever()
    runs: list[str] = []

    def seen(_: object) -> None:  # the emulation's run id, while it is up
        if be.emu is not None and be.emu.ledger is not None:
            runs.append(be.emu.ledger.run_id)

    source = (REPO / "scenarios" / "drill-leaf-loss.yaml").read_text()
    r = run_drill(pd, be, routing=pd.prepared.routing, journal_dir=tmp_path / "j", lever=lever,
                  on_event=seen, source_text=source)  # fmt: skip
    assert r.status == "passed", r.reason  # it declares outcome: aborted
    assert r.reason.startswith("aborted as the drill expects: abort (train lost): observed:")
    assert r.mismatches == 0, (r.job_checks, [p.to_json() for p in r.probes])
    ((check, bad),) = r.job_checks
    assert not bad
    assert check.startswith("predicted: train crashes at t=6")
    (undo,) = r.rollback
    assert undo.status == "rolled back"
    # reachability with real packets: the su01 rail-1 pairs' echoes go unanswered while the
    # leaf is down (19 of 24 pairs reach), every sample as the model predicts it
    reach = next(p for p in r.probes if p.name == "reach")
    assert all(s.measured == s.predicted for s in reach.samples), reach.to_json()
    assert {s.measured for s in reach.samples} == {1.0, 19 / 24}
    rate = next(p for p in r.probes if p.name == "rate")
    measured = [x.measured for x in rate.samples if x.measured is not None]
    assert measured  # the real job's rate was observed
    assert max(measured) > 0.5  # moving before the leaf died
    assert measured[-1] == 0.0  # and not after
    doc = json.loads((tmp_path / "j" / "journal.json").read_text())
    assert doc["backend"] == "netns"
    assert doc["versions"]["iperf3"]
    assert lever.running() == []
    assert runs
    assert_host_like(host, sorted(set(runs)))
    # the model, replayed at the netns run's own action and abort times, predicts it all again
    from harness.cli import main

    assert main(["drill", "--replay", str(tmp_path / "j")]) == 0


def _proc_state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()[0]


@pytest.mark.needs_tools("vtysh", install="apt-get install frr")
@pytest.mark.needs_tools("nft", install="apt-get install nftables")
def test_the_hung_spine_drills_time_the_hold_timer_and_bfd_against_the_model(
    state_dir: Path, host: Host, tmp_path: Path
) -> None:
    """``scenarios/drill-hung-spine-bgp.yaml``'s netns drills on a small BGP fabric: without
    BFD the hold timer finds the hung spine 6-10 s after the hang and the real job crashes
    at its timeout, as predicted; with BFD (300 ms x 3) it is routed around in a fraction of
    that and the job lives.  While it hangs, its daemons are stopped and its namespace drops
    everything (the run's nft table, in the ledger); the reboot brings every BFD session
    back; the host is left as it was.  (This replaces test_bgp's hung-spine failover test.)"""
    path = REPO / "scenarios" / "drill-hung-spine-bgp.yaml"
    drills = [s for s in load_file(path) if "netns" in s.name]
    assert [s.name for s in drills] == [
        "drill-hung-spine-bgp-netns-without-bfd", "drill-hung-spine-bgp-netns-with-bfd"
    ]  # fmt: skip
    runs: list[str] = []
    settled: dict[str, float] = {}
    for s in drills:
        pd = prepare_drill(s)
        be = NetnsBackend()
        seen: list[str] = []

        def during(rec: EventRecord, be: NetnsBackend = be, seen: list[str] = seen) -> None:
            emu = be.emu
            if emu is None or emu.ledger is None or emu.bgp is None:
                return
            runs.append(emu.ledger.run_id)
            spine = emu.built.ns_of[emu.fabric.index["spine-01"]]
            if rec.action == "inject" and rec.status == "applied":
                assert {_proc_state(d.pid) for d in emu.bgp.daemons[spine]} == {"T"}
                tables = [e.name for e in emu.ledger.entries("nft-table")]
                assert tables == [f"{emu.ledger.run_id}_hang1"]
                assert be.engine is not None
                assert be.engine.dropping == {spine}
                seen.append("hung")
            elif rec.action in ("restore", "rollback"):
                assert be.engine is not None
                assert not be.engine.dropping
                assert all(_proc_state(d.pid) != "T" for d in emu.bgp.daemons[spine])
                if emu.bgp.bfd is not None:  # the rebooted spine's sessions are back
                    up = sum(len(bfd_up(emu.bgp.bfd_peers(ns))) for ns in emu.bgp.dirs)
                    assert up == emu.bgp.sessions == 32
                seen.append(rec.action)

        r = run_drill(pd, be, routing=pd.prepared.routing, journal_dir=tmp_path / s.name,
                      on_event=during, source_text=path.read_text())  # fmt: skip
        assert r.status == "passed", (s.name, r.reason)
        assert r.mismatches == 0, (s.name, r.job_checks, [e.to_json() for e in r.events])
        inject = next(e for e in r.events if e.action == "inject")
        assert inject.settle_s is not None
        settled[s.name] = inject.settle_s
        assert seen in (["hung", "restore"], ["hung", "rollback"]), seen
    without, with_bfd = settled.values()
    assert 6.0 <= without <= 10.0  # the hold timer: 9 s after the last keepalive (every 3 s)
    assert with_bfd < without / 3, settled  # three 300 ms intervals, then reprogramming
    assert runs
    assert_host_like(host, sorted(set(runs)))


def test_the_flow_drill_reads_iperf3_streams_kept_running_through_the_faults(
    state_dir: Path, host: Host, tmp_path: Path
) -> None:
    """``scenarios/drill-spine-loss-flows.yaml`` on netns: four iperf3 flows between the SUs
    run from the baseline to the end and are read every 0.5 s without holding the drill's
    clock.  Their measured total follows the model's fair share (800 Gb/s healthy, 400 with
    a spine dead, 400 with a rail-1 leaf dead), every flow moves where the model says it
    does and stands where it says it is cut (0 mismatches), and every stream process is
    ended by PID once the drill is over."""
    path = REPO / "scenarios" / "drill-spine-loss-flows.yaml"
    (s,) = load_file(path)
    pd = prepare_drill(s)
    be = NetnsBackend()
    runs: list[str] = []
    pids: set[int] = set()

    def seen(_: object) -> None:
        if be.emu is not None and be.emu.ledger is not None:
            runs.append(be.emu.ledger.run_id)
        if be._streams is not None:
            pids.update(h.proc.pid for st in be._streams.running.values() for h in st.held)

    r = run_drill(pd, be, routing=pd.prepared.routing, journal_dir=tmp_path / "j",
                  on_event=seen, source_text=path.read_text())  # fmt: skip
    assert r.status == "passed", r.reason
    (bulk,) = r.probes
    assert r.mismatches == 0, bulk.to_json()
    assert all(x.measured is not None for x in bulk.samples)
    # away from an action (a look lags by up to a second), measured within 15 % of predicted
    actions = [e.actual_s for e in r.events]
    steady = [x for x in bulk.samples if all(abs(x.t - a) > 1.2 for a in actions)]
    assert len(steady) >= 10
    for x in steady:
        assert x.predicted in (800.0, 400.0)
        assert abs(x.measured - x.predicted) <= 0.15 * x.predicted, x  # type: ignore[operator]
    assert {x.predicted for x in steady} == {800.0, 400.0}
    assert len(pids) == 8  # an iperf3 server and client per flow
    assert not [p for p in pids if Path(f"/proc/{p}").exists()
                and _proc_state(p) != "Z"], "iperf3 streams left running"  # fmt: skip
    assert runs
    assert_host_like(host, sorted(set(runs)))
