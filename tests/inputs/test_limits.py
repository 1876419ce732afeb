"""Limits checked before allocating, wide enough ids, and physical consistency at build time."""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.errors import FabricDesignError
from harness.errors import ScenarioError
from harness.fabric import two_tier
from harness.fabric.builder import FabricBuilder
from harness.fabric.fabric_file import load_fabric_file
from harness.fabric.generators import dual_tor
from harness.fabric.generators import three_tier
from harness.fabric.limits import MAX_ELEMENTS
from harness.fabric.limits import MAX_GBPS
from harness.fabric.limits import MAX_ID
from harness.fabric.limits import MAX_LANES
from harness.fabric.limits import MAX_LINKS
from harness.fabric.limits import MAX_PORT_NUMBER
from harness.fabric.limits import MAX_PORTS
from harness.fabric.limits import MAX_SERVERS
from harness.fabric.limits import MAX_SUS
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.importers import load_dump

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scenario-format.md"
DUMPS = Path(__file__).resolve().parents[1] / "data" / "importers"
SMALL: dict[str, Any] = {"sus": 2, "nodes_per_su": 2, "spines": 2, "leaf_radix": 8}


def design_error(**params: Any) -> str:
    start = time.perf_counter()
    with pytest.raises(FabricDesignError) as info:
        two_tier(**{**SMALL, **params})
    assert time.perf_counter() - start < 1.0, "the limit was checked after allocating"
    return str(info.value)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"sus": 10**30}, "parameter 'sus' must be at most 10,000 (MAX_SUS), got 10000000000"),
        ({"nodes_per_su": 1_000_000_000},
         "parameter 'nodes_per_su' must be at most 100,000 (MAX_SERVERS), got 1000000000"),
        ({"sus": 26, "nodes_per_su": 4000, "leaf_radix": 4096},
         "104,000 servers is more than MAX_SERVERS = 100,000"),
        ({"sus": True}, "parameter 'sus' must be a whole number, not true/false"),
        ({"nodes_per_su": [2, "x"]}, "parameter 'nodes_per_su' must be a whole number"),
        ({"spines": -1}, "parameter 'spines' must be >= 1, got -1"),
        ({"cables_per_pair": 0}, "parameter 'cables_per_pair' must be >= 1, got 0"),
        ({"uplink_gbps": float("inf")}, "parameter 'uplink_gbps' must be a finite number"),
        ({"uplink_gbps": -100.0}, "parameter 'uplink_gbps' must be > 0, got -100"),
        ({"leaf_radix": 10**6}, "parameter 'leaf_radix' must be at most 4,096 (MAX_PORTS)"),
        ({"node_overrides": {"gpus": 100_000_000}},
         "node parameter 'gpus' must be at most 576 (MAX_GPUS_PER_SERVER), got 100000000"),
        ({"node_overrides": {"cpus": "x"}}, "node parameter 'cpus' must be a whole number, not a"),
        ({"node_overrides": {"cpus": 0}}, "node parameter 'cpus' must be >= 1, got 0"),
        ({"node_overrides": {"nic_gbps": -200}}, "node parameter 'nic_gbps' must be > 0, got -200"),
        ({"node_overrides": {"pcie_gbs": -26}}, "node parameter 'pcie_gbs' must be > 0, got -26"),
        ({"node_overrides": {"pcie_gbs": float("nan")}},
         "node parameter 'pcie_gbs' must be a finite number, got nan"),
        ({"node_overrides": {"rails": True}}, "node parameter 'rails' must be a whole number"),
        ({"node_overrides": {"nvlink_lanes": [2, 2, 2, 2, 2, 100000]}},
         "node parameter 'nvlink_lanes' must be at most 64 (MAX_LANES), got 100000"),
        ({"leaf_down_ports": 1},
         "two-tier: leaf_down_ports 1 is fewer than the 2 servers of the largest SU; each "
         "server's NIC needs its own leaf port (give leaf_down_ports >= 2, or leave it out)"),
    ],
)  # fmt: skip
def test_generator_parameters_are_checked_before_building(
    params: dict[str, Any], expected: str
) -> None:
    assert expected in design_error(**params)


def test_other_generators_check_their_parameters() -> None:
    with pytest.raises(FabricDesignError, match=r"'sus' must be at most 10,000 \(MAX_SUS\)"):
        three_tier(sus=10**30, nodes_per_su=2, sus_per_pod=2, spines_per_pod=2)
    with pytest.raises(FabricDesignError, match="leaf_down_ports 1 is fewer than the 4 servers"):
        three_tier(sus=2, nodes_per_su=4, sus_per_pod=2, spines_per_pod=2, radix=16,
                   leaf_down_ports=1)  # fmt: skip
    with pytest.raises(FabricDesignError, match=r"'hosts_per_segment' must be at most 100,000"):
        dual_tor(segments=1, hosts_per_segment=10**9, spines_per_plane=2)


def test_leaf_down_ports_no_longer_puts_two_cables_in_one_port() -> None:
    f = two_tier(**SMALL, leaf_down_ports=3)
    cables = f.link_kind != LinkKind.CPU_LINK  # any: ports are checked for every cable
    ends = [(int(e), int(p)) for e, p in zip(f.link_b[cables], f.link_b_port[cables], strict=True)
            if p]  # fmt: skip
    ends += [(int(e), int(p)) for e, p in zip(f.link_a[cables], f.link_a_port[cables], strict=True)
             if p]  # fmt: skip
    assert len(ends) == len(set(ends))


def test_limits_are_documented_with_their_values() -> None:
    doc = DOCS.read_text(encoding="utf-8")
    for name, value in {
        "MAX_ELEMENTS": MAX_ELEMENTS, "MAX_LINKS": MAX_LINKS, "MAX_SERVERS": MAX_SERVERS,
        "MAX_SUS": MAX_SUS, "MAX_PORTS": MAX_PORTS, "MAX_PORT_NUMBER": MAX_PORT_NUMBER,
        "MAX_LANES": MAX_LANES, "MAX_ID": MAX_ID, "MAX_GBPS": int(MAX_GBPS),
    }.items():  # fmt: skip
        assert re.search(rf"`{name}`\s*\|\s*{value:,}\s*\|", doc), name


def test_the_largest_preset_is_well_inside_the_limits() -> None:
    # clos-100k: 380,001 elements and 1,088,000 links (harness show clos-100k)
    assert MAX_ELEMENTS >= 5 * 380_001
    assert MAX_LINKS >= 5 * 1_088_000


# -- the builder ------------------------------------------------------------------------


def builder() -> tuple[FabricBuilder, int, int, int]:
    b = FabricBuilder()
    leaf = b.add("leaf", Kind.LEAF, ports=4)
    spine = b.add("spine", Kind.SPINE, ports=4)
    nic = b.add("nic", Kind.NIC, ports=1)
    return b, leaf, spine, nic


def test_two_cables_in_one_port() -> None:
    b, leaf, spine, _ = builder()
    b.link(leaf, spine, LinkKind.LEAF_SPINE, 200.0, a_port=2, b_port=1)
    with pytest.raises(FabricDesignError, match=r"two cables in port leaf:2; every port takes one"):
        b.link(leaf, spine, LinkKind.LEAF_SPINE, 200.0, a_port=2, b_port=2)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"a_port": 0}, r"leaf port 0: ports are numbered from 1 \(port 0 does not exist\)"),
        ({"a_port": -3}, r"leaf port -3: ports are numbered from 1"),
        ({"a_port": 5}, r"leaf \(leaf\) needs port 5 but has only 4 ports"),
        ({"a_port": 10**12}, r"leaf \(leaf\) needs port 1000000000000 but has only 4 ports"),
        ({"capacity_gbps": 0.0}, r"runs at 0 Gb/s; a link that is up runs at more than 0"),
        ({"capacity_gbps": float("nan")}, r"runs at nan Gb/s"),
        ({"capacity_gbps": -5.0}, r"runs at -5 Gb/s"),
        ({"lanes": 0}, r"has 0 lanes; give 1 to MAX_LANES = 64"),
        ({"lanes": 100_000}, r"has 100000 lanes; give 1 to MAX_LANES = 64"),
    ],
)  # fmt: skip
def test_impossible_cables(kwargs: dict[str, Any], expected: str) -> None:
    b, leaf, spine, _ = builder()
    args: dict[str, Any] = {"capacity_gbps": 200.0, **kwargs}
    cap = args.pop("capacity_gbps")
    with pytest.raises(FabricDesignError, match=expected):
        b.link(leaf, spine, LinkKind.LEAF_SPINE, cap, **args)


def test_a_self_loop_and_duplicate_ids() -> None:
    b, leaf, _, _ = builder()
    with pytest.raises(FabricDesignError, match="a leaf-spine link from leaf to itself"):
        b.link(leaf, leaf, LinkKind.LEAF_SPINE, 200.0)
    with pytest.raises(FabricDesignError, match=r"duplicate element id 'leaf' \(already used by a"):
        b.add("leaf", Kind.GPU)


def test_ids_past_32_bits_and_radixes_past_the_limit() -> None:
    b = FabricBuilder()
    with pytest.raises(FabricDesignError, match="MAX_ID = 1,000,000,000"):
        b.add("x", Kind.LEAF, su=2**40, ports=4)
    with pytest.raises(FabricDesignError, match="MAX_PORTS = 4,096"):
        b.add("y", Kind.LEAF, ports=10**9)


def test_big_ids_are_a_fabric_not_an_overflow() -> None:
    b = FabricBuilder()
    b.add("leaf", Kind.LEAF, su=40_000, node=40_000, rail=300, pod=40_000, plane=300, ports=4)
    f = b.build("big", tiers=2)
    assert (int(f.su[0]), int(f.node_no[0]), int(f.rail[0]), int(f.plane[0])) == (
        40_000, 40_000, 300, 300
    )  # fmt: skip


# -- fabric files -----------------------------------------------------------------------


def fabric_file(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "fabric.yaml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


EXPLICIT = """\
    nodes:
      - {id: n1, model: a800, su: 40000, node: 40000, overrides: {rails: 1, storage_nics: 0}}
    switches:
      - {id: leaf, kind: leaf, rail: 0, ports: 8}
      - {id: spine, kind: spine, ports: 8}
    links:
      - {a: n1/nic0, b: leaf, kind: access, gbps: 200}
      - {a: leaf, b: spine, kind: leaf-spine, gbps: 200}
"""


def test_a_40000th_su_and_node_is_a_fabric(tmp_path: Path) -> None:
    f = load_fabric_file(fabric_file(tmp_path, EXPLICIT))
    assert int(f.su[f.index["n1"]]) == 40_000
    assert int(f.node_no[f.index["n1/gpu0"]]) == 40_000


def test_130_servers_with_distinct_overrides(tmp_path: Path) -> None:
    nodes = "\n".join(
        f"  - {{id: n{i}, model: a800, overrides: {{host_memory_gbs: {100 + i}}}}}"
        for i in range(130)
    )
    f = load_fabric_file(fabric_file(tmp_path, f"nodes:\n{nodes}\n"))
    assert len(f.node_specs) == 130
    assert int(f.node_spec_of[f.index["n129"]]) == 129
    assert f.node_spec_of.dtype == np.int32


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("gbps: 200}\n      - {a: leaf", "gbps: 200, lanes: 100000}\n      - {a: leaf",
         ":7:59: [links[0].lanes] lanes must be at most 64 (MAX_LANES), got 100000"),
        ("kind: leaf-spine, gbps: 200}", "kind: leaf-spine, gbps: 200, count: 1000000000}",
         ":8:61: [links[1].count] count must be at most 4,096 (MAX_CABLES_PER_PAIR)"),
        ("kind: leaf-spine, gbps: 200}", "kind: leaf-spine, gbps: 200, a_port: 0}",
         ":8:62: [links[1].a_port] a_port must be >= 1, got 0"),
        ("kind: leaf-spine, gbps: 200}", "kind: leaf-spine, gbps: .inf}",
         ":8:49: [links[1].gbps] gbps (Gb/s per direction) must be a finite number, got inf"),
        ("kind: leaf-spine, gbps: 200}", "kind: leaf-spine, gbps: .nan}",
         "gbps (Gb/s per direction) must be a finite number, got nan"),
        ("kind: leaf-spine, gbps: 200}", "kind: leaf-spine, gbps: 0}",
         "gbps (Gb/s per direction) must be > 0, got 0"),
        ("ports: 8}\n      - {id: spine", "ports: 100000}\n      - {id: spine",
         ":4:44: [switches[0].ports] ports must be at most 4,096 (MAX_PORTS), got 100000"),
        ("su: 40000", "su: 10000000000", "su must be at most 1,000,000,000 (MAX_ID)"),
        ("su: 40000", "su: true", "su must be a whole number, not true/false"),
        ("storage_nics: 0}", "storage_nics: 0, cpus: x}",
         "node override 'cpus' must be a whole number, got 'x'"),
        ("storage_nics: 0}", "storage_nics: 0, nic_gbps: -1}",
         "node parameter 'nic_gbps' must be > 0, got -1"),
        ("storage_nics: 0}", "storage_nics: 0, gpus: 100000000}",
         "node parameter 'gpus' must be at most 576 (MAX_GPUS_PER_SERVER)"),
    ],
)  # fmt: skip
def test_fabric_file_values_past_their_limits(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    assert old in EXPLICIT
    path = fabric_file(tmp_path, EXPLICIT.replace(old, new, 1))
    start = time.perf_counter()
    with pytest.raises(ScenarioError) as info:
        load_fabric_file(path)
    assert time.perf_counter() - start < 2.0
    assert any(expected in str(p) for p in info.value.problems), str(info.value)
    assert all(p.path == str(path) and p.line for p in info.value.problems)


def test_a_port_used_twice_in_a_fabric_file(tmp_path: Path) -> None:
    text = EXPLICIT + "      - {a: leaf, b: spine, kind: leaf-spine, gbps: 200, a_port: 2}\n"
    with pytest.raises(
        FabricDesignError, match=r":9:5: \[links\[2\]\] port leaf:2 is taken by the cable on line 8"
    ):
        load_fabric_file(fabric_file(tmp_path, text))


# -- importers --------------------------------------------------------------------------


def test_a_gpu40000_hostname_is_a_fabric(tmp_path: Path) -> None:
    text = (DUMPS / "rail2x2.ibnetdiscover").read_text(encoding="utf-8")
    text = text.replace("su02/node02", "gpu40000").replace("su01/node01", "gpu70000")
    p = tmp_path / "big.ibnetdiscover"
    p.write_text(text, encoding="utf-8")
    f = load_dump(p)
    assert f.summary()["nodes"] == 4
    assert any("40000" in i for i in f.ids)
