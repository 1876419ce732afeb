"""The model backend: the fabric as a pure in-memory graph (no side effects).

It is the reference implementation of :class:`~harness.backends.protocol.Backend`:
it keeps a :class:`~harness.faults.fault.FaultState` and answers ``measure`` from the
model (:func:`~harness.backends.model_measure.predict_measurements`), so the whole
predict-versus-measure path runs, and is tested, without root.  It is always
available.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.model_measure import predict_measurements
from harness.backends.protocol import Capabilities
from harness.backends.signals import Closes
from harness.errors import BackendError
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import Timeline
from harness.invariants.timeline import after_change
from harness.invariants.timeline import cut_off
from harness.invariants.timeline import traffic_of


def unavailable() -> str | None:
    """Why this backend cannot run here (``None``: it can; the model always can)."""
    return None


class ModelBackend(Closes):
    """Keeps a :class:`FaultState`; measuring it is a pure computation."""

    name = "model"
    capabilities = Capabilities.everything()

    def __init__(self) -> None:
        self._state: FaultState | None = None
        self._jobs: tuple[Job, ...] = ()
        self._routing = DEFAULT_ROUTING
        self._analysis: tuple[FaultState, Analysis] | None = None
        self._timeline = Timeline.start(())

    @property
    def state(self) -> FaultState:
        """The fault state (raises BackendError before ``apply``)."""
        if self._state is None:
            msg = "model backend: apply(fabric) first"
            raise BackendError(msg)
        return self._state

    def apply(
        self, fabric: Fabric, jobs: Sequence[Job] = (), *, routing: Routing = DEFAULT_ROUTING
    ) -> None:
        """The model predicts the converged state, whatever the control plane (``routing``);
        its forwarding decides how the flows it predicts share the links, its paths which
        routes exist and its reroute delay how long a failure stalls the jobs."""
        if self._state is None or self._state.fabric is not fabric:
            self._state = FaultState.healthy(fabric)
        self._jobs = tuple(jobs)
        self._routing = routing
        self._analysis = None
        self._timeline = Timeline.start(self._jobs)

    def inject(self, fault: AppliedFault) -> None:
        """Add the fault to the state; the jobs' timeline sees the change (it stalls the jobs
        whose flows the routes before it sent over what it takes down)."""
        uses = traffic_of(self._current()) if self._jobs else {}
        self._state = self.state.inject(fault)
        self._advance(fault, uses)

    def revert(self, fault: AppliedFault) -> None:
        """Remove the fault from the state; the jobs' timeline sees the change."""
        self._state = self.state.revert(fault)
        self._advance(None, {}, fault)

    def _current(self) -> Analysis:
        state = self.state
        if self._analysis is None or self._analysis[0] is not state:
            self._analysis = (state, Analysis(
                state.fabric, self.observe(), self._jobs,
                routing=self._routing,
            ))  # fmt: skip
        return self._analysis[1]

    def _advance(
        self,
        fault: AppliedFault | None,
        uses: dict[str, frozenset[int]],
        restored: AppliedFault | None = None,
    ) -> None:
        if self._jobs:
            r = self._routing
            self._timeline = after_change(
                self._timeline, self._current(), fault, r, uses,
                restored=() if restored is None else (restored,),
            )  # fmt: skip

    def wait(self, seconds: float) -> None:
        """Advance the jobs' timeline by ``seconds`` with the faults as they are."""
        self._timeline = self._timeline.after(seconds, cut_off(self._current())[0])

    def restart(self, jobs: Sequence[str]) -> None:
        """Restart the named jobs on the timeline."""
        self._timeline = self._timeline.restarted(jobs, cut_off(self._current())[0])

    def settle(self, timeout: float) -> float:
        """The model converges at once: 0 s (raises BackendError before ``apply``)."""
        self.state  # noqa: B018  (raises before apply)
        return 0.0

    def observe(self) -> Observation:
        """The fault state as an :class:`Observation` (what the analysis reads)."""
        return Observation.from_state(self.state, self.name)

    def measure(self, plan: MeasurePlan) -> Measurements:
        """Predict what ``plan`` names from the analysis of the current state."""
        a = self._current()
        if plan.jobs:
            self._timeline = self._timeline.observed()  # watched for their timeout
        return predict_measurements(a, plan, self.name, self._timeline)

    def close(self) -> None:
        """Revert every fault: the state is the healthy fabric again."""
        if self._state is not None:
            self._state = FaultState.healthy(self._state.fabric)


def create() -> ModelBackend:
    """A new model backend (the registry's factory)."""
    return ModelBackend()
