"""Run ids unique on the whole host, not only under one ledger root.

A run id prefixes every name a run makes (``<run-id>-s01n01``), and teardown
trusts a name of the run's prefix only when the run recorded it; so no two runs
may ever hold one id, whatever ledger root each uses (tests set
``HARNESS_STATE_DIR``, the CLI uses ``/run/harness``), and no id may be drawn
while anything on the host already carries its prefix.

:func:`id_taken` says whether an id is in use: a claim under the host-wide
directory (``/run/harness-host/runs/<run-id>``, naming the run's directory) whose
run directory still exists, a run directory of that name under any of the given
ledger roots, a ``/run/netns`` entry starting with ``<run-id>-``, or any of
:data:`OTHER_USES` (the hook where later backends add theirs: container labels).
:func:`claim` writes the claim; both run under the host-wide lock the ledger
takes (:meth:`harness.backends.ledger.Ledger.create`), so two processes cannot
draw one id.  :func:`release` drops it when the run is over.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from harness.backends.ledger_checks import RUN_ID_RE
from harness.backends.ledger_checks import check_private
from harness.backends.ledger_checks import read_private

#: Where ``ip netns`` keeps the named network namespaces (one statement, for every backend:
#: a run id already used by a namespace's name is not handed out again).
NETNS_RUN_DIR = Path("/run/netns")

#: Other places an id may be in use on this host, each a function of the id that says
#: whether it is (a container backend adds one that looks for its run-id label).
OTHER_USES: list[Callable[[str], bool]] = []


def _claims(host: Path) -> Path:
    return host / "runs"


def netns_with_prefix(run_id: str) -> list[str]:
    """The ``/run/netns`` names that start with ``<run-id>-`` (or are the id itself)."""
    try:
        names = os.listdir(NETNS_RUN_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n == run_id or n.startswith(f"{run_id}-"))


def _claimed(host: Path, run_id: str) -> bool:
    path = _claims(host) / run_id
    if not os.path.lexists(path):
        return False
    try:
        run_dir = json.loads(read_private(path, "run claim"))["dir"]
    except (OSError, ValueError, KeyError, TypeError):
        return True  # unreadable: it stays taken
    if os.path.isdir(run_dir):
        return True
    with contextlib.suppress(OSError):  # the run directory is gone: a stale claim
        path.unlink()
    return False


def id_taken(host: Path, run_id: str, roots: tuple[Path, ...]) -> bool:
    """Whether ``run_id`` is in use anywhere on this host (call under the host lock)."""
    if RUN_ID_RE.fullmatch(run_id) is None:
        return True
    if _claimed(host, run_id):
        return True
    if any(os.path.lexists(root / run_id) for root in roots):
        return True
    if netns_with_prefix(run_id):
        return True
    return any(use(run_id) for use in OTHER_USES)


def claim(host: Path, run_id: str, run_dir: Path) -> None:
    """Claim ``run_id`` for the run in ``run_dir`` (call under the host lock)."""
    claims = _claims(host)
    claims.mkdir(mode=0o700, exist_ok=True)
    check_private(claims, "run claims directory", directory=True)
    fd = os.open(claims / run_id, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps({"dir": str(run_dir.absolute())}))


def release(host: Path, run_id: str) -> None:
    """Drop the claim of ``run_id`` (its run is over)."""
    with contextlib.suppress(FileNotFoundError):
        (_claims(host) / run_id).unlink()
