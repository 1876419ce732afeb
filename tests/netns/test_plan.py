"""The addressing and naming plan (pure: no root)."""

from __future__ import annotations

import ipaddress

import pytest

from harness.backends.netns import plan as plan_mod
from harness.backends.netns.plan import Plan
from harness.backends.netns.plan import code_of
from harness.backends.netns.plan import scale_text
from harness.backends.netns.plan import v6_of
from harness.errors import ScenarioError
from harness.fabric import preset
from harness.fabric.generators import three_tier
from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind


@pytest.fixture(scope="module")
def seed() -> Fabric:
    return preset("seed-a800")


def test_seed_plan_counts(seed: Fabric) -> None:
    p = Plan(seed, "habcde")
    roles = [n.role for n in p.namespaces]
    assert roles.count("server") == 200
    assert roles.count("switch") == 60
    assert roles.count("storage") == 10  # one per SU: its two storage switches act as one pair
    assert len(p.wires) == 800 + 800 + 400
    assert len(p.bonds) == 200


def test_names_are_short_unique_and_map_back(seed: Fabric) -> None:
    p = Plan(seed, "habcde")
    names = [n.name for n in p.namespaces]
    assert len(set(names)) == len(names)
    assert max(len(n) for n in names) <= 15
    mapping = p.names()
    assert mapping["habcde-s03n07"] == ("su03/node07",)
    assert mapping["habcde-s03l1"] == ("su03/leaf-r1",)
    assert mapping["habcde-sp05"] == ("spine-05",)
    assert mapping["habcde-s03st"] == ("su03/storage-sw1", "su03/storage-sw2")
    for wire in p.wires:
        for port in (wire.a, wire.b):
            assert len(port.ifname) <= 15  # IFNAMSIZ - 1


def test_interface_indexes_unique_per_namespace(seed: Fabric) -> None:
    p = Plan(seed, "habcde")
    seen: set[tuple[int, int]] = set()
    for wire in p.wires:
        for port in (wire.a, wire.b):
            assert (port.ns, port.ifindex) not in seen
            assert port.ifindex >= 2  # 1 is lo
            seen.add((port.ns, port.ifindex))


def test_addresses_unique_point_to_point_and_v6_twins(seed: Fabric) -> None:
    p = Plan(seed, "habcde")
    addrs = [port.v4 for w in p.wires for port in (w.a, w.b)]
    assert len(set(addrs)) == len(addrs)
    for w in p.wires:
        a, b = ipaddress.IPv4Address(w.a.v4), ipaddress.IPv4Address(w.b.v4)
        assert abs(int(a) - int(b)) == 1
        assert ipaddress.ip_network(f"{a}/31", strict=False) == ipaddress.ip_network(
            f"{b}/31", strict=False
        )
        assert w.a.v6 == v6_of(w.a.v4)
    assert v6_of("10.1.2.3") == "fd68:6172:6e65::a01:203"


def test_access_blocks_per_leaf_and_rail(seed: Fabric) -> None:
    p = Plan(seed, "habcde")
    f = seed
    for w in p.wires:
        if w.kind is not LinkKind.ACCESS:
            continue
        leaf = int(f.link_b[w.link])
        assert ipaddress.IPv4Address(w.a.v4) in ipaddress.IPv4Network(p.leaf_block[leaf])
        assert ipaddress.IPv4Address(w.a.v4) in ipaddress.IPv4Network(
            p.rail_block[int(f.rail[leaf])]
        )
    nic = f.index["su02/node03/nic1"]
    assert p.port_of_nic(nic).ifname == "r1"


def test_rates_at_scale(seed: Fabric) -> None:
    p = Plan(seed, "habcde", scale=1e-3)
    rates = {w.kind: w.rate_bps for w in p.wires}
    assert rates[LinkKind.ACCESS] == 200_000_000
    assert rates[LinkKind.STORAGE] == 25_000_000
    assert "1/1000" in p.describe()
    assert "200 Mb/s" in scale_text(1e-3)
    with pytest.raises(ScenarioError, match="scale factor"):
        Plan(seed, "habcde", scale=0)


def test_three_tier_codes() -> None:
    f = three_tier(
        sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2, radix=16, storage=False
    )
    p = Plan(f, "hzz")
    names = {n.name for n in p.namespaces}
    assert "hzz-p01sp01" in names
    assert any(n.startswith("hzz-c") for n in names)
    assert code_of("core-g07-03") == "c07-03"


def test_refuses_fabrics_too_big(seed: Fabric, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_mod, "MAX_NAMESPACES", 100)
    with pytest.raises(ScenarioError, match="network namespaces"):
        Plan(seed, "habcde")
