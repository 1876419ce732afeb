"""Names that are not names never produce numbering rules (issue 22).

The committed production-style HDR planes (ibsim + OpenSM + ibnetdiscover)
are rewritten the way real dumps come: switch descriptions left at the vendor
default (``"SwitchIB Mellanox Technologies"``, no ``MF0;<name>``), so the only
ids are node GUIDs; or names that number nothing.  The design-free audit must
then find the departures the wiring shows, and no "missing spine" from the
GUIDs' digits; its header says which rules it used and why.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.importers import load_dump
from harness.importers import notes_of
from harness.planning.audit.regular import audit_regular
from tests.importers.conftest import DUMPS

HEALTHY = (DUMPS / "prod_hdr.ibnetdiscover").read_text(encoding="utf-8")
BROKEN = (DUMPS / "prod_hdr_broken.ibnetdiscover").read_text(encoding="utf-8")
MF0 = re.compile(r'"MF0;[^"]*"')


def written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "desc", ["SwitchIB Mellanox Technologies", "Quantum Mellanox Technologies"]
)
def test_a_healthy_plane_of_nameless_switches_has_no_departure(tmp_path: Path, desc: str) -> None:
    # before: 20,097 "missing spine" lines read off the GUIDs' trailing digits
    live = load_dump(written(tmp_path, "plane.out", MF0.sub(f'"{desc}"', HEALTHY)))
    assert all(live.ids[s].startswith("S-") for s in live.spines)
    report = audit_regular(live)
    assert report.ok, report.lines()
    assert report.design.spines == 4
    rules = [ln for ln in report.design.lines() if ln.startswith("rule: ")]
    assert rules == [
        "rule: spine numbering not used: the spines are known by node GUIDs only (their "
        "descriptions name no switch)",
        "rule: dark uplink ports used: a run of 2 leaf port(s) dark on most leaves inside the "
        "uplink port range is a missing spine (wiring)",
    ]


def test_nameless_switches_still_show_what_the_wiring_shows(tmp_path: Path) -> None:
    # the five planted departures: the missing spine (IBSPINE-02, on leaf ports 23-24)
    # is found by its dark ports alone, named by those ports since nothing names it
    live = load_dump(written(tmp_path, "broken.out", MF0.sub('"SwitchIB Mellanox Technologies"',
                                                              BROKEN)))  # fmt: skip
    report = audit_regular(live)
    assert [k for k, _ in report.kinds()] == [
        "missing-spine", "leaf-uplinks", "leaf-uplinks", "swapped-nics", "missing-hca",
    ]  # fmt: skip
    assert report.kinds()[0] == ("missing-spine", "spine on leaf ports 23-24")
    assert report.design.spines == 4


def test_names_that_number_nothing_give_no_numbering_rule(tmp_path: Path) -> None:
    # spines named IBSPINE-01, -40, -80, -99: 95 "gaps" among 4 spines is no scheme
    numbers = {"01": "01", "02": "40", "03": "80", "04": "99"}
    text = re.sub(r"IBSPINE-0(\d)", lambda m: f"IBSPINE-{numbers['0' + m.group(1)]}", HEALTHY)
    report = audit_regular(load_dump(written(tmp_path, "odd.out", text)))
    assert report.ok, report.lines()
    assert report.design.lines()[2] == (
        "rule: spine numbering not used: numbers 1..99 would leave 95 gaps among 4 spines "
        "(not a numbering)"
    )
    # two schemes (a renamed spine) number nothing either
    mixed = HEALTHY.replace("A10-P1-IBSPINE-03", "ib-sw-7")
    report = audit_regular(load_dump(written(tmp_path, "mixed.out", mixed)))
    assert report.ok, report.lines()
    assert "share no scheme" in report.design.lines()[2]


def test_a_real_numbering_is_used_and_said_so() -> None:
    report = audit_regular(load_dump(DUMPS / "prod_hdr_broken.ibnetdiscover"))
    assert report.kinds()[0] == ("missing-spine", "A10-P1-IBSPINE-02")
    assert report.design.lines()[2] == (
        "rule: spine numbering used: the 3 spines present are numbered A10-P1-IBSPINE-01 .. "
        "A10-P1-IBSPINE-04 in one scheme (a gap is a missing spine)"
    )


def test_a_vendor_default_description_is_no_name_even_when_unique(tmp_path: Path) -> None:
    text = HEALTHY.replace('"MF0;A10-P1-IBSPINE-03:MQM8700/U1"', '"Quantum Mellanox Technologies"')
    live = load_dump(written(tmp_path, "one.out", text))
    spines = sorted(live.ids[s] for s in live.spines)
    assert spines == ["A10-P1-IBSPINE-01", "A10-P1-IBSPINE-02", "A10-P1-IBSPINE-04",
                      "S-2c5eab0300c200c0"]  # fmt: skip
    assert (
        "1 switch(es) carry no name (description 'Quantum Mellanox Technologies'): known by "
        "their node ids, roles from the wiring" in notes_of(live)
    )
    report = audit_regular(live)
    assert report.ok, report.lines()
    assert "1 of 4 spines are known by node GUIDs only" in report.design.lines()[2]


def test_hcas_that_carry_no_name_read_without_error(tmp_path: Path) -> None:
    # every HCA left at the ConnectX default: before, the GUID's digits became node
    # numbers ("node 730300850000 > MAX_ID", exit 2)
    hca = re.compile(
        r'"(?:[ab]0\d-p1-dgx-[^"]*|(?:localhost|ubuntu) [^"]*|MT4129 ConnectX7 +[^"]*)"'
    )
    text = hca.sub('"MT25408 ConnectX Mellanox Technologies"', HEALTHY)
    assert '"MT25408 ConnectX Mellanox Technologies"' in text
    assert "dgx" not in text
    live = load_dump(written(tmp_path, "unnamed.out", text))
    assert len(live.nics) == 64
    numbers = sorted(int(live.node_no[s]) for s in live.servers)
    assert max(numbers) <= len(numbers)  # positions, not GUID digits
    assert audit_regular(live).ok
