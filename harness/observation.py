"""The predicted state of a fabric after faults (core layer, pure data).

An :class:`Observation` is what :class:`~harness.analysis.Analysis` reads: per
element up or down, per link its live capacity.  The runner makes it from its
own :class:`~harness.faults.FaultState` (the prediction); what a backend
*measured* is a separate thing, :class:`~harness.measurement.Measurements`,
compared with the prediction by the runner (:mod:`harness.compare`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.faults import FaultState


@dataclass(frozen=True, eq=False)
class Observation:
    """Element and link state: ``element_up`` per element (up and forwarding),
    ``link_capacity`` per link (live Gb/s, 0 when down)."""

    backend: str
    element_up: npt.NDArray[np.bool_]
    link_capacity: npt.NDArray[np.float64]

    @classmethod
    def from_state(cls, state: FaultState, backend: str = "model") -> Observation:
        """The state the model predicts for a fault state."""
        return cls(backend, state.element_up, state.link_capacity)
