"""The emulation for real (root): build, route, break, measure, repair, remove.

Every fault kind is injected into a small fabric and the reachability measured
with real packets must equal what the model predicts for the same fault state,
pair by pair (same-rail and cross-rail), then come back whole after the revert.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator

import pytest

from harness.backends.netns import nsutil
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.faults import FaultEngine
from harness.backends.netns.netlink import MTU
from harness.backends.netns.probe import probe
from harness.backends.netns.probe import trace
from harness.backends.netns.teardown import processes_in_netns
from harness.errors import BackendError
from harness.fabric.model import Fabric
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like

pytestmark = pytest.mark.privileged


@pytest.fixture(scope="module")
def emu(small: Fabric) -> Iterator[Emulation]:
    name = f"bystander-{secrets.token_hex(4)}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    before = Host.now(name)
    e = Emulation(small)
    e.up()
    assert e.ledger is not None
    rid = e.ledger.run_id
    yield e
    e.down()
    assert_host_like(before, [rid])
    subprocess.run(["ip", "netns", "del", name], check=True)


def _pairs(f: Fabric) -> list[tuple[int, int]]:
    nics = f.nics.tolist()
    return [(a, b) for a in nics for b in nics if a != b and f.parent[a] != f.parent[b]]


def _predicted(f: Fabric, state: FaultState, pairs: list[tuple[int, int]]) -> list[bool]:
    a = Analysis(f, Observation.from_state(state))
    return [bool(a.up[x] and a.up[y] and a.nic_comps(x) & a.nic_comps(y)) for x, y in pairs]


def test_healthy_fabric_reaches_everything(emu: Emulation, small: Fabric) -> None:
    pairs = _pairs(small)
    got = probe(emu, pairs)
    assert [p.ok for p in got] == [True] * len(pairs)
    assert all(p.rtt_ms > 0 for p in got)


def test_namespaces_and_routes_exist(emu: Emulation) -> None:
    plan = emu.built
    names = nsutil.list_netns()
    assert {n.name for n in plan.namespaces} <= names
    leaf = next(n for n in plan.namespaces if n.tier == 0)
    out = subprocess.run(
        ["ip", "-n", leaf.name, "route"], capture_output=True, text=True, check=True
    ).stdout
    assert "nexthop via" in out  # ECMP over both spines
    assert not [ln for ln in out.splitlines() if "linkdown" in ln]
    out6 = subprocess.run(
        ["ip", "-n", leaf.name, "-6", "route"], capture_output=True, text=True, check=True
    ).stdout
    assert "fd68:6172:6e65::" in out6


def test_every_cable_carries_jumbo_frames(emu: Emulation, small: Fabric) -> None:
    plan = emu.built
    mtus: dict[tuple[int, str], int] = {}
    for i, n in enumerate(plan.namespaces):
        out = subprocess.run(["ip", "-n", n.name, "-j", "link", "show"],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
        mtus |= {(i, x["ifname"]): int(x["mtu"]) for x in json.loads(out)}
    ends = [p for w in plan.wires for p in (w.a, w.b)]
    assert len(ends) == 2 * len(plan.wires) > 0
    assert {mtus[p.ns, p.ifname] for p in ends} == {MTU} == {9000}
    # a 9000-byte frame crosses the fabric unfragmented (DF set): server, leaf, spine, leaf,
    # server; a hop with a smaller MTU would drop it (or refuse it at the sender)
    src, dst = (plan.nic_ports[small.index[f"su0{k}/node01/nic0"]][0] for k in (1, 2))
    size = MTU - 28  # IPv4 and UDP headers
    recv = subprocess.Popen(
        ["ip", "netns", "exec", plan.namespaces[dst.ns].name, sys.executable, "-c",
         "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
         f"s.bind(({dst.v4!r}, 9000)); s.settimeout(10); print(len(s.recv(65535)))"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    send = (
        "import socket, time; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"s.setsockopt(socket.IPPROTO_IP, 10, 2); s.bind(({src.v4!r}, 0)); "  # IP_PMTUDISC_DO
        f"[(s.sendto(b'x' * {size}, ({dst.v4!r}, 9000)), time.sleep(0.2)) for _ in range(20)]"
    )
    sender = subprocess.run(
        ["ip", "netns", "exec", plan.namespaces[src.ns].name, sys.executable, "-c", send],
        check=False, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    out, _ = recv.communicate(timeout=15)
    assert sender.returncode == 0, sender.stderr
    assert out.strip() == str(size)


FAULTS = [  # (fault, whether the model predicts lost pairs)
    ({"kill": "spine-01"}, False),
    ({"kill": {"tier": "spine"}}, True),
    ({"drain": "spine-02"}, False),
    ({"kill": "su01/leaf-r1"}, True),
    ({"kill": "su02/node03"}, True),
    ({"kill": "su01/node02/nic3"}, True),
    ({"optic": "su01/leaf-r0:2"}, True),
    ({"optic": "su01/node01/nic2:1"}, True),
    ({"cut": {"between": ["su01/leaf-r0", "spine-01"]}}, False),
    ({"cut": "su02/node01/nic0:1--su02/leaf-r0:1"}, True),
]


@pytest.mark.parametrize(("raw", "loses"), FAULTS, ids=[str(r) for r, _ in FAULTS])
def test_fault_measured_as_predicted_and_reverted(
    emu: Emulation, small: Fabric, raw: dict[str, object], loses: bool
) -> None:
    eng = FaultEngine(emu)
    applied = Fault.parse(raw).resolve(small)
    pairs = _pairs(small)
    eng.inject(applied)
    eng.settle(30)
    state = FaultState.healthy(small).inject(applied)
    want = _predicted(small, state, pairs)
    got = [p.ok for p in probe(emu, pairs, timeout=0.3, rounds=2)]
    diff = [
        (small.ids[a], small.ids[b], w)
        for (a, b), w, g in zip(pairs, want, got, strict=True)
        if w != g
    ]
    assert not diff, diff[:5]
    assert (False in want) is loses
    assert eng.alive() != emu.alive_all()  # the fault took effect in the emulation
    eng.revert(applied)
    eng.settle(30)
    assert all(p.ok for p in probe(emu, pairs))


def test_overlapping_faults_come_back_only_when_both_are_reverted(
    emu: Emulation, small: Fabric
) -> None:
    eng = FaultEngine(emu)
    leaf = Fault.parse({"kill": "su01/leaf-r0"}).resolve(small)
    cable = Fault.parse({"cut": "su01/node01/nic0:1--su01/leaf-r0:1"}).resolve(small)
    eng.inject(leaf)
    eng.inject(cable)
    eng.settle(30)
    nic = small.index["su01/node01/nic0"]
    other = small.index["su01/node02/nic0"]
    eng.revert(leaf)
    eng.settle(30)
    assert [p.ok for p in probe(emu, [(nic, other)], timeout=0.3, rounds=2)] == [False]
    eng.revert(cable)
    eng.settle(30)
    assert [p.ok for p in probe(emu, [(nic, other)])] == [True]


def test_degrade_changes_the_shaped_rate(emu: Emulation, small: Fabric) -> None:
    eng = FaultEngine(emu)
    applied = Fault.parse(
        {"degrade": {"target": {"between": ["su01/leaf-r0", "spine-01"]}, "fraction": 0.25}}
    ).resolve(small)
    w = emu.built.wire_of_link[applied.links[0]]
    port = emu.port(w, 0)
    assert emu.qdisc_rates(port.ns)[port.ifindex] == 200_000_000
    eng.inject(applied)
    assert emu.qdisc_rates(port.ns)[port.ifindex] == 50_000_000
    eng.revert(applied)
    assert emu.qdisc_rates(port.ns)[port.ifindex] == 200_000_000


def test_bond_member_keeps_storage_reachable_over_the_other(emu: Emulation, small: Fabric) -> None:
    eng = FaultEngine(emu)
    server = small.index["su01/node01"]
    bond = next(b for b in emu.built.bonds if b.server == server)
    member = Fault.parse({"bond-member": "su01/node01/stor0"}).resolve(small)
    eng.inject(member)
    eng.settle(30)
    ns = emu.built.namespaces[bond.host.ns].name
    route = subprocess.run(
        ["ip", "-n", ns, "route", "get", bond.switch.v4], capture_output=True, text=True, check=True
    ).stdout
    assert "st1" in route
    both = Fault.parse({"bond-member": "su01/node01/stor1"}).resolve(small)
    eng.inject(both)
    eng.settle(30)
    gone = subprocess.run(
        ["ip", "-n", ns, "route", "get", bond.switch.v4],
        capture_output=True,
        text=True,
        check=False,
    )
    assert gone.returncode != 0  # no member left: the storage bond is down
    eng.revert(both)
    eng.revert(member)
    eng.settle(30)


def test_a_fault_that_changes_nothing_is_an_error(emu: Emulation, small: Fabric) -> None:
    eng = FaultEngine(emu)
    cut = Fault.parse({"cut": "su02/node02/nic1:1--su02/leaf-r1:2"}).resolve(small)
    optic = Fault.parse({"optic": "su02/leaf-r1:2"}).resolve(small)
    eng.inject(cut)
    with pytest.raises(BackendError, match="changed nothing"):
        eng.inject(optic)
    eng.revert(cut)
    eng.settle(30)


def test_no_process_runs_in_the_namespaces(emu: Emulation) -> None:
    inodes = {nsutil.netns_inode(fd) for fd in emu.fds}
    assert processes_in_netns(inodes) == []


def test_traced_paths_count_the_switches(emu: Emulation, small: Fabric) -> None:
    idx = small.index
    t = trace(emu, idx["su01/node01/nic0"], idx["su02/node01/nic0"])
    assert t.complete
    assert small.ids[t.hops[0]] == "su01/leaf-r0"
    assert len(t.hops) == 3  # leaf, spine, leaf
    local = trace(emu, idx["su01/node01/nic1"], idx["su01/node02/nic1"])
    assert [small.ids[h] for h in local.hops] == ["su01/leaf-r1"]
    eng = FaultEngine(emu)
    leaf = Fault.parse({"kill": "su02/leaf-r0"}).resolve(small)
    eng.inject(leaf)
    eng.settle(30)
    cut = trace(emu, idx["su01/node01/nic0"], idx["su02/node01/nic0"], timeout=0.3)
    assert not cut.complete
    eng.revert(leaf)
    eng.settle(30)
