"""The fabric description: presets against DOMAIN.md, design limits, ids, immutability."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from harness.errors import FabricDesignError
from harness.errors import ScenarioError
from harness.fabric import NODE_TEMPLATES
from harness.fabric import PRESETS
from harness.fabric import Fabric
from harness.fabric import FabricBuilder
from harness.fabric import Kind
from harness.fabric import LinkKind
from harness.fabric import dual_tor
from harness.fabric import preset
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.fabric.model import CABLE_KINDS
from harness.fabric.model import SWITCH_KINDS
from harness.fabric.nodes import node_template


@functools.cache
def built(name: str) -> Fabric:
    return preset(name)


def cables_per_pair(f: Fabric, kind: LinkKind) -> Counter[int]:
    links = f.links_of_kind(kind)
    pairs = Counter(zip(f.link_a[links].tolist(), f.link_b[links].tolist(), strict=True))
    return Counter(pairs.values())


def cables_per_element(f: Fabric, elements: np.ndarray) -> np.ndarray:
    cables = f.links_of_kind(*CABLE_KINDS)
    ends = np.concatenate([f.link_a[cables], f.link_b[cables]])
    return np.bincount(ends, minlength=f.n_elements)[elements]


# -- presets against DOMAIN.md -------------------------------------------------------


def test_seed_a800_counts() -> None:
    s = built("seed-a800").summary()
    assert (s["nodes"], s["gpus"], s["nics"]) == (200, 1600, 800)
    assert (s["leaves"], s["spines"], s["cores"], s["tiers"]) == (40, 20, 0, 2)
    assert (s["sus"], s["rails"]) == (10, 4)
    assert s["access_cables"] == 800
    assert s["leaf_spine_cables"] == 800
    assert s["spine_core_cables"] == 0


def test_seed_a800_every_leaf_meets_every_spine_once() -> None:
    f = built("seed-a800")
    assert cables_per_pair(f, LinkKind.LEAF_SPINE) == Counter({1: 40 * 20})
    # 20 down + 20 up on every 40-port leaf, 40 leaves on every 40-port spine
    assert set(cables_per_element(f, f.leaves).tolist()) == {40}
    assert set(cables_per_element(f, f.spines).tolist()) == {40}


def test_seed_a100_is_the_seed_with_a100_nodes() -> None:
    a100, a800 = built("seed-a100"), built("seed-a800")
    assert a100.summary() == a800.summary()
    assert a100.node_specs[0].model == "A100"


def test_superpod_h100_counts() -> None:
    f = built("superpod-h100")
    s = f.summary()
    assert (s["nodes"], s["gpus"], s["nics"]) == (127, 1016, 1016)
    assert (s["leaves"], s["spines"], s["sus"], s["rails"]) == (32, 16, 4, 8)
    assert s["leaf_spine_cables"] == 1024
    # one SU-1 slot is the UFM: 31 + 32 + 32 + 32 nodes
    assert Counter(f.su[f.servers].tolist()) == {1: 31, 2: 32, 3: 32, 4: 32}
    # 1024 / (32 leaves x 16 spines) = 2 cables per pair
    assert cables_per_pair(f, LinkKind.LEAF_SPINE) == Counter({2: 32 * 16})
    uplinks = np.bincount(f.link_a[f.links_of_kind(LinkKind.LEAF_SPINE)], minlength=f.n_elements)
    assert set(uplinks[f.leaves].tolist()) == {32}


def test_b200_16su_counts() -> None:
    f = built("b200-16su")
    s = f.summary()
    assert (s["nodes"], s["gpus"], s["tiers"]) == (512, 4096, 3)
    assert (s["leaves"], s["spines"], s["cores"]) == (128, 128, 64)
    assert s["access_cables"] == s["leaf_spine_cables"] == s["spine_core_cables"] == 4096
    assert set(cables_per_element(f, f.cores).tolist()) == {64}


def test_b200_8su_builds_as_two_tier() -> None:
    # DOMAIN.md §6.6: 8 SU / 256 nodes / 2,048 GPUs fit in two tiers of 64-port switches
    f = two_tier(sus=8, nodes_per_su=32, node="b200", spines=32, leaf_radix=64, storage=False)
    s = f.summary()
    assert (s["nodes"], s["gpus"], s["leaves"], s["spines"], s["tiers"]) == (256, 2048, 64, 32, 2)
    assert s["access_cables"] == s["leaf_spine_cables"] == 2048


def test_hpn_dual_tor_counts() -> None:
    f = built("hpn-dual-tor")
    s = f.summary()
    assert (s["nodes"], s["gpus"], s["nics"]) == (128, 1024, 1024)
    assert (s["leaves"], s["spines"]) == (16, 120)
    assert Counter(f.plane[f.spines].tolist()) == {1: 60, 2: 60}
    assert Counter(f.plane[f.leaves].tolist()) == {1: 8, 2: 8}
    assert s["access_cables"] == 2 * 1024


def test_hpn_dual_tor_nic_ports_go_to_both_planes() -> None:
    f = built("hpn-dual-tor")
    access = f.links_of_kind(LinkKind.ACCESS)
    for nic in f.nics[:16].tolist():
        mine = access[f.link_a[access] == nic]
        leaves = f.link_b[mine]
        assert sorted(f.link_a_port[mine].tolist()) == [1, 2]
        assert sorted(f.plane[leaves].tolist()) == [1, 2]
        assert set(f.rail[leaves].tolist()) == {int(f.rail[nic])}


@pytest.mark.slow
def test_clos_100k_counts_and_radix() -> None:
    f = preset("clos-100k")
    s = f.summary()
    assert s["gpus"] == 102_400
    assert (s["leaves"], s["spines"], s["cores"]) == (3_200, 3_200, 1_600)
    switches = f.indices_of_kind(Kind.LEAF, Kind.SPINE, Kind.CORE)
    assert int(cables_per_element(f, switches).max()) <= 64
    compute = f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
    highest = np.zeros(f.n_elements, dtype=np.int64)
    np.maximum.at(highest, f.link_a[compute], f.link_a_port[compute])
    np.maximum.at(highest, f.link_b[compute], f.link_b_port[compute])
    assert int(highest[switches].max()) <= 64
    assert set(cables_per_element(f, f.cores).tolist()) == {64}  # every core full, none over


@pytest.mark.parametrize("name", sorted(set(PRESETS) - {"clos-100k"}))
def test_presets_build_with_their_name(name: str) -> None:
    f = built(name)
    assert f.name == name
    assert dict(f.params)["generator"] in ("two-tier", "three-tier", "dual-tor")


# -- design limits ------------------------------------------------------------------


def test_seed_with_11_sus_is_past_the_two_tier_limit() -> None:
    with pytest.raises(FabricDesignError) as info:
        preset("seed-a800", sus=11)
    msg = str(info.value)
    assert "two-tier fabric past its limit" in msg
    assert "200 nodes" in msg
    assert "44 leaves" in msg
    assert "three-tier" in msg  # the fix


def test_leaf_radix_overflow_names_ports_and_fix() -> None:
    with pytest.raises(FabricDesignError, match=r"needs 45 ports but the switch has 40") as info:
        preset("seed-a800", spines=25)
    assert "fewer spines" in str(info.value)


def test_three_tier_pods_must_be_full() -> None:
    with pytest.raises(FabricDesignError, match="3 SUs do not fill pods of 2"):
        three_tier(sus=3, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2, radix=16)


def test_three_tier_spines_need_uplink_ports() -> None:
    with pytest.raises(FabricDesignError, match="no ports left for core uplinks"):
        three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2, radix=8)


def test_dual_tor_needs_two_port_nics() -> None:
    with pytest.raises(FabricDesignError, match=r"set nic_ports: 2"):
        dual_tor(segments=1, hosts_per_segment=2, node="a800", spines_per_plane=2)


def test_dual_tor_aggregation_radix() -> None:
    with pytest.raises(FabricDesignError, match="more aggregation switches per plane"):
        dual_tor(segments=4, hosts_per_segment=2, spines_per_plane=1, spine_radix=16)


def test_nodes_per_su_list_must_match_sus() -> None:
    with pytest.raises(FabricDesignError, match="lists 2 SUs but sus is 3"):
        two_tier(sus=3, nodes_per_su=[2, 2], spines=2, leaf_radix=16)


def test_unknown_preset_suggests_the_closest() -> None:
    with pytest.raises(FabricDesignError, match=r"did you mean 'seed-a800'"):
        preset("seed-a80")


def test_unknown_preset_parameter() -> None:
    with pytest.raises(FabricDesignError, match=r"bad parameter for preset 'seed-a800'.*bogus"):
        preset("seed-a800", bogus=1)


def test_unknown_node_model_suggests_the_closest() -> None:
    with pytest.raises(FabricDesignError, match=r"did you mean 'a800'"):
        node_template("a8000")


def test_node_overrides_are_checked() -> None:
    with pytest.raises(FabricDesignError, match="unknown node parameter"):
        two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8, node_overrides={"gpu": 4})
    with pytest.raises(FabricDesignError, match="multiple of pcie_switches"):
        two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8, node_overrides={"gpus": 6})


def test_builder_refuses_a_port_beyond_the_radix() -> None:
    b = FabricBuilder()
    leaf = b.add("leaf", Kind.LEAF, ports=1)
    spine = b.add("spine", Kind.SPINE, ports=4)
    b.link(leaf, spine, LinkKind.LEAF_SPINE, 200.0)
    with pytest.raises(FabricDesignError, match=r"leaf \(leaf\) needs port 2 but has only 1"):
        b.link(leaf, spine, LinkKind.LEAF_SPINE, 200.0)


def test_builder_refuses_duplicate_ids() -> None:
    b = FabricBuilder()
    b.add("x", Kind.LEAF)
    with pytest.raises(FabricDesignError, match="duplicate element id 'x'"):
        b.add("x", Kind.SPINE)


def test_design_errors_are_user_errors() -> None:
    assert issubclass(FabricDesignError, ScenarioError)
    assert issubclass(FabricDesignError, ValueError)


def test_small_three_tier_counts() -> None:
    f = three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2,
                   radix=16, storage=False)  # fmt: skip
    s = f.summary()
    assert (s["leaves"], s["spines"], s["cores"], s["tiers"]) == (16, 4, 2, 3)
    # every spine: 8 leaves down, 8 uplinks (non-blocking)
    assert set(cables_per_element(f, f.spines).tolist()) == {16}


def test_uneven_sus() -> None:
    f = two_tier(sus=2, nodes_per_su=[3, 1], spines=2, leaf_radix=16, storage=False)
    assert Counter(f.su[f.servers].tolist()) == {1: 3, 2: 1}


# -- ids -------------------------------------------------------------------------------


def test_element_ids_are_hierarchical() -> None:
    f = built("seed-a800")
    for eid, kind in [
        ("su03/node07", Kind.NODE),
        ("su03/node07/gpu3", Kind.GPU),
        ("su03/node07/nic1", Kind.NIC),
        ("su03/node07/nvsw5", Kind.NVSWITCH),
        ("su03/node07/pcie2", Kind.PCIE_SWITCH),
        ("su03/node07/cpu1", Kind.CPU),
        ("su03/node07/stor0", Kind.STORAGE_NIC),
        ("su03/leaf-r1", Kind.LEAF),
        ("spine-05", Kind.SPINE),
        ("su03/storage-sw1", Kind.STORAGE_SWITCH),
    ]:
        assert f.element(eid).kind is kind, eid
    e = f.element("su03/node07/nic1")
    assert (e.su, e.node, e.rail, e.parent) == (3, 7, 1, f.index["su03/node07"])


def test_three_tier_ids() -> None:
    f = built("b200-16su")
    assert f.element("pod02/spine-05").pod == 2
    assert f.element("core-g07-02").kind is Kind.CORE
    assert f.element("su05/leaf-r7").pod == 2


def test_ids_are_unique_and_indexed() -> None:
    f = built("seed-a800")
    assert len(set(f.ids)) == f.n_elements
    assert all(f.index[eid] == i for i, eid in enumerate(f.ids))
    assert len(set(f.link_ids)) == f.n_links
    assert all(f.link(i).id == lid for i, lid in enumerate(f.link_ids[:500]))


def test_rail_wiring_nic_r_to_leaf_r_on_port_n() -> None:
    f = built("seed-a800")
    access = f.links_of_kind(LinkKind.ACCESS)
    for i in access.tolist():
        nic, leaf = f.element(int(f.link_a[i])), f.element(int(f.link_b[i]))
        assert (nic.kind, leaf.kind) == (Kind.NIC, Kind.LEAF)
        assert (leaf.su, leaf.rail) == (nic.su, nic.rail)
        assert int(f.link_b_port[i]) == nic.node


def test_cable_and_port_ids() -> None:
    f = built("seed-a800")
    assert f.link_ids[f.links_of_kind(LinkKind.ACCESS)[0]] == "su01/node01/nic0:1--su01/leaf-r0:1"
    # leaf uplinks take the ports after the 20 down ports, spine by spine
    assert f.link_ids[f.links_of_kind(LinkKind.LEAF_SPINE)[0]] == "su01/leaf-r0:21--spine-01:1"
    cable_re = re.compile(r"^(?P<a>[^:]+):(?P<pa>\d+)--(?P<b>[^:]+):(?P<pb>\d+)$")
    for i in f.links_of_kind(*CABLE_KINDS)[::37].tolist():
        m = cable_re.match(f.link_ids[i])
        assert m is not None
        assert f.port_index[f"{m['a']}:{m['pa']}"] == (i, 0)
        assert f.port_index[f"{m['b']}:{m['pb']}"] == (i, 1)
        assert f.port_id(i, 0) == f"{m['a']}:{m['pa']}"
    internal = f.links_of_kind(LinkKind.NVLINK)[0]
    assert f.link_ids[internal] == "su01/node01/gpu0--su01/node01/nvsw0"
    assert len(f.port_index) == 2 * f.links_of_kind(*CABLE_KINDS).size


def test_lower_tier_first_in_cable_ids() -> None:
    f = built("b200-16su")
    order = {Kind.NIC: 0, Kind.LEAF: 1, Kind.SPINE: 2, Kind.CORE: 3}
    for i in f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).tolist():
        a, b = Kind(int(f.kind[f.link_a[i]])), Kind(int(f.kind[f.link_b[i]]))
        assert order[a] + 1 == order[b]


def test_parts_of_a_server() -> None:
    f = built("seed-a800")
    srv = f.index["su02/node03"]
    assert len(f.parts_of(srv, Kind.GPU)) == 8
    assert len(f.parts_of(srv, Kind.NIC)) == 4
    assert len(f.parts_of(srv, Kind.NVSWITCH)) == 6
    assert len(f.parts_of(srv)) == 2 + 4 + 6 + 8 + 4 + 2
    assert f.node_spec(srv).model == "A800"
    with pytest.raises(KeyError, match="spine-01 is not a server"):
        f.node_spec(f.index["spine-01"])


# -- immutability ----------------------------------------------------------------------


def test_arrays_are_read_only() -> None:
    f = built("seed-a800")
    for name in ("kind", "su", "rail", "parent", "link_a", "link_b", "link_capacity",
                 "link_kind", "link_lanes", "node_spec_of"):  # fmt: skip
        arr = getattr(f, name)
        assert not arr.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = arr[0]
    offsets, links = f.incident
    assert not offsets.flags.writeable
    assert not links.flags.writeable


def test_fabric_and_views_are_frozen() -> None:
    f = built("seed-a800")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.name = "other"  # type: ignore[misc]
    e = f.element("spine-01")
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.id = "spine-99"  # type: ignore[misc]
    spec = f.node_specs[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.gpus = 4  # type: ignore[misc]


def test_generators_are_pure() -> None:
    a = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8)
    b = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8)
    assert a is not b
    assert a.ids == b.ids
    assert np.array_equal(a.link_a, b.link_a)
    assert np.array_equal(a.link_capacity, b.link_capacity)


# -- NVLink and node templates ------------------------------------------------------------


@pytest.mark.parametrize(("model", "gbs"), [("a100", 600.0), ("a800", 400.0), ("h100", 900.0)])
def test_nvlink_per_gpu(model: str, gbs: float) -> None:
    assert NODE_TEMPLATES[model].spec.nvlink_gbs_per_gpu == gbs
    f = two_tier(sus=1, nodes_per_su=1, node=model, spines=1, leaf_radix=8, storage=False)
    # the NVLink links of one GPU carry the same figure (per direction x 2)
    gpu = f.index["su01/node01/gpu0"]
    links = [i for i in f.links_at(gpu).tolist() if f.link_kind[i] == int(LinkKind.NVLINK)]
    assert sum(float(f.link_capacity[i]) for i in links) / 8 * 2 == gbs


def test_seed_nic_and_pcie_figures() -> None:
    spec = NODE_TEMPLATES["a800"].spec
    assert (spec.rails, spec.nic_gbps, spec.storage_nics, spec.storage_gbps) == (4, 200.0, 2, 25.0)
    assert spec.pcie_switches == 4
    t = NODE_TEMPLATES["a800"]
    # two neighbouring GPUs share a PCIe switch with one NIC (the GDR path)
    assert [t.rail_of_gpu(g) for g in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [t.pcie_of_nic(r) for r in range(4)] == [0, 1, 2, 3]


# -- networkx ----------------------------------------------------------------------------


def test_to_networkx_whole_fabric() -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8)
    g = f.to_networkx()
    assert isinstance(g, nx.MultiGraph)
    assert g.number_of_nodes() == f.n_elements
    assert g.number_of_edges() == f.n_links
    # servers are containers (parts point at them through ``parent``), not graph nodes with
    # links: everything else is one component
    comps = sorted(nx.connected_components(g), key=len)
    assert [sorted(c) for c in comps[:-1]] == [[f.ids[s]] for s in f.servers.tolist()]
    assert g.nodes["su01/leaf-r0"]["kind"] == "leaf"
    assert g.nodes["su02/node01/nic3"]["rail"] == 3
    data = g.get_edge_data("su01/node01/nic0", "su01/leaf-r0")
    assert list(data) == ["su01/node01/nic0:1--su01/leaf-r0:1"]
    edge = data["su01/node01/nic0:1--su01/leaf-r0:1"]
    assert (edge["kind"], edge["capacity_gbps"], edge["ports"]) == ("access", 200.0, (1, 1))


def test_to_networkx_cables_only() -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=True)
    g = f.to_networkx(cables_only=True)
    assert g.number_of_edges() == f.links_of_kind(*CABLE_KINDS).size
    kinds = Counter(k for _, k in g.nodes(data="kind"))
    assert "gpu" not in kinds
    assert kinds["nic"] == 16
    assert kinds["leaf"] == 8
    # without servers' insides, compute and storage networks are apart
    assert nx.number_connected_components(g) == 2


def test_switch_kinds_have_radix() -> None:
    f = built("seed-a800")
    switches = f.indices_of_kind(*SWITCH_KINDS)
    assert int(f.ports[switches].min()) > 0
    assert set(f.ports[f.leaves].tolist()) == {40}
