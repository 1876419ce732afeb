"""``routing: sm`` reroutes only when the subnet manager sweeps (root).

Until the sweep, ``reroute`` seconds after a failure, the forwarding tables
still point at what died and the traffic they send there is lost (a
blackhole), as in a fabric whose switches keep their tables until the subnet
manager reprograms them; a drain is routed around before its links go; a
storage bond drops a dead member at once.  Each is measured with real packets.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from harness.backends.netns.emulation import Emulation
from harness.backends.netns.faults import FaultEngine
from harness.backends.netns.probe import probe
from harness.fabric.model import Fabric
from harness.faults.fault import Fault

pytestmark = pytest.mark.privileged

DELAY = 2.0


@pytest.fixture(scope="module")
def emu(small: Fabric) -> Iterator[Emulation]:
    e = Emulation(small)
    e.up()
    yield e
    e.down()


def _cross_su(f: Fabric) -> list[tuple[int, int]]:
    """Every same-rail NIC pair across the two SUs (their traffic crosses the spines)."""
    nics = f.nics.tolist()
    return [(a, b) for a in nics for b in nics
            if f.rail[a] == f.rail[b] and f.su[a] < f.su[b]]  # fmt: skip


def _reached(emu: Emulation, pairs: list[tuple[int, int]]) -> int:
    """Pairs one quick probe gets through (a blackhole shows as fewer)."""
    return sum(p.ok for p in probe(emu, pairs, timeout=0.3, rounds=1))


def _all_reached(emu: Emulation, pairs: list[tuple[int, int]]) -> bool:
    """Every pair gets through (three probes of 1 s each: a loaded host answers late)."""
    return all(p.ok for p in probe(emu, pairs, timeout=1.0, rounds=3))


def _route(emu: Emulation, ns: int, *args: str) -> str:
    name = emu.built.namespaces[ns].name
    return subprocess.run(["ip", "-n", name, "route", *args], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip


def _dead_next_hops(routes: str) -> list[str]:
    return [ln for ln in routes.splitlines() if "nexthop" in ln and "linkdown" in ln]


FAILURES = {
    "kill": {"kill": "spine-01"},
    "cut": {"cut": {"between": ["su01/leaf-r0", "spine-01"]}},
    "optic": {"optic": "su02/leaf-r1:5"},
}


@pytest.mark.parametrize("kind", list(FAILURES))
def test_a_failure_blackholes_until_the_sweep(emu: Emulation, small: Fabric, kind: str) -> None:
    pairs = _cross_su(small)
    eng = FaultEngine(emu, sweep_delay=DELAY)
    applied = Fault.parse(FAILURES[kind]).resolve(small)
    assert _all_reached(emu, pairs)
    t0 = time.monotonic()
    eng.inject(applied)
    during = _reached(emu, pairs)
    assert time.monotonic() - t0 < DELAY, "the probes ran after the sweep was due"
    assert 0 < during < len(pairs)  # the share hashed onto what died is lost, the rest is not
    took = eng.settle(30)
    assert took >= DELAY
    assert _all_reached(emu, pairs)  # swept: every pair goes around it
    for link in applied.links:  # the sweep found the cable dead: its ports are down now
        w = emu.built.wire_of_link[link]
        assert not all(emu.carrier(w, emu.link_flags({emu.port(w, 0).ns, emu.port(w, 1).ns})))
    eng.revert(applied)
    eng.settle(30)
    assert _all_reached(emu, pairs)


def test_before_the_sweep_the_tables_still_point_at_a_killed_spine(
    emu: Emulation, small: Fabric
) -> None:
    eng = FaultEngine(emu, sweep_delay=DELAY)
    leaf = emu.built.ns_of[small.index["su01/leaf-r0"]]
    applied = Fault.parse({"kill": "spine-01"}).resolve(small)
    eng.inject(applied)
    assert _dead_next_hops(_route(emu, leaf))  # kept, and used (ignore_routes_with_linkdown 0)
    eng.settle(30)
    assert not _dead_next_hops(_route(emu, leaf))  # the sweep replaced every route
    eng.revert(applied)
    eng.settle(30)


def test_a_drain_is_routed_around_before_its_links_go(emu: Emulation, small: Fabric) -> None:
    pairs = _cross_su(small)
    eng = FaultEngine(emu, sweep_delay=DELAY)
    applied = Fault.parse({"drain": "spine-02"}).resolve(small)
    eng.inject(applied)
    assert _all_reached(emu, pairs)  # no blackhole, no waiting for a sweep
    assert eng.settle(30) < DELAY
    eng.revert(applied)
    eng.settle(30)


def test_a_cable_repaired_before_the_sweep_carries_traffic_again(
    emu: Emulation, small: Fabric
) -> None:
    pairs = _cross_su(small)
    eng = FaultEngine(emu, sweep_delay=30.0)
    applied = Fault.parse({"cut": {"between": ["su02/leaf-r2", "spine-02"]}}).resolve(small)
    w = emu.built.wire_of_link[applied.links[0]]
    eng.inject(applied)
    assert _reached(emu, pairs) < len(pairs)
    eng.revert(applied)
    for end in (0, 1):
        p = emu.port(w, end)
        assert emu.qdisc_params(p.ns)[p.ifindex][1] > 0  # no longer dropping
    assert eng.settle(30) < 30.0  # a repair is swept at once
    assert _all_reached(emu, pairs)


def test_a_storage_bond_drops_a_dead_member_at_once(emu: Emulation, small: Fabric) -> None:
    eng = FaultEngine(emu, sweep_delay=30.0)
    server = small.index["su01/node02"]
    bond = next(b for b in emu.built.bonds if b.server == server)
    dead, live = (emu.built.wires[w] for w in bond.members)
    member = Fault.parse({"bond-member": small.ids[int(small.link_a[dead.link])]}).resolve(small)
    eng.inject(member)  # no sweep yet: the storage side sees no carrier on that member
    for sport in range(40000, 40016):
        got = _route(emu, bond.switch.ns, "get", bond.host.v4, "ipproto", "tcp",
                     "sport", str(sport), "dport", "5201")  # fmt: skip
        assert f"dev {live.b.ifname}" in got, got
    eng.revert(member)
    eng.settle(30)
