"""The predicted state of a fabric after faults (invariants stage, pure data).

An :class:`Observation` is what :class:`~harness.invariants.analysis.Analysis` reads: per
element up or down, per link its live capacity.  The runner makes it from its
own :class:`~harness.faults.fault.FaultState` (the prediction); what a backend
*measured* is a separate thing, :class:`~harness.backends.measurement.Measurements`,
compared with the prediction by the runner (:mod:`harness.observations.compare`).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import numpy as np
import numpy.typing as npt

from harness.faults.fault import FaultState


@dataclass(frozen=True, eq=False)
class Observation:
    """Element and link state: ``element_up`` per element (up and forwarding),
    ``link_capacity`` per link (live Gb/s, 0 when down), ``link_loss`` per link
    and direction (the fraction of packets a live link loses, ``flaky``; column 0:
    what the link's ``a`` end sends; ``None``: no loss anywhere)."""

    backend: str
    element_up: npt.NDArray[np.bool_]
    link_capacity: npt.NDArray[np.float64]
    link_loss: npt.NDArray[np.float64] | None = field(default=None)

    @classmethod
    def from_state(cls, state: FaultState, backend: str = "model") -> Observation:
        """The state the model predicts for a fault state."""
        lossy = any(a.loss for a in state.applied)
        return cls(backend, state.element_up, state.link_capacity,
                   state.link_loss if lossy else None)  # fmt: skip
