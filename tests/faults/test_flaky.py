"""Flaky links (``flaky``: loss both ways or one way): parsing, model semantics, measuring.

A lossy link stays up and routed, so reachability, paths and jobs are what they
were; what changes is the one-way loss a scenario can expect (``link_loss``),
and the model refuses to put a number on bandwidth through it.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from harness.backends.ibsim.backend import IbsimBackend
from harness.backends.measurement import LinkLoss
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.model import ModelBackend
from harness.backends.model_measure import predict_measurements
from harness.errors import ScenarioError
from harness.fabric import preset
from harness.fabric.generators import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.fault import FaultState
from harness.faults.fault import parse_loss
from harness.faults.text import parse_faults
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.compare import agree_fraction
from harness.observations.compare import disagreements
from harness.observations.compare import fraction_tolerance
from harness.observations.observation import Context
from harness.observations.registry import OBSERVATIONS
from harness.observations.registry import observe
from harness.run.results import ExpectResult
from harness.run.results import ScenarioResult
from harness.run.scenario import run_scenario
from harness.run.scenario import unsupported
from harness.scenario import load_file
from harness.search.reproducer import fault_to_raw

UPLINK = "su01/leaf-r0:21--spine-01:1"
SMALL_UPLINK = "su02/leaf-r3:5--spine-01:8"


def flaky(loss: object = "5%", target: object = UPLINK, **more: object) -> Fault:
    return Fault.parse({"flaky": {"target": target, "loss": loss, **more}})


def analysis(state: FaultState) -> Analysis:
    return Analysis(state.fabric, Observation.from_state(state))


# -- parsing --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "value"),
    [("5%", 0.05), ("0.5 %", 0.005), (0.25, 0.25), ("99.9%", 0.999), (1e-4, 1e-4)],
)
def test_loss_is_a_percentage_or_a_fraction(raw: object, value: float) -> None:
    assert parse_loss(raw) == pytest.approx(value)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (5, "flaky loss 5 is not a fraction: write 5% or 0.05"),
        (1, "flaky loss 1 is not a fraction: write 1% or 0.01"),
        ("0%", "between 0% and 100% (exclusive)"),
        ("100%", "between 0% and 100% (exclusive)"),
        (0, "between 0% and 100% (exclusive)"),
        (-0.1, "got -0.1"),
        ("five", "got 'five'"),
        (True, "got True"),
        (None, "got None"),
        (float("nan"), "got nan"),
    ],
)
def test_a_bad_loss_says_how_to_write_it(raw: object, words: str) -> None:
    with pytest.raises(ScenarioError, match="flaky loss") as err:
        parse_loss(raw)
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"flaky": UPLINK}, "flaky takes {target: LINKS, loss: 5%}"),
        ({"flaky": {"target": UPLINK}}, "flaky takes {target: LINKS, loss: 5%}"),
        ({"flaky": {"target": UPLINK, "loss": "5%", "to": "x"}}, "unknown key 'to'"),
        ({"flaky": {"target": UPLINK, "loss": "5%", "from": ""}}, "names one end of the links"),
        ({"flaky": {"target": UPLINK, "loss": "5%", "from": 3}}, "got 3"),
    ],
)
def test_a_bad_flaky_fault_names_the_fix(raw: object, words: str) -> None:
    with pytest.raises(ScenarioError) as err:
        Fault.parse(raw)
    assert words in str(err.value)


def test_flaky_parses_both_ways_and_one_way() -> None:
    both = flaky("2%")
    assert both.kind is FaultKind.FLAKY
    assert (both.loss, both.sender) == (0.02, None)
    assert both.describe() == f"flaky {UPLINK} losing 2% both ways"
    one = flaky(0.1, **{"from": "spine-01"})
    assert one.sender == "spine-01"
    assert one.describe() == f"flaky {UPLINK} losing 10% of the packets sent by spine-01"


def test_from_must_be_an_end_of_every_link() -> None:
    f = preset("seed-a800")
    with pytest.raises(ScenarioError) as err:
        flaky("5%", **{"from": "spine-02"}).resolve(f)
    assert str(err.value) == (
        f"flaky from: spine-02 is not an end of {UPLINK} (its ends: su01/leaf-r0, spine-01); "
        "name an end of every link the target picks, or leave from: out to lose packets both "
        "ways"
    )
    with pytest.raises(ScenarioError, match="'nope' is not an element"):
        flaky("5%", **{"from": "nope"}).resolve(f)
    # one end shared by every link the selector picks: every uplink of spine-01 in SU 1
    many = flaky("5%", {"between": ["su01/leaf-*", "spine-01"]}, **{"from": "spine-01"})
    applied = many.resolve(f)
    assert len(applied.links) == 4
    assert all(loss == (0.0, 0.05) for loss in applied.loss)  # spine-01 is every link's b end


def test_the_loader_places_bad_flaky_faults(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: s\ndescription: d\nfabric: {preset: seed-a800}\nsteps:\n"
        f"  - inject: {{flaky: {{target: '{UPLINK}', loss: 5%, form: spine-01}}}}\n"
        f"  - inject: {{flaky: {{target: '{UPLINK}', loss: 250%}}}}\n"
        "  - inject: {flaky: spine-01}\n"
        f"  - expect: {{link_loss: {{link: '{UPLINK}', is: 0}}}}\n"
    )
    with pytest.raises(ScenarioError) as err:
        load_file(path)
    text = str(err.value)
    assert "s.yaml:5:" in text
    assert "unknown key 'form' in flaky; did you mean 'from'?" in text
    assert "s.yaml:6:" in text
    assert "got '250%'" in text
    assert "s.yaml:7:" in text
    assert "flaky takes {target: SELECTOR, loss: 5%}" in text
    assert "s.yaml:8:" in text
    assert "link_loss needs argument 'from'" in text


def test_the_one_line_form_of_a_flaky_fault() -> None:
    both, one = parse_faults(f"flaky {UPLINK} 5%; flaky {UPLINK} 0.1 from=spine-01")
    assert (both.loss, both.sender) == (0.05, None)
    assert (one.loss, one.sender) == (0.1, "spine-01")
    with pytest.raises(ScenarioError, match="flaky needs how much is lost: write 'flaky TARGETS"):
        parse_faults(f"flaky {UPLINK}")
    with pytest.raises(ScenarioError, match="flaky loss 5 is not a fraction"):
        parse_faults(f"flaky {UPLINK} 5")


def test_a_flaky_fault_round_trips_through_its_yaml_form() -> None:
    for fault in (flaky("2.5%"), flaky(0.3, **{"from": "su01/leaf-r0"})):
        assert Fault.parse(fault_to_raw(fault)) == fault


# -- model semantics ------------------------------------------------------------------------
def test_a_lossy_link_stays_up_and_routed() -> None:
    f = preset("seed-a800")
    healthy = FaultState.healthy(f)
    state = healthy.inject(flaky("5%"), f)
    assert (state.element_up == healthy.element_up).all()
    assert (state.link_capacity == healthy.link_capacity).all()
    a, h = analysis(state), analysis(healthy)
    assert a.gpu_pairs_disconnected() == 0
    assert a.path("su01/node01/gpu0", "su02/node01/gpu0") == h.path(
        "su01/node01/gpu0", "su02/node01/gpu0"
    )
    assert a.leaf_uplink_ratio(None) == 1.0  # capacity: a lossy link keeps its speed


def test_loss_per_direction_compounds_and_reverts() -> None:
    f = preset("seed-a800")
    link = f.link_index[UPLINK]
    leaf, spine = f.index["su01/leaf-r0"], f.index["spine-01"]
    one_way = flaky("10%", **{"from": "spine-01"}).resolve(f)
    both = flaky("10%").resolve(f)
    state = FaultState.healthy(f).inject(one_way).inject(both)
    a = analysis(state)
    assert a.link_loss(link, spine) == pytest.approx(1 - 0.9 * 0.9)  # independent losses
    assert a.link_loss(link, leaf) == pytest.approx(0.1)
    assert a.lossy_links() == [link]
    back = state.revert(both)
    assert analysis(back).link_loss(link, leaf) == 0.0
    assert analysis(back.revert(one_way)).lossy_links() == []
    assert analysis(FaultState.healthy(f)).link_loss(link, spine) == 0.0


def test_a_down_link_loses_everything() -> None:
    f = preset("seed-a800")
    state = FaultState.healthy(f).inject(Fault.parse({"cut": UPLINK}), f)
    assert analysis(state).link_loss(f.link_index[UPLINK], f.index["spine-01"]) == 1.0


def test_link_loss_is_an_observation_with_both_ends_named() -> None:
    f = preset("seed-a800")
    a = analysis(FaultState.healthy(f).inject(flaky("5%", **{"from": "su01/leaf-r0"}), f))
    got = observe("link_loss", a, Context(), {"link": UPLINK, "from": "su01/leaf-r0"})
    assert got.value == pytest.approx(0.05)
    assert observe("link_loss", a, Context(), {"link": UPLINK, "from": "spine-01"}).value == 0
    with pytest.raises(ScenarioError) as err:
        observe("link_loss", a, Context(), {"link": UPLINK, "from": "spine-02"})
    assert "write from: su01/leaf-r0 or from: spine-01" in str(err.value)
    assert OBSERVATIONS["link_loss"].value_range == (0.0, 1.0)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("job_busbw_ratio", {}),
        ("job_busbw_gbs", {}),
        ("min_job_busbw_ratio", {}),
        ("leaf_uplink_ratio", {"leaf": "su01/leaf-r0"}),
    ],
)
def test_the_model_refuses_bandwidth_through_a_lossy_link(name: str, args: dict[str, str]) -> None:
    f = preset("seed-a800")
    jobs = resolve_jobs([JobSpec(per_su=True)], f)
    state = FaultState.healthy(f).inject(flaky("1%"), f)
    a = Analysis(f, Observation.from_state(state), jobs)
    with pytest.raises(ScenarioError) as err:
        observe(name, a, Context(), args)
    assert str(err.value).startswith(
        f"{name}: the model does not predict bandwidth through a lossy link ({UPLINK} loses 1% "
        "of its packets, flaky)"
    )
    assert "Expect link_loss, reachability and jobs_lost" in str(err.value)
    healthy = Analysis(f, Observation.from_state(FaultState.healthy(f)), jobs)
    assert observe(name, healthy, Context(), args).value > 0  # restored: a figure again


# -- agreement of a counted fraction ------------------------------------------------------------
def test_a_counted_loss_agrees_within_binomial_noise() -> None:
    rng = random.Random(7)
    n = 1000
    for p in (0.0, 0.01, 0.05, 0.2):
        misses = 0
        for _ in range(300):
            lost = sum(rng.random() < p for _ in range(n))
            misses += not agree_fraction(p, lost / n, n)
        assert misses <= 1, p  # 4 standard deviations: about 1 in 16,000
    assert not agree_fraction(0.05, 0.0, n)  # a loss that did not happen is found
    assert not agree_fraction(0.0, 0.05, n)  # and one that should not
    assert not agree_fraction(0.05, 0.10, n)  # and twice the loss
    assert agree_fraction(0.05, 0.05, 0)
    assert not agree_fraction(0.05, 0.0501, 0)
    assert fraction_tolerance(0.05, 1000) == pytest.approx(0.0281, abs=1e-4)


# -- measuring on the model ----------------------------------------------------------------------
def test_the_model_measures_the_loss_it_predicts() -> None:
    f = preset("seed-a800")
    backend = ModelBackend()
    backend.apply(f)
    backend.inject(flaky("5%", **{"from": "spine-01"}).resolve(f))
    plan = MeasurePlan(losses=((UPLINK, "spine-01"), (UPLINK, "su01/leaf-r0")))
    assert plan.kinds == {"losses"}
    assert plan.describe() == "2 one-way losses"
    m = backend.measure(plan)
    assert m.loss(UPLINK, "spine-01") == LinkLoss(UPLINK, "spine-01", pytest.approx(0.05))
    assert m.loss(UPLINK, "su01/leaf-r0") == LinkLoss(UPLINK, "su01/leaf-r0", 0.0)
    assert m.missing(plan) == []
    assert Measurements("x").missing(plan) == [
        f"loss on {UPLINK} from spine-01",
        f"loss on {UPLINK} from su01/leaf-r0",
    ]
    expected = predict_measurements(backend._current(), plan)
    assert disagreements(expected, m) == []
    counted = dataclasses.replace(
        m,
        losses=(
            LinkLoss(UPLINK, "spine-01", 0.0, 1000),
            LinkLoss(UPLINK, "su01/leaf-r0", 0.0, 1000),
        ),
    )
    assert disagreements(expected, counted) == [
        f"{UPLINK}: 0.00% of 1000 packets from spine-01 lost, the model says 5.00%"
    ]


SCENARIO = """\
name: flaky-small
description: one uplink loses 5 % of what its spine sends
backends: [model]
fabric:
  generator: two-tier
  params: {{sus: 2, nodes_per_su: 4, node: a800, spines: 4, leaf_radix: 8}}
jobs:
  - name: train
    nodes: "*"
steps:
  - inject: {{flaky: {{target: "{link}", loss: 5%, from: spine-01}}}}
    as: lossy
  - expect:
      all_gpus_connected: true
      jobs_lost: 0
      link_loss: {{link: "{link}", from: spine-01, is: "0.02..0.08"}}
  - expect:
      link_loss: {{link: "{link}", from: su02/leaf-r3, is: "< 0.01"}}
  - restore: lossy
  - expect:
      link_loss: {{link: "{link}", from: spine-01, is: 0}}
      job_busbw_ratio: 1.0
"""


class CountingBackend(ModelBackend):
    """The model, but a loss is counted over ``n`` packets drawn at random (as netns does)."""

    name = "counting"

    def __init__(self, n: int = 1000, scale: float = 1.0) -> None:
        super().__init__()
        self.n, self.scale, self.rng = n, scale, random.Random(3)

    def measure(self, plan: MeasurePlan) -> Measurements:
        m = super().measure(plan)
        counted = []
        for x in m.losses:
            lost = sum(self.rng.random() < x.loss * self.scale for _ in range(self.n))
            counted.append(LinkLoss(x.link, x.sender, lost / self.n, self.n))
        return dataclasses.replace(m, losses=tuple(counted))


def _losses(result: ScenarioResult) -> list[ExpectResult]:
    return [
        e for s in result.steps for e in s.expectations if e.observation.startswith("link_loss")
    ]


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "flaky.yaml"
    path.write_text(SCENARIO.format(link=SMALL_UPLINK))
    return path


def test_a_flaky_scenario_passes_on_the_model(tmp_path: Path) -> None:
    result = run_scenario(load_file(_scenario(tmp_path))[0], "model")
    assert result.status == "passed", result
    checks = _losses(result)
    assert [c.predicted for c in checks] == [pytest.approx(0.05), 0.0, 0.0]


def test_a_counted_loss_is_judged_by_its_sample(tmp_path: Path) -> None:
    scenario = load_file(_scenario(tmp_path))[0]
    good = run_scenario(scenario, CountingBackend())
    assert good.status == "passed"
    assert good.mismatches == [], good
    measured = _losses(good)
    assert measured[0].measured != measured[0].predicted  # a sample, not the prediction
    assert "packets sent by spine-01 lost" in measured[0].measured_detail
    bad = run_scenario(scenario, CountingBackend(scale=3.0))  # 15 % where 5 % is predicted
    assert len(bad.mismatches) == 1, bad


def test_ibsim_does_not_do_flaky_links() -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    link = next(x for x in f.link_ids if "spine-01" in x)
    applied = flaky("5%", link).resolve(f)
    assert "flaky" not in IbsimBackend.capabilities.faults
    why = unsupported(IbsimBackend(), [applied], f)
    assert why == "not supported on ibsim: fault kind 'flaky'"
