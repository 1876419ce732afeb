"""A pre-change risk check keeps time: a kill stalls the running jobs for the reroute, a drain
does not (issue 10 item 3: "a kill is survived only when the reroute is faster than the job's
timeout, a drain always is").

The model's clock (``harness.invariants.timeline``) decides: a job whose timeout is no longer
than the control plane's ``reroute`` crashes when a kill, cut or optic takes a link its traffic
uses, even though it stays connected; the N+1 margin treats every further failure as unplanned.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.routing import DEFAULT
from harness.fabric.routing import Routing
from harness.planning.risk import assess
from harness.reporting.risk_json import to_json

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "fabrics" / "lab-2su.yaml"
Capsys = pytest.CaptureFixture[str]


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


@functools.cache
def seed_jobs() -> tuple[Job, ...]:
    """A cross-SU job with a 0.5 s timeout, a cross-SU one with the default, a one-SU one."""
    specs = [
        JobSpec(name="impatient", nodes=("su0[1-2]/*",), timeout=0.5),
        JobSpec(name="patient", nodes=("su0[3-4]/*",)),
        JobSpec(name="one-su", nodes=("su05/*",), timeout=0.5),
    ]
    return tuple(resolve_jobs(specs, seed()))


def risk(change: str, routing: Routing = DEFAULT, **kw: object) -> dict[str, object]:
    report = assess(seed(), seed_jobs(), change, "jobs_lost=0", margin=False, routing=routing,
                    **kw)  # type: ignore[arg-type]  # fmt: skip
    return to_json(report)


def test_a_kill_crashes_a_job_whose_timeout_the_reroute_outlasts() -> None:
    # spine-01 carries the destinations at the first port of each leaf (ftree's first up
    # group): the ring's su01 -> su02 flows end at su02/node01, so they cross it
    doc = risk("kill spine-01")
    assert doc["ok"] is False
    after = doc["after"]
    assert isinstance(after, dict)
    assert after["jobs_lost"] == ["impatient"]  # connected, but crashed while rerouting
    assert after["reasons"] == [
        "impatient: the reroute takes 1 s, as long as its timeout (0.5 s) or longer"
    ]
    assert after["job_busbw_ratio"]["impatient"] == 0.0
    assert after["job_busbw_ratio"]["patient"] == pytest.approx(1.0)  # 34.4 s > 1 s: survives
    assert after["job_busbw_ratio"]["one-su"] == 1.0  # its traffic never reaches a spine
    assert after["gpu_pairs_disconnected"] == 0  # nothing is cut off: time alone loses it


def test_a_kill_stalls_only_the_jobs_whose_routed_flows_cross_what_died() -> None:
    # static tables: spine-03 carries no destination of the impatient job's flows (its ring
    # and trees cross SUs at a few ranks only): its kill stalls nothing, whatever the leaves
    doc = risk("kill spine-03")
    assert doc["ok"] is True
    assert doc["after"]["jobs_lost"] == []  # type: ignore[index]
    adaptive = risk("kill spine-03", dataclasses.replace(DEFAULT, forwarding="adaptive"))
    assert adaptive["after"]["jobs_lost"] == ["impatient"]  # type: ignore[index]


def test_the_same_spine_drained_loses_nothing() -> None:
    doc = risk("drain spine-03")
    assert doc["ok"] is True
    assert doc["after"]["jobs_lost"] == []  # type: ignore[index]


def test_a_reroute_faster_than_the_timeout_is_survived() -> None:
    doc = risk("kill spine-03", dataclasses.replace(DEFAULT, reroute=0.4))
    assert doc["ok"] is True
    assert doc["routing"] == {"control": "sm", "forwarding": "static", "paths": "up-down",
                              "engine": "ftree", "reroute": "0.4s", "link_up": "3s",
                              "sweep": "10s"}  # fmt: skip


def test_a_slow_bgp_reroute_crashes_the_default_timeout_too() -> None:
    # a hung switch under BGP without BFD: the hold timer, ~9 s; NCCL 2.14-2.22's 8.6 s window
    jobs = tuple(resolve_jobs([JobSpec(name="nccl-2.18", nodes=("su0[1-2]/*",), timeout=8.6)],
                              seed()))  # fmt: skip
    slow = Routing(control="bgp", reroute=9.0)
    r = assess(seed(), jobs, "kill spine-07", "jobs_lost=0", margin=False, routing=slow)
    assert r.added.jobs_lost == ("nccl-2.18",)
    fast = dataclasses.replace(slow, reroute=0.5)  # with BFD
    assert assess(seed(), jobs, "kill spine-07", "jobs_lost=0", margin=False,
                  routing=fast).ok  # fmt: skip


def test_a_job_lost_before_the_change_is_not_crashed_again() -> None:
    r = assess(seed(), seed_jobs(), "kill spine-03", "jobs_lost=0", state="kill su01/leaf-r0",
               margin=False)  # fmt: skip
    assert r.before.jobs_lost == ("impatient",)  # cut off already: not the change's loss
    assert r.added.jobs_lost == ()
    assert r.ok


def test_paths_come_from_the_routing() -> None:
    # su01/leaf-r0 keeps spines 1-10, su02/leaf-r0 spines 11-20: only a valley joins them
    jobs = tuple(resolve_jobs([JobSpec(name="j", nodes=("su0[1-2]/*",))], seed()))
    state = ("cut: {between: [su01/leaf-r0, 'spine-1[1-9]']}; "
             "cut: {between: [su01/leaf-r0, spine-20]}; "
             "cut: {between: [su02/leaf-r0, 'spine-0[1-9]']}; "
             "cut: {between: [su02/leaf-r0, spine-10]}")  # fmt: skip
    updown = assess(seed(), jobs, "drain spine-05", "jobs_lost=0", state=state, margin=False)
    assert updown.before.jobs_lost == ("j",)
    shortest = assess(seed(), jobs, "drain spine-05", "jobs_lost=0", state=state, margin=False,
                      routing=Routing(paths="shortest"))  # fmt: skip
    assert shortest.before.jobs_lost == ()


# -- the N+1 margin: every further failure is unplanned ------------------------------------
FABRIC = """name: lab-4-spines
description: lab-2su with four spines, so a leaf keeps three uplinks after a drain
generator: two-tier
params: {sus: 2, nodes_per_su: 4, node: a800, spines: 4, leaf_radix: 8}
"""


def run_cli(capsys: Capsys, tmp_path: Path, argv: list[str], code: int,
            timeout: str = "0.5s") -> dict[str, object]:  # fmt: skip
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(f'- {{name: train, nodes: "*", timeout: {timeout}}}\n', encoding="utf-8")
    fabric = tmp_path / "lab.yaml"
    fabric.write_text(FABRIC, encoding="utf-8")
    got = main(["risk", str(fabric), "--jobs", str(jobs), "--json", *argv])
    out, err = capsys.readouterr()
    assert got == code, err
    doc: dict[str, object] = json.loads(out)
    return doc


def test_cli_kill_vs_drain_exit_codes(capsys: Capsys, tmp_path: Path) -> None:
    killed = run_cli(capsys, tmp_path, ["--change", "kill spine-01"], 1)
    assert killed["added"]["jobs_lost"] == ["train"]  # type: ignore[index]
    drained = run_cli(capsys, tmp_path, ["--change", "drain spine-01"], 0)
    assert drained["added"]["jobs_lost"] == []  # type: ignore[index]
    survived = run_cli(capsys, tmp_path, ["--change", "kill spine-01", "--reroute", "200ms"], 0)
    assert survived["routing"]["reroute"] == "0.2s"  # type: ignore[index]


def test_cli_margin_counts_further_failures_as_reroutes(capsys: Capsys, tmp_path: Path) -> None:
    fragile = run_cli(capsys, tmp_path, ["--change", "drain spine-01"], 0)
    patient = run_cli(capsys, tmp_path, ["--change", "drain spine-01"], 0, timeout="34.4s")
    for doc in (fragile, patient):
        assert isinstance(doc["margin_after"], dict)
    f_cat = fragile["margin_after"]["by_category"]  # type: ignore[index]
    p_cat = patient["margin_after"]["by_category"]  # type: ignore[index]
    # a spine the job's traffic uses: only the 0.5 s job crashes while rerouting
    assert p_cat["spine"] == {"breaking": 0, "of": 3}
    assert f_cat["spine"] == {"breaking": 3, "of": 3}
    # a leaf-spine cable the job's traffic uses: only the 0.5 s job crashes while rerouting
    assert p_cat["cable (leaf-spine)"]["breaking"] == 0
    assert f_cat["cable (leaf-spine)"]["breaking"] == f_cat["cable (leaf-spine)"]["of"] > 0
    top = fragile["margin_after"]["top"]  # type: ignore[index]
    cable = next(c for c in top if c["category"] == "cable (leaf-spine)")
    assert cable["jobs_lost"] == ["train"]


def test_bad_reroute_is_bad_input(capsys: Capsys, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text('- {name: train, nodes: "*"}\n', encoding="utf-8")
    got = main(["risk", str(LAB), "--jobs", str(jobs), "--change", "kill spine-01",
                "--reroute", "soon"])  # fmt: skip
    assert got == 2
    assert "--reroute 'soon' is not a duration" in capsys.readouterr().err


def test_the_fabric_file_s_routing_sets_the_reroute(capsys: Capsys, tmp_path: Path) -> None:
    fabric = tmp_path / "fast.yaml"
    fabric.write_text(FABRIC + "routing: {reroute: 100ms}\n", encoding="utf-8")
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text('- {name: train, nodes: "*", timeout: 0.5s}\n', encoding="utf-8")
    assert main(["risk", str(fabric), "--jobs", str(jobs), "--change", "kill spine-01"]) == 0
    out = capsys.readouterr().out
    routing = "routing: control sm, forwarding static, paths up-down, engine ftree, reroute 0.1s"
    assert routing in out
    # the command line wins over the file
    argv = [
        "risk",
        str(fabric),
        "--jobs",
        str(jobs),
        "--change",
        "kill spine-01",
        "--reroute",
        "1s",
    ]
    assert main(argv) == 1
    assert "train: the reroute takes 1 s, as long as its timeout (0.5 s)" in capsys.readouterr().out


def test_the_sweep_routes_by_the_fabric_file_s_paths(capsys: Capsys, tmp_path: Path) -> None:
    # su01/leaf-r0 keeps spines 1-2, su02/leaf-r0 spines 2-3: spine-02 is the one shared spine
    state = ("cut: {between: [su01/leaf-r0, 'spine-0[34]']}; "
             "cut: {between: [su02/leaf-r0, 'spine-0[14]']}")  # fmt: skip
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text('- {name: train, nodes: "*"}\n', encoding="utf-8")
    lost = {}
    for paths in ("up-down", "shortest"):
        fabric = tmp_path / f"{paths}.yaml"
        fabric.write_text(FABRIC + f"routing: {{paths: {paths}}}\n", encoding="utf-8")
        argv = ["sweep", str(fabric), "--jobs", str(jobs), "--state", state, "--json"]
        assert main(argv) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["routing"] == {"paths": paths, "forwarding": "static", "reroute_s": 1.0}
        lost[paths] = {r["case"] for r in doc["rows"] if r["jobs_lost"]}
    # without spine-02 only a valley (down to another leaf and up again) joins the two leaves
    assert "spine-02" in lost["up-down"]
    assert "spine-02" not in lost["shortest"]
    assert lost["shortest"] < lost["up-down"]
