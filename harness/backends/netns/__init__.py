"""The netns backend: a fabric in Linux network namespaces, routed for real (root).

:mod:`~harness.backends.netns.plan` (names, addresses), :mod:`.emulation`
(build and tear down), :mod:`.routing` (``routing: sm``), :mod:`.faults`,
:mod:`.probe` (real packets), :mod:`.backend` (the protocol), :mod:`.session`
(``harness emulate``).  See ``docs/netns.md``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

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
    from harness.backends.netns.backend import NetnsBackend

    return NetnsBackend()
