"""A scenario's ``reroute`` belongs to its control plane (model backend, no root).

``scenarios/referee-slow-reroute.yaml`` says ``routing: {control: sm, reroute: 8s}``:
run as it is, the 8 s sweep crashes its 5 s job; with ``--routing bgp`` the
fabric would be routed by FRR, whose reroute is its own, so the run says it
is not run rather than judge FRR by the subnet manager's 8 s.
"""

from __future__ import annotations

from pathlib import Path

from harness.fabric.routing import RoutingOverride
from harness.run.scenario import run_scenario
from harness.scenario.load import load_file

SCENARIOS = Path(__file__).parents[2] / "scenarios"


def test_a_scenario_stating_an_sm_reroute_is_not_judged_under_bgp() -> None:
    (sc,) = load_file(SCENARIOS / "referee-slow-reroute.yaml")
    ran = run_scenario(sc, "model")
    assert ran.status == "passed"
    assert ran.routing.reroute == 8.0
    lost = [e for s in ran.steps for e in s.expectations if e.observation == "jobs_lost_names"]
    assert lost[0].observed == ["train"]
    skipped = run_scenario(sc, "model", routing=RoutingOverride.control("bgp"))
    assert skipped.status == "skipped"
    assert skipped.error == (
        "not run with routing control bgp: it states reroute 8s for control sm; "
        "control bgp reroutes as its own control plane does"
    )


def test_a_scenario_on_the_default_reroute_runs_under_either_control() -> None:
    (sc,) = load_file(SCENARIOS / "referee-drain-vs-kill.yaml")
    for over in (None, RoutingOverride.control("bgp")):
        result = run_scenario(sc, "model", routing=over)
        assert result.status == "passed", result.to_dict()
