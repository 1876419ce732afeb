"""Production-style ibnetdiscover dumps: Aggregation Nodes, unnamed HCAs, the design-free audit.

``prod_hdr*.ibnetdiscover`` are real ibnetdiscover output of ibsim nets written
by ``make_nets.py:production_net`` (see tests/data/importers/README.md); the
broken one has exactly five planted departures.  ``third_party/topograph_ibnetdiscover_
ndr_plane.out`` is a real NDR plane dump published by NVIDIA (Topograph's test data).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from types import ModuleType

import pytest

from harness.cli import main
from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.importers import load_dump
from harness.importers import load_ibnetdiscover
from harness.importers import notes_of
from harness.importers import parse_ibnetdiscover
from harness.importers.hosts import describe
from harness.importers.ibnetdiscover import aggregation_nodes
from harness.importers.ibnetdiscover import fabric_from_ibnetdiscover
from harness.planning.audit.regular import Departure
from harness.planning.audit.regular import audit_regular
from harness.planning.audit.regular import infer_design
from tests.importers.conftest import DUMPS
from tests.importers.conftest import THIRD_PARTY

PROD = DUMPS / "prod_hdr.ibnetdiscover"
BROKEN = DUMPS / "prod_hdr_broken.ibnetdiscover"
REAL = THIRD_PARTY / "topograph_ibnetdiscover_ndr_plane.out"

SERVERS = [
    "a01-p1-dgx-01-c01", "a01-p1-dgx-01-c02", "a02-p1-dgx-02-c01", "a02-p1-dgx-02-c02",
    "a02-p1-dgx-02-c03", "b03-p1-dgx-03-c01", "b03-p1-dgx-03-c04", "b04-p1-dgx-04-c04",
    "unnamed-su01-p03", "unnamed-su01-p04", "unnamed-su02-p04", "unnamed-su03-p02",
    "unnamed-su03-p03", "unnamed-su04-p01", "unnamed-su04-p02", "unnamed-su04-p03",
]  # fmt: skip

PLANTED = [
    ("missing-spine", "A10-P1-IBSPINE-02"),
    ("leaf-uplinks", "A09-P1-IBLEAF-03-01"),
    ("leaf-uplinks", "B09-P1-IBLEAF-02-03"),
    ("swapped-nics", "a02-p1-dgx-02-c03"),
    ("missing-hca", "unnamed-su04-p02"),
]


def _servers(f: Fabric) -> list[str]:
    return sorted(f.ids[i] for i in f.servers.tolist())


def _by_su(f: Fabric) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for i in f.servers.tolist():
        out.setdefault(int(f.su[i]), []).append(f.ids[i])
    return {su: sorted(v) for su, v in sorted(out.items())}


# -- reading ------------------------------------------------------------------------------
def test_describe_reads_mlx5_and_hca_numbering() -> None:
    rx = re.compile(r"^(?P<host>.+?)[\s/]+(?:(?:mlx\d+_|nic|ib)(?P<index>\d+)|HCA-(?P<hca>\d+))$")
    assert describe("a08-p1-dgx-04-c01 mlx5_5", rx) == ("a08-p1-dgx-04-c01", 5)
    assert describe("a06-p1-dgx-02-c01 HCA-6", rx) == ("a06-p1-dgx-02-c01", 5)  # 1-based
    assert describe("MT4129 ConnectX7   Mellanox Technologies", rx) is None


def test_aggregation_nodes_are_left_out_with_a_note() -> None:
    topo = parse_ibnetdiscover(PROD.read_text(), str(PROD))
    agg = aggregation_nodes(topo)
    assert len(agg) == 20  # one per switch: 16 leaves + 4 spines
    assert all(len(rules) == 3 for rules in agg.values())
    f = load_ibnetdiscover(PROD)
    assert f.summary()["nics"] == 64  # 16 servers x 4 rails; no Aggregation Node among them
    assert not any("Aggregation" in i for i in f.ids)
    assert notes_of(f)[0] == (
        "20 SHARP Aggregation Node(s) left out of the compute fabric (20 by description, 20 by "
        "device id 0xcf09, 20 by system image GUID = a switch's GUID); they sit on 20 "
        "switch(es), one each"
    )
    # the switch port that held it is not a cable of the model
    assert all(int(f.link_a_port[i]) != 41 and int(f.link_b_port[i]) != 41
               for i in range(f.n_links))  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "rule"),
    [
        ({'"Mellanox Technologies Aggregation Node"': '"sharp-an"'},
         ("device id 0xcf09", "system image GUID = a switch's GUID")),
        ({'"Mellanox Technologies Aggregation Node"': '"sharp-an"', "devid=0xcf09": "devid=0x1"},
         ("system image GUID = a switch's GUID",)),
    ],
)  # fmt: skip
def test_each_aggregation_node_rule_is_enough_alone(
    edit: dict[str, str], rule: tuple[str, ...]
) -> None:
    text = PROD.read_text()
    for old, new in edit.items():
        text = text.replace(old, new)
    topo = parse_ibnetdiscover(text, "edited")
    agg = aggregation_nodes(topo)
    assert len(agg) == 20
    assert all(rules == rule for rules in agg.values())
    assert fabric_from_ibnetdiscover(topo).summary()["nics"] == 64


def test_unnamed_hcas_are_grouped_into_the_true_servers() -> None:
    f = load_ibnetdiscover(PROD)
    s = f.summary()
    assert (s["nodes"], s["sus"], s["rails"], s["leaves"], s["spines"]) == (16, 4, 4, 16, 4)
    assert _servers(f) == SERVERS
    assert _by_su(f) == {
        1: ["a01-p1-dgx-01-c01", "a01-p1-dgx-01-c02", "unnamed-su01-p03", "unnamed-su01-p04"],
        2: ["a02-p1-dgx-02-c01", "a02-p1-dgx-02-c02", "a02-p1-dgx-02-c03", "unnamed-su02-p04"],
        3: ["b03-p1-dgx-03-c01", "b03-p1-dgx-03-c04", "unnamed-su03-p02", "unnamed-su03-p03"],
        4: ["b04-p1-dgx-04-c04", "unnamed-su04-p01", "unnamed-su04-p02", "unnamed-su04-p03"],
    }
    # every server has its four HCAs, each cabled to the leaf of its rail on one port
    access = f.links_of_kind(LinkKind.ACCESS).tolist()
    assert len(access) == 64
    for li in access:
        nic, leaf = int(f.link_a[li]), int(f.link_b[li])
        assert int(f.rail[nic]) == int(f.rail[leaf])
        assert int(f.su[int(f.parent[nic])]) == int(f.su[leaf])
    notes = notes_of(f)
    rules = {
        "unnamed-su03-p03": "rule: shared system image GUID",
        "unnamed-su01-p03": "unset descriptions ('MT4129 ConnectX7   Mellanox Technologies')",
        "unnamed-su01-p04": "placeholder descriptions ('localhost HCA-1', 'localhost HCA-2'",
        "unnamed-su03-p02": "placeholder descriptions ('ubuntu mlx5_0'",
        "unnamed-su04-p01": "shared descriptions ('b04-p1-dgx-04-c01 mlx5_0'",
        "unnamed-su04-p03": "shared descriptions ('b04-p1-dgx-04-c01 mlx5_0'",
    }
    for server, text in rules.items():
        (note,) = [n for n in notes if n.startswith(f"server {server}:")]
        assert text in note
    wired = [n for n in notes if "rule: same port of the rail leaves" in n]
    assert len(wired) == 7  # each server inferred from the wiring has one note naming its rule


def test_hca_n_and_mlx5_n_name_the_same_rails() -> None:
    f = load_ibnetdiscover(PROD)
    # HCA-1,2,5,6 (group 1) and mlx5_0,1,4,5 (group 2) are the same four rails
    for host in ("a01-p1-dgx-01-c01", "a02-p1-dgx-02-c01"):
        leaves = {}
        for r in range(4):
            nic = f.index[f"{host}/nic{r}"]
            (li,) = [i for i in f.links_at(nic).tolist() if f.link_kind[i] == LinkKind.ACCESS]
            leaves[r] = f.ids[f.other_end(li, nic)]
        g = host[11:13]
        assert leaves == {r: f"A09-P1-IBLEAF-{r + 1:02d}-{g}" for r in range(4)}


@pytest.mark.parametrize(
    "name",
    [
        "prod_hdr_broken.ports",  # ibnetdiscover -p: one line per port
        "prod_hdr_broken.g.ibnetdiscover",  # -g: chassis grouping headers and comments
        "prod_hdr_broken.f.ibnetdiscover",  # -f: s=/w=/v= after the rates
    ],
)
def test_other_ibnetdiscover_formats_read_the_same_fabric(name: str) -> None:
    topo = load_dump(BROKEN)
    other = load_dump(DUMPS / name)  # sniffed as ibnetdiscover
    assert _servers(other) == _servers(topo) == SERVERS
    assert sorted(other.link_ids) == sorted(topo.link_ids)
    assert audit_regular(other).kinds() == audit_regular(topo).kinds() == PLANTED


# -- the design-free audit ----------------------------------------------------------------
def test_healthy_plane_has_no_departures() -> None:
    report = audit_regular(load_ibnetdiscover(PROD))
    assert report.ok
    d = report.design
    assert (d.groups, d.rails, d.spines, d.cables_per_pair, d.uplinks_per_leaf) == (
        4, (0, 1, 2, 3), 4, 2, 8,
    )  # fmt: skip
    assert (d.servers_per_group, d.hcas_per_server, d.rail_optimized) == (4, 4, True)


def test_broken_plane_lists_exactly_the_planted_departures() -> None:
    live = load_ibnetdiscover(BROKEN)
    assert _servers(live) == SERVERS  # still 16 servers in 4 groups
    assert live.summary()["sus"] == 4
    report = audit_regular(live)
    assert report.design.spines == 4  # 3 present + the one the gap implies
    assert report.design.uplinks_per_leaf == 6
    assert report.departures == (
        Departure(
            "missing-spine", "A10-P1-IBSPINE-02",
            "missing spine: A10-P1-IBSPINE-02 (a gap in the spines' numbering; leaf port(s) "
            "23-24 dark on every leaf)",
        ),
        Departure(
            "leaf-uplinks", "A09-P1-IBLEAF-03-01",
            "leaf A09-P1-IBLEAF-03-01 has 5 of 6 uplinks: missing 1 to A10-P1-IBSPINE-03",
            (("A10-P1-IBSPINE-03", 1),),
        ),
        Departure(
            "leaf-uplinks", "B09-P1-IBLEAF-02-03",
            "leaf B09-P1-IBLEAF-02-03 has 4 of 6 uplinks: missing all 2 to A10-P1-IBSPINE-04",
            (("A10-P1-IBSPINE-04", 2),),
        ),
        Departure(
            "swapped-nics", "a02-p1-dgx-02-c03",
            "swapped NICs: a02-p1-dgx-02-c03/nic0 (rail 0) is on A09-P1-IBLEAF-02-02 port 3 and "
            "a02-p1-dgx-02-c03/nic1 (rail 1) on A09-P1-IBLEAF-01-02 port 3: each on the other's "
            "rail leaf (NCCL still uses each for its own rail: their traffic crosses the spines)",
        ),
        Departure(
            "missing-hca", "unnamed-su04-p02",
            "server unnamed-su04-p02 has 3 of 4 HCAs: none on rail 3",
        ),
    )  # fmt: skip


def test_a_missing_leaf_is_one_finding_not_one_per_server() -> None:
    text = PROD.read_text()
    topo = parse_ibnetdiscover(text, "prod")
    leaf = next(n for n in topo.nodes if "IBLEAF-03-02" in n.desc)
    # the leaf powered off: its record, its cables and the HCAs only it reached are gone
    ref = f'"{leaf.id}"'
    kept_blocks = []
    for block in text.split("\n\n"):
        lines = block.splitlines()
        ports = [ln for ln in lines if ln.startswith("[")]
        if any(ln.startswith(("Switch", "Ca")) and ref in ln for ln in lines):
            continue
        if ports and all(ref in ln for ln in ports):
            continue
        kept_blocks.append("\n".join(ln for ln in lines if ref not in ln))
    kept = "\n\n".join(kept_blocks)
    f = fabric_from_ibnetdiscover(parse_ibnetdiscover(kept, "no-leaf"))
    report = audit_regular(f)
    assert report.kinds() == [("missing-leaf", "su02 rail 2")]
    assert report.lines() == [
        "missing leaf: group su02 has no rail-2 leaf (its servers' rail-2 HCAs are unreachable)"
    ]


def test_generated_fabrics_are_regular() -> None:
    f = two_tier(sus=3, nodes_per_su=4, spines=4, cables_per_pair=2, leaf_radix=32,
                 storage=False, node_overrides={"rails": 4})  # fmt: skip
    d = infer_design(f)
    assert (d.groups, len(d.rails), d.spines, d.cables_per_pair, d.servers_per_group) == (
        3, 4, 4, 2, 4,
    )  # fmt: skip
    assert audit_regular(f).ok


# -- the CLI ------------------------------------------------------------------------------
def test_cli_audit_without_design(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(PROD)]) == 0
    out = capsys.readouterr().out
    assert "no departures from the inferred design" in out
    assert main(["audit", str(BROKEN), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [(d["kind"], d["subject"]) for d in doc["departures"]] == PLANTED
    assert doc["design"]["spines"] == 4
    assert doc["departures"][1]["missing_cables"] == {"A10-P1-IBSPINE-03": 1}
    assert any("SHARP Aggregation Node" in n for n in doc["notes"])


def test_cli_audit_without_design_on_a_bad_file_is_exit_2(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = DUMPS / "make_nets.py"  # not a dump of any format
    assert main(["audit", str(bad)]) == 2
    assert "cannot tell the format" in capsys.readouterr().err


# -- a real NDR plane ---------------------------------------------------------------------
def test_real_ndr_plane_reads_right() -> None:
    f = load_ibnetdiscover(REAL)
    s = f.summary()
    assert (s["sus"], s["rails"], s["leaves"], s["spines"]) == (8, 4, 31, 9)
    assert notes_of(f)[0].startswith("40 SHARP Aggregation Node(s) left out")
    # all 542 HCAs are in the fabric and no server has more than its 4 rails
    assert s["access_cables"] == 542
    per_server = Counter(int(f.parent[n]) for n in f.nics.tolist())
    assert max(per_server.values()) == 4
    # the 69 HCAs with unset descriptions and the 'localhost'/'ubuntu' ones became servers
    # by wiring, each with a note; none is a server of its own per HCA
    unnamed = [i for i in f.servers.tolist() if f.ids[i].startswith("unnamed-")]
    assert 20 <= len(unnamed) <= 30
    assert sum(1 for n in notes_of(f) if n.startswith("server ")) == len(unnamed)
    assert s["nodes"] == 144


def test_real_ndr_plane_departures() -> None:
    report = audit_regular(load_ibnetdiscover(REAL))
    d = report.design
    assert (d.groups, len(d.rails), d.spines, d.cables_per_pair, d.uplinks_per_leaf) == (
        8, 4, 9, 2, 18,
    )  # fmt: skip
    assert d.servers_per_group == 18
    kinds = report.kinds()
    # checked by hand against the dump: IBLEAF-03-01 (rail 2 of the a05 group) is absent,
    assert ("missing-leaf", "su02 rail 2") in kinds
    # b08-p1-dgx-08-c01's HCA-5 and HCA-6 are on each other's leaf (IBLEAF-04-08, -03-08),
    assert ("swapped-nics", "b08-p1-dgx-08-c01") in kinds
    # b06-p1-dgx-06-c02 HCA-1 is on port 4 of IBLEAF-01-06, its other HCAs on port 2,
    assert ("port-mismatch", "b06-p1-dgx-06-c02") in kinds
    # IBLEAF-01-02 has no cable to IBSPINE-01 nor IBSPINE-04 (14 of 18 uplinks)
    (short,) = [x for x in report.departures if x.subject == "A09-P1-IBLEAF-01-02"]
    assert short.detail == (("A10-P1-IBSPINE-01", 2), ("A10-P1-IBSPINE-04", 2))
    assert Counter(k for k, _ in kinds) == {
        "missing-leaf": 1, "leaf-uplinks": 12, "swapped-nics": 1, "wrong-rail": 2,
        "missing-hca": 7, "port-mismatch": 5, "missing-server": 4,
    }  # fmt: skip


def test_three_tier_peers_are_the_leaves_of_a_pod(make_nets: ModuleType) -> None:
    f = three_tier(sus=4, nodes_per_su=2, sus_per_pod=2, spines_per_pod=2, radix=16,
                   storage=False, node_overrides={"rails": 2})  # fmt: skip
    assert audit_regular(f).ok
    cut = make_nets._edit(f, drop={"su03/leaf-r1:4--pod02/spine-02:2"})
    report = audit_regular(cut)
    assert report.kinds() == [("leaf-uplinks", "su03/leaf-r1")]
    assert report.departures[0].detail == (("pod02/spine-02", 1),)
