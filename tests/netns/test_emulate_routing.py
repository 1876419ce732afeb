"""``harness emulate up`` runs the control plane the fabric file's ``routing:`` states.

A fabric file that says ``routing: {control: bgp, bfd: 300ms}`` comes up with FRR
on every switch (bgpd and bfdd recorded in the ledger) without ``--routing``;
``emulate down`` then leaves the host as it was.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.netns.conftest import Host
from tests.support.exit_paths import HostState
from tests.support.exit_paths import Run
from tests.support.exit_paths import assert_restored
from tests.support.exit_paths import clean_up_after

REPO = Path(__file__).resolve().parents[2]


def test_emulate_up_honours_the_fabric_files_routing(tmp_path: Path, host: Host) -> None:
    fabric = tmp_path / "tiny-bgp.yaml"
    text = (REPO / "fabrics" / "tiny-explicit.yaml").read_text()
    fabric.write_text(text.replace("tiers: 2\n", "tiers: 2\nrouting: {control: bgp, bfd: 300ms}\n"))
    before = HostState.now()
    run = Run(tmp_path / "state", "emulate", "up", str(fabric))
    try:
        assert run.proc.stdout is not None
        out = run.proc.stdout.read()  # to its end: the command has exited
        assert run.finish() == 0, run.err()
        assert "routing: control bgp, bfd 300ms" in out
        daemons = [
            str(e.get("what", "")).split()[0] for e in run.entries() if e["kind"] == "process"
        ]
        assert daemons.count("bgpd") == 3, daemons  # one per switch
        assert daemons.count("bfdd") == 3, daemons
        env = {**os.environ, "HARNESS_STATE_DIR": str(run.state)}
        down = subprocess.run(
            [sys.executable, "-m", "harness", "emulate", "down", str(fabric)],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert down.returncode == 0, down.stderr
        assert_restored(before, run)
    finally:
        clean_up_after(run)
