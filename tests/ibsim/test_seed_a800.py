"""The full seed-a800 (60 switches of 40 ports, 800 HCAs) in ibsim, routed by OpenSM's ftree."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.ibsim import Simulation
from harness.backends.ibsim import faults
from harness.fabric import preset
from harness.faults.text import resolve_faults
from tests.ibsim.ibsim_helpers import gone
from tests.ibsim.ibsim_helpers import needs_ib

pytestmark = [needs_ib, pytest.mark.slow]


def test_seed_a800_routes_every_pair_and_a_spine_kill_shifts_balance(state_root: Path) -> None:
    f = preset("seed-a800")
    with Simulation(f, root=state_root) as sim:
        assert sim.ibsim is not None
        assert sim.opensm is not None
        pids = [(o.pid, o.start_ticks) for o in (sim.ibsim, sim.opensm)]
        assert sim.routing_engine_used() == "ftree"
        routes = sim.routes()
        assert len(routes.lfts.tables) == 60
        assert routes.per_rail(f) == {r: (200 * 199, 200 * 199) for r in range(4)}
        # 20 HCAs under a leaf: 20*19 pairs HCA-leaf-HCA per leaf, the rest over a spine
        assert routes.hop_histogram() == {2: 40 * 20 * 19, 4: 800 * 799 - 40 * 20 * 19}
        # ftree spreads the 780 remote HCAs evenly: 39 on each of the 20 uplinks (21-40)
        assert routes.balance("su01/leaf-r0") == {p: 39 for p in range(21, 41)}
        (kill,) = resolve_faults(f, "kill spine-01", "test")
        effect = faults.inject(sim, kill)
        assert len(effect.ports) == 40
        after = sim.routes()
        assert after.pairs(f) == (4 * 200 * 199, 4 * 200 * 199)
        # ftree does not spread spine-01's share: the next uplink takes all of it
        balance = after.balance("su01/leaf-r0")
        assert 21 not in balance
        assert sorted(balance.values()) == [39] * 18 + [78]
        faults.revert(sim, effect)
        assert sim.routes().balance("su01/leaf-r0") == {p: 39 for p in range(21, 41)}
    assert all(gone(p, t) for p, t in pids)
