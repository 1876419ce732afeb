"""The halt lever: stop one running drill, or every drill on the host and refuse new ones
until released (run stage).

Running drills are registered in ``<state root>-drills/`` (``/run/harness-drills`` by
default, beside the run ledgers' ``/run/harness``): ``RUN.json`` while a drill runs (its
name, PID and the PID's start time, so a reused PID is not taken for it), ``RUN.halt`` when
``harness halt RUN`` asked it to stop, ``halt-all`` while ``harness halt --all`` holds
every drill.  A drill looks at the lever at every probe sample and between actions, so it
stops within one probe period (plus the action under way), then rolls back.  Everything is
idempotent; a registration whose process is gone (a SIGKILLed drill) is removed by the next
``harness halt`` or ``harness clean``.  A ``--dry-run`` touches none of it (it only reads
whether new drills are refused).

>>> import tempfile
>>> lever = HaltLever(Path(tempfile.mkdtemp()))
>>> lever.register("r1", "demo")
>>> lever.requested("r1") is None
True
>>> lever.halt("demo"), lever.requested("r1")
(['r1'], 'harness halt r1')
>>> lever.unregister("r1"); lever.halt_all(); lever.refusal() is not None
True
>>> lever.release(); lever.refusal() is None
True
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.backends.ledger import state_root
from harness.errors import BackendError

HALT_ALL = "halt-all"


def drill_root() -> Path:
    """Where running drills are registered: the state root's sibling ``-drills``."""
    root = state_root()
    return root.with_name(root.name + "-drills")


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (/proc/PID/stat field 22), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


class HaltLever:
    """The lever under one directory (:func:`drill_root` by default)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or drill_root()

    def _write(self, name: str, text: str) -> None:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.root / f".{name}.tmp"
        tmp.write_text(text)
        tmp.replace(self.root / name)

    def register(self, run_id: str, name: str) -> None:
        """Record a running drill (raises :class:`BackendError` while ``halt --all`` holds)."""
        why = self.refusal()
        if why is not None:
            raise BackendError(why)
        pid = os.getpid()
        self._write(f"{run_id}.json", json.dumps({"run": run_id, "name": name, "pid": pid,
                                                  "start": _start_time(pid)}))  # fmt: skip

    def unregister(self, run_id: str) -> None:
        """Forget a drill that ended (and any halt asked of it)."""
        for suffix in (".json", ".halt"):
            (self.root / f"{run_id}{suffix}").unlink(missing_ok=True)

    def refusal(self) -> str | None:
        """Why a new drill may not start now (None: it may)."""
        if (self.root / HALT_ALL).exists():
            return ("every drill on this host is halted (harness halt --all); "
                    "harness halt --release lets drills run again")  # fmt: skip
        return None

    def requested(self, run_id: str) -> str | None:
        """Why the drill ``run_id`` must stop now (None: it may go on)."""
        if (self.root / HALT_ALL).exists():
            return "harness halt --all"
        if (self.root / f"{run_id}.halt").exists():
            return f"harness halt {run_id}"
        return None

    def running(self) -> list[dict[str, Any]]:
        """The registered drills whose process is still the one that registered; stale
        registrations (the process is gone) are removed."""
        out: list[dict[str, Any]] = []
        if not self.root.is_dir():
            return out
        for path in sorted(self.root.glob("*.json")):
            try:
                info = json.loads(path.read_text())
                pid, start = int(info["pid"]), info.get("start")
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if _start_time(pid) is None or _start_time(pid) != start:
                self.unregister(path.stem)
                continue
            out.append(info)
        return out

    def halt(self, target: str) -> list[str]:
        """Ask the drills whose run id or name is ``target`` to stop; their run ids."""
        hit = [d["run"] for d in self.running() if target in (d["run"], d["name"])]
        for rid in hit:
            self._write(f"{rid}.halt", "halt\n")
        return hit

    def halt_all(self) -> None:
        """Stop every drill on the host and refuse new ones until :meth:`release`."""
        self._write(HALT_ALL, "halt --all\n")

    def release(self) -> None:
        """Let drills run again."""
        (self.root / HALT_ALL).unlink(missing_ok=True)
