"""The storage bond request netns would send carries the node's hash policy (nothing is sent).

This kernel has no bonding driver (``CONFIG_BONDING``; docs/netns.md), so the emulation
realizes a bond at layer 3 and never sends this request; the request is still checked
so that a kernel with the driver gets the model's hash, not a hard-coded one.
"""

from __future__ import annotations

import pytest
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg

from harness.backends.netns.netlink import XMIT_HASH_POLICY
from harness.backends.netns.netlink import Batch
from harness.fabric.model import BOND_HASHES


def _queued_policy(batch: Batch) -> tuple[int, int]:
    _, data, _ = batch._queue[-1]
    msg = ifinfmsg(data)
    msg.decode()
    info = msg.get_attr("IFLA_LINKINFO").get_attr("IFLA_INFO_DATA")
    return info.get_attr("IFLA_BOND_MODE"), info.get_attr("IFLA_BOND_XMIT_HASH_POLICY")


@pytest.mark.parametrize(("policy", "kernel"), [("layer2", 0), ("layer3+4", 1), ("layer2+3", 2)])
def test_the_bond_request_carries_the_hash_policy(policy: str, kernel: int) -> None:
    # include/uapi/linux/if_bonding.h: BOND_XMIT_POLICY_LAYER2 0, LAYER34 1, LAYER23 2
    batch = Batch("test")
    try:
        batch.bond(7, "bond0", "bond0", policy)
        assert _queued_policy(batch) == (4, kernel)  # 802.3ad, the policy
    finally:
        batch.close()


def test_every_model_hash_has_a_kernel_policy_and_the_default_is_layer2() -> None:
    assert set(XMIT_HASH_POLICY) == set(BOND_HASHES)
    batch = Batch("test")
    try:
        batch.bond(7, "bond0", "bond0")
        assert _queued_policy(batch) == (4, 0)
    finally:
        batch.close()
