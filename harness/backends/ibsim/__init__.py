"""The ``ibsim`` backend: the fabric in ibsim, routed by a real OpenSM.

``limits``   ibsim's compile-time limits and the check that refuses fabrics past them
``net``      the ibsim net file for a fabric and the map from node descriptions to elements
``procs``    ibsim and OpenSM as processes recorded in the run's ledger, ended by PID
``tables``   ``dump_lfts`` and ``ibnetdiscover`` output read into routing tables and wiring
``walk``     the LFTs walked hop by hop: which HCA pairs have a route, paths, balance
``sim``      :class:`Simulation`: start, fault through ibsim's console, re-sweep, measure
``faults``   kill, drain, cut, optic through the console, each verified by ibnetdiscover
``islands``  the subnet read island by island, each from an HCA inside it (an SM in each)
``backend``  :class:`IbsimBackend`, the protocol's ``ibsim`` backend (``create`` and
             ``unavailable``, here, for the registry in :mod:`harness.backends`)

Modules:

``backend``  The ``ibsim`` backend behind the protocol: measurements read from the real SM's
             tables.
``faults``   Faults made real in ibsim through its console, each verified by ``ibnetdiscover``.
``islands``  The subnet's islands as the IB tools see them, each read from an HCA inside it.
``jobs``     Running jobs on ibsim, judged from the real tables and the SM's measured routing
             time.
``limits``   ibsim's limits, and the check that refuses a fabric past them.
``net``      The ibsim net file for a fabric, and how ibsim's names map back to elements.
``procs``    ibsim and OpenSM as processes the run owns: in the ledger before they run, ended by
             PID.
``sim``      A fabric in ibsim, routed by a real OpenSM, faulted through ibsim's console.
``tables``   ``dump_lfts`` and ``ibnetdiscover`` output read into routing tables and live wiring
             (edge).
``walk``     The LFTs walked hop by hop: which HCA pairs have a route, over which switches.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.backends.ibsim.backend import IbsimBackend
    from harness.backends.ibsim.limits import IBSIM_LIMITS
    from harness.backends.ibsim.limits import IbsimLimits
    from harness.backends.ibsim.limits import check_fits
    from harness.backends.ibsim.sim import Simulation

TOOLS = ("ibsim", "opensm", "dump_lfts", "ibnetdiscover", "smpdump", "smpquery")
INSTALL = "apt-get install -y ibsim-utils opensm infiniband-diags"


def unavailable() -> str | None:
    """Why ibsim cannot run here (missing tools, or the ledger root is not writable).

    Light: it imports no part of the backend itself, so ``harness run --help`` (which lists
    the backends available here) does not import the analysis.
    """
    from harness.backends.ibsim.procs import UMAD2SIM
    from harness.backends.ledger import state_root

    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing or not Path(UMAD2SIM).exists():
        return f"needs {', '.join(missing) or UMAD2SIM} ({INSTALL})"
    root = state_root()
    probe = root if root.exists() else root.parent
    if not os.access(probe, os.W_OK):
        return f"cannot write the run ledger under {root} (run as root or set HARNESS_STATE_DIR)"
    return None


def create() -> IbsimBackend:
    """A new ibsim backend (the registry's factory; imported only when asked for)."""
    from harness.backends.ibsim.backend import IbsimBackend

    return IbsimBackend()


#: Re-exported names and their modules, imported on first use (PEP 562).
_EXPORTS: dict[str, str] = {
    "IBSIM_LIMITS": "harness.backends.ibsim.limits",
    "IbsimBackend": "harness.backends.ibsim.backend",
    "IbsimLimits": "harness.backends.ibsim.limits",
    "Simulation": "harness.backends.ibsim.sim",
    "check_fits": "harness.backends.ibsim.limits",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "IBSIM_LIMITS",
    "IbsimBackend",
    "IbsimLimits",
    "Simulation",
    "check_fits",
    "create",
    "unavailable",
]
