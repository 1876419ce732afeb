"""The fabric drawing and the page templates without a browser: layout, marks,
aggregation, escaping, self-containment."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.presets import preset
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.planning.audit.diff import AuditReport
from harness.planning.audit.diff import DegradedLink
from harness.planning.audit.diff import WrongRail
from harness.planning.sweep.run import sweep
from harness.reporting.html.drawing import MAX_SWITCH_CELLS
from harness.reporting.html.drawing import Cell
from harness.reporting.html.drawing import Drawing
from harness.reporting.html.drawing import draw
from harness.reporting.html.figures import figure_size
from harness.reporting.html.figures import worst_classes
from harness.reporting.html.marks import Marks
from harness.reporting.html.page import ReportDir
from harness.reporting.html.page import render

SVG = "{http://www.w3.org/2000/svg}"
ACCESS = "su05/node03/nic2:1--su05/leaf-r2:3"


def _state(*faults: dict[str, object]) -> FaultState:
    f = preset("seed-a800")
    s = FaultState.healthy(f)
    for raw in faults:
        s = s.inject(Fault.parse(raw))
    return s


def test_seed_a800_is_drawn_per_server_with_bundled_cables() -> None:
    d = draw(preset("seed-a800"), Marks())
    tiers = [c.tier for c in d.cells]
    assert (tiers.count("server"), tiers.count("leaf"), tiers.count("spine")) == (200, 40, 20)
    # one line per SU and rail (40 x 20 access cables) and per SU and spine (10 x 20)
    counts = {tier: title for tier, _, title in d.healthy}
    assert counts["access"] == "800 healthy access cables in 40 bundles"
    assert counts["leaf-spine"] == "800 healthy leaf-spine cables in 200 bundles"
    assert d.highlighted == 0
    assert d.lost_cells == 0


def test_every_fault_kind_has_its_status_and_the_state_its_source() -> None:
    s = _state({"kill": "spine-01"}, {"drain": "su03/leaf-r0"}, {"cut": ACCESS},
               {"degrade": {"target": "su07/leaf-r0:21--spine-01:25", "fraction": 0.5}},
               {"kill": "su09/node04/gpu3"})  # fmt: skip
    f = s.fabric
    marks = Marks.from_faults(f, [(a, "state" if k < 2 else "change")
                                  for k, a in enumerate(s.applied)])  # fmt: skip
    d = draw(f, marks)
    marked = {(c.key, c.status, c.source) for c in d.cells if c.status}
    assert marked == {
        ("spine-01", "failed", "state"),
        ("su03/leaf-r0", "drained", "state"),
        ("su09/node04", "failed", "change"),  # a GPU is drawn in its server's cell
    }
    bundles = {(b.tier, b.status, b.source, b.cables) for b in d.bundles}
    assert bundles == {("access", "failed", "change", 20), ("leaf-spine", "degraded", "change", 4)}
    assert d.highlighted == 5
    cut = next(b for b in d.bundles if b.tier == "access")
    assert f"cut {ACCESS}" in cut.title


def test_lost_jobs_mark_their_servers() -> None:
    f = preset("seed-a800")
    jobs = resolve_jobs([JobSpec(per_su=True)], f)
    d = draw(f, Marks().with_lost(jobs, ["su02", "su10"]))
    lost = [c for c in d.cells if c.lost]
    assert len(lost) == 40
    assert {c.lost for c in lost} == {("su02",), ("su10",)}
    assert all("runs lost job(s): su" in c.title for c in lost)


def test_big_fabrics_are_aggregated() -> None:
    f = preset("b200-16su")  # 512 servers, 128 leaves, 128 spines, 64 cores
    s = FaultState.healthy(f).inject(Fault.parse({"kill": "su03/node05"}))
    d = draw(f, Marks.from_faults(f, [(a, "change") for a in s.applied]))
    servers = [c for c in d.cells if c.tier == "server"]
    assert len(servers) == 16  # one cell per SU
    assert [c.key for c in servers if c.status] == ["su03/node01 .. su03/node32 (32)"]
    assert "killed su03/node05" in next(c.title for c in servers if c.status)
    assert sum(1 for c in d.cells if c.tier == "core") == 64
    assert sum(1 for c in d.cells if c.tier == "spine") <= MAX_SWITCH_CELLS
    assert d.aggregated


def test_audit_findings_are_marked_on_the_design() -> None:
    f = preset("seed-a800")
    audit = AuditReport(
        missing_switches=("spine-07",),
        extra_switches=("spine-99",),
        missing_links=(ACCESS,),
        extra_links=(),
        degraded_links=(DegradedLink("su07/leaf-r0:21--spine-01:25", "x", 200.0, 100.0),),
        wrong_rail=(WrongRail("su04/node02/nic1", 1, "su04/leaf-r2", 2, "su04/leaf-r1", "c"),),
        matched_by_structure=(),
    )
    d = draw(f, Marks.from_audit(f, audit))
    assert {(c.key, c.status) for c in d.cells if c.status} == {
        ("spine-07", "missing"), ("su04/node02", "wrong-rail"), ("su04/leaf-r2", "wrong-rail"),
    }  # fmt: skip
    assert {(b.tier, b.status) for b in d.bundles} == {("access", "missing"),
                                                       ("leaf-spine", "degraded")}  # fmt: skip


def _drawing_with(title: str) -> Drawing:
    cell = Cell(10, 10, 20, 20, "spine", "spine-01", title, 1, "failed", "change")
    return Drawing("f<1>", 100, 100, (cell,), (), (), (), (), ())


def test_tooltips_and_names_are_escaped(tmp_path: Path) -> None:
    out = ReportDir(tmp_path)
    out.svg("x.svg", _drawing_with('<script>alert("x")</script> & more'), "a <b> caption")
    text = (tmp_path / "x.svg").read_text(encoding="utf-8")
    assert "<script>" not in text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more" in text
    root = ET.fromstring(text)  # a standalone SVG is well-formed XML
    assert root.tag == f"{SVG}svg"
    assert root.get("data-fabric") == "f<1>"
    assert root.find(f"{SVG}style") is not None  # styled on its own


def test_a_page_refers_to_nothing_off_the_directory(tmp_path: Path) -> None:
    from harness.reporting.html import write_sweep_report

    result = sweep(preset("seed-a800"), elements=["switches"])
    page = write_sweep_report(result, tmp_path / "r")
    html = page.read_text(encoding="utf-8")
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs == ["impact.png", "fabric-base.svg", "fabric-worst.svg"]
    assert "<script" not in html
    assert not re.search(r"@import|url\((?!#)", html)  # only in-page SVG patterns
    assert sorted(p.name for p in page.parent.iterdir()) == [
        "fabric-base.svg", "fabric-worst.svg", "impact.png", "index.html",
    ]  # fmt: skip
    width, height = figure_size(page.parent / "impact.png")
    assert width > 800
    assert height > 200


def test_the_worst_cases_are_named_once_per_impact() -> None:
    result = sweep(preset("seed-a800"), elements=["switches"])
    f = result.fabric
    classes = worst_classes([c for c in result.ranked() if c.jobs_lost], 3, f)
    assert [(c.label(f), n) for c, n in classes] == [("su01/leaf-r0", 40)]


def test_render_is_strict_about_missing_names() -> None:
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        render("risk.html.j2", {"kind": "risk"})


def test_the_readme_shows_the_commands_that_made_its_screenshots() -> None:
    import shlex

    from tests.report.reports import COMMANDS
    from tests.report.reports import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for kind in ("risk", "sweep", "run", "audit"):
        command = shlex.join(COMMANDS[kind])
        assert f"harness {command} --report report-{kind}\n" in readme
        assert f"![harness {kind} report](docs/img/report-{kind}.png)" in readme
        assert (ROOT / "docs" / "img" / f"report-{kind}.png").stat().st_size < 150_000
