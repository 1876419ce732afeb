"""Teardown of the netns backend's ledger entries: the run's namespaces and what lived in them.

Called by :func:`harness.backends.ledger.teardown_entries` (through its ``TEARDOWNS``
table) after the run's recorded processes have ended, for a finished emulation and for
``harness clean`` alike.  A namespace is the run's own only when its name was recorded
before it was created and, once created, its inode matches the recorded one; whatever
still runs inside such a namespace is ended, then the namespace is deleted, and the
objects that lived in it (links, qdiscs, ``nft-table`` entries) go with it.
"""

from __future__ import annotations

import os

from harness.backends import ledger as ledgers
from harness.backends import processes
from harness.backends.netns import nsutil


def processes_in_netns(inodes: set[int]) -> list[tuple[int, int]]:
    """(pid, start ticks) of every process living in one of these network namespaces."""
    out: list[tuple[int, int]] = []
    if not inodes:
        return out
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            ino = os.stat(f"/proc/{entry.name}/ns/net").st_ino
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if ino in inodes:
            start = processes.process_start_ticks(int(entry.name))
            if start is not None:
                out.append((int(entry.name), start))
    return out


def teardown(ledger: ledgers.Ledger) -> list[str]:
    """Remove the run's namespaces (and what runs or lives in them); returns what went."""
    removed: list[str] = []
    netns = ledger.entries("netns")
    created = {e.name: e.data.get("inode") for e in ledger.entries("netns-created")}
    inodes: set[int] = set()
    mine: list[str] = []
    for e in netns:
        try:
            ino = os.stat(nsutil.NETNS_RUN_DIR / e.name).st_ino
        except OSError:
            continue
        # recorded before creation under a run-unique name; once created, its inode too
        if created.get(e.name) in (None, ino):
            inodes.add(ino)
            mine.append(e.name)
    for pid, start in processes_in_netns(inodes):
        if processes.kill_process(pid, start):
            removed.append(f"process {pid} (in a namespace of run {ledger.run_id})")
    gone: set[str] = set()
    for name in mine:
        if nsutil.delete_netns(name):
            removed.append(f"netns {name}")
            gone.add(name)
    # nftables tables (flaky links' loss) live in a namespace and went with it
    removed += [
        f"nft table {e.name} (with netns {e.data.get('netns')})"
        for e in ledger.entries("nft-table")
        if e.data.get("netns") in gone
    ]
    return removed
