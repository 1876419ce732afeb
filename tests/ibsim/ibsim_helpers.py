"""Helpers of the ibsim backend tests (a module of its own name: every conftest is "conftest")."""

from __future__ import annotations

import pytest

from harness.backends.processes import process_alive
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric

IB_TOOLS = ("ibsim", "opensm", "dump_lfts", "ibnetdiscover")
INSTALL = "apt-get install -y ibsim-utils opensm infiniband-diags"
needs_ib = pytest.mark.needs_tools(*IB_TOOLS, install=INSTALL)


def small_fabric(sus: int = 2, spines: int = 2) -> Fabric:
    """Eight servers of four rails over two SUs: 8 leaves, ``spines`` spines, 32 HCAs."""
    return two_tier(sus=sus, nodes_per_su=4, spines=spines, leaf_radix=8, storage=False)


def gone(pid: int, start_ticks: int | None) -> bool:
    """The process that had this PID and start time no longer runs (a zombie its new
    parent has not reaped yet has ended)."""
    return start_ticks is None or not process_alive(pid, start_ticks)
