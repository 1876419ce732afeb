"""The scenarios on ibsim through the command line: 0 mismatches, nothing left, no collisions.

Every run gets a ledger root of its own (``HARNESS_STATE_DIR`` under the test's
tmp dir), and every ibsim/OpenSM process of a run carries a path under it on its
command line (the net file, OpenSM's config), so "a process this test left" is
checked exactly -- by that path, never by a program name other engineers' runs
share -- before and after.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.backends.ledger import Ledger
from harness.backends.ledger import run_ids
from tests.ibsim.ibsim_helpers import gone
from tests.ibsim.ibsim_helpers import needs_ib

pytestmark = [needs_ib, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
IBSIM_FILES = sorted(SCENARIOS.glob("ibsim-*.yaml"))
HARNESS = [str(Path(sys.executable).parent / "harness")]  # the installed command


def processes_under(root: Path) -> list[tuple[int, str]]:
    """(PID, command line) of every process whose command line names a path under ``root``."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(root) in cmd and int(proc.name) != os.getpid():
            out.append((int(proc.name), cmd.strip()))
    return out


def _env(root: Path) -> dict[str, str]:
    return os.environ | {"HARNESS_STATE_DIR": str(root), "NO_COLOR": "1"}


def run_json(root: Path, *args: str, timeout: float = 1500) -> dict[str, Any]:
    done = subprocess.run([*HARNESS, "run", *args, "--json"], capture_output=True, text=True,
                          env=_env(root), cwd=REPO, timeout=timeout, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _measured_steps(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in scenario["steps"] if s["kind"] == "expect"]


def test_every_ibsim_scenario_passes_with_0_mismatches_and_nothing_is_left(
    state_root: Path,
) -> None:
    assert len(IBSIM_FILES) >= 6
    assert processes_under(state_root) == []
    # the drills are run on ibsim by tests/ibsim/test_drill_ibsim.py (leaf loss) and by
    # .ci/run (the rolling maintenance, whole), each on a clock of its own
    report = run_json(state_root, str(SCENARIOS), "--backend", "ibsim", "-k", "not drill")
    assert report["backend"] == "ibsim"
    assert (report["failed"], report["errors"], report["mismatches"]) == (0, 0, 0)
    ran = {s["name"]: s for s in report["scenarios"] if s["status"] != "skipped"}
    assert set(ran) >= {p.stem for p in IBSIM_FILES}
    assert all(s["status"] == "passed" for s in ran.values())
    # the same records as on the model (the predictions), each measured on ibsim
    model = run_json(state_root, *map(str, IBSIM_FILES), "--backend", "model")
    predicted = {s["name"]: [x["predicted"] for x in _measured_steps(s)]
                 for s in model["scenarios"]}  # fmt: skip
    for name in (p.stem for p in IBSIM_FILES):
        steps = _measured_steps(ran[name])
        assert [x["predicted"] for x in steps] == predicted[name]
        for step in steps:
            assert step["mismatches"] == 0
            assert step["measured"], f"{name}: a step measured nothing"
            for obs, value in step["measured"].items():
                assert value == step["predicted"][obs], (name, obs)
    measured = {obs for s in ran.values() for st in _measured_steps(s) for obs in st["measured"]}
    assert {"islands", "nics_isolated", "all_gpus_connected", "rails_connected",
            "leaf_uplink_ratio"} <= measured  # fmt: skip
    assert any(o.startswith("hops(") for o in measured)
    assert any(o.startswith("link_gbps(") for o in measured)
    # the backend's notes: the engine that made the tables, standbys, the route balance
    notes = {name: [n for st in _measured_steps(s) for n in st["notes"]] for name, s in ran.items()}
    assert not [name for name in ran if name.startswith("drill-")]
    assert all(any(n.startswith("routed by OpenSM ") for n in v) for v in notes.values())
    assert any("7 other islands routed by a standby SM" in n for n in notes["ibsim-split-subnet"])
    assert any(n.startswith("route balance (LFTs): 39-39 ") for n in notes["ibsim-leaf-lost"])
    # the scenario's engine runs: minhop routes the valley that ftree leaves unrouted
    assert ran["ibsim-valley-minhop"]["routing"]["engine"] == "minhop"
    assert any(n.startswith("routed by OpenSM minhop ") for n in notes["ibsim-valley-minhop"])
    assert any(n.startswith("routed by OpenSM ftree ") for n in notes["ibsim-valley-paths"])
    # nothing left: no process of these runs, no ledger
    assert processes_under(state_root) == []
    assert run_ids(state_root) == []


def _wait_for_reroutes(root: Path, count: int, timeout: float = 120) -> None:
    """Until OpenSM of the (one) run under ``root`` has brought the subnet up ``count`` times."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for rid in run_ids(root):
            with contextlib.suppress(FileNotFoundError):
                if (root / rid / "ibsim" / "opensm.log").read_text(errors="replace").count(
                    "SUBNET UP"
                ) >= count:
                    return
        time.sleep(0.005)
    msg = f"OpenSM under {root} did not bring the subnet up {count} times in {timeout:g} s"
    raise AssertionError(msg)


def _wait_for_daemons(root: Path, timeout: float = 120) -> list[tuple[int, int | None]]:
    """The ibsim and OpenSM the run recorded, once both are in its ledger."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for rid in run_ids(root):
            entries = Ledger(rid, root).entries("process")
            whats = {e.data.get("what") for e in entries}
            if {"ibsim", "opensm"} <= whats:
                return [(int(e.name), e.data["start_ticks"]) for e in entries]
        time.sleep(0.1)
    msg = f"no run under {root} recorded ibsim and opensm within {timeout:g} s"
    raise AssertionError(msg)


def test_a_sigkilled_run_leaves_nothing_after_harness_clean(state_root: Path) -> None:
    scenario = str(SCENARIOS / "ibsim-drain-vs-kill.yaml")
    runner = subprocess.Popen([*HARNESS, "run", scenario, "--backend", "ibsim"],
                              env=_env(state_root), cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        daemons = _wait_for_daemons(state_root)
        _wait_for_reroutes(state_root, 2)  # into the run: the drain's first cable rerouted
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)
    assert not all(gone(p, t) for p, t in daemons)  # a SIGKILLed harness cannot end them
    assert processes_under(state_root)
    done = subprocess.run([*HARNESS, "clean"], capture_output=True, text=True,
                          env=_env(state_root), cwd=REPO, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert all(gone(p, t) for p, t in daemons)
    assert processes_under(state_root) == []
    assert run_ids(state_root) == []


def test_two_runs_at_once_do_not_collide(state_root: Path) -> None:
    scenario = str(SCENARIOS / "ibsim-split-subnet.yaml")
    procs = [
        subprocess.Popen([*HARNESS, "run", scenario, "--backend", "ibsim", "--json"],
                         env=_env(state_root), cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]  # fmt: skip
    # both in one ledger root at the same time: two run ids, two sockets, two directories
    daemons = _wait_for_daemons(state_root)
    deadline = time.monotonic() + 120
    while len(run_ids(state_root)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(run_ids(state_root)) == 2
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
        report = json.loads(out)
        assert (report["passed"], report["mismatches"]) == (1, 0)
    assert all(gone(p, t) for p, t in daemons)
    assert processes_under(state_root) == []
    assert run_ids(state_root) == []
