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
             ``unavailable`` for the registry in :mod:`harness.backends`)

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

from harness.backends.ibsim.backend import IbsimBackend
from harness.backends.ibsim.backend import create
from harness.backends.ibsim.backend import unavailable
from harness.backends.ibsim.limits import IBSIM_LIMITS
from harness.backends.ibsim.limits import IbsimLimits
from harness.backends.ibsim.limits import check_fits
from harness.backends.ibsim.sim import Simulation

__all__ = [
    "IBSIM_LIMITS",
    "IbsimBackend",
    "IbsimLimits",
    "Simulation",
    "check_fits",
    "create",
    "unavailable",
]
