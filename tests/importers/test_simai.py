"""SimAI topology import: DOMAIN.md reference scenario 10 on the real 32-GPU rail file."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import Kind
from harness.fabric import LinkKind
from harness.importers import load_simai
from harness.importers import simai_ids
from harness.importers.simai import parse_simai
from tests.importers.conftest import THIRD_PARTY

SIMAI = THIRD_PARTY / "simai_Rail_Opti_SingleToR_32g_8gps_400Gbps_H100"


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return load_simai(SIMAI)


def _nic_components(f: Fabric, dead: set[str]) -> list[set[str]]:
    """Components of the cable graph that hold NICs, after removing ``dead`` switches."""
    g = f.to_networkx(cables_only=True)
    g.remove_nodes_from(dead)
    nics = {f.ids[i] for i in f.nics.tolist()}
    return [c & nics for c in nx.connected_components(g) if c & nics]


def test_counts(fabric: Fabric) -> None:
    s = fabric.summary()
    assert (s["nodes"], s["gpus"], s["rails"], s["leaves"], s["spines"]) == (4, 32, 8, 8, 64)
    assert (s["access_cables"], s["leaf_spine_cables"], s["sus"], s["tiers"]) == (32, 512, 1, 2)
    nvlinks = fabric.links_of_kind(LinkKind.NVLINK)
    assert nvlinks.size == 32
    assert set(fabric.link_capacity[nvlinks].tolist()) == {1440.0}
    assert set(fabric.link_capacity[fabric.links_of_kind(LinkKind.ACCESS)].tolist()) == {400.0}
    assert fabric.node_specs[0].nvswitches == 1  # the file gives each server one NVSwitch


def test_asw36_is_rail0_and_serves_gpus_0_8_16_24(fabric: Fabric) -> None:
    ids = simai_ids(fabric)
    asw = fabric.element(ids[36])
    assert (asw.id, asw.kind, asw.rail) == ("asw36", Kind.LEAF, 0)
    assert fabric.element(ids[44]).kind == Kind.SPINE
    gpu_of = {v: k for k, v in ids.items()}
    served = set()
    for link in fabric.links_at(asw.index).tolist():
        if fabric.link_kind[link] != LinkKind.ACCESS:
            continue
        nic = fabric.other_end(link, asw.index)
        server = int(fabric.parent[nic])
        gpus = [g for g in fabric.parts_of(server, Kind.GPU).tolist()
                if fabric.rail[g] == fabric.rail[nic]]  # fmt: skip
        served |= {gpu_of[fabric.ids[g]] for g in gpus}
    assert served == {0, 8, 16, 24}
    assert ids[8] == "su01/node02/gpu0"
    assert ids[33] == "su01/node02/nvsw0"


def test_63_of_64_psws_down_keeps_all_gpus_reachable(fabric: Fabric) -> None:
    dead = {f"psw{n}" for n in range(45, 108)}
    comps = _nic_components(fabric, dead)
    assert len(comps) == 1
    assert len(comps[0]) == 32
    # each ASW keeps 1 of its 64 uplinks
    left = [i for i in fabric.links_at(fabric.index["asw36"]).tolist()
            if fabric.link_kind[i] == LinkKind.LEAF_SPINE
            and fabric.ids[fabric.other_end(i, fabric.index["asw36"])] not in dead]  # fmt: skip
    assert len(left) == 1


def test_all_psws_down_leaves_eight_rail_islands(fabric: Fabric) -> None:
    comps = _nic_components(fabric, {f"psw{n}" for n in range(44, 108)})
    assert sorted(len(c) for c in comps) == [4] * 8


def test_asw36_down_isolates_the_rail0_nics_only(fabric: Fabric) -> None:
    comps = _nic_components(fabric, {"asw36"})
    isolated = {next(iter(c)) for c in comps if len(c) == 1}
    assert isolated == {f"su01/node0{n}/nic0" for n in range(1, 5)}
    assert max(len(c) for c in comps) == 28
    # NVSwitch paths are intact: every GPU still reaches its server's NVSwitch
    assert fabric.links_of_kind(LinkKind.NVLINK).size == 32


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("3 1 0 1 1 H100\n2\n0 2 400Gbps 0.0005ms 0\n0 2 400Gbps 0.0005ms 0\n",
         r"t:1: the header says 1 links but the file has 2"),
        ("3 1 0 1 1 H100\n2\n0 2 fast 0.0005ms 0\n", r"t:3: bandwidth 'fast'"),
        ("3 1 0 1 1 H100\n2\n0 9 400Gbps 0.0005ms 0\n", r"t:3: node 9 is outside 0..2"),
        ("3 1 0 1 1 H100\n2 5\n0 2 400Gbps 0.0005ms 0\n", r"t:2: line 2 lists 2 ids"),
        ("hello\n", r"t:1: a SimAI topology starts with"),
    ],
)  # fmt: skip
def test_malformed_simai_files(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_simai(text, "t")


def test_small_dual_homed_file(tmp_path: Path) -> None:
    # 2 servers x 2 GPUs (ids 0-3), NVSwitches 4-5, ASWs 6-9, PSW 10; each GPU reaches
    # two ASWs of its rail (dual-ToR)
    links = ["0 4 900Gbps 0.000025ms 0", "1 4 900Gbps 0.000025ms 0",
             "2 5 900Gbps 0.000025ms 0", "3 5 900Gbps 0.000025ms 0"]  # fmt: skip
    for gpu in range(4):
        rail = gpu % 2
        links += [f"{gpu} {6 + 2 * rail} 200Gbps 0.0005ms 0",
                  f"{gpu} {7 + 2 * rail} 200Gbps 0.0005ms 0"]  # fmt: skip
    links += [f"{asw} 10 400Gbps 0.0005ms 0" for asw in (6, 7, 8, 9)]
    text = f"11 2 2 5 {len(links)} H800\n4 5 6 7 8 9 10\n" + "\n".join(links) + "\n"
    raw, facts = parse_simai(text, "t")
    assert facts.servers == 2
    assert {s.key: s.role for s in raw.switches} == {
        "6": "leaf", "7": "leaf", "8": "leaf", "9": "leaf", "10": "spine",
    }  # fmt: skip
    assert all(n.ports == 2 for n in raw.nics)
    p = tmp_path / "small_simai"
    p.write_text(text)
    f = load_simai(p)
    assert f.node_specs[0].nic_ports == 2
    assert f.element("asw7").rail == 0
    assert f.element("asw9").rail == 1
    assert "su01/node01/nic1:2--asw9:1" in f.link_ids
