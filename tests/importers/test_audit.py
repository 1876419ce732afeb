"""diff_fabrics: real ibsim dumps of a broken fabric against its generated design."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from harness.exporters.ibsim import to_ibsim_net
from harness.fabric import Fabric
from harness.fabric import two_tier
from harness.importers import load_ibnetdiscover
from harness.importers import parse_ibnetdiscover
from harness.importers.ibnetdiscover import fabric_from_ibnetdiscover
from harness.planning.audit.diff import DegradedLink
from harness.planning.audit.diff import WrongRail
from harness.planning.audit.diff import diff_fabrics
from tests.importers.conftest import DUMPS


def _live(name: str) -> Fabric:
    return load_ibnetdiscover(DUMPS / f"{name}.ibnetdiscover")


def test_healthy_dump_matches_the_design(design: Fabric) -> None:
    report = diff_fabrics(_live("rail2x2"), design)
    assert report.ok
    assert report.lines() == []
    assert str(report) == "live fabric matches the design"
    assert report.matched_by_structure == ()


def test_unlinked_leaf_spine_port(design: Fabric) -> None:
    report = diff_fabrics(_live("rail2x2_unlinked"), design)
    assert report.missing_links == ("su01/leaf-r1:4--spine-02:2",)
    assert (report.extra_links, report.missing_switches, report.wrong_rail) == ((), (), ())
    assert not report.ok


def test_nic_cable_down_drops_the_hca_and_its_link(design: Fabric) -> None:
    live = _live("rail2x2_nic_down")
    assert "su02/node02/nic1" not in live.index  # the HCA is unreachable, so not in the dump
    report = diff_fabrics(live, design)
    assert report.missing_links == ("su02/node02/nic1:1--su02/leaf-r1:2",)
    assert report.lines() == ["missing link su02/node02/nic1:1--su02/leaf-r1:2"]


def test_host_cable_on_the_wrong_rails_leaf(design: Fabric) -> None:
    report = diff_fabrics(_live("rail2x2_wrong_rail"), design)
    assert report.wrong_rail == (
        WrongRail(
            nic="su01/node02/nic1", nic_rail=1, leaf="su01/leaf-r0", leaf_rail=0,
            expected="su01/leaf-r1", cable="su01/node02/nic1:1--su01/leaf-r0:5",
        ),
    )  # fmt: skip
    assert report.missing_links == ("su01/node02/nic1:1--su01/leaf-r1:2",)
    assert report.extra_links == ("su01/node02/nic1:1--su01/leaf-r0:5",)
    assert (
        "wrong rail: su01/node02/nic1 (rail 1) is cabled to su01/leaf-r0 (rail 0), "
        "expected su01/leaf-r1"
    ) in report.lines()


def test_links_at_reduced_width_or_speed(design: Fabric) -> None:
    report = diff_fabrics(_live("rail2x2_degraded"), design)
    assert report.degraded_links == (
        DegradedLink("su01/node01/nic1:1--su01/leaf-r1:1", "su01/node01/nic1:1--su01/leaf-r1:1",
                     200.0, 100.0),  # 4xEDR
        DegradedLink("su02/node01/nic0:1--su02/leaf-r0:1", "su02/node01/nic0:1--su02/leaf-r0:1",
                     200.0, 50.0),  # 1xHDR
    )  # fmt: skip
    assert (report.missing_links, report.extra_links) == ((), ())
    assert "degraded link su02/node01/nic0:1--su02/leaf-r0:1: 50 of 200 Gb/s" in report.lines()


def test_spine_powered_off(design: Fabric) -> None:
    live = _live("rail2x2_spine_down")
    report = diff_fabrics(live, design)
    assert report.missing_switches == ("spine-02",)
    assert report.missing_links == (
        "su01/leaf-r0:4--spine-02:1", "su01/leaf-r1:4--spine-02:2",
        "su02/leaf-r0:4--spine-02:3", "su02/leaf-r1:4--spine-02:4",
    )  # fmt: skip
    # the other way round, the spine is extra
    reverse = diff_fabrics(design, live)
    assert reverse.extra_switches == ("spine-02",)
    assert len(reverse.extra_links) == 4
    assert reverse.missing_switches == ()


def test_renamed_switches_are_matched_by_structure(design: Fabric) -> None:
    text = (DUMPS / "rail2x2_wrong_rail.ibnetdiscover").read_text()
    renames = {"su01/leaf-r0": "ib-a01", "su01/leaf-r1": "ib-a02", "su02/leaf-r0": "ib-b01",
               "su02/leaf-r1": "ib-b02", "spine-01": "ib-core-x",
               "spine-02": "ib-core-y"}  # fmt: skip
    for old, new in renames.items():
        text = text.replace(f'"{old}"', f'"{new}"')
    live = fabric_from_ibnetdiscover(parse_ibnetdiscover(text, "renamed"))
    assert "ib-a01" in live.index
    report = diff_fabrics(live, design)
    assert dict(report.matched_by_structure) == renames
    # findings are reported with the design's names
    assert report.wrong_rail[0].leaf == "su01/leaf-r0"
    assert report.wrong_rail[0].expected == "su01/leaf-r1"
    assert report.missing_links == ("su01/node02/nic1:1--su01/leaf-r1:2",)
    assert report.extra_links == ("su01/node02/nic1:1--su01/leaf-r0:5",)
    assert report.missing_switches == report.extra_switches == ()


def test_ports_false_ignores_replugged_ports(design: Fabric, make_nets: ModuleType) -> None:
    moved = make_nets._edit(design, rewire={"su01/leaf-r0:3--spine-01:1": ("spine-01", 7)})
    live = fabric_from_ibnetdiscover(parse_ibnetdiscover(to_ibsim_net(moved), "moved"))
    strict = diff_fabrics(live, design)
    assert strict.missing_links == ("su01/leaf-r0:3--spine-01:1",)
    assert strict.extra_links == ("su01/leaf-r0:3--spine-01:7",)
    assert diff_fabrics(live, design, ports=False).ok


def test_unknown_extra_switch_and_link_are_reported(design: Fabric) -> None:
    bigger = two_tier(sus=2, nodes_per_su=2, spines=3, leaf_radix=8, storage=False,
                      node_overrides={"rails": 2})  # fmt: skip
    report = diff_fabrics(bigger, design)
    assert report.extra_switches == ("spine-03",)
    assert len(report.extra_links) == 4
    assert all(link.endswith(tuple(f"spine-03:{p}" for p in range(1, 5)))
               for link in report.extra_links)  # fmt: skip


@pytest.mark.parametrize("name", ["rail2x2_unlinked", "rail2x2_wrong_rail", "rail2x2_degraded"])
def test_a_broken_dump_never_passes(design: Fabric, name: str) -> None:
    assert not diff_fabrics(_live(name), design).ok


def test_a_dump_with_no_cabled_server_is_bad_input_not_a_clean_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An audit that found nothing to compare must not read as "no departures" (exit 0)."""
    from harness.cli import main

    dump = tmp_path / "switch-only.ibnetdiscover"
    dump.write_text('vendid=0x2c9\nSwitch 36 "S-0002" # "lonely" enhanced port 0 lid 1\n',
                    encoding="utf-8")  # fmt: skip
    assert main(["audit", str(dump)]) == 2
    err = capsys.readouterr().err
    assert f"error: {dump}: no server NIC is cabled to a leaf" in err
    assert "give the design with --design" in err
