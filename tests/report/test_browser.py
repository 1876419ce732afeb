"""Every report type rendered by a real headless chromium (Debian's, through Playwright).

Each test writes a report through the command line, loads it from ``file://`` with
the network off (the context is offline and every non-file request is aborted and
recorded), and checks: no console or page errors, no request attempted, every
figure decoded (natural size > 0), the fabric drawings with the expected number of
highlighted elements and lost-job servers, the verdict and the lost jobs as text.
A screenshot of each page is written under the test's tmp path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.report.browser import CHROMIUM
from tests.report.browser import PageCheck
from tests.report.browser import open_page
from tests.report.reports import make_report

FAILED_RGB = "rgb(214, 39, 40)"
DRAINED_RGB = "rgb(255, 127, 14)"

pytestmark = pytest.mark.needs_tools(CHROMIUM, install="apt-get install -y chromium")


def _load(
    chromium: Any, page: Path, tmp_path: Path, name: str, *, images: bool = True
) -> PageCheck:
    check = open_page(chromium, page, screenshot=tmp_path / f"{name}.png")
    assert check.console_errors == []
    assert check.page_errors == []
    assert check.blocked_requests == []  # nothing but file:// was requested
    assert check.failed_requests == []
    assert bool(check.images) == images, "the page shows figures"
    for src, width, height in check.images:
        assert width > 0, f"{src} did not decode"
        assert height > 0, f"{src} did not decode"
    for svg in check.svgs:
        assert svg["width"] > 300
        assert svg["height"] > 80
        assert svg["highlighted"] == svg["declared"]
        assert svg["lost"] == svg["declaredLost"]
    assert check.screenshot is not None
    assert check.screenshot.stat().st_size > 20_000
    return check


def test_risk_report(chromium: Any, tmp_path: Path) -> None:
    check = _load(chromium, make_report("risk", tmp_path / "risk"), tmp_path, "risk")
    assert check.report == "risk"
    assert check.verdict == "ok"
    assert "WITHIN BUDGET" in check.text
    # before: the --state faults (leaf su02/leaf-r1 killed, one uplink degraded);
    # after: plus spine-03 and su04/leaf-r2 drained
    before, after = check.svgs
    assert sorted(zip(before["statuses"], before["sources"], strict=True)) == [
        ("degraded", "state"), ("failed", "state"),
    ]  # fmt: skip
    assert sorted(zip(after["statuses"], after["sources"], strict=True)) == [
        ("degraded", "state"), ("drained", "change"), ("drained", "change"), ("failed", "state"),
    ]  # fmt: skip
    # su02's 20 servers before; su02's and su04's after
    assert before["lost"] == 20
    assert after["lost"] == 40
    # the change is drawn solid in its colour, the state hatched
    assert after["filled"].count(DRAINED_RGB) == 2
    assert any(fill.startswith("url(") for fill in after["filled"])
    assert "su04" in check.text
    assert "lost by the change" in check.text
    assert "already lost before the change" in check.text
    assert "N+1: single further failures that would break the budget" in check.text


def test_sweep_report(chromium: Any, tmp_path: Path) -> None:
    check = _load(chromium, make_report("sweep", tmp_path / "sweep"), tmp_path, "sweep")
    assert check.report == "sweep"
    assert [src for src, _, _ in check.images] == ["impact.png"]
    base, worst = check.svgs
    # the base state: the --state faults, su02 lost; the worst case adds one failure
    assert base["highlighted"] == 2
    assert base["lost"] == 20
    assert worst["highlighted"] == 3
    assert worst["lost"] == 40
    assert worst["sources"].count("change") == 1
    assert "Already lost in the base state: su02" in check.text
    assert "LOSE A JOB" in check.text


def test_sweep_report_depth_2_has_the_pair_matrix(chromium: Any, tmp_path: Path) -> None:
    from harness.cli import main

    out = tmp_path / "sweep2"
    argv = ["sweep", "seed-a800", "--depth", "2", "--elements", "switches", "--report", str(out)]
    assert main(argv) == 0
    check = _load(chromium, out / "index.html", tmp_path, "sweep-depth2")
    assert [src for src, _, _ in check.images] == ["impact.png", "pairs.png"]
    assert "Pairs of failures (depth 2)" in check.text
    base, worst = check.svgs
    assert base["highlighted"] == 0  # healthy base
    # the worst pair: two leaves of two SUs, 2 jobs lost
    assert worst["highlighted"] == 2
    assert worst["statuses"] == ["failed", "failed"]
    assert worst["filled"] == [FAILED_RGB, FAILED_RGB]
    assert worst["lost"] == 40


def test_the_offline_check_sees_a_request_to_the_network(chromium: Any, tmp_path: Path) -> None:
    """The check the report tests rely on: a page that asks for anything off
    ``file://`` has the request aborted and recorded (so an empty list means none)."""
    page = tmp_path / "remote.html"
    page.write_text(
        '<!DOCTYPE html><html><body><img src="https://example.invalid/x.png">'
        '<script src="http://example.invalid/x.js"></script></body></html>',
        encoding="utf-8",
    )
    check = open_page(chromium, page)
    assert sorted(check.blocked_requests) == [
        "http://example.invalid/x.js",
        "https://example.invalid/x.png",
    ]
    assert check.images == [("https://example.invalid/x.png", 0, 0)]


def test_run_report(chromium: Any, tmp_path: Path) -> None:
    check = _load(chromium, make_report("run", tmp_path / "run"), tmp_path, "run", images=False)
    assert check.report == "run"
    assert check.verdict == "passed"
    assert "seed-leaf-loss-kills-its-su-job" in check.text
    assert "seed-drain-vs-kill" in check.text
    # seed-drain-vs-kill: drain spine-05, kill it, drain su04/leaf-r2 -- three drawings, one
    # mark each; the drained leaf loses su04 (20 servers); the restores leave it healthy
    drain_vs_kill = [s for s in check.svgs if s["caption"].startswith("seed-drain-vs-kill")]
    assert [s["statuses"] for s in drain_vs_kill] == [["drained"], ["failed"], ["drained"]]
    assert [s["lost"] for s in drain_vs_kill] == [0, 0, 20]
    assert "The fabric is healthy again." in check.text
    assert "lost 1 of 10 jobs: su04" in check.text


def test_drill_report(chromium: Any, tmp_path: Path) -> None:
    check = _load(chromium, make_report("drill", tmp_path / "drill"), tmp_path, "drill")
    assert check.report == "drill"
    assert check.verdict == "passed"
    assert len(check.images) == 5  # one timeline per drill
    for name in ("drill-leaf-loss", "drill-hung-spine-bgp-without-bfd",
                 "drill-hung-spine-bgp-with-bfd", "drill-hung-spine-bgp-netns-without-bfd",
                 "drill-hung-spine-bgp-netns-with-bfd"):  # fmt: skip
        assert name in check.text
    assert "aborted as the drill expects" in check.text
    assert "refused: the model predicts it breaks jobs_lost 0" in check.text
    assert "killed su01/leaf-r1" in check.text


def test_run_report_shows_a_failed_expectation(chromium: Any, tmp_path: Path) -> None:
    from harness.cli import main

    scenario = tmp_path / "wrong.yaml"
    scenario.write_text(
        "name: wrong-claim\ndescription: a claim that does not hold\n"
        "fabric: {preset: seed-a800}\njobs: [{per-su: true}]\n"
        "steps:\n  - inject: {kill: su03/leaf-r1}\n  - expect: {jobs_lost: 0}\n",
        encoding="utf-8",
    )
    assert main(["run", str(scenario), "--report", str(tmp_path / "r"), "--quiet"]) == 1
    check = _load(chromium, tmp_path / "r" / "index.html", tmp_path, "run-failed", images=False)
    assert check.verdict == "failed"
    assert "FAILED" in check.text
    assert "stalled 1 of 10 jobs: su03" in check.text
    assert "su03 crashed at t=34.36 s" in check.text
    (drawing,) = check.svgs
    assert drawing["statuses"] == ["failed"]
    assert drawing["lost"] == 20


def test_audit_report_against_a_design(chromium: Any, tmp_path: Path) -> None:
    check = _load(chromium, make_report("audit", tmp_path / "audit"), tmp_path, "audit")
    assert check.report == "audit"
    assert check.verdict == "bad"
    assert "3 FINDING(S)" in check.text
    assert "wrong rail" in check.text
    assert "su01/node02/nic1 (rail 1) on su01/leaf-r0 (rail 0), expected su01/leaf-r1" in check.text
    findings, design, live = check.svgs
    # the NIC's server and the leaf it reaches in pink, the design cable it lacks missing
    assert sorted(findings["statuses"]) == ["missing", "wrong-rail", "wrong-rail"]
    # NCCL carries the wrong-rail NIC's rail-1 traffic over the spines: su01 is not lost
    assert findings["lost"] == 0
    assert design["highlighted"] == 0
    assert live["statuses"] == []  # the cable is moved, not cut: nothing failed
    assert "lost by the live state" not in check.text


def test_audit_report_without_a_design(chromium: Any, tmp_path: Path) -> None:
    out = tmp_path / "inferred"
    check = _load(chromium, make_report("audit-inferred", out), tmp_path, "audit-inferred",
                  images=False)  # fmt: skip
    assert "5 FINDING(S)" in check.text
    (findings,) = check.svgs
    # leaf-uplinks x2 and a missing HCA on the subjects the live fabric has, the swapped
    # NICs' server; the missing spine has no place in the drawing and is listed
    assert sorted(findings["statuses"]) == ["missing", "missing", "missing", "wrong-rail"]
    assert "not drawn: missing spine: A10-P1-IBSPINE-02" in (out / "index.html").read_text(
        encoding="utf-8"
    )


def test_run_report_shows_predicted_beside_measured(
    chromium: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a backend that measures, each expectation shows the model's prediction beside the
    measurement, and a disagreement is a MISMATCH (a finding), counted in the summary."""
    import harness.run.scenario
    from harness.cli import main
    from tests.backends.backend_fakes import LyingBackend

    scenario = tmp_path / "liar.yaml"
    scenario.write_text(
        "name: liar\ndescription: The spine goes; one NIC's packets go with it on this backend.\n"
        "backends: [model, netns]\n"
        "fabric:\n  generator: two-tier\n"
        "  params: {sus: 2, nodes_per_su: 2, spines: 2, leaf_radix: 8, storage: false}\n"
        "jobs: [{per-su: true}]\n"
        "steps:\n  - inject: {kill: spine-01}\n  - expect: {islands: 1, jobs_lost: 0}\n",
        encoding="utf-8",
    )
    liar = LyingBackend("su02/node01/nic0", after=1)
    monkeypatch.setattr(harness.run.scenario, "make_backend", lambda _name: liar)
    assert main(["run", str(scenario), "--report", str(tmp_path / "r"), "--quiet"]) == 1
    check = _load(chromium, tmp_path / "r" / "index.html", tmp_path, "run-mismatch", images=False)
    assert check.verdict == "failed"
    text = " ".join(check.text.split())
    assert "1 with a mismatch (1 measured otherwise than predicted)" in text
    assert "expectation expected predicted measured verdict detail" in text
    assert "islands 1 1 2 on lying MISMATCH" in text  # the backend measured two islands
    assert "jobs_lost 0 0 0 on lying PASSED" in text
