"""The routing engine decides what the real tables route: a valley fabric per engine.

su01/leaf-r0 keeps its uplinks to spines 1-2 only and su02/leaf-r0 to spines 3-4
only.  Up-down engines (ftree, updn), told the spines are their roots, route
nothing between those two leaves; minhop and dor route any shortest path, so
they take the five-switch valley through another leaf.  Without root GUIDs
OpenSM's ftree and updn find no roots on this fabric and OpenSM falls back to
minhop, which routes the valley -- a real OpenSM behaviour the harness avoids by
naming the roots, as production configs do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.backends.ibsim import Simulation
from harness.backends.ibsim import faults
from harness.backends.ibsim.backend import IbsimBackend
from harness.backends.measurement import MeasurePlan
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric
from harness.fabric.routing import parse_routing
from harness.faults.text import resolve_faults
from tests.ibsim.ibsim_helpers import needs_ib

pytestmark = [needs_ib]

REPO = Path(__file__).resolve().parents[2]
HARNESS = [str(Path(sys.executable).parent / "harness")]
CUTS = (
    "cut su01/leaf-r0:7--spine-03:1",
    "cut su01/leaf-r0:8--spine-04:1",
    "cut su02/leaf-r0:5--spine-01:5",
    "cut su02/leaf-r0:6--spine-02:5",
)


def valley_fabric() -> Fabric:
    return two_tier(sus=2, nodes_per_su=4, node="a800", spines=4, leaf_radix=8)


def _cut_the_valley(sim: Simulation) -> None:
    for text in CUTS:
        (fault,) = resolve_faults(sim.fabric, text, "test")
        faults.inject(sim, fault)


@pytest.mark.parametrize(
    ("engine", "rail0"),
    [("ftree", 24), ("updn", 24), ("minhop", 56), ("dor", 56)],
)
def test_the_valley_is_routed_by_shortest_path_engines_only(
    state_root: Path, engine: str, rail0: int
) -> None:
    f = valley_fabric()
    with Simulation(f, routing=engine, root=state_root) as sim:
        assert len(sim.root_guids) == 4  # the spines
        _cut_the_valley(sim)
        routes = sim.routes()
        assert sim.routing_engine_used() == engine
        # rail 0: 8 HCAs, 56 ordered pairs; su01's 4 x su02's 4, both ways, lost up-down
        assert routes.per_rail(f) == {0: (rail0, 56), 1: (56, 56), 2: (56, 56), 3: (56, 56)}
        a, b = f.index["su01/node01/nic0"], f.index["su02/node01/nic0"]
        path = routes.path(a, b)
        if rail0 == 56:
            assert path is not None
            assert len(path) == 5  # leaf, spine, leaf (down), spine (up again), leaf
            assert path[0] == "su01/leaf-r0"
            assert path[-1] == "su02/leaf-r0"
            assert path[1] in {"spine-01", "spine-02"}
            assert path[3] in {"spine-03", "spine-04"}
        else:
            assert path is None


def test_without_root_guids_opensm_falls_back_to_minhop_and_routes_the_valley(
    state_root: Path,
) -> None:
    f = valley_fabric()
    with Simulation(f, routing="updn", roots=False, root=state_root) as sim:
        assert sim.root_guids == ()
        _cut_the_valley(sim)
        routes = sim.routes()
        assert sim.routing_engine_used() == "minhop"  # "no root nodes were found"
        assert routes.per_rail(f)[0] == (56, 56)


def test_the_backend_runs_the_scenarios_engine_and_says_which_was_used(
    state_root: Path,
) -> None:
    f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    with IbsimBackend(root=state_root) as backend:
        backend.apply(f, routing=parse_routing({"engine": "updn"}))
        assert backend.sim is not None
        assert backend.sim.routing == "updn"
        notes = backend.measure(MeasurePlan(probes=())).notes
        assert notes[0].startswith("routed by OpenSM updn (master SM on ")
        # a new engine is a new OpenSM; a lone leaf (all spines killed) is no fat tree
        backend.apply(f, routing=parse_routing({"engine": "ftree"}))
        for text in ("kill spine-01", "kill spine-02"):
            (fault,) = resolve_faults(f, text, "test")
            backend.inject(fault)
        notes = backend.measure(MeasurePlan(probes=())).notes
        assert "engine ftree asked for, OpenSM fell back to minhop" in notes[0]
    with IbsimBackend(engine="minhop", root=state_root) as backend:  # over the scenario's
        backend.apply(f, routing=parse_routing({"engine": "updn"}))
        assert backend.sim is not None
        assert backend.sim.routing == "minhop"


def test_engine_flag_changes_the_measured_answer(state_root: Path) -> None:
    scenario = str(REPO / "scenarios" / "ibsim-valley-paths.yaml")
    env = os.environ | {"HARNESS_STATE_DIR": str(state_root), "NO_COLOR": "1"}

    def run(*extra: str) -> tuple[int, dict[str, object]]:
        done = subprocess.run([*HARNESS, "run", scenario, "--backend", "ibsim", "--json",
                               *extra], capture_output=True, text=True, env=env, cwd=REPO,
                              timeout=600, check=False)  # fmt: skip
        doc: dict[str, object] = json.loads(done.stdout)
        return done.returncode, doc

    rc, doc = run("--engine", "updn")
    assert rc == 0, doc
    (result,) = doc["scenarios"]  # type: ignore[misc]
    assert result["routing"]["engine"] == "updn"
    notes = {n for s in result["steps"] if s["kind"] == "expect" for n in s["notes"]}
    assert any(n.startswith("routed by OpenSM updn ") for n in notes)
    # minhop routes the valley: the scenario's up-down expectations fail, and the model
    # (paths shortest, implied) agrees with the tables: failed, not a mismatch
    rc, doc = run("--engine", "minhop")
    assert rc == 1
    assert (doc["failed"], doc["mismatches"]) == (1, 0)
