"""Teardown of the netns backend's ledger entries: the run's namespaces and what lived in them.

Called by :func:`harness.backends.ledger.teardown_entries` (through its ``TEARDOWNS``
table) after the run's recorded processes have ended, for a finished emulation and for
``harness clean`` alike; the ledger's entries have passed
:mod:`harness.backends.ledger_checks` (names ``<run-id>-[a-z0-9-]+``, never a path).

A namespace is the run's own only when ``/run/netns/NAME`` is a mounted namespace whose
inode is the one the run recorded (``netns-created``): whatever still runs inside it is
ended, then it is deleted, and the objects that lived in it (links, qdiscs, loss
tables) go with it.  A mounted namespace of the run's name without that inode -- another
inode, or none recorded -- is not the run's: it is reported and left alone.

Why a recorded name without an inode is never deleted, even though run ids are unique
on the host (:mod:`harness.backends.run_claims`): the inode is recorded *before* the
namespace is mounted on its name (:meth:`~harness.backends.netns.nsutil.Namespaces.create`),
so a SIGKILL at any point leaves either nothing, or a plain placeholder file, or a
mounted namespace with its inode in the ledger.  A mounted namespace without one was
therefore made by someone else, after the id was claimed, under the run's prefix --
deliberately or by mistake -- and is not the run's to delete.  The placeholder, and the
file an interrupted delete leaves (unmounted, not yet unlinked), is ``stale``: a plain
empty file of the run's name with no namespace behind it, removed so that ``ip netns``
stops reporting "Peer netns reference is invalid".
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
    """Remove the run's namespaces (and what runs or lives in them); returns what went.

    What is not the run's is noted in ``ledger.refused`` and left as it is.
    """
    removed: list[str] = []
    created = {e.name: e.data["inode"] for e in ledger.entries("netns-created")}
    inodes: set[int] = set()
    mine: list[str] = []
    for name in dict.fromkeys(e.name for e in ledger.entries("netns")):
        now = nsutil.inspect(name)
        if now.state == "stale":  # a placeholder or an interrupted delete: never a namespace
            if nsutil.remove_stale(name):
                removed.append(f"stale {nsutil.netns_path(name)} (no namespace behind it)")
        elif now.state == "netns" and created.get(name) == now.inode:
            inodes.add(now.inode)
            mine.append(name)
        elif now.state != "absent":
            recorded = created.get(name)
            ledger.refuse(
                f"netns {name}: {nsutil.netns_path(name)} is not the namespace run "
                f"{ledger.run_id} created ("
                + (f"inode {now.inode}, recorded {recorded}" if recorded else "no inode recorded")
                + f", {now.state}); left alone"
            )
    for pid, start in processes_in_netns(inodes):
        if processes.kill_process(pid, start):
            removed.append(f"process {pid} (in a namespace of run {ledger.run_id})")
    gone: set[str] = set()
    for name in mine:
        if nsutil.delete_netns(name):
            removed.append(f"netns {name}")
            gone.add(name)
    removed += _tables_gone(ledger, {n: created[n] for n in gone})
    return removed


def _tables_gone(ledger: ledgers.Ledger, deleted: dict[str, int]) -> list[str]:
    """The nftables tables (flaky links' loss) of the namespaces just deleted, each reported
    only once nothing holds its namespace any more (then the kernel frees it, tables and all)."""
    out = []
    held: dict[str, list[str]] = {}
    for e in ledger.entries("nft-table"):
        where = e.data["netns"]
        if where not in deleted:
            continue
        if where not in held:
            held[where] = nsutil.netns_holders(deleted[where])
        if held[where]:
            ledger.refuse(
                f"nft table {e.name}: its namespace {where} is deleted but still held by "
                f"{', '.join(held[where][:3])}; not verified gone"
            )
        else:
            out.append(f"nft table {e.name} (with netns {where})")
    return out
