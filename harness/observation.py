"""What a backend reports about a fabric after faults (core layer, pure data).

Every backend -- the in-memory model, network namespaces with real routing, an
InfiniBand simulator routed by OpenSM, Docker containers -- reports the same
:class:`Observation`; the same invariant code (:mod:`harness.analysis`) judges
all of them.  Where a backend measures something directly (pings, routes,
iperf3, a real job), it adds it to ``measured`` under a documented key, and the
runner compares it with the model's prediction: a disagreement is a finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.faults import FaultState


@dataclass(frozen=True, eq=False)
class Observation:
    """Element and link state as a backend sees it.

    ``element_up``: per element, up and forwarding.  ``link_capacity``: per
    link, live capacity in Gb/s (0 when down).  ``measured``: direct
    measurements keyed by name (``reachable_nic_pairs``, ``iperf_gbps``...).
    """

    backend: str
    element_up: npt.NDArray[np.bool_]
    link_capacity: npt.NDArray[np.float64]
    measured: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_state(cls, state: FaultState, backend: str = "model") -> Observation:
        """What the model predicts for a fault state (the model backend's answer)."""
        return cls(backend, state.element_up, state.link_capacity)
