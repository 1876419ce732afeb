"""The storage bond's transmit hash against the Linux bonding driver's formula, by hand.

Each expected value below is worked from ``bond_xmit_hash`` (drivers/net/bonding/
bond_main.c) on x86 (little-endian), for the first stream of the first bonded server:
source 10.192.0.1 (bytes 0a c0 00 01), destination 10.192.0.0 (0a c0 00 00), MACs
02:00:0a:c0:00:01 -> 02:00:0a:c0:00:00, ports 50000 (0xc350) -> 5201 (0x1451).

* layer2: ``h_dest[5] ^ h_source[5] ^ ETH_P_IP`` = 0x00 ^ 0x01 ^ 0x0800 = 0x0801 (2049).
* layer2+3: the addresses as the kernel's ``u32`` of their big-endian bytes:
  src 0x0100c00a, dst 0x0000c00a, XOR 0x01000000; 0x0801 ^ 0x01000000 = 0x01000801;
  ``^= >> 16``: ^ 0x0100 = 0x01000901; ``^= >> 8``: ^ 0x00010009 = 0x01010908.
* layer3+4: the ports word, bytes c3 50 14 51 read little-endian = 0x511450c3;
  ^ 0x01000000 = 0x501450c3; ``^= >> 16``: ^ 0x5014 = 0x501400d7; ``^= >> 8``:
  ^ 0x00501400 = 0x504414d7; ``>> 1`` = 0x28220a6b (673,319,531).

Members: ``hash % count``.  2049 % 2 = 1, 2049 % 3 = 0 (3 x 683); 0x01010908 =
16,845,064, % 2 = 0, % 3 = 1 (digit sum 34); 673,319,531 % 2 = 1, % 3 = 2 (digit sum 38).
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import FabricDesignError
from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import two_tier
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import BOND_HASHES
from harness.fabric.model import DEFAULT_BOND_HASH
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants import bond_hash
from harness.invariants.analysis import Analysis
from harness.invariants.bond_hash import placement
from harness.invariants.bond_hash import server_streams
from harness.invariants.bond_hash import xmit_hash
from harness.invariants.state import Observation
from harness.invariants.storage import write_s
from harness.observations.observation import Context
from harness.observations.registry import observe

FIRST = server_streams(0, 1)[0]


def test_the_default_is_linux_bondings_default() -> None:
    # bonding.rst, xmit_hash_policy: "The default value is layer2."
    assert DEFAULT_BOND_HASH == "layer2"
    assert two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8).node_specs[0].bond_hash == (
        "layer2"
    )


def test_the_first_stream_hashes_as_worked_by_hand() -> None:
    assert (FIRST.src_ip, FIRST.dst_ip) == (0x0AC00001, 0x0AC00000)
    assert (FIRST.src_mac.hex(), FIRST.dst_mac.hex()) == ("02000ac00001", "02000ac00000")
    assert (FIRST.sport, FIRST.dport) == (0xC350, 0x1451)
    assert xmit_hash("layer2", FIRST) == 0x0801  # 2049
    assert xmit_hash("layer2+3", FIRST) == 0x01010908  # 16,845,064
    assert xmit_hash("layer3+4", FIRST) == 0x28220A6B  # 673,319,531
    assert [bond_hash.member("layer2", FIRST, n) for n in (1, 2, 3)] == [0, 1, 0]
    assert [bond_hash.member("layer2+3", FIRST, n) for n in (1, 2, 3)] == [0, 0, 1]
    assert [bond_hash.member("layer3+4", FIRST, n) for n in (1, 2, 3)] == [0, 1, 2]


def test_layer3_4_drops_bit_0_and_the_ports_alternate() -> None:
    # stream 1: ports 50001 (c3 51) -> 5202 (14 52): word 0x521451c3, ^ 0x01000000 =
    # 0x531451c3; ^ 0x5314 = 0x531402d7; ^ 0x00531402 = 0x534716d5; >> 1 = 0x29a38b6a, even
    assert xmit_hash("layer3+4", server_streams(0, 2)[1]) == 0x29A38B6A
    assert placement("layer3+4", 0, 8, 2) == [1, 0, 1, 0, 1, 0, 1, 0]
    assert placement("layer3+4", 0, 8, 3) == [2, 2, 1, 2, 2, 2, 1, 0]  # 5 on one member


def test_an_unknown_policy_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="layer2, layer2\\+3, layer3\\+4"):
        xmit_hash("encap3+4", FIRST)


@given(
    st.sampled_from(BOND_HASHES),
    st.integers(0, 4000),
    st.integers(1, 64),
    st.integers(1, 8),
)
def test_every_stream_lands_on_a_usable_member(policy: str, rank: int, flows: int, n: int) -> None:
    placed = placement(policy, rank, flows, n)
    assert len(placed) == flows
    assert all(0 <= m < n for m in placed)


@given(st.sampled_from(["layer2", "layer2+3"]), st.integers(0, 4000), st.integers(1, 64),
       st.integers(1, 8))  # fmt: skip
def test_one_destination_under_layer2_uses_one_member(
    policy: str, rank: int, flows: int, n: int
) -> None:
    assert len(set(placement(policy, rank, flows, n))) == 1


@given(st.lists(st.integers(0, 3), min_size=1, max_size=32), st.floats(0.1, 100.0))
def test_the_write_ends_with_the_busiest_member(placed: list[int], gb: float) -> None:
    members = [25.0, 25.0, 12.5, 50.0]
    per = gb / len(placed)
    expected = max(placed.count(m) * per * 8 / members[m] for m in set(placed))
    assert write_s(gb, placed, members) == pytest.approx(expected)


def test_a_stream_on_a_member_that_carries_nothing_never_ends() -> None:
    assert write_s(4.9, [0, 1], [25.0, 0.0]) == float("inf")
    assert write_s(4.9, [0, 0], [25.0, 0.0]) == pytest.approx(4.9 * 8 / 25)
    assert write_s(0.0, [0], [0.0]) == 0.0


# -- through the analysis, on a small fabric ----------------------------------------------


@functools.cache
def small(policy: str) -> Fabric:
    return two_tier(sus=1, nodes_per_su=4, spines=2, leaf_radix=8,
                    node_overrides={"bond_hash": policy})  # fmt: skip


def analyse(f: Fabric, *faults: str) -> Analysis:
    s = FaultState.healthy(f)
    for raw in faults:
        s = s.inject(Fault.parse({"bond-member": raw}))
    return Analysis(f, Observation.from_state(s), resolve_jobs((JobSpec(per_su=True),), f))


CTX = Context(CheckpointSpec(size_gb=19.6))  # 4.9 GB per server, 8 streams (8 GPUs)


@pytest.mark.parametrize("policy", BOND_HASHES)
def test_every_server_streams_on_its_live_members_only(policy: str) -> None:
    f = small(policy)
    a = analyse(f, "su01/node02/stor0")
    for server in f.servers.tolist():
        placed = a.bond_streams(server, 8)
        assert sum(placed.values()) == 8
        assert all(f.ids[nic] != "su01/node02/stor0" for nic in placed)
    assert a.bond_streams(f.index["su01/node02"], 8) == {f.index["su01/node02/stor1"]: 8}


def test_the_observation_reports_where_the_streams_are() -> None:
    a = analyse(small("layer2"))
    got = observe("bond_streams", a, CTX, {"node": "su01/node01", "member": "su01/node01/stor1"})
    assert got.value == 8
    assert got.detail == "8 streams, hash layer2 (stor0: 0, stor1: 8)"
    both = analyse(small("layer2"), "su01/node01/stor*")
    none = observe("bond_streams", both, CTX, {"node": "su01/node01",
                                               "member": "su01/node01/stor1"})  # fmt: skip
    assert (none.value, none.detail) == (0, "8 streams, hash layer2; no live member")


def test_the_observation_names_a_wrong_member() -> None:
    a = analyse(small("layer2"))
    with pytest.raises(ScenarioError, match="storage NIC of su01/node01, got 'su01/node02/stor0'"):
        observe("bond_streams", a, CTX, {"node": "su01/node01", "member": "su01/node02/stor0"})


def test_a_bad_bond_hash_is_a_fabric_design_error_with_the_choices() -> None:
    with pytest.raises(FabricDesignError, match="use one of layer2, layer2\\+3, layer3\\+4"):
        two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8,
                 node_overrides={"bond_hash": "layer34"})  # fmt: skip


def test_the_checkpoint_names_its_slowest_writer_and_where_its_streams_went() -> None:
    a = analyse(small("layer3+4"), "su01/node03/stor1")
    got = observe("checkpoint_sync_stall_s", a, CTX, {})
    assert got.value == pytest.approx(4.9 * 8 / 25)  # node03: all 8 streams on stor0
    assert got.detail == (
        "slowest: job su01; slowest writer su01/node03: 8 streams, hash layer3+4 (stor0: 8)"
    )


def test_three_members_hash_unevenly_and_a_loss_can_speed_a_server_up() -> None:
    # the generator puts member m on storage switch m % 2, port block m // 2
    f = two_tier(sus=1, nodes_per_su=4, spines=2, leaf_radix=8,
                 node_overrides={"bond_hash": "layer3+4", "storage_nics": 3})  # fmt: skip
    s = f.index["su01/node01"]
    h, a = analyse(f), analyse(f, "su01/node01/stor0")
    assert h.storage_gbps(s) == 75.0
    assert h.write_s(s, 4.9, 8) == pytest.approx(5 * 4.9 / 8 * 8 / 25)  # 5-2-1: 0.98 s
    assert a.write_s(s, 4.9, 8) == pytest.approx(4 * 4.9 / 8 * 8 / 25)  # 4-4: 0.784 s
