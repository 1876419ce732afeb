"""A drill on netns (root, torch): the leaf-loss drill with a real gloo job, observed.

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
from harness.run.drill.halt import HaltLever
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
