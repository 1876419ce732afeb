"""The backend protocol: how a fabric is realized, broken and observed.

Every backend (``model``: in memory; ``netns``: Linux network namespaces with
real routing and traffic; ``ibsim``: an InfiniBand simulator routed by a real
OpenSM; ``docker``: containers as servers) implements :class:`Backend`.  The
runner and the invariants only ever talk to this protocol, so adding a backend
changes no scenario and no invariant.

Life cycle (a transaction, as pyroute2's ``Transaction``)::

    with backend:                      # __enter__ sets up; cleans up if that fails
        backend.apply(fabric)          # realize the healthy fabric
        backend.inject(applied_fault)  # break something (recorded before it is done)
        obs = backend.observe()        # element/link state (+ measurements)
        backend.revert(applied_fault)  # undo it
    # __exit__ -> close(): reverts what is left and removes what was created
"""

from __future__ import annotations

from types import TracebackType
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

from harness.fabric.model import Fabric
from harness.faults import AppliedFault
from harness.observation import Observation

BackendName = Literal["model", "netns", "ibsim", "docker"]


@runtime_checkable
class Backend(Protocol):
    """A place where a fabric is realized, faults are injected and state is observed."""

    name: str

    def apply(self, fabric: Fabric) -> None:
        """Realize the healthy fabric (idempotent for the same fabric)."""

    def inject(self, fault: AppliedFault) -> None:
        """Apply one resolved fault; raise BackendError if the environment fails."""

    def revert(self, fault: AppliedFault) -> None:
        """Undo one fault injected earlier."""

    def observe(self) -> Observation:
        """Report element and link state (and any direct measurements)."""

    def close(self) -> None:
        """Revert every fault still applied and remove everything created."""

    def __enter__(self) -> Backend: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
