"""Slurm topology.conf (tree plugin): hostlist compression and the switch tree."""

from __future__ import annotations

import re
from pathlib import Path

import hostlist  # type: ignore[import-untyped]  # python-hostlist: an independent parser
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import main
from harness.errors import FabricDesignError
from harness.exporters.slurm import compress_hostlist
from harness.exporters.slurm import slurm_name
from harness.exporters.slurm import to_slurm_topology
from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.importers import load_dump
from tests.importers.conftest import DUMPS

_LINE = re.compile(r"^SwitchName=(\S+) (Nodes|Switches)=(\S+)$")


def _parse(text: str) -> dict[str, tuple[str, list[str]]]:
    """switch -> (Nodes|Switches, expanded children), with python-hostlist."""
    out: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = _LINE.match(line)
        assert m is not None, line
        assert m.group(1) not in out, f"switch {m.group(1)} defined twice"
        out[m.group(1)] = (m.group(2), hostlist.expand_hostlist(m.group(3)))
    return out


def _check_tree(f: Fabric, text: str) -> dict[str, tuple[str, list[str]]]:
    conf = _parse(text)
    nodes = [n for kind, kids in conf.values() if kind == "Nodes" for n in kids]
    # every server exactly once, under one leaf switch
    assert sorted(nodes) == sorted(slurm_name(f.ids[s]) for s in f.servers.tolist())
    parents: dict[str, list[str]] = {}
    for sw, (kind, kids) in conf.items():
        if kind == "Switches":
            for k in kids:
                assert k in conf, f"{sw} names an undefined switch {k}"
                parents.setdefault(k, []).append(sw)
    assert all(len(p) == 1 for p in parents.values()), parents  # a tree
    return conf


names = st.lists(
    st.builds(
        lambda p, n, w: f"{p}{n:0{w}d}",
        st.sampled_from(["gpu", "a08-p1-dgx-04-c", "su01-node", "n", "x1y"]),
        st.integers(0, 120),
        st.integers(1, 3),
    )
    | st.sampled_from(["login", "ufm", "B11-P1-CUFM"]),
    min_size=1,
    max_size=40,
)


@given(names)
def test_hostlists_round_trip_through_python_hostlist(hosts: list[str]) -> None:
    expr = compress_hostlist(hosts)
    assert sorted(hostlist.expand_hostlist(expr)) == sorted(set(hosts))


def test_compress_keeps_padding_and_width_apart() -> None:
    assert compress_hostlist(["c01", "c02", "c03", "c05", "c10"]) == "c[01-03,05,10]"
    assert compress_hostlist(["n9", "n10", "n11", "n011"]) == "n011,n9,n[10-11]"
    assert compress_hostlist(["node1"]) == "node1"


def test_rail_optimized_sus_are_leaf_switches_and_the_spines_one_switch() -> None:
    f = load_dump(DUMPS / "prod_hdr.ibnetdiscover")
    text = to_slurm_topology(f, header=False)
    assert text.splitlines() == [
        "SwitchName=su01 Nodes=a01-p1-dgx-01-c[01-02],unnamed-su01-p[03-04]",
        "SwitchName=su02 Nodes=a02-p1-dgx-02-c[01-03],unnamed-su02-p04",
        "SwitchName=su03 Nodes=b03-p1-dgx-03-c[01,04],unnamed-su03-p[02-03]",
        "SwitchName=su04 Nodes=b04-p1-dgx-04-c04,unnamed-su04-p[01-03]",
        "SwitchName=spines Switches=su[01-04]",
    ]
    _check_tree(f, text)
    header = to_slurm_topology(f).splitlines()
    assert "# su01: A09-P1-IBLEAF-01-01,A09-P1-IBLEAF-02-01,A09-P1-IBLEAF-03-01," \
           "A09-P1-IBLEAF-04-01" in header  # fmt: skip
    assert "# spines: A10-P1-IBSPINE-[01-04]" in header


def test_swapped_nics_keep_the_server_in_its_su() -> None:
    # a02-p1-dgx-02-c03 has two NICs on each other's leaves: still one node, in su02
    f = load_dump(DUMPS / "prod_hdr_broken.ibnetdiscover")
    conf = _check_tree(f, to_slurm_topology(f))
    assert "a02-p1-dgx-02-c03" in conf["su02"][1]
    assert f.summary()["nodes"] == 16


def test_three_tier_pods_become_spine_groups_under_the_cores() -> None:
    f = three_tier(sus=4, nodes_per_su=2, sus_per_pod=2, spines_per_pod=2, radix=16,
                   storage=False, node_overrides={"rails": 2})  # fmt: skip
    conf = _check_tree(f, to_slurm_topology(f))
    assert conf["spines01"] == ("Switches", ["su01", "su02"])
    assert conf["spines02"] == ("Switches", ["su03", "su04"])
    assert conf["cores"] == ("Switches", ["spines01", "spines02"])


def test_a_big_preset_is_a_tree() -> None:
    f = preset("seed-a800")
    conf = _check_tree(f, to_slurm_topology(f))
    assert conf["spines"] == ("Switches", [f"su{i:02d}" for i in range(1, 11)])
    assert conf["su03"] == ("Nodes", [f"su03-node{i:02d}" for i in range(1, 21)])


def test_node_names_map_and_bad_names() -> None:
    f = two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8, storage=False)
    text = to_slurm_topology(f, node_names={"su01/node01": "gpu7", "su01/node02": "gpu8"},
                             header=False)  # fmt: skip
    assert text.splitlines()[0] == "SwitchName=su01 Nodes=gpu[7-8]"
    with pytest.raises(FabricDesignError, match=r"cannot be Slurm node or switch names \(a b\)"):
        to_slurm_topology(f, node_names={"su01/node01": "a b"})


def test_a_server_without_a_leaf_is_refused() -> None:
    f = load_dump(DUMPS / "rail2x2_nic_down.ibnetdiscover")
    assert to_slurm_topology(f)  # one NIC down: the server still reaches a leaf
    lonely = load_dump(DUMPS / "2sw2path4hca.ibnetdiscover")
    assert _parse(to_slurm_topology(lonely))  # two one-leaf SUs, no spine: two top switches


def test_cli_export_slurm_from_a_dump_and_a_preset(tmp_path: Path) -> None:
    out = tmp_path / "topology.conf"
    assert main(["export", str(DUMPS / "prod_hdr.ibnetdiscover"), "--format", "slurm",
                 "-o", str(out)]) == 0  # fmt: skip
    assert "SwitchName=spines Switches=su[01-04]" in out.read_text()
    assert main(["export", "seed-a800", "--format", "slurm", "-o", str(out)]) == 0
    assert out.read_text().endswith("SwitchName=spines Switches=su[01-10]\n")
