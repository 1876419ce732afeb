"""containerlab import (the real clos02 lab) and export with a round trip."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness.errors import ScenarioError
from harness.exporters.containerlab import to_containerlab
from harness.fabric import Fabric
from harness.fabric import Kind
from harness.fabric import LinkKind
from harness.fabric import two_tier
from harness.importers import load_containerlab
from harness.importers.build import notes_of
from harness.importers.containerlab import parse_containerlab
from harness.planning.audit.diff import diff_fabrics
from tests.importers.conftest import THIRD_PARTY

DOCKER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
ENDPOINT = re.compile(r"^\S+:\S+$")  # the clab schema's endpoint pattern


@pytest.fixture(scope="module")
def small() -> Fabric:
    return two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)


def test_clos02_roles_and_cables() -> None:
    f = load_containerlab(THIRD_PARTY / "containerlab_clos02.clab.yml")
    s = f.summary()
    assert f.name == "clos02"
    assert (s["nodes"], s["leaves"], s["spines"], s["cores"], s["tiers"]) == (4, 4, 4, 2, 3)
    assert (s["access_cables"], s["leaf_spine_cables"], s["spine_core_cables"]) == (4, 8, 4)
    assert f.element("superspine1").kind == Kind.CORE
    assert "client1/nic0:1--leaf1:3" in f.link_ids
    assert "leaf1:1--spine1:1" in f.link_ids
    assert "spine1:3--superspine1:1" in f.link_ids
    # each leaf serves its own client: four SUs of one leaf, all rail 0
    assert sorted(f.element(f"leaf{n}").su for n in range(1, 5)) == [1, 2, 3, 4]
    assert {f.element(f"leaf{n}").rail for n in range(1, 5)} == {0}
    assert any("state no rate" in n for n in notes_of(f))


def test_export_is_a_valid_lab(small: Fabric) -> None:
    doc = yaml.safe_load(to_containerlab(small))
    assert doc["name"] == "two-tier"
    nodes, links = doc["topology"]["nodes"], doc["topology"]["links"]
    assert doc["topology"]["kinds"]["linux"]["image"]
    assert len(nodes) == 4 + 8 + 2
    assert all(DOCKER_NAME.match(n) for n in nodes)
    assert {cfg["kind"] for cfg in nodes.values()} == {"linux"}
    assert all(isinstance(v, str) for cfg in nodes.values() for v in cfg["labels"].values())
    assert len(links) == small.summary()["cables"] == 32
    eps = [ep for link in links for ep in link["endpoints"]]
    assert all(ENDPOINT.match(ep) and ep.split(":")[0] in nodes for ep in eps)
    assert len(eps) == len(set(eps))  # one link per interface
    assert ["su01_node01:eth1", "su01_leaf-r0:eth1"] in [link["endpoints"] for link in links]
    assert all(not ep.endswith(":eth0") for ep in eps)  # eth0 is containerlab's management


def test_round_trip_keeps_counts_and_cables(small: Fabric, tmp_path: Path) -> None:
    path = tmp_path / "small.clab.yml"
    path.write_text(to_containerlab(small))
    back = load_containerlab(path)
    for key in ("nodes", "leaves", "spines", "cables", "access_cables", "leaf_spine_cables"):
        assert back.summary()[key] == small.summary()[key], key
    report = diff_fabrics(back, small)
    assert report.ok, str(report)


def test_export_with_a_nos_kind(small: Fabric) -> None:
    text = to_containerlab(
        small, switch_kind="nokia_srlinux", switch_image="ghcr.io/nokia/srlinux", name="lab1"
    )
    doc = yaml.safe_load(text)
    assert doc["name"] == "lab1"
    assert doc["topology"]["kinds"]["nokia_srlinux"]["image"] == "ghcr.io/nokia/srlinux"
    assert doc["topology"]["nodes"]["spine-01"]["kind"] == "nokia_srlinux"
    first = doc["topology"]["links"][0]["endpoints"]
    assert first == ["su01_node01:eth1", "su01_leaf-r0:e1-1"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("name: x\ntopology:\n  nodes:\n    a: {kind: linux}\n  links:\n"
         "    - endpoints: [\"a:eth1\", \"b:eth1\"]\n",
         r"lab.clab.yml:6: endpoint 'b:eth1' names unknown node 'b'; add it"),
        ("name: x\n", r"lab.clab.yml:1: no topology.nodes mapping"),
        ("name: x\ntopology:\n  nodes:\n    a: {labels: {harness.role: router}}\n",
         r"lab.clab.yml:4: node 'a' has harness.role 'router'"),
        ("name: x\ntopology:\n  nodes:\n    a: {}\n  links:\n    - endpoints: [\"a:eth1\"]\n",
         r"lab.clab.yml:6: a link needs two endpoints"),
        ("topology: [\n", r"lab.clab.yml:2:1: YAML syntax error: expected the node content"),
        # hostile label values: checked by type, never int() on whatever is there
        ("name: x\ntopology:\n  nodes:\n"
         "    l1: {labels: {harness.role: leaf, harness.rail: [0, 1]}}\n",
         r"lab.clab.yml:4: node 'l1': label harness.rail is \[0, 1\]; give a whole number"),
        ("name: x\ntopology:\n  nodes:\n"
         "    l1: {labels: {harness.role: leaf, harness.su: one}}\n",
         r"lab.clab.yml:4: node 'l1': label harness.su is 'one'; give a whole number "
         r"\(e.g. harness.su: 1\)"),
        ("name: x\ntopology:\n  nodes:\n    l1: {labels: {harness.su: -1}}\n",
         r"lab.clab.yml:4: node 'l1': label harness.su is -1; give a whole number"),
        ("name: x\ntopology:\n  nodes:\n    l1: {labels: {harness.role: {a: 1}}}\n",
         r"lab.clab.yml:4: node 'l1': label harness.role is \{'a': 1\}; give one name"),
        ("name: x\ntopology:\n  nodes:\n    l1: {labels: [harness.role]}\n",
         r"lab.clab.yml:4: node 'l1': labels must be a mapping of names to values, not a list"),
    ],
)  # fmt: skip
def test_malformed_labs(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_containerlab(text, "lab.clab.yml")


def test_number_labels_may_be_ints_or_digit_strings() -> None:
    text = (
        "name: x\ntopology:\n  nodes:\n"
        "    l1: {labels: {harness.role: leaf, harness.su: 2, harness.rail: '1'}}\n"
    )
    (switch,) = parse_containerlab(text, "lab.clab.yml").switches
    assert (switch.su, switch.rail) == (2, 1)


def test_host_and_mgmt_endpoints_are_skipped_with_a_note() -> None:
    text = (
        "name: x\ntopology:\n  nodes:\n    leaf1: {kind: linux}\n    srv1: {kind: linux}\n"
        '  links:\n    - endpoints: ["srv1:eth1", "leaf1:eth1"]\n'
        '    - endpoints: ["leaf1:eth9", "host:leaf1-eth9"]\n'
    )
    raw = parse_containerlab(text, "x.clab.yml")
    assert len(raw.cables) == 1
    assert raw.notes == ("1 link(s) to host/mgmt/bridge endpoints skipped",)
    assert [n.key for n in raw.nics] == ["srv1:eth1"]
    assert [s.key for s in raw.switches] == ["leaf1"]


def test_access_cable_kind_survives_the_round_trip(small: Fabric, tmp_path: Path) -> None:
    path = tmp_path / "rt.clab.yml"
    path.write_text(to_containerlab(small))
    back = load_containerlab(path)
    assert back.link_kind[back.link_index["su02/node02/nic3:1--su02/leaf-r3:2"]] == LinkKind.ACCESS
    assert back.element("su02/leaf-r3").rail == 3
