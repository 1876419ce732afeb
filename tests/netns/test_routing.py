"""``routing: sm`` tables (pure: no root): up/down, ECMP, routing around what is dead."""

from __future__ import annotations

import ipaddress

from harness.backends.netns.plan import Plan
from harness.backends.netns.routing import ALL_RAILS
from harness.backends.netns.routing import Alive
from harness.backends.netns.routing import Tables
from harness.backends.netns.routing import compute
from harness.fabric.generators import three_tier
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric
from harness.fabric.model import Kind


def _all(p: Plan) -> Alive:
    return Alive(frozenset(range(len(p.wires))), frozenset(range(p.fabric.n_elements)))


def _walk(p: Plan, tables: Tables, src_leaf: int, dst_leaf: int) -> list[list[int]]:
    """Every switch path the tables allow from one leaf to another's block."""
    f = p.fabric
    block = p.leaf_block[dst_leaf]
    paths = []
    stack = [[src_leaf]]
    while stack:
        path = stack.pop()
        here = path[-1]
        if here == dst_leaf:
            paths.append(path)
            continue
        assert len(path) < 8, f"loop: {[f.ids[x] for x in path]}"
        hops = tables[p.ns_of[here]].get(block, ())
        for w, end in hops:
            link = p.wires[w].link
            nxt = int(f.link_b[link]) if end == 0 else int(f.link_a[link])
            stack.append([*path, nxt])
    return paths


def _tier(f: Fabric, e: int) -> int:
    return {Kind.LEAF: 0, Kind.SPINE: 1, Kind.CORE: 2}[Kind(int(f.kind[e]))]


def test_two_tier_ecmp_over_every_spine() -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=4, leaf_radix=8, storage=False)
    p = Plan(f, "ht")
    t = compute(p, _all(p))
    a, b = f.index["su01/leaf-r0"], f.index["su02/leaf-r0"]
    assert len(t[p.ns_of[a]][p.leaf_block[b]]) == 4
    paths = _walk(p, t, a, b)
    assert sorted(f.ids[x[1]] for x in paths) == ["spine-01", "spine-02", "spine-03", "spine-04"]
    server = p.ns_of[f.index["su01/node01"]]
    assert set(t[server]) >= {p.rail_block[0], f"{ALL_RAILS}@102"}


def test_dead_spine_and_cut_cable_are_routed_around() -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    p = Plan(f, "ht")
    spine = f.index["spine-01"]
    alive = Alive(frozenset(range(len(p.wires))), frozenset(range(f.n_elements)) - {spine})
    t = compute(p, alive)
    a, b = f.index["su01/leaf-r0"], f.index["su02/leaf-r0"]
    assert [f.ids[x[1]] for x in _walk(p, t, a, b)] == ["spine-02"]
    # cut leaf b's cable to spine-2 too: nothing left between them
    cut = next(
        w
        for w, wire in enumerate(p.wires)
        if {int(f.link_a[wire.link]), int(f.link_b[wire.link])} == {b, f.index["spine-02"]}
    )
    t2 = compute(p, Alive(alive.wires - {cut}, alive.elements))
    assert p.leaf_block[b] not in t2[p.ns_of[a]]


def test_three_tier_paths_are_valley_free_and_loop_free() -> None:
    f = three_tier(
        sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2, radix=16, storage=False
    )
    p = Plan(f, "ht")
    t = compute(p, _all(p))
    leaves = f.leaves.tolist()
    for a in leaves[:3]:
        for b in leaves:
            if a == b:
                continue
            paths = _walk(p, t, a, b)
            assert paths, (f.ids[a], f.ids[b])
            for path in paths:
                tiers = [_tier(f, x) for x in path]
                top = tiers.index(max(tiers))
                assert tiers[: top + 1] == sorted(tiers[: top + 1])  # up...
                assert tiers[top:] == sorted(tiers[top:], reverse=True)  # ...then down
    cross = _walk(p, t, f.index["su01/leaf-r0"], f.index["su04/leaf-r0"])
    assert all(len(path) == 5 for path in cross)  # leaf, spine, core, spine, leaf


def test_storage_routes_over_live_members() -> None:
    f = two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8)
    p = Plan(f, "ht")
    bond = p.bonds[0]
    t = compute(p, _all(p))
    assert len(t[bond.host.ns][f"{bond.switch.v4}/32"]) == 2
    one = Alive(frozenset(range(len(p.wires))) - {bond.members[0]}, frozenset(range(f.n_elements)))
    assert len(compute(p, one)[bond.host.ns][f"{bond.switch.v4}/32"]) == 1
    assert ipaddress.IPv4Address(bond.host.v4) in ipaddress.IPv4Network("10.192.0.0/10")


def test_a_wrong_rail_nic_is_reached_through_its_rails_ports() -> None:
    """NCCL uses NIC k for rail k wherever it is plugged: the servers route to it by rail."""
    from pathlib import Path

    from harness.fabric.fabric_file import load_fabric_file

    f = load_fabric_file(Path(__file__).parents[2] / "fabrics" / "lab-wrong-rail.yaml")
    p = Plan(f, "ht")
    t = compute(p, _all(p))
    wrong = p.port_of_nic(f.index["n4/nic1"])
    assert wrong.v4.startswith("10.0.")  # addressed by its leaf (leaf-r0's block)
    for server in ("n1", "n2", "n3"):
        hops = t[p.ns_of[f.index[server]]][f"{wrong.v4}/32"]
        # through the server's own rail-1 port: up leaf-r1, over a spine, down leaf-r0
        assert [p.wires[w].a.ifname for w, _ in hops] == ["r1"]
    n4 = t[p.ns_of[f.index["n4"]]]
    assert [p.wires[w].a.ifname for w, _ in n4[p.rail_block[1]]] == ["r1"]
    assert [p.wires[w].a.ifname for w, _ in n4[p.rail_block[0]]] == ["r0"]
    # a fabric without wrong-rail cables has no host routes
    g = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    q = Plan(g, "ht")
    assert not [k for table in compute(q, _all(q)).values() for k in table if k.endswith("/32")]
