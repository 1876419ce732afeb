"""Make one report of each kind through the command line, as the README shows them.

The browser tests load these pages, and ``tests/report/screenshots.py`` photographs
them for the README, so the README's images come from the tests' own code path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / "docs" / "examples" / "seed-state.yaml"

# The README's commands, argument for argument (DIR is the report directory).
COMMANDS: dict[str, list[str]] = {
    "risk": ["risk", "seed-a800", "--change", "drain spine-03; drain su04/leaf-r2",
             "--state", str(STATE), "--budget", "jobs_lost<=1"],
    "sweep": ["sweep", "seed-a800", "--state", str(STATE)],
    "run": ["run", str(ROOT / "scenarios" / "seed-leaf-loss-kills-its-su-job.yaml"),
            str(ROOT / "scenarios" / "seed-drain-vs-kill.yaml")],
}  # fmt: skip
EXIT = {"risk": 0, "sweep": 0, "run": 0}


def make_report(kind: str, out: Path) -> Path:
    """Run the README command of ``kind`` with ``--report out``; return the page."""
    code = main([*COMMANDS[kind], "--report", str(out)])
    if code != EXIT[kind]:
        msg = f"harness {' '.join(COMMANDS[kind])} exited {code}, expected {EXIT[kind]}"
        raise AssertionError(msg)
    return out / "index.html"


MAKERS: dict[str, Callable[[Path], Path]] = {
    kind: (lambda out, kind=kind: make_report(kind, out)) for kind in COMMANDS
}
