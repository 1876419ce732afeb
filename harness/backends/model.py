"""The model backend: the fabric as a pure in-memory graph (no side effects).

It is the reference implementation of :class:`~harness.backends.protocol.Backend`
and the one the other backends are compared with.
"""

from __future__ import annotations

from types import TracebackType

from harness.errors import BackendError
from harness.fabric.model import Fabric
from harness.faults import AppliedFault
from harness.faults import FaultState
from harness.observation import Observation


class ModelBackend:
    """Keeps a :class:`FaultState`; observing it is a pure computation."""

    name = "model"

    def __init__(self) -> None:
        self._state: FaultState | None = None

    @property
    def state(self) -> FaultState:
        if self._state is None:
            msg = "model backend: apply(fabric) first"
            raise BackendError(msg)
        return self._state

    def apply(self, fabric: Fabric) -> None:
        if self._state is None or self._state.fabric is not fabric:
            self._state = FaultState.healthy(fabric)

    def inject(self, fault: AppliedFault) -> None:
        self._state = self.state.inject(fault)

    def revert(self, fault: AppliedFault) -> None:
        self._state = self.state.revert(fault)

    def observe(self) -> Observation:
        return Observation.from_state(self.state, self.name)

    def close(self) -> None:
        if self._state is not None:
            self._state = FaultState.healthy(self._state.fabric)

    def __enter__(self) -> ModelBackend:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
