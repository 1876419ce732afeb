"""The full seed-a800 shape for real, once: 270 namespaces, 2,000 veth pairs, every route.

Bring-up time is printed, never asserted (performance lives in ``benchmarks/``).
"""

from __future__ import annotations

import pytest

from harness.backends.netns.emulation import Emulation
from harness.backends.netns.faults import FaultEngine
from harness.backends.netns.probe import probe
from harness.backends.netns.probe import sample_pairs
from harness.fabric import preset
from harness.faults.fault import Fault
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like

# The largest emulation of the suite runs alone (tests/support/alone.py): in a clean-clone
# CI rehearsal, built while the other worker's emulations were up, one of its IPv6 route
# pushes failed with EHOSTUNREACH (it passes alone in 11 s; the cause is not established).
pytestmark = [pytest.mark.privileged, pytest.mark.slow, pytest.mark.alone]


def test_seed_a800_full_matrix_and_a_spine_kill(host: Host) -> None:
    f = preset("seed-a800")
    emu = Emulation(f)
    emu.up()
    assert emu.ledger is not None
    rid = emu.ledger.run_id
    try:
        print(f"seed-a800 up in {emu.timings.text()}; {emu.built.describe()}")
        assert emu.router is not None
        routes, hops = emu.router.counts()
        # 40 leaves x 39 blocks x 20 spines + 20 spines x 40 leaves + 200 x 4 rails (+ tables)
        assert routes >= 3_160
        assert hops >= 32_800
        pairs = sample_pairs(emu, None)
        assert len(pairs) == 159_200
        got = probe(emu, pairs)
        failed = [(f.ids[p.src], f.ids[p.dst]) for p in got if not p.ok]
        assert failed == []
        eng = FaultEngine(emu)
        spine = Fault.parse({"kill": "spine-07"}).resolve(f)
        eng.inject(spine)
        print(f"re-sweep after a spine kill: {eng.settle(60):.2f} s")
        sample = sample_pairs(emu, 4_000, seed=1)
        assert all(p.ok for p in probe(emu, sample))
        eng.revert(spine)
        eng.settle(60)
    finally:
        emu.down()
    assert_host_like(host, [rid])
