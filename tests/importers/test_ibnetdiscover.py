"""ibnetdiscover / ibsim net import, inference rules, and the ibsim net export."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from harness.errors import FabricDesignError
from harness.errors import ScenarioError
from harness.exporters.ibsim import to_ibsim_net
from harness.fabric import Fabric
from harness.fabric import Kind
from harness.fabric import LinkKind
from harness.fabric import three_tier
from harness.fabric.ib_rates import ib_rate
from harness.fabric.ib_rates import ib_rate_name
from harness.importers import load_ibnetdiscover
from harness.importers import parse_ibnetdiscover
from harness.importers.build import notes_of
from harness.importers.ibnetdiscover import fabric_from_ibnetdiscover
from harness.importers.rules import InferenceRules
from harness.planning.audit.diff import diff_fabrics
from tests.importers.conftest import DUMPS
from tests.importers.conftest import THIRD_PARTY


def _cables(f: Fabric, kind: LinkKind) -> list[str]:
    return sorted(f.link_id(i) for i in f.links_of_kind(kind).tolist())


def test_parse_raw_ibsim_net_file() -> None:
    topo = parse_ibnetdiscover((THIRD_PARTY / "ibsim_net.2sw2path4hca").read_text(), "net")
    assert [n.id for n in topo.nodes] == ["Switch1", "Switch2", "Hca1", "Hca2", "Hca3", "Hca4"]
    sw1 = topo.node("Switch1")
    assert (sw1.kind, sw1.nports) == ("switch", 8)
    assert [(p.port, p.remote, p.remote_port) for p in sw1.ports] == [
        (1, "Hca1", 1), (2, "Hca3", 1), (3, "Switch2", 3), (5, "Switch2", 5),
    ]  # fmt: skip
    assert all(p.rate == "" for n in topo.nodes for p in n.ports)


def test_2sw2path4hca_both_switches_are_leaves_with_parallel_links() -> None:
    f = load_ibnetdiscover(THIRD_PARTY / "ibsim_net.2sw2path4hca")
    s = f.summary()
    assert (s["nodes"], s["leaves"], s["spines"], s["cores"]) == (4, 2, 0, 0)
    assert s["access_cables"] == 4
    # the two parallel switch-to-switch cables are kept (same-tier, recorded as leaf-spine)
    assert _cables(f, LinkKind.LEAF_SPINE) == ["Switch1:3--Switch2:3", "Switch1:5--Switch2:5"]
    assert any("same tier" in n for n in notes_of(f))
    # one SU per leaf: Switch1 serves Hca1 and Hca3, Switch2 serves Hca2 and Hca4
    assert f.element("Hca1").su == f.element("Hca3").su == f.element("Switch1").su
    assert f.element("Hca2").su == f.element("Switch2").su != f.element("Switch1").su
    # no rate in a bare net file: the documented default is used and said so
    assert set(f.link_capacity[f.links_of_kind(LinkKind.ACCESS)].tolist()) == {200.0}
    assert any("state no rate" in n for n in notes_of(f))


def test_real_ibnetdiscover_dump_of_2sw2path4hca_reads_rates() -> None:
    f = load_ibnetdiscover(DUMPS / "2sw2path4hca.ibnetdiscover")
    assert f.summary()["cables"] == 6
    cables = f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE)
    assert set(f.link_capacity[cables].tolist()) == {10.0}  # ibsim's default 4xSDR
    assert set(f.link_lanes[cables].tolist()) == {4}
    assert not any("state no rate" in n for n in notes_of(f))
    assert sorted(f.ids[i] for i in f.servers.tolist()) == ["Hca1", "Hca2", "Hca3", "Hca4"]


def test_rail_optimized_dump_reproduces_the_design_ids(design: Fabric) -> None:
    f = load_ibnetdiscover(DUMPS / "rail2x2.ibnetdiscover")
    s = f.summary()
    assert (s["nodes"], s["rails"], s["leaves"], s["spines"], s["sus"]) == (4, 2, 4, 2, 2)
    assert (s["access_cables"], s["leaf_spine_cables"]) == (8, 8)
    for leaf in ("su01/leaf-r0", "su01/leaf-r1", "su02/leaf-r0", "su02/leaf-r1"):
        e, d = f.element(leaf), design.element(leaf)
        assert (e.kind, e.su, e.rail) == (Kind.LEAF, d.su, d.rail)
    assert f.element("su02/node01").su == 2
    assert f.element("su02/node01").node == 1
    assert f.element("su01/node02/nic1").rail == 1
    assert set(_cables(f, LinkKind.ACCESS)) == set(_cables(design, LinkKind.ACCESS))
    assert set(_cables(f, LinkKind.LEAF_SPINE)) == set(_cables(design, LinkKind.LEAF_SPINE))
    assert set(f.link_capacity[f.links_of_kind(LinkKind.ACCESS)].tolist()) == {200.0}


@pytest.mark.parametrize(
    ("text", "lanes", "speed", "gbps"),
    [
        ("4xHDR", 4, "HDR", 200.0), ("4xNDR", 4, "NDR", 400.0), ("2xNDR", 2, "NDR", 200.0),
        ("4xEDR", 4, "EDR", 100.0), ("4xFDR", 4, "FDR", 56.0), ("4xQDR", 4, "QDR", 40.0),
        ("1xHDR", 1, "HDR", 50.0), ("12xQDR", 12, "QDR", 120.0), ("4xFDR10", 4, "FDR10", 40.0),
    ],
)  # fmt: skip
def test_ib_rate(text: str, lanes: int, speed: str, gbps: float) -> None:
    assert ib_rate(f'# "x" lid 3 {text}') == (lanes, speed, gbps)


@pytest.mark.parametrize(
    ("gbps", "name"),
    [(200.0, "4xHDR"), (400.0, "4xNDR"), (100.0, "4xEDR"), (50.0, "1xHDR"), (10.0, "4xSDR")],
)
def test_ib_rate_name_prefers_4x(gbps: float, name: str) -> None:
    assert ib_rate_name(gbps) == name


def test_ib_rate_name_rejects_a_rate_infiniband_cannot_run() -> None:
    with pytest.raises(FabricDesignError, match="33 Gb/s is no InfiniBand"):
        ib_rate_name(33.0)


def test_exported_net_reimports_as_the_design(design: Fabric) -> None:
    text = to_ibsim_net(design)
    assert text.count("Switch\t8 ") == 6
    assert '"su01/node01 mlx5_1"' in text
    live = fabric_from_ibnetdiscover(parse_ibnetdiscover(text, "exported.net"))
    report = diff_fabrics(live, design)
    assert report.ok, str(report)


def test_committed_net_files_are_what_make_nets_writes(make_nets: ModuleType) -> None:
    for name, fabric in make_nets.variants().items():
        committed = (DUMPS / f"{name}.net").read_text(encoding="utf-8")
        assert committed == to_ibsim_net(fabric) + "\n", name
    for name, text in make_nets.production_nets().items():
        assert (DUMPS / f"{name}.net").read_text(encoding="utf-8") == text + "\n", name


@pytest.mark.slow
@pytest.mark.needs_tools(
    "ibsim", "ibsim-run", "opensm", "ibnetdiscover",
    install="apt-get install -y ibsim-utils opensm infiniband-diags",
)  # fmt: skip
def test_make_dumps_regenerates_the_committed_dumps(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(DUMPS / "make_dumps.sh"), str(tmp_path)],
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    produced = sorted(
        p.name for p in (*tmp_path.glob("*.ibnetdiscover"), *tmp_path.glob("*.ports"))
    )
    assert produced == sorted(
        p.name for p in (*DUMPS.glob("*.ibnetdiscover"), *DUMPS.glob("*.ports"))
    )

    def body(p: Path) -> str:
        return re.sub(r"generated on .*", "", p.read_text())

    for name in produced:
        assert body(tmp_path / name) == body(DUMPS / name), name


def test_hcas_grouped_by_host_and_ranked_into_rails() -> None:
    text = """
Switch 8 "leafA" # "leafA"
[1] "h1a"[1] # "node1 mlx5_0" lid 2 4xHDR
[2] "h1b"[1] # "node1 mlx5_3" lid 3 4xHDR
[3] "h2a"[1] # "node2 mlx5_0" lid 4 4xHDR
[4] "d1"[1] # "MT4123 ConnectX6 Mellanox Technologies" lid 5 4xHDR
[5] "d2"[1] # "MT4123 ConnectX6 Mellanox Technologies" lid 6 4xHDR

Ca 1 "h1a" # "node1 mlx5_0"
[1] "leafA"[1] # lid 2 lmc 0 "leafA" lid 1 4xHDR

Ca 1 "h1b" # "node1 mlx5_3"
[1] "leafA"[2] # lid 3 lmc 0 "leafA" lid 1 4xHDR

Ca 1 "h2a" # "node2 mlx5_0"
[1] "leafA"[3] # lid 4 lmc 0 "leafA" lid 1 4xHDR

Ca 1 "d1" # "MT4123 ConnectX6 Mellanox Technologies"
[1] "leafA"[4] # lid 5 lmc 0 "leafA" lid 1 4xHDR

Ca 1 "d2" # "MT4123 ConnectX6 Mellanox Technologies"
[1] "leafA"[5] # lid 6 lmc 0 "leafA" lid 1 4xHDR
"""
    f = fabric_from_ibnetdiscover(parse_ibnetdiscover(text, "t"))
    servers = sorted(f.ids[i] for i in f.servers.tolist())
    # the two unset HCAs sit on different ports of the only leaf: two servers
    assert servers == ["node1", "node2", "unnamed-su01-p04", "unnamed-su01-p05"]
    # indices {0, 3} rank to rails 0 and 1
    assert f.element("node1/nic1").rail == 1
    assert "node1/nic1:1--leafA:2" in f.link_ids
    assert any(n.startswith("server unnamed-su01-p04: 1 HCA(s) with unset descriptions")
               for n in notes_of(f))  # fmt: skip
    # an explicit map wins over the rank
    g = fabric_from_ibnetdiscover(parse_ibnetdiscover(text, "t"), InferenceRules(rails={3: 2}))
    assert "node1/nic2:1--leafA:2" in g.link_ids


def test_two_hcas_claiming_one_host_and_rail_are_grouped_by_wiring() -> None:
    text = """Switch 4 "sw"
[1] "a"[1]
[2] "b"[1]

Ca 1 "a" # "node1 mlx5_0"
[1] "sw"[1]

Ca 1 "b" # "node1 mlx5_0"
[1] "sw"[2]
"""
    f = fabric_from_ibnetdiscover(parse_ibnetdiscover(text, "t"))
    # no named server tells the leaf's group, so each HCA is a server of its own, said so
    assert sorted(f.ids[i] for i in f.servers.tolist()) == ["unnamed-a", "unnamed-b"]
    assert notes_of(f)[0] == (
        "server unnamed-a: 1 HCA(s) with shared descriptions ('node1 mlx5_0') on port 1 of sw, "
        "a leaf no named server tells the group of (rule: one server per HCA)"
    )


def test_two_hcas_mapped_onto_one_rail_by_the_rules_is_an_error_with_the_fix() -> None:
    text = """Switch 4 "sw"
[1] "a"[1]
[2] "b"[1]

Ca 1 "a" # "node1 mlx5_0"
[1] "sw"[1]

Ca 1 "b" # "node1 mlx5_3"
[1] "sw"[2]
"""
    with pytest.raises(ScenarioError, match=r"t:8: .*both map to host 'node1' rail 0.*distinct"):
        fabric_from_ibnetdiscover(parse_ibnetdiscover(text, "t"), InferenceRules(rails={3: 0}))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('Switch 4 "sw"\n[1] "ghost"[1]\n', r"dump:2: .*unknown node 'ghost'.*add"),
        ('Switch 4 "sw"\n[1] "a"[2]\n\nCa 2 "a"\n[1] "sw"[1]\n[2] "sw"[3]\n',
         r"dump:2: .*points at 'a'\[2\], but that port points at 'sw'\[3\]; fix one end"),
        ('Switch 4 "sw"\n[x] junk\n', r"dump:2: an unreadable port"),
        ('Switch four "sw"\n', r"dump:1: unreadable node header"),
        ("hello\n", r"dump:1: no Switch or Ca record"),
        ('Switch 2 "sw"\n[3] "a"[1]\n\nCa 1 "a"\n[1] "sw"[3]\n', r"dump:2: 'sw' has 2 ports"),
    ],
)  # fmt: skip
def test_malformed_dumps_name_the_line_and_the_fix(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_ibnetdiscover(text, "dump")


def test_roles_map_and_patterns_override_the_structure() -> None:
    path = THIRD_PARTY / "ibsim_net.2sw2path4hca"
    f = load_ibnetdiscover(path, InferenceRules(roles={"Switch2": "spine"}))
    assert f.element("Switch2").kind == Kind.SPINE
    assert any("spine 'Switch2' has host NICs attached" in n for n in notes_of(f))
    g = load_ibnetdiscover(path, InferenceRules(spine_pattern=r"Switch1$"))
    assert g.element("Switch1").kind == Kind.SPINE
    assert g.element("Switch2").kind == Kind.LEAF


def test_su_pattern_takes_sus_from_names() -> None:
    f = load_ibnetdiscover(
        DUMPS / "rail2x2_wrong_rail.ibnetdiscover", InferenceRules(su_pattern=r"su(?P<su>\d+)")
    )
    assert f.element("su02/leaf-r1").su == 2
    assert f.element("su01/node02").su == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"leaf_pattern": "("}, "InferenceRules.leaf_pattern: bad regular expression"),
        ({"roles": {"x": "tor"}}, "unknown role.*tor.*use leaf, spine or core"),
        ({"su_pattern": r"su\d+"}, r"su_pattern needs a named group \(\?P<su>"),
        ({"hca_pattern": r"(.+) mlx"}, r"hca_pattern needs a named group \(\?P<host>"),
    ],
)
def test_bad_rules_are_rejected(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        InferenceRules(**kwargs)  # type: ignore[arg-type]


def test_unnamed_three_tier_fabric_is_classified_by_structure() -> None:
    design = three_tier(sus=2, nodes_per_su=2, node="a800", node_overrides={"rails": 2},
                        sus_per_pod=1, spines_per_pod=2, radix=8, storage=False)  # fmt: skip
    text = to_ibsim_net(design)
    switches = [design.ids[i] for i in (*design.leaves, *design.spines, *design.cores)]
    for n, eid in enumerate(switches):  # hide every switch name behind a vendor-ish one
        text = text.replace(f'"{eid}"', f'"ibsw-{n:03d}"')
    no_names = InferenceRules(leaf_pattern=None, spine_pattern=None, core_pattern=None)
    live = fabric_from_ibnetdiscover(parse_ibnetdiscover(text, "t"), no_names)
    s, d = live.summary(), design.summary()
    assert (s["leaves"], s["spines"], s["cores"], s["tiers"]) == (
        d["leaves"], d["spines"], d["cores"], 3,
    )  # fmt: skip
    assert s["spine_core_cables"] == d["spine_core_cables"]
    report = diff_fabrics(live, design)
    assert report.ok, str(report)
    assert len(report.matched_by_structure) == len(switches)
