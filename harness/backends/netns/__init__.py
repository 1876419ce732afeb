"""The netns backend: a fabric in Linux network namespaces, routed for real (root).

:mod:`~harness.backends.netns.plan` (names, addresses), :mod:`.emulation`
(build and tear down), :mod:`.routing` (``routing: sm``), :mod:`.faults`,
:mod:`.probe` (real packets), :mod:`.backend` (the protocol), :mod:`.session`
(``harness emulate``).  See ``docs/netns.md``.

Modules:

``backend``     The netns backend on the backend protocol: apply, inject, settle, measure,
                close.
``bgp``         ``routing: bgp``: FRR on every switch, as RoCE fabrics run by SONiC are routed.
``emulation``   A fabric realized in Linux network namespaces: build, change, tear down.
``faults``      Faults made real on an :class:`~harness.backends.netns.emulation.Emulation`.
``flows``       Bulk flows between server namespaces with iperf3, in the fabric's units.
``flow_stream`` Flow groups kept running in the background and read at once: a drill's
                ``flow`` probe.
``frr``         FRR daemons in the emulation's namespaces: started, recorded, stopped by PID.
``job_runs``    The jobs of a netns run: started with the fabric, watched, restarted, measured.
``job_worker``  The real training job of the netns backend: torch.distributed over gloo, one
                rank per server.
``loss``        One-way packet loss on an emulated link, counted with real packets.
``netlink``     Batched rtnetlink over one socket per namespace, with pyroute2's message
                classes.
``nft``         Packet loss on an emulated link with nftables (``flaky``): the kernel here has
                no netem.
``nsutil``      Network namespaces made in-process (``unshare``/``setns``/bind mount), as
                iproute2 does.
``plan``        How a modeled fabric becomes namespaces, veth pairs and addresses (pure, no
                root).
``probe``       Reachability with real packets: an in-process raw-ICMP prober.
``routing``     ``routing: sm``: forwarding tables computed from what is alive, as a subnet
                manager does.
``session``     ``harness emulate up|down|status`` and ``harness clean``: emulations for
                interactive use.
``spawn``       Start a program inside a network namespace, recorded in the ledger before it
                runs.
``teardown``    Teardown of the netns backend's ledger entries: the run's namespaces and what
                lived in them.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the protocol imports the fabric model (numpy); probing needs neither
    from harness.backends.protocol import Backend


def unavailable() -> str | None:
    """Why this backend cannot run here (``None``: it can)."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth pairs, tc)"
    if not os.path.isdir("/proc/self/ns"):
        return "the kernel has no namespaces (/proc/self/ns)"
    if importlib.util.find_spec("pyroute2") is None:  # found, not imported: --help stays fast
        return "needs the Python package 'pyroute2' (pip install 'harness[netns]')"
    if shutil.which("ip") is None:
        return "needs iproute2 (apt-get install iproute2)"
    return None


def create() -> Backend:
    """A new netns backend (imported only when asked for)."""
    from harness.backends.netns.backend import NetnsBackend

    return NetnsBackend()
