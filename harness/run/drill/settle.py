"""A drill's settle (convergence) times: the model's for each inject, and how an emulated
backend's measured one disagrees with it (run stage)."""

from __future__ import annotations

from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind
from harness.invariants.outage import bgp_sessions
from harness.invariants.outage import hang_detect_min_s
from harness.invariants.outage import outage_s
from harness.run.session import RunSession


def predicted_settle(session: RunSession, applied: AppliedFault) -> float:
    """The model's convergence time of a fault: its reroute window (a hang's: its
    detection, then the reroute), 0 for one routed around before it bites (a drain)
    or one nothing is rerouted for."""
    routing: Routing = session.routing
    outage = outage_s(session.fabric, applied, routing)
    if outage <= 0:
        return 0.0
    _, end = session.timeline.reroute_window(outage, routing.serial_sweeps)
    return end - session.timeline.now


def settle_mismatch(session: RunSession, predicted: float, measured: float) -> str:
    """How an emulated backend's settle disagrees with the model's ("": it does not)."""
    if session.backend.name == "model":
        return ""
    bound = session.options.settle_timeout
    if predicted == 0.0 or measured <= max(predicted * 1.1, predicted + 0.2):
        return ""
    if measured >= bound:
        return f"predicted: settles in {predicted:g} s; observed: not settled in {bound:g} s"
    return ""


def hang_mismatch(
    session: RunSession, applied: AppliedFault, predicted: float, measured: float
) -> str:
    """A hang's measured detection against the model's: no later than its bound (10 %,
    at least 0.2 s, for reprogramming on a busy host), no sooner than a real control
    plane can notice (:func:`~harness.invariants.outage.hang_detect_min_s`)."""
    if session.backend.name == "model" or applied.fault.kind is not FaultKind.HANG:
        return ""
    least = hang_detect_min_s(session.routing, bgp_sessions(session.fabric))
    if measured > max(predicted * 1.1, predicted + 0.2):
        return (f"predicted: the hung switch is routed around within {predicted:g} s; "
                f"observed: {measured:.3g} s")  # fmt: skip
    if measured < least:
        return (f"predicted: the hung switch goes unnoticed at least {least:g} s; observed: "
                f"routed around in {measured:.3g} s, as if its links went down")  # fmt: skip
    return ""
