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
