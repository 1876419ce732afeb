"""State files, jobs files and live dumps turned into faults on the design."""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.fault import FaultState
from harness.faults.selectors import Selector
from harness.faults.state_file import load_jobs
from harness.faults.state_file import load_state_file
from harness.importers import load_dump
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.planning.audit.diff import AuditReport
from harness.planning.audit.diff import DegradedLink
from harness.planning.audit.diff import diff_fabrics
from harness.planning.audit.faults import faults_from_audit
from harness.planning.audit.rewire import rewired
from harness.planning.audit.rewire import wrong_rail_effects

DUMPS = Path(__file__).resolve().parents[1] / "data" / "importers"


@functools.cache
def rail2x2() -> Fabric:
    """The design the rail2x2 ibsim dumps mirror (tests/data/importers/README.md)."""
    return two_tier(
        sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False,
        node_overrides={"rails": 2}, name="rail2x2",
    )  # fmt: skip


def write(tmp_path: Path, text: str, name: str = "state.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def kill(*ids: str) -> Fault:
    return Fault(FaultKind.KILL, Selector(ids=ids))


def cut(*ids: str) -> Fault:
    return Fault(FaultKind.CUT, Selector(ids=ids))


# -- state files ------------------------------------------------------------------------


def test_state_file_in_scenario_syntax(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        # what is already broken
        - kill: su02/leaf-r1
        - drain: [spine-01, spine-02]
        - degrade: {target: su01/leaf-r0:21--spine-01:1, fraction: 0.5}
        - optic: spine-03:7
        """)  # fmt: skip
    faults = load_state_file(path)
    assert faults == [
        kill("su02/leaf-r1"),
        Fault.parse({"drain": ["spine-01", "spine-02"]}),
        Fault.parse({"degrade": {"target": "su01/leaf-r0:21--spine-01:1", "fraction": 0.5}}),
        Fault(FaultKind.OPTIC, Selector(ids=("spine-03:7",))),
    ]
    assert faults[2].fraction == 0.5


def test_state_file_reports_every_problem_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        - kill: su02/leaf-r1

        - kil: spine-01
        - drain: {bogus: 1}
        - degrade: {target: x}
        """)  # fmt: skip
    with pytest.raises(ScenarioError) as info:
        load_state_file(path)
    problems = info.value.problems
    assert [(p.path, p.line, p.column) for p in problems] == [
        (str(path), 3, 3), (str(path), 4, 3), (str(path), 5, 3),
    ]  # fmt: skip
    assert problems[0].message.startswith("unknown fault kind 'kil'; did you mean 'kill'?")
    assert "unknown selector key 'bogus'" in problems[1].message
    assert problems[2].message.startswith("degrade needs exactly one of 'fraction'")
    assert str(info.value).splitlines()[0].startswith(f"{path}:3:3: unknown fault kind 'kil'")


@pytest.mark.parametrize("text", ["", "kill: su02/leaf-r1\n", "just words\n"])
def test_state_file_must_be_a_list(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_state_file(path)
    assert str(info.value) == (
        f"{path}:1:1: a state file is a YAML list, e.g. '- kill: su02/leaf-r1'"
    )


def test_state_file_that_is_not_yaml_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "- kill: su02/leaf-r1\n- kill: [spine-01\n- drain: x\n")
    with pytest.raises(ScenarioError) as info:
        load_state_file(path)
    (problem,) = info.value.problems
    assert problem.path == str(path)
    assert problem.line == 3
    assert problem.message.startswith("YAML syntax error: ")


def test_missing_state_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ScenarioError) as info:
        load_state_file(path)
    assert str(info.value) == f"{path}: cannot read the state file: file not found; check the path"


def test_state_faults_apply_to_the_design(tmp_path: Path) -> None:
    path = write(tmp_path, "- kill: su02/leaf-r1\n- cut: su01/leaf-r0:3--spine-01:1\n")
    state = FaultState.healthy(rail2x2())
    for fault in load_state_file(path):
        state = state.inject(fault)
    f = rail2x2()
    assert not state.element_up[f.index["su02/leaf-r1"]]
    assert state.link_capacity[f.link_index["su01/leaf-r0:3--spine-01:1"]] == 0


# -- jobs files -------------------------------------------------------------------------


def test_jobs_per_su_shorthand() -> None:
    assert load_jobs("per-su") == [JobSpec(per_su=True)]


def test_jobs_file(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        - {name: train, nodes: "su01/*"}
        - name: eval
          nodes: [su02/node01, su02/node02]
          failover: port
        - per-su: true
        """, "jobs.yaml")  # fmt: skip
    assert load_jobs(str(path)) == [
        JobSpec("train", ("su01/*",)),
        JobSpec("eval", ("su02/node01", "su02/node02"), failover="port"),
        JobSpec(per_su=True),
    ]


def test_jobs_file_problems_have_lines(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        - {name: train, nodes: "su01/*"}
        - {name: b, node: x}
        - {name: c, nodes: x, failover: always}
        """, "jobs.yaml")  # fmt: skip
    with pytest.raises(ScenarioError) as info:
        load_jobs(str(path))
    assert str(info.value).splitlines() == [
        f"{path}:2:3: unknown job key 'node'; did you mean 'nodes'? "
        "(known: name, nodes, per-su, failover, timeout, collectives, ranks)",
        f"{path}:3:3: failover is 'none' or 'port', got 'always'",
    ]


def test_missing_jobs_file(tmp_path: Path) -> None:
    with pytest.raises(
        ScenarioError, match=r"jobs.yaml: cannot read the jobs file: file not found"
    ):
        load_jobs(str(tmp_path / "jobs.yaml"))


# -- live dumps as faults ---------------------------------------------------------------


def audit(name: str) -> tuple[list[Fault], list[str]]:
    report = diff_fabrics(load_dump(DUMPS / f"{name}.ibnetdiscover"), rail2x2())
    return faults_from_audit(rail2x2(), report)


def test_clean_dump_is_no_fault() -> None:
    assert audit("rail2x2") == ([], [])


def test_missing_cable_is_cut() -> None:
    assert audit("rail2x2_unlinked") == ([cut("su01/leaf-r1:4--spine-02:2")], [])
    assert audit("rail2x2_nic_down") == ([cut("su02/node02/nic1:1--su02/leaf-r1:2")], [])


def test_missing_switch_is_killed_and_its_cables_cut() -> None:
    faults, notes = audit("rail2x2_spine_down")
    assert faults == [
        kill("spine-02"),
        cut("su01/leaf-r0:4--spine-02:1"),
        cut("su01/leaf-r1:4--spine-02:2"),
        cut("su02/leaf-r0:4--spine-02:3"),
        cut("su02/leaf-r1:4--spine-02:4"),
    ]
    assert notes == []
    state = FaultState.healthy(rail2x2())
    for fault in faults:  # killing a switch and cutting its cables is harmless twice over
        state = state.inject(fault)
    assert not state.element_up[rail2x2().index["spine-02"]]


def test_slow_cables_are_degraded_to_the_live_fraction() -> None:
    faults, notes = audit("rail2x2_degraded")
    assert notes == []
    assert [(f.kind, f.target, f.fraction) for f in faults] == [
        (FaultKind.DEGRADE, Selector(ids=("su01/node01/nic1:1--su01/leaf-r1:1",)), 0.5),
        (FaultKind.DEGRADE, Selector(ids=("su02/node01/nic0:1--su02/leaf-r0:1",)), 0.25),
    ]


def test_wrong_rail_moves_the_design_cable_and_cuts_nothing() -> None:
    """NCCL uses a wrong-rail NIC for its rail over the spines: not a cut, a moved cable."""
    faults, notes = audit("rail2x2_wrong_rail")
    assert (faults, notes) == ([], [])
    report = diff_fabrics(load_dump(DUMPS / "rail2x2_wrong_rail.ibnetdiscover"), rail2x2())
    live = rewired(rail2x2(), report.wrong_rail)
    assert set(live.link_ids) - set(rail2x2().link_ids) == {"su01/node02/nic1:1--su01/leaf-r0:5"}
    assert set(rail2x2().link_ids) - set(live.link_ids) == {"su01/node02/nic1:1--su01/leaf-r1:2"}
    assert int(live.rail[live.index["su01/node02/nic1"]]) == 1  # the NIC keeps its rail
    jobs = resolve_jobs([JobSpec(per_su=True), JobSpec(name="all", nodes=("su*/*",))], live)
    effects = wrong_rail_effects(rail2x2(), live, jobs[:1], report.wrong_rail)
    # su01's one rail-1 flow between its two servers fits in a leaf's uplink: full bandwidth
    assert [(e.job, e.lost, e.ratio) for e in effects] == [("su01", False, 1.0)]
    effects = wrong_rail_effects(rail2x2(), live, jobs[2:], report.wrong_rail)
    # over both SUs, su01/leaf-r0 now sends rail-1 flows up too: its uplinks halve the ring
    assert [(e.job, e.lost, e.ratio) for e in effects] == [("all", False, 0.5)]
    assert effects[0].line() == (
        "su01/node02/nic1 is cabled to rail 0's leaf su01/leaf-r0: its rail-1 traffic crosses "
        "the spines, job all runs at 0.5 of its bandwidth"
    )


def test_wrong_rail_without_an_up_down_route_loses_the_job() -> None:
    """No live spine above both leaves: the moved NIC cannot reach its rail, the job is lost."""
    report = diff_fabrics(load_dump(DUMPS / "rail2x2_wrong_rail.ibnetdiscover"), rail2x2())
    design = rail2x2()
    ups = [lid for lid in design.link_ids if lid.startswith("su01/leaf-r0:")
           and "spine" in lid]  # fmt: skip
    # su01/leaf-r0 keeps only its spine-01 uplinks, su01/leaf-r1 only its spine-02 ones
    cut_ups = [lid for lid in ups if "spine-02" in lid] + [
        lid for lid in design.link_ids
        if lid.startswith("su01/leaf-r1:") and "spine-01" in lid
    ]  # fmt: skip
    live = rewired(design, report.wrong_rail)
    state = FaultState.healthy(live).inject(cut(*cut_ups))
    jobs = resolve_jobs([JobSpec(per_su=True)], live)
    a = Analysis(live, Observation.from_state(state), jobs)
    assert a.jobs_lost() == ["su01"]
    # the two rail-1 NICs of su01 (one on each leaf) cannot reach each other; of two equal
    # groups the verdict names the first
    assert (
        "(rail 1) cannot reach the job's other NICs: no up-down route"
        in (a.judge(jobs[0]).reasons[0])
    )
    effects = wrong_rail_effects(design, live, jobs[:1], report.wrong_rail)
    assert [(e.job, e.lost) for e in effects] == [("su01", False)]  # healthy otherwise: it runs


def test_what_the_design_does_not_have_is_noted_not_modelled() -> None:
    report = AuditReport(
        missing_switches=(),
        extra_switches=("lab/leaf-x",),
        missing_links=("no-such-cable", "su01/leaf-r1:4--spine-02:2"),
        extra_links=(),
        degraded_links=(
            DegradedLink("su01/node01/nic0:1--su01/leaf-r0:1", "live-id", 200.0, 400.0),  # faster
            DegradedLink("not-a-design-cable", "live-id", 200.0, 100.0),
        ),
        wrong_rail=(),
        matched_by_structure=(),
    )
    faults, notes = faults_from_audit(rail2x2(), report)
    assert faults == [cut("su01/leaf-r1:4--spine-02:2")]
    assert notes == [
        "missing link no-such-cable is not a design cable id; not modelled",
        "extra switch lab/leaf-x is not in the design; not modelled",
    ]
