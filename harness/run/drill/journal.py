"""A drill's journal: ``journal.jsonl`` appended and fsynced per event, ``journal.json`` at
the end (run stage).

Each line of ``journal.jsonl`` is one record (``start``, ``sample``, ``event``,
``abort``, ``rollback``, ``end``), so a run killed at any point leaves a readable
prefix: samples are flushed as they come and made durable with the next event.
``journal.json`` is written once the rollback is over (to a temporary file, then
renamed): the drill in canonical form, the scenario file's text, the backend, the
routing, the tool versions, every action with its planned and actual time, the
probe series, predictions and observations, aborts and rollbacks, and the final
status.  Without a journal directory nothing is written.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import IO
from typing import Any

#: The schema of journal.json (docs/drills.md describes it).
JOURNAL_VERSION = 1
#: The tools an emulated drill's results depend on, and how each says its version.
TOOLS = {
    "frr": ("zebra", "--version"),
    "opensm": ("opensm", "--version"),
    "ibsim": ("ibsim", "-h"),
    "iperf3": ("iperf3", "--version"),
}


def _first_line(argv: tuple[str, ...]) -> str | None:
    exe = shutil.which(argv[0]) or shutil.which(argv[0], path="/usr/sbin:/usr/lib/frr")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=5,
                              check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[0].strip() if text else None


def tool_versions(emulated: bool) -> dict[str, str | None]:
    """The versions a drill's result depends on: Python, harness, the kernel, torch and, on an
    emulated backend, FRR, OpenSM, ibsim and iperf3 (None: not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version

    def pkg(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    out: dict[str, str | None] = {
        "python": platform.python_version(), "harness": pkg("harness"),
        "kernel": platform.release(), "torch": pkg("torch"),
    }  # fmt: skip
    if emulated:
        for name, argv in TOOLS.items():
            out[name] = _first_line(argv)
    return out


class Journal:
    """The journal of one drill run (everything a no-op without a directory)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._lines: IO[str] | None = None
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            self._lines = (directory / "journal.jsonl").open("a", encoding="utf-8")

    def write(self, kind: str, *, durable: bool = True, **data: Any) -> None:
        """Append one record; ``durable``: fsync it (and every sample before it)."""
        if self._lines is None:
            return
        self._lines.write(json.dumps({"type": kind, **data}, default=str) + "\n")
        self._lines.flush()
        if durable:
            os.fsync(self._lines.fileno())

    def finish(self, doc: dict[str, Any]) -> Path | None:
        """Write ``journal.json`` (atomically) and close the line file; its path."""
        if self.directory is None:
            return None
        self.close()
        path = self.directory / "journal.json"
        tmp = self.directory / ".journal.json.tmp"
        with tmp.open("w", encoding="utf-8") as fh:
            json.dump({"version": JOURNAL_VERSION, **doc}, fh, indent=1, default=str)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
        return path

    def close(self) -> None:
        """Close the line file (idempotent)."""
        if self._lines is not None:
            self._lines.close()
            self._lines = None


def read_journal(path: Path) -> dict[str, Any]:
    """A ``journal.json`` (or the directory holding one) as a mapping; a run cut short
    (only ``journal.jsonl``) is read from its lines, with status ``incomplete``."""
    if path.is_dir():
        path = path / "journal.json" if (path / "journal.json").exists() else path / "journal.jsonl"
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        start: dict[str, Any] = next((r for r in records if r["type"] == "start"), {})
        return {**start, "status": "incomplete",
                "events": [r for r in records if r["type"] in ("event", "rollback")],
                "records": records}  # fmt: skip
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded
