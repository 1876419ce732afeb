"""Make one report of each kind through the command line, as the README shows them.

The browser tests load these pages, and ``tests/report/screenshots.py`` photographs
them for the README, so the README's images come from the tests' own code path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
STATE = "docs/examples/seed-state.yaml"  # paths relative to ROOT, as the README writes them
DUMPS = "tests/data/importers"

# The README's commands, argument for argument (DIR is the report directory).
COMMANDS: dict[str, list[str]] = {
    "risk": ["risk", "seed-a800", "--change", "drain spine-03; drain su04/leaf-r2",
             "--state", STATE, "--budget", "jobs_lost<=1"],
    "sweep": ["sweep", "seed-a800", "--state", STATE],
    "run": ["run", "scenarios/seed-leaf-loss-kills-its-su-job.yaml",
            "scenarios/seed-drain-vs-kill.yaml"],
    "audit": ["audit", f"{DUMPS}/rail2x2_wrong_rail.ibnetdiscover",
              "--design", "docs/examples/rail2x2.yaml"],
    "audit-inferred": ["audit", f"{DUMPS}/prod_hdr_broken.ibnetdiscover"],
    "drill": ["drill", "scenarios/drill-leaf-loss.yaml", "scenarios/drill-hung-spine-bgp.yaml"],
}  # fmt: skip
EXIT = {"risk": 0, "sweep": 0, "run": 0, "audit": 1, "audit-inferred": 1, "drill": 0}


def make_report(kind: str, out: Path) -> Path:
    """Run the README command of ``kind`` from the repository root (as the README does)
    with ``--report out``; return the page."""
    with contextlib.chdir(ROOT):
        code = main([*COMMANDS[kind], "--report", str(out.resolve())])
    if code != EXIT[kind]:
        msg = f"harness {' '.join(COMMANDS[kind])} exited {code}, expected {EXIT[kind]}"
        raise AssertionError(msg)
    return out / "index.html"


MAKERS: dict[str, Callable[[Path], Path]] = {
    kind: (lambda out, kind=kind: make_report(kind, out)) for kind in COMMANDS
}
