"""NetQ topology graph JSON import."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.exporters.slurm import to_slurm_topology
from harness.fabric import LinkKind
from harness.importers import load_dump
from harness.importers import notes_of
from harness.importers import sniff_format
from harness.importers.netq import parse_netq
from harness.planning.audit.regular import audit_regular
from tests.importers.conftest import DUMPS
from tests.importers.conftest import THIRD_PARTY

NETQ = DUMPS / "netq"
RAIL = NETQ / "spectrumx_rail.json"
TOPOGRAPH = THIRD_PARTY / "topograph_netq_topologyGraph.json"


def test_committed_file_is_what_make_netq_writes() -> None:
    spec = importlib.util.spec_from_file_location("make_netq", DUMPS / "make_netq.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert RAIL.read_text(encoding="utf-8") == json.dumps(mod.topology(), indent=2) + "\n"


def test_rail_optimized_plane_reads_right() -> None:
    assert sniff_format(RAIL) == "netq"
    f = load_dump(RAIL)
    s = f.summary()
    assert (s["nodes"], s["sus"], s["rails"], s["leaves"], s["spines"]) == (8, 2, 4, 8, 2)
    assert sorted(f.ids[i] for i in f.servers.tolist()) == [f"dgx-{i:02d}" for i in range(1, 9)]
    assert [(f.ids[i], int(f.su[i]), int(f.rail[i])) for i in f.leaves.tolist()] == [
        (f"sx-leaf-{j:02d}", 1 + (j - 1) // 4, (j - 1) % 4) for j in range(1, 9)
    ]
    # enp27s0np0 < enp40s0np0 < enp154s0np0 < enp170s0np0 all end in 0: ranked into rails
    (li,) = [i for i in f.links_at(f.index["dgx-01/nic2"]).tolist()
             if f.link_kind[i] == LinkKind.ACCESS]  # fmt: skip
    assert f.ids[f.other_end(li, f.index["dgx-01/nic2"])] == "sx-leaf-03"
    assert s["leaf_spine_cables"] == 31  # 8 leaves x 2 spines x 2, one planted short
    notes = notes_of(f)
    assert "8 host(s) discovered over LLDP (NetQ tier -1)" in notes
    assert any("breakout" in n for n in notes)
    assert any("state no rate" in n for n in notes)


def test_design_free_audit_finds_the_planted_missing_cable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = audit_regular(load_dump(RAIL))
    assert report.lines() == ["leaf sx-leaf-06 has 3 of 4 uplinks: missing 1 to sx-spine-02"]
    assert main(["audit", str(RAIL)]) == 1
    assert "missing 1 to sx-spine-02" in capsys.readouterr().out


def test_topograph_sample_multi_links_and_hosts_on_one_leaf() -> None:
    f = load_dump(TOPOGRAPH)
    s = f.summary()
    assert (s["nodes"], s["leaves"], s["spines"], s["access_cables"]) == (8, 2, 1, 32)
    pair = sorted(
        sum(1 for i in f.links_of_kind(LinkKind.LEAF_SPINE).tolist()
            if f.index[leaf] in (int(f.link_a[i]), int(f.link_b[i])))
        for leaf in ("net-unit-l1", "net-unit-l2")
    )  # fmt: skip
    assert pair == [19, 28]  # the two multi-links, cable by cable
    design = audit_regular(f).design
    assert not design.rail_optimized  # each host's 4 NICs on one leaf
    assert design.hcas_per_server == 4
    # Slurm: the two leaves under the spine, as Topograph's NetQ provider builds it
    conf = to_slurm_topology(f, header=False).splitlines()
    assert conf == [
        "SwitchName=net-unit-l1 Nodes=dgx-[01-04]",
        "SwitchName=net-unit-l2 Nodes=dgx-[05-08]",
        "SwitchName=net-unit-s1 Switches=net-unit-l[1-2]",
    ]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('[{"nodes": [], "links": [}]', r"t:1:\d+: not valid JSON"),
        ("[{}, {}]", r"t:1: a NetQ topology graph is a list of one object, this one has 2"),
        ('{"nodes": {}}', r"t:1: expected an object with 'nodes' and 'links' lists"),
        ('{"nodes": [], "links": [], "links": []}', r"duplicate key 'links'"),
        ('{"nodes": [{"compounded_nodes": [{"id": "a", "tier": 1}]}],\n "links": [\n'
         ' {"id": "a-*-b", "interfaces": [{"node": "a", "interface": "swp1"},\n'
         ' {"node": "b", "interface": "eth1"}]}]}',
         r"t:3: link 'a-\*-b' names unknown node 'b'"),
        ('{"nodes": [{"id": "a", "tier": "x"}], "links": []}', r"'tier' must be an integer"),
        ('{"nodes": [{"id": "a", "tier": 1}], "links": [{"id": "l", "interfaces": []}]}',
         r"a cable needs two interfaces"),
        ("[" * 100_000 + "]" * 100_000, r"t:1: JSON nested too deep"),
    ],
)  # fmt: skip
def test_malformed_graphs_name_the_line_and_the_fix(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_netq(text, "t")


def test_cli_export_slurm_from_netq(tmp_path: Path) -> None:
    out = tmp_path / "topology.conf"
    assert main(["export", str(RAIL), "--format", "slurm", "-o", str(out)]) == 0
    assert "SwitchName=su02 Nodes=dgx-[05-08]" in out.read_text()
