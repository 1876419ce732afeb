"""A drill's ``reachability`` probe: a seeded sample of rail NIC pairs plus the pairs the
model says are cut now, probed by the backend and predicted by the model (run stage).

The sample is drawn once per probe (``sample`` pairs of NICs on different
servers on each rail, from the scenario's measurement seed and the probe's
name) and stays the same for the whole drill, so two samples differ only in
what the fabric did.  To it every sample adds up to ``sample`` *witnesses*: pairs
the model says cannot reach each other in the current state (one for every two
groups of NICs that share no live switch, largest first), so a cut too small
for a uniform sample to hit is still probed.  The value is the fraction of the
probed pairs that reached: with real packets on netns (one echo per pair,
retried), on OpenSM's tables on ibsim, predicted on the model.  A pair measured
otherwise than predicted makes the sample a mismatch, and the sample's detail
names it.

The model's side is computed once per fault state (the state changes only at an
action), so a 200 ms probe over a 60 s drill on a 10,000-GPU fabric costs one
witness search per action, not per sample.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import Pair
from harness.backends.measurement import sample_pairs
from harness.backends.model_measure import predict_probe
from harness.invariants.analysis import Analysis
from harness.observations.plans import witness_pairs
from harness.run.drill.results import disagreement
from harness.run.session import RunSession

#: Pairs sampled per rail when a probe does not say (``sample:``).
DEFAULT_SAMPLE = 32
#: A probe's echo waits this fraction of its period per round (between the bounds below),
#: so a sample that has cut pairs to wait for ends well before the next one is due.
_WAIT_SHARE = 0.25
_WAIT_MIN_S, _WAIT_MAX_S = 0.1, 0.5


@dataclass(frozen=True, slots=True)
class Reach:
    """One reachability sample: the fractions reached, predicted and measured (None on the
    model), how many pairs were probed, and the pairs measured otherwise than predicted."""

    predicted: float
    measured: float | None
    pairs: int
    disagree: tuple[tuple[str, str, bool], ...] = ()  # (src, dst, measured reached)

    @property
    def mismatch(self) -> bool:
        """A pair measured otherwise than predicted."""
        return bool(self.disagree)

    def detail(self) -> str:
        """The disagreeing pairs in words (empty when there are none)."""
        return disagreement([f"{a} -> {b}: predicted {'cut' if ok else 'reachable'}, "
                             f"{'reached' if ok else 'unreachable'}"
                             for a, b, ok in self.disagree], self.pairs,
                            "pairs measured otherwise")  # fmt: skip


def probe_wait(every_s: float) -> float:
    """How long one round of a probe's echoes waits for answers, for a probe every
    ``every_s`` seconds.

    >>> probe_wait(0.2), probe_wait(1.0), probe_wait(5.0)
    (0.1, 0.25, 0.5)
    """
    return min(_WAIT_MAX_S, max(_WAIT_MIN_S, every_s * _WAIT_SHARE))


class ReachProbe:
    """A drill's reachability probe: its fixed sample, and the model's side per state."""

    def __init__(self, session: RunSession, name: str, per_rail: int, every_s: float) -> None:
        self.seed = session.options.seed ^ zlib.crc32(name.encode())
        self.per_rail = per_rail
        self.sample: tuple[Pair, ...] = sample_pairs(session.fabric, per_rail, self.seed)
        self.wait_s = probe_wait(every_s)
        self._for: Analysis | None = None
        self._pairs: tuple[Pair, ...] = ()
        self._predicted: tuple[bool, ...] = ()

    def _model(self, a: Analysis) -> tuple[tuple[Pair, ...], tuple[bool, ...]]:
        """The pairs to probe in the state ``a`` describes, and whether each should reach."""
        if self._for is not a:
            cut = witness_pairs(a, self.per_rail, self.seed, same_rail=True)
            self._pairs = tuple(dict.fromkeys((*self.sample, *cut)))
            self._predicted = tuple(predict_probe(a, s, d).ok for s, d in self._pairs)
            self._for = a
        return self._pairs, self._predicted

    def look(self, session: RunSession) -> Reach:
        """Probe the pairs now (a backend that moves packets or reads tables) beside the
        model's prediction for the same pairs."""
        pairs, predicted = self._model(session.analysis())
        n = len(pairs)
        expected = sum(predicted) / n if n else 1.0
        if session.backend.name == "model" or not n:
            return Reach(expected, None, n)
        note = f"{self.per_rail} pairs per rail + the predicted-cut pairs"
        plan = MeasurePlan(probes=pairs, probe_wait_s=self.wait_s, note=note)
        got = {(p.src, p.dst): p.ok for p in session._measure(plan).probes}
        reached = [got[p] for p in pairs]
        disagree = tuple(
            (a, b, ok) for (a, b), ok, want in zip(pairs, reached, predicted, strict=True)
            if ok != want
        )  # fmt: skip
        return Reach(expected, sum(reached) / n, n, disagree)
