"""``routing: bgp`` on the netns backend (root): FRR converges, routes around a dead spine,
drains gracefully, and its daemons -- ended by PID -- leave nothing behind.

The fabric is 4 spines x 8 leaves (2 SUs x 4 rails) with 4 servers: 64 BGP sessions
(BFD off, the default).  A hung spine, with and without BFD, is timed by the hung-spine
drills (``tests/netns/test_drill_netns.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.ledger import run_ids
from harness.backends.measurement import MeasurePlan
from harness.backends.netns.backend import NetnsBackend
from harness.backends.netns.bgp import Bgp
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.faults import FaultEngine
from harness.backends.netns.probe import probe
from harness.backends.netns.probe import sample_pairs
from harness.backends.processes import process_alive
from harness.cli import main
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.faults.fault import Fault
from harness.run.scenario import run_scenario
from harness.scenario.load import load_file
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like
from tests.netns.conftest import start_runner

pytestmark = [
    pytest.mark.privileged,
    pytest.mark.needs_tools("vtysh", install="apt-get install frr"),
]

SCENARIOS = Path(__file__).parents[2] / "scenarios"
FRR_PLACES = (Path("/var/tmp/frr"), Path("/run/frr"))  # where FRR 8.4 writes unless redirected
BGP = Routing.stating(control="bgp")
CONVERGED: dict[str, float] = {}  # the first settle of the module's fabric


def _listing() -> dict[Path, frozenset[str]]:
    return {p: frozenset(os.listdir(p)) if p.is_dir() else frozenset() for p in FRR_PLACES}


def _assert_no_frr_files(before: dict[Path, frozenset[str]]) -> None:
    after = _listing()
    for place, names in after.items():
        assert names <= before[place], f"FRR left {sorted(names - before[place])} in {place}"


def _daemons(bgp: Bgp) -> list[tuple[int, int]]:
    return [(d.pid, d.start_ticks) for ds in bgp.daemons.values() for d in ds]


def _ns_of(emu: Emulation, element: str) -> int:
    return emu.built.ns_of[emu.fabric.index[element]]


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return two_tier(sus=2, nodes_per_su=2, spines=4, leaf_radix=8, storage=False, name="bgp44")


@pytest.fixture(scope="module")
def be(fabric: Fabric) -> Iterator[NetnsBackend]:
    files = _listing()
    name = f"bystander-bgp-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    before = Host.now(name)
    b = NetnsBackend()
    try:
        b.apply(fabric, routing=Routing("bgp"))
        assert b.emu is not None
        assert b.emu.bgp is not None
        assert b.emu.ledger is not None
        rid = b.emu.ledger.run_id
        daemons = _daemons(b.emu.bgp)
        CONVERGED["first"] = b.settle(90)
        yield b
    finally:
        b.close()
    assert not [pid for pid, start in daemons if process_alive(pid, start)]
    assert_host_like(before, [rid])
    _assert_no_frr_files(files)
    subprocess.run(["ip", "netns", "del", name], check=True)


def _engine(be: NetnsBackend) -> FaultEngine:
    assert be.engine is not None
    return be.engine


def _bgp(be: NetnsBackend) -> Bgp:
    assert be.emu is not None
    assert be.emu.bgp is not None
    return be.emu.bgp


def _all_pairs(f: Fabric) -> list[tuple[str, str]]:
    nics = [f.ids[n] for n in f.nics.tolist()]
    return [(a, b) for a in nics for b in nics if a.rsplit("/", 1)[0] != b.rsplit("/", 1)[0]]


def test_converges_with_every_prefix_and_every_next_hop(be: NetnsBackend, fabric: Fabric) -> None:
    bgp = _bgp(be)
    assert 0 < CONVERGED["first"] < 90
    assert bgp.sessions == 64
    assert bgp.bfd is None  # off by default (docs/netns.md: bgpd registered no BFD session)
    assert len(bgp.daemons) == 12
    assert all([d.name for d in ds] == ["zebra", "bgpd"] for ds in bgp.daemons.values())
    emu = be.emu
    assert emu is not None
    for leaf in fabric.leaves.tolist():
        fib = bgp.fib(emu.built.ns_of[leaf])
        assert len(fib) == 2 * 7  # the 7 other leaves' blocks, IPv4 and IPv6
        assert {len(hops) for hops in fib.values()} == {4}  # ECMP over the 4 spines
    for spine in fabric.spines.tolist():
        fib = bgp.fib(emu.built.ns_of[spine])
        assert len(fib) == 2 * 8
        assert {len(hops) for hops in fib.values()} == {1}


def test_probes_reach_every_nic_after_convergence(be: NetnsBackend, fabric: Fabric) -> None:
    pairs = _all_pairs(fabric)
    m = be.measure(MeasurePlan(probes=tuple(pairs)))
    assert len(m.probes) == len(pairs) == 16 * 12
    assert [p for p in m.probes if not p.ok] == []


def test_a_killed_spine_is_routed_around(be: NetnsBackend, fabric: Fabric) -> None:
    emu = be.emu
    assert emu is not None
    bgp = _bgp(be)
    spine = _ns_of(emu, "spine-01")
    old = [(d.pid, d.start_ticks) for d in bgp.daemons[spine]]
    fault = Fault.parse({"kill": "spine-01"}).resolve(fabric)
    be.inject(fault)
    try:
        assert {_state(pid) for pid, _ in old} == {"T"}  # its daemons stopped: a hung switch
        took = be.settle(60)
        assert 0 < took < 30
        probes = be.measure(MeasurePlan(probes=tuple(_all_pairs(fabric)))).probes
        assert probes
        assert all(p.ok for p in probes)
        m = be.measure(MeasurePlan(paths=(("su01/node01/nic0", "su02/node01/nic0"),)))
        (path,) = m.paths
        assert path.complete
        assert path.hops[0] == "su01/leaf-r0"
        assert path.hops[2] == "su02/leaf-r0"
        assert path.hops[1].startswith("spine-")
        assert path.hops[1] != "spine-01"
        leaf = _ns_of(emu, "su01/leaf-r0")
        assert {len(h) for h in bgp.fib(leaf).values()} == {3}
    finally:
        be.revert(fault)
    assert be.settle(60) > 0
    fresh = [(d.pid, d.start_ticks) for d in bgp.daemons[spine]]
    assert len(fresh) == 2
    assert not set(fresh) & set(old)
    assert not [pid for pid, start in old if process_alive(pid, start)]  # the old ones ended
    assert {len(h) for h in bgp.fib(_ns_of(emu, "su01/leaf-r0")).values()} == {4}


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()[0]


def test_drain_moves_the_routes_before_the_links_go(
    be: NetnsBackend, fabric: Fabric, monkeypatch: pytest.MonkeyPatch
) -> None:
    emu = be.emu
    assert emu is not None
    bgp = _bgp(be)
    spine = _ns_of(emu, "spine-02")
    toward = {  # leaf namespace -> its interfaces toward spine-02
        emu.built.ns_of[leaf]: {
            p.ifindex
            for w in emu.built.wires
            for p, q in ((w.a, w.b), (w.b, w.a))
            if p.ns == emu.built.ns_of[leaf] and q.ns == spine
        }
        for leaf in fabric.leaves.tolist()
    }
    seen: list[dict[int, set[int]]] = []
    real = emu.set_admin

    def set_admin(ends: object, up: bool) -> None:
        if not up:  # the moment the drained spine's links go: where do the leaves route?
            flags = emu.link_flags([spine])
            assert all(
                flags[spine, p.ifindex] & 1 for w in emu.built.wires for p in (w.a, w.b)
                if p.ns == spine
            ), "the links were down before the routes moved"  # fmt: skip
            seen.append({ns: {o for hops in bgp.fib(ns).values() for o in hops} for ns in toward})
        real(ends, up)  # type: ignore[arg-type]

    monkeypatch.setattr(emu, "set_admin", set_admin)
    fault = Fault.parse({"drain": "spine-02"}).resolve(fabric)
    be.inject(fault)
    try:
        assert seen, "the drain never took the links down"
        for ns, used in seen[0].items():
            assert used, "a leaf had no route left"
            assert not used & toward[ns], "a leaf still routed through the drained spine"
        assert _engine(be).drain_moved_s[-1] > 0
        assert spine in bgp.drained
        be.settle(60)
        pairs = _all_pairs(fabric)
        assert all(p.ok for p in be.measure(MeasurePlan(probes=tuple(pairs))).probes)
    finally:
        be.revert(fault)
    be.settle(60)
    assert spine not in bgp.drained
    leaf = _ns_of(emu, "su01/leaf-r0")
    assert {len(h) for h in bgp.fib(leaf).values()} == {4}


@pytest.mark.parametrize("stem", ["netns-spines-down-to-one", "netns-leaf-lost"])
def test_netns_scenarios_pass_on_bgp(stem: str) -> None:
    (sc,) = load_file(SCENARIOS / f"{stem}.yaml")
    result = run_scenario(sc, "netns", routing=RoutingOverride.control("bgp"))
    assert result.status == "passed", result.to_dict()
    assert result.routing == Routing("bgp")
    assert not result.mismatches
    settled = [s.settle_s for s in result.steps if s.kind in ("inject", "restore")]
    assert settled
    assert all(s is not None and s > 0 for s in settled)
    assert any(e.measured_by == "netns" for s in result.steps for e in s.expectations)


TINY = {"sus": 1, "nodes_per_su": 2, "spines": 2, "leaf_radix": 8, "storage": False}


def test_two_runs_at_once_do_not_collide(host: Host) -> None:
    f = two_tier(**TINY, name="tiny")  # type: ignore[arg-type]
    files = _listing()
    a, b = Emulation(f, routing=BGP), Emulation(f, routing=BGP)
    try:
        a.up()
        b.up()
        assert a.ledger is not None
        assert b.ledger is not None
        assert a.ledger.run_id != b.ledger.run_id
        for e in (a, b):
            engine = FaultEngine(e)
            assert engine.settle(90) > 0
            got = probe(e, sample_pairs(e, None))
            assert got
            assert all(p.ok for p in got)
        assert a.bgp is not None
        assert b.bgp is not None
        assert not {p for p, _ in _daemons(a.bgp)} & {p for p, _ in _daemons(b.bgp)}
        rids = [a.ledger.run_id, b.ledger.run_id]
        daemons = _daemons(a.bgp) + _daemons(b.bgp)
    finally:
        a.down()
        b.down()
    assert not [pid for pid, start in daemons if process_alive(pid, start)]
    assert_host_like(host, rids)
    _assert_no_frr_files(files)


_RUNNER = textwrap.dedent(
    """
    import sys, time
    from harness.fabric.generators import two_tier
    from harness.backends.netns.emulation import Emulation
    from harness.fabric.routing import Routing
    f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    e = Emulation(f, routing=Routing.stating(control="bgp"))
    e.up()
    pids = [d.pid for ds in e.bgp.daemons.values() for d in ds]
    print(e.ledger.run_id, *pids, flush=True)
    time.sleep(120)
    """
)


def test_sigkill_of_the_runner_then_clean_leaves_nothing(
    state_dir: Path, host: Host, tmp_path: Path
) -> None:
    files = _listing()
    proc, first = start_runner(_RUNNER, tmp_path)
    rid, *rest = first.split()
    pids = [int(p) for p in rest]
    assert len(pids) == 6 * 2  # zebra and bgpd on 4 leaves and 2 spines
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    assert all(Path(f"/proc/{p}").exists() for p in pids)  # left behind...
    assert main(["clean"]) == 0  # ...until harness clean
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.05)
    assert not [p for p in pids if Path(f"/proc/{p}").exists() and _state(p) != "Z"]
    assert_host_like(host, [rid])
    assert run_ids() == []
    _assert_no_frr_files(files)
