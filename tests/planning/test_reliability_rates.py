"""Rates files: the issue's example as written, every problem at once with its line."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.fabric import preset
from harness.faults.fault import FaultKind
from harness.planning.reliability.rates import MONTH_S
from harness.planning.reliability.rates import Z90
from harness.planning.reliability.rates import Rates
from harness.planning.reliability.rates import load_rates
from harness.planning.reliability.rates import parse_rates_text
from harness.planning.reliability.units import plan_units

ROOT = Path(__file__).resolve().parents[2]

ISSUE_EXAMPLE = """\
name: llama3-2024
source: "Llama 3 report, 16,384 H100, 54 days"
classes:
  - {class: access-cable, fault: cut,  select: {tier: access}, per: link,   rate_per_month: 0.00057, repair: {dist: lognormal, median: 2d, p90: 9d}}
  - {class: leaf,         fault: kill, select: {tier: leaf},   per: switch, rate_per_month: 0.00051, repair: {dist: fixed, time: 4h}}
  - {class: gpu,          fault: kill, select: {kind: gpu},    per: server, rate_per_month: 0.074,   repair: {dist: exponential, mean: 17h}}
domains:
  - {name: pdu, select: {kind: node}, group_by: [su], size: 10, rate_per_month: 0.001, repair: {dist: fixed, time: 6h}}
restart: {after: 20m, spares: true}
"""  # noqa: E501


def test_the_issue_example_is_accepted_as_written() -> None:
    r = parse_rates_text(ISSUE_EXAMPLE, "llama3.yaml")
    assert (r.name, r.source) == ("llama3-2024", "Llama 3 report, 16,384 H100, 54 days")
    cable, leaf, gpu = r.classes
    assert (cable.name, cable.fault, cable.per, cable.rate_per_month) == (
        "access-cable", FaultKind.CUT, "link", 0.00057)  # fmt: skip
    assert cable.repair.dist == "lognormal"
    assert (cable.repair.a, cable.repair.b) == (2 * 86400.0, 9 * 86400.0)
    assert cable.repair.sigma == pytest.approx(math.log(4.5) / Z90)
    assert (leaf.fault, leaf.per, leaf.repair.dist, leaf.repair.a) == (
        FaultKind.KILL, "switch", "fixed", 4 * 3600.0)  # fmt: skip
    assert (gpu.per, gpu.repair.dist, gpu.repair.mean_s) == ("server", "exponential", 17 * 3600.0)
    (pdu,) = r.domains
    assert (pdu.name, pdu.group_by, pdu.size, pdu.fault) == ("pdu", ("su",), 10, FaultKind.KILL)
    assert (r.restart.after_s, r.restart.spares) == (1200.0, True)
    assert cable.where == "llama3.yaml:4"


def test_the_issue_example_resolves_on_the_seed_cluster() -> None:
    f = preset("seed-a800")
    cable, leaf, gpu, pdu = plan_units(f, parse_rates_text(ISSUE_EXAMPLE, "x.yaml"))
    assert len(cable.units) == len(f.servers) * f.rails  # one unit per access cable
    assert len(leaf.units) == len(f.leaves)
    assert len(gpu.units) == len(f.servers)
    assert {len(u) for u in gpu.units} == {8}
    assert len(pdu.units) == 2 * f.n_sus
    assert all(len(u) == 10 for u in pdu.units)
    assert pdu.fault(f, 0).fault.describe() == (
        "kill " + " ".join(f"su01/node{k:02d}" for k in range(1, 11)))  # fmt: skip


def test_the_shipped_rates_file_is_the_issue_example_with_its_sources() -> None:
    shipped = load_rates(ROOT / "rates" / "llama3-2024.yaml")
    example = parse_rates_text(ISSUE_EXAMPLE, "x.yaml")

    def bare(r: Rates) -> tuple[object, ...]:
        return (*(replace(c, where="") for c in r.classes),
                *(replace(d, where="") for d in r.domains), r.restart)  # fmt: skip

    assert bare(shipped) == bare(example)
    assert "Llama 3" in shipped.source


BAD = """\
name: Bad Name
classes:
  - {class: cable, fault: degrade, select: {tier: acces}, per: wire, rate_per_month: -1,
     repair: {dist: lognormal, median: 9d, p90: 2d}}
  - {class: gpu, fault: kill, select: {kind: gpu}, per: server, rate_per_month: 0.07,
     repair: {dist: weibull}, colour: red}
domains:
  - {name: pdu, select: {kind: node}, group_by: [rack], size: 0, rate_per_month: 0.001,
     repair: {dist: fixed, time: soon}}
restart: {after: 20m, spares: maybe}
"""


def test_every_problem_at_once_with_its_line() -> None:
    with pytest.raises(ScenarioError) as got:
        parse_rates_text(BAD, "bad.yaml")
    lines = [(p.line, p.message) for p in got.value.problems]
    text = "\n".join(str(p) for p in got.value.problems)
    expected = [
        (1, "not a valid name"),
        (1, "needs source:"),
        (3, "fault 'degrade' is not one a rates file takes"),
        (3, "unknown tier 'acces'; did you mean 'access'?"),
        (3, "per: is the unit the rate counts"),
        (3, "rate_per_month must be a positive number"),
        (4, "p90 (2d) must be above its median (9d)"),
        (6, "repair dist: is one of fixed, exponential, lognormal, empirical"),
        (6, "unknown key 'colour' in a failure class"),
        (8, "group_by: lists keys among su, rail, node, pod, plane"),
        (8, "size: is a whole number of elements >= 1"),
        (9, "time 'soon' is not a duration"),
        (10, "spares: is true (restart on spare servers) or false"),
    ]
    for line, words in expected:
        assert any(n == line and words in m for n, m in lines), (line, words, text)
    assert all(str(p).startswith("bad.yaml:") for p in got.value.problems)


def test_problems_found_on_the_fabric_are_placed_at_their_class() -> None:
    text = """\
name: t
source: a test
classes:
  - {class: nic, fault: kill, select: {kind: nic}, per: switch, rate_per_month: 0.01,
     repair: {dist: fixed, time: 1h}}
  - {class: optic, fault: optic, select: {tier: access}, per: link, rate_per_month: 0.01,
     repair: {dist: empirical, times: [1h, 2d, 90]}}
"""
    r = parse_rates_text(text, "t.yaml")
    assert r.classes[1].repair.times == (3600.0, 172800.0, 90.0)
    with pytest.raises(ScenarioError) as got:
        plan_units(preset("seed-a800"), r)
    shown = [str(p) for p in got.value.problems]
    assert len(shown) == 2
    assert shown[0].startswith("t.yaml:4")
    assert "per: switch, but select: also picks" in shown[0]
    assert shown[1].startswith("t.yaml:6")
    assert "per: link, but its fault picks ports" in shown[1]


def test_a_month_is_a_twelfth_of_a_julian_year() -> None:
    assert pytest.approx(365.25 * 86400) == MONTH_S * 12


def test_a_failure_applies_what_resolving_its_target_gives() -> None:
    f = preset("seed-a800")
    text = ISSUE_EXAMPLE.replace(
        "domains:",
        """\
  - {class: optic, fault: optic, select: {tier: leaf-spine}, per: port, rate_per_month: 0.01,
     repair: {dist: fixed, time: 1h}}
  - {class: spine, fault: drain, select: {tier: spine}, per: switch, rate_per_month: 0.01,
     repair: {dist: fixed, time: 1h}}
domains:""",
    )
    for src in plan_units(f, parse_rates_text(text, "x.yaml")):
        for target in (0, len(src.units) - 1):
            unit = target if src.together else src.units[target][0]
            applied = src.fault(f, unit)
            assert applied == applied.fault.resolve(f), src.name
