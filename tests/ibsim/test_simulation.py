"""ibsim + a real OpenSM: bring-up, the LFT walk, faults through the console, cleanup.

Every test checks that the ibsim and OpenSM processes it started are gone
afterwards (by PID and start time) and that its ledger directory is removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.backends.ibsim import Simulation
from harness.backends.ibsim import faults
from harness.backends.ibsim.sim import ROUTING_ENGINES
from harness.backends.ledger import clean
from harness.backends.ledger import run_ids
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.faults.text import resolve_faults
from tests.ibsim.ibsim_helpers import gone
from tests.ibsim.ibsim_helpers import needs_ib
from tests.ibsim.ibsim_helpers import small_fabric

pytestmark = [needs_ib]


def _pids(sim: Simulation) -> list[tuple[int, int | None]]:
    assert sim.ibsim is not None
    assert sim.opensm is not None
    return [(o.pid, o.start_ticks) for o in (sim.ibsim, sim.opensm)]


def test_subnet_up_every_pair_routed_and_nothing_left(state_root: Path) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        pids = _pids(sim)
        assert sim.ledger is not None
        recorded = {(int(e.name), e.data["start_ticks"]) for e in sim.ledger.entries("process")}
        assert set(pids) == recorded  # both daemons are in the ledger, by PID and start time
        assert sim.sockname.startswith("harness-h")
        assert sim.routing_engine_used() == "ftree"
        routes = sim.routes()
        # 32 HCAs, 8 per rail: 8*7 ordered pairs per rail, all routed by the real tables
        assert routes.per_rail(f) == {r: (56, 56) for r in range(4)}
        assert routes.pairs(f, same_rail=False) == (32 * 31, 32 * 31)
        # same leaf: HCA-leaf-HCA (2 links); other SU or rail: over a spine (4 links)
        assert routes.hop_histogram() == {2: 8 * 4 * 3, 4: 32 * 31 - 8 * 4 * 3}
        a, b = routes.hcas[0], routes.hcas[-1]
        path = routes.path(a, b)
        assert path is not None
        assert path[1].startswith("spine-")
        assert routes.balance("su01/leaf-r0") == {5: 14, 6: 14}  # 28 remote HCAs, two uplinks
        assert not routes.loops
        sim.start()  # running already: no second ibsim/OpenSM pair (it would be lost)
        assert _pids(sim) == pids
        assert run_ids(state_root) == [sim.ledger.run_id]
    assert all(gone(pid, t) for pid, t in pids)
    assert run_ids(state_root) == []


@pytest.mark.parametrize("engine", ["updn", "minhop"])
def test_routing_engine_is_read_back_from_the_log(state_root: Path, engine: str) -> None:
    f = small_fabric()
    with Simulation(f, routing=engine, root=state_root) as sim:
        assert sim.routing_engine_used() == engine
        assert sim.routes().pairs(f) == (224, 224)


def test_unknown_routing_engine_is_refused() -> None:
    with pytest.raises(ScenarioError, match=r"unknown OpenSM routing engine 'lash'.*ftree"):
        Simulation(small_fabric(), routing="lash")
    assert set(ROUTING_ENGINES) == {"ftree", "updn", "minhop", "dor"}


def test_spine_kill_moves_routes_and_restore_brings_them_back(state_root: Path) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        (kill,) = resolve_faults(f, "kill spine-01", "test")
        effect = faults.inject(sim, kill)
        assert len(effect.ports) == 8
        assert effect.rerouted_s > 0
        routes = sim.routes()
        assert "spine-01" not in routes.wiring.switches
        assert routes.pairs(f) == (224, 224)  # one spine left still routes everything
        assert routes.balance("su01/leaf-r0") == {6: 28}  # all remote HCAs over spine-02
        faults.revert(sim, effect)
        assert sim.routes().balance("su01/leaf-r0") == {5: 14, 6: 14}


def test_both_spines_killed_every_leaf_island_is_routed_by_an_sm_of_its_own(
    state_root: Path,
) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        for text in ("kill spine-01", "kill spine-02"):
            (fault,) = resolve_faults(f, text, "test")
            faults.inject(sim, fault)
        routes = sim.routes()
        # the subnet splits into its 8 leaves, each read from an HCA inside it: the master
        # OpenSM routes su02/leaf-r3's island, a standby (opensm --once) each of the 7 others
        assert len(sim.islands) == 8
        assert sim.master_island() is not None
        assert sim.master_island().wiring.switches == {"su02/leaf-r3"}  # type: ignore[union-attr]
        assert len(sim.island_engines) == 7
        # ftree and updn find none of their roots (the spines) in a lone leaf: OpenSM falls
        # back to minhop, which routes a leaf's own HCAs
        assert set(sim.island_engines.values()) == {"minhop"}
        assert routes.wiring.switches == {f"su0{s}/leaf-r{r}" for s in (1, 2) for r in range(4)}
        assert routes.pairs(f) == (8 * 4 * 3, 224)  # within each leaf: 4 HCAs, 4*3 pairs
        assert routes.hop_histogram() == {2: 96}


def test_a_fault_that_cuts_the_master_sm_off_leaves_the_rest_to_a_standby(
    state_root: Path,
) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        assert sim.sm_host == "su02/node04/nic3"
        (kill,) = resolve_faults(f, "kill su02/leaf-r3", "test")
        effect = faults.inject(sim, kill)
        assert sim.master_cut_off()
        assert sim.master_island() is None
        assert len(sim.islands) == 1
        assert list(sim.island_engines.values()) == ["ftree"]  # the standby routes the rest
        # rail 3 keeps only su01's 4 HCAs (su02/leaf-r3 held su02's, now cut off)
        assert sim.routes().per_rail(f) == {0: (56, 56), 1: (56, 56), 2: (56, 56), 3: (12, 56)}
        faults.revert(sim, effect)
        assert not sim.master_cut_off()
        assert sim.island_engines == {}  # the master has the whole subnet back
        assert sim.routes().pairs(f) == (224, 224)


def test_access_optic_cuts_one_hca_off(state_root: Path) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        (optic,) = resolve_faults(f, "optic su01/leaf-r0:1", "test")
        effect = faults.inject(sim, optic)
        routes = sim.routes()
        nic = f.index["su01/node01/nic0"]
        assert not any(routes.routed(nic, other) for other in routes.hcas if other != nic)
        assert routes.pairs(f) == (224 - 2 * 7, 224)
        faults.revert(sim, effect)
        assert sim.routes().pairs(f) == (224, 224)


def test_drain_routes_around_before_the_last_cable_goes(state_root: Path) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        (drain,) = resolve_faults(f, "drain spine-01", "test")
        effect = faults.inject(sim, drain)
        assert len(effect.ports) == 8
        routes = sim.routes()
        assert routes.pairs(f) == (224, 224)
        assert routes.balance("su02/leaf-r3") == {6: 28}


def test_a_fault_that_changes_nothing_is_an_error(state_root: Path) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        (cut,) = resolve_faults(f, "cut su01/leaf-r0:5--spine-01:1", "test")
        faults.inject(sim, cut)
        with pytest.raises(BackendError, match="would change nothing on ibsim: every port"):
            faults.inject(sim, cut)


def test_degrade_is_not_supported_on_ibsim(state_root: Path) -> None:
    f = small_fabric()
    with Simulation(f, root=state_root) as sim:
        (degrade,) = resolve_faults(f, "degrade su01/leaf-r0:5--spine-01:1 0.25", "test")
        with pytest.raises(ScenarioError, match="degrade is not supported on ibsim"):
            faults.inject(sim, degrade)


def test_two_runs_at_once_do_not_collide(state_root: Path) -> None:
    one, two = small_fabric(), small_fabric(sus=1)
    with Simulation(one, root=state_root) as a, Simulation(two, root=state_root) as b:
        assert a.sockname != b.sockname
        assert a.dir != b.dir
        ra, rb = a.routes(), b.routes()
        assert (len(ra.wiring.switches), len(rb.wiring.switches)) == (8 + 2, 4 + 2)
        (kill,) = resolve_faults(one, "kill spine-01", "test")
        faults.inject(a, kill)
        assert "spine-01" in b.wiring().switches  # the other run's fabric is untouched
        pids = _pids(a) + _pids(b)
    assert all(gone(pid, t) for pid, t in pids)


_CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from tests.ibsim.ibsim_helpers import small_fabric
    from harness.backends.ibsim import Simulation
    with Simulation(small_fabric(), root=Path({root!r})) as sim:
        print(sim.ibsim.pid, sim.ibsim.start_ticks, sim.opensm.pid, sim.opensm.start_ticks,
              flush=True)
        time.sleep(120)
    """
)


def _child(state_root: Path) -> tuple[subprocess.Popen[str], list[tuple[int, int]]]:
    code = _CHILD.format(repo=str(Path(__file__).resolve().parents[2]), root=str(state_root))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    words = proc.stdout.readline().split()
    assert len(words) == 4, "the child did not bring the simulation up"
    nums = [int(w) for w in words]
    return proc, [(nums[0], nums[1]), (nums[2], nums[3])]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_end_ibsim_and_opensm(state_root: Path, sig: signal.Signals) -> None:
    proc, pids = _child(state_root)
    assert not any(gone(p, t) for p, t in pids)
    os.kill(proc.pid, sig)
    proc.wait(30)
    assert proc.stdout is not None
    proc.stdout.close()
    assert all(gone(p, t) for p, t in pids)
    assert run_ids(state_root) == []


def test_sigkilled_run_is_cleaned_by_harness_clean(state_root: Path) -> None:
    proc, pids = _child(state_root)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert proc.stdout is not None
    proc.stdout.close()
    time.sleep(0.1)
    assert not any(gone(p, t) for p, t in pids)  # the daemons outlive a SIGKILLed harness
    report = clean(root=state_root)
    assert len(report.removed) == 1
    (removed,) = report.removed.values()
    assert sorted(x.split("(")[1].rstrip(")") for x in removed) == ["ibsim", "opensm"]
    assert all(gone(p, t) for p, t in pids)
    assert run_ids(state_root) == []
