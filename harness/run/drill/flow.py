"""A drill's ``flow`` probe: a group of bulk flows kept running through the drill, their
total rate measured by the backend beside the model's fair share (run stage).

The probe's ``pairs`` (source and destination NIC ids) are one flow group, as
an ``expect`` of a bandwidth observation runs one; unlike a step's group, which
runs for a window and holds the clock, a drill's keeps running from the
baseline to the end (``MeasurePlan(flow_now=True)``: on netns iperf3 streams
whose servers report every half second) and a sample reads its newest interval
at once.  The value is the group's total rate in Gb/s, in the fabric's units:
measured where the backend has ``flows`` among its measurements, else the
model's.  The model's rate is the steady state of the current fault state
(each flow's fair share of the leaf and pod uplinks it crosses, 0 for a cut
pair); the stall while routes move, or while a repaired link comes up, is not
in it.

A flow *moves* when its measured rate is above :data:`MOVING_SHARE` of its
healthy fabric's rate; a sample disagrees with the model when a flow predicted
to move does not, or one predicted cut does.  How fast a moving flow goes is
not judged as a mismatch (a probe's ``tolerance`` judges the total): an
emulation's rates are its host's.  A measured look lags the fabric by up to
:data:`LAG_S`, and after an action the model's steady state is reached only
once routes have moved (an inject's settle) or a repaired link carries again
(``link_up``, and TCP's retransmission backoff after a long outage), so the
runner counts a disagreement only once it outlasts those
(:func:`grace_s`).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.backends.measurement import FlowGroup
from harness.backends.measurement import MeasurePlan
from harness.backends.model_measure import predict_flows
from harness.invariants.analysis import Analysis
from harness.run.drill.results import disagreement
from harness.run.session import RunSession

#: A flow moves when it carries more than this share of its healthy rate.
MOVING_SHARE = 0.02
#: How late a measured look sees the fabric: one report interval (0.5 s on netns) plus
#: the one being written when the fabric changed.
LAG_S = 1.0


def grace_s(every_s: float, stall_s: float) -> float:
    """How long a flow probe's disagreement may last before it is a mismatch: the look's
    lag, one period, and the stall the last action predicts (its settle, or link_up).

    >>> grace_s(0.5, 0.0), grace_s(0.5, 3.0)
    (1.5, 4.5)
    """
    return LAG_S + every_s + stall_s


@dataclass(frozen=True, slots=True)
class FlowLook:
    """One flow sample: the group's total Gb/s predicted and measured (None: not measured),
    how many flows, and the flows whose moving or not disagrees with the model."""

    predicted: float
    measured: float | None
    flows: int
    disagree: tuple[tuple[str, str, float, float], ...] = ()  # (src, dst, predicted, measured)

    @property
    def mismatch(self) -> bool:
        """A flow moves where the model says it does not, or the other way."""
        return bool(self.disagree)

    def detail(self) -> str:
        """The disagreeing flows in words (empty when there are none)."""
        return disagreement([f"{a} -> {b}: predicted {p:.4g} Gb/s, measured {m:.4g} Gb/s"
                             for a, b, p, m in self.disagree], self.flows,
                            "flows move otherwise")  # fmt: skip


class FlowProbe:
    """A drill's flow probe: its group, each flow's healthy rate, the model's side per state."""

    def __init__(self, session: RunSession, name: str, pairs: tuple[tuple[str, str], ...]) -> None:
        self.group = FlowGroup(f"drill {name}", tuple(pairs))
        self.healthy = tuple(f.gbps for f in predict_flows(session.healthy, self.group, 0.0))
        self._for: Analysis | None = None
        self._predicted: tuple[float, ...] = ()

    def _model(self, a: Analysis) -> tuple[float, ...]:
        if self._for is not a:
            self._predicted = tuple(f.gbps for f in predict_flows(a, self.group, 0.0))
            self._for = a
        return self._predicted

    def look(self, session: RunSession) -> FlowLook:
        """The group's rate now (measured where the backend streams flows) beside the model's."""
        predicted = self._model(session.analysis())
        n = len(predicted)
        total = sum(predicted)
        if session.backend.name == "model" or "flows" not in session.measures:
            return FlowLook(total, None, n)
        plan = MeasurePlan(flows=(self.group,), flow_now=True, note="a drill's flow probe")
        by_pair = {(f.src, f.dst): f.gbps for f in session._measure(plan).flows
                   if f.group == self.group.name}  # fmt: skip
        measured = tuple(by_pair.get(p, 0.0) for p in self.group.pairs)
        disagree = tuple(
            (a, b, p, m)
            for (a, b), p, m, h in zip(self.group.pairs, predicted, measured, self.healthy,
                                       strict=True)
            if (p > 0) != (m > MOVING_SHARE * h)
        )  # fmt: skip
        return FlowLook(total, sum(measured), n, disagree)
