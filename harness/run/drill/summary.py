"""A drill's records at its end: each probe's series and verdict, and each inject with the
probe samples the model expected out of tolerance (run stage, pure)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from collections.abc import Sequence

from harness.run.drill.results import EventRecord
from harness.run.drill.results import ProbeRecord
from harness.run.drill.results import Sample
from harness.run.drill.results import Series
from harness.scenario.drill_model import Drill

#: The probe modes judged at the gate (the baseline), before anything is injected.
GATE_MODES = ("before", "edge")


def expected(drill: Drill, series: Mapping[str, Series], events: Sequence[EventRecord]
             ) -> list[EventRecord]:  # fmt: skip
    """The events, each inject with how many samples of each probe the model expected out
    of tolerance until the next action (its predicted values judged as the samples were)."""
    out = []
    times = [e.actual_s for e in events] + [float("inf")]
    for i, e in enumerate(events):
        if e.action != "inject" or e.status != "applied":
            out.append(e)
            continue
        counts = []
        for p in drill.probes:
            if p.tolerance is None or p.kind == "settle":
                continue
            base = series[p.name].baseline
            n = sum(1 for x in series[p.name].samples
                    if times[i] < x.t <= times[i + 1] and x.predicted is not None
                    and not p.tolerance.check(x.predicted, base))  # fmt: skip
            counts.append((p.name, n))
        out.append(dataclasses.replace(e, expected_failures=tuple(counts)))
    return out


def probe_records(
    drill: Drill,
    series: Mapping[str, Series],
    settles: Sequence[tuple[str, float]],
    events: Sequence[EventRecord],
) -> tuple[ProbeRecord, ...]:
    """Each probe over the whole drill: its samples, baseline and verdict (a settle probe
    from the actions' settle times; a gate probe failed at the gate fails)."""
    out = []
    for p in drill.probes:
        s = series[p.name]
        if p.kind == "settle":
            bad = [(label, v) for label, v in settles
                   if p.tolerance is not None and not p.tolerance.check(v, None)]  # fmt: skip
            verdict = "failed" if bad else "passed"
            why = "; ".join(f"{lb} settled in {v:g} s" for lb, v in bad)
            samples = tuple(Sample(next((e.actual_s for e in events
                                         if e.label == lb and e.action == "inject"), 0.0),
                                   v, p.tolerance is None or p.tolerance.check(v, None))
                            for lb, v in settles)  # fmt: skip
            out.append(ProbeRecord(p.name, p.describe(), p.mode, None, samples, verdict, why))
            continue
        method = [x for x in s.samples if x.t >= -1e-9]
        if p.mode in GATE_MODES:
            base = [x for x in s.samples if x.t < 0] or s.samples[:1]
            if base and not base[-1].ok:
                s.failed_at, s.why = base[-1].t, f"{p.name} out of tolerance at the gate"
        verdict = "failed" if s.failed_at is not None else ("passed" if method or s.samples
                                                             else "not judged")  # fmt: skip
        out.append(ProbeRecord(p.name, p.describe(), p.mode, s.baseline, tuple(s.samples),
                               verdict, s.why))  # fmt: skip
    return tuple(out)
