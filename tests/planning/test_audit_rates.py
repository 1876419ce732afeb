"""Design-free audit: cables below their peers' speed or width are ``slow-link`` departures.

``rail2x2_degraded`` is real ibnetdiscover output (ibsim + OpenSM) of the
rail2x2 design with two planted departures (tests/data/importers/README.md):
``su02/node01 mlx5_0`` trained at 1xHDR (narrower) and ``su01/node01 mlx5_1``
at 4xEDR (slower), every other cable 4xHDR.  Those two, and nothing else,
must be found; a leaf-spine cable rewritten to 4xDDR in the production-style
plane likewise; the published NDR plane (every one of its 2,228 rates 4xNDR)
has none.
"""

from __future__ import annotations

from pathlib import Path

from harness.importers import load_dump
from harness.planning.audit.regular import audit_regular
from tests.importers.conftest import DATA
from tests.importers.conftest import DUMPS


def test_the_two_degraded_access_cables_and_nothing_else() -> None:
    report = audit_regular(load_dump(DUMPS / "rail2x2_degraded.ibnetdiscover"))
    assert report.kinds() == [
        ("slow-link", "su01/node01/nic1:1--su01/leaf-r1:1"),
        ("slow-link", "su02/node01/nic0:1--su02/leaf-r0:1"),
    ]
    assert report.lines() == [
        "slow link: su01/node01/nic1 port 1 -- su01/leaf-r1 port 1 runs at 4xEDR 100 Gb/s, "
        "slower than its 6 access peers' 4xHDR 200 Gb/s",
        "slow link: su02/node01/nic0 port 1 -- su02/leaf-r0 port 1 runs at 1xHDR 50 Gb/s, "
        "narrower than its 6 access peers' 4xHDR 200 Gb/s",
    ]


def test_a_ddr_cable_among_hdr_leaf_spine_cables(tmp_path: Path) -> None:
    text = (DUMPS / "prod_hdr.ibnetdiscover").read_text(encoding="utf-8")
    # leaf A09-P1-IBLEAF-01-01 port 22 -- IBSPINE-01 port 2, both ends' lines
    spine_end = '[2]\t"S-2c5eab0300b80000"[22]'
    assert text.count(spine_end) == 1
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith(spine_end) or (line.startswith('[22]\t"S-2c5eab0300c20040"[2]')):
            lines[n] = line.replace("4xHDR", "4xDDR")
    path = tmp_path / "ddr.out"
    path.write_text("\n".join(lines), encoding="utf-8")
    report = audit_regular(load_dump(path))
    assert [k for k, _ in report.kinds()] == ["slow-link"]
    (line,) = report.lines()
    assert "runs at 4xDDR 20 Gb/s, slower than its 127 leaf-spine peers' 4xHDR 200 Gb/s" in line
    assert "A09-P1-IBLEAF-01-01 port 22" in line
    assert "A10-P1-IBSPINE-01 port 2" in line


def test_a_uniform_ndr_plane_has_no_slow_link() -> None:
    report = audit_regular(
        load_dump(DATA / "third_party" / "topograph_ibnetdiscover_ndr_plane.out")
    )
    assert "slow-link" not in {k for k, _ in report.kinds()}
