"""A drill's timeline expanded into concrete, timed events (scenario stage, pure).

Every entry becomes one inject at its start and one restore ``hold`` later; an
entry with ``every``/``for`` becomes one such pair per period (starts at
``start + k * every`` while before ``start + for``).  ``after: NAME`` starts
``wait`` after NAME's last restore.  A ``random:`` selector in a repeated entry
draws again at each repeat with seed ``seed + k`` (the k-th repeat), so the
events are the same at every expansion of the same file.  At one instant the
restores come before the injects (a rolling maintenance hands over without an
instant of two faults).  Drill time 0 is the end of the baseline; the baseline,
the timeline and the recovery window must fit in ``time_limit``.  Every problem
(an ``after`` cycle, a restore past ``time_limit``) is reported at once.

>>> from harness.faults.fault import Fault
>>> from harness.scenario.drill_model import Drill, TimelineEntry
>>> f = Fault.parse({"drain": "spine-01"})
>>> d = Drill(60.0, (TimelineEntry(f, 5.0, "a", at_s=0.0),
...                  TimelineEntry(f, 5.0, after="a", wait_s=2.0, every_s=10.0, for_s=25.0)))
>>> [(e.at_s, e.action, e.label) for e in expand(d)]  # doctest: +NORMALIZE_WHITESPACE
[(0.0, 'inject', 'a'), (5.0, 'restore', 'a'), (7.0, 'inject', 'timeline[1]#1'),
 (12.0, 'restore', 'timeline[1]#1'), (17.0, 'inject', 'timeline[1]#2'),
 (22.0, 'restore', 'timeline[1]#2'), (27.0, 'inject', 'timeline[1]#3'),
 (32.0, 'restore', 'timeline[1]#3')]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.faults.fault import Fault
from harness.faults.selectors import Selector
from harness.inputs.location import Location
from harness.scenario.drill_model import Drill
from harness.scenario.drill_model import TimelineEntry

#: A repeated entry expands to at most this many repeats (a typo such as every: 1ms, for: 1d
#: must not build a million events).
MAX_REPEATS = 10_000


@dataclass(frozen=True, slots=True)
class DrillEvent:
    """One concrete event: a fault injected or restored at a drill time."""

    at_s: float
    action: str  # "inject" or "restore"
    label: str  # unique per inject: the entry's name, #k for the k-th repeat
    fault: Fault
    entry: int  # position in the drill's timeline
    repeat: int = 0  # 0: the only one; 1.. for every/for repeats
    where: Location = Location()

    def describe(self) -> str:
        """``t=7 s inject drain spine-02 (timeline[1]#1)``."""
        return f"t={self.at_s:g} s {self.action} {self.fault.describe()} ({self.label})"


def _label(entry: TimelineEntry, i: int, k: int) -> str:
    base = entry.name or f"timeline[{i}]"
    return f"{base}#{k}" if k else base


def _reseeded(fault: Fault, k: int) -> Fault:
    """The fault of the k-th repeat: a ``random:`` selector draws with ``seed + k``."""
    if k <= 1:
        return fault

    def again(sel: Selector) -> Selector:
        union = tuple(again(u) for u in sel.union)
        if sel.random_count is not None:
            return dataclasses.replace(sel, random_seed=sel.random_seed + k - 1, union=union)
        return dataclasses.replace(sel, union=union) if union else sel

    return dataclasses.replace(fault, target=again(fault.target))


def starts(drill: Drill) -> tuple[list[list[float]], list[Problem]]:
    """Per timeline entry, the start of each of its repeats; the problems found."""
    entries = drill.timeline
    by_name = {e.name: i for i, e in enumerate(entries) if e.name is not None}
    out: list[list[float] | None] = [None] * len(entries)
    problems: list[Problem] = []

    def at(w: Location, msg: str) -> None:
        problems.append(Problem(msg, w.path, w.line, w.column))

    def solve(i: int, chain: tuple[int, ...]) -> list[float]:
        got = out[i]
        if got is not None:
            return got
        e = entries[i]
        if i in chain:
            names = " -> ".join(_label(entries[j], j, 0) for j in (*chain, i))
            at(e.where, f"after: the entries wait for each other in a cycle ({names})")
            out[i] = []
            return []
        first = e.at_s or 0.0
        if e.after is not None and e.after in by_name:
            prior = by_name[e.after]
            before = solve(prior, (*chain, i))
            first = (before[-1] + entries[prior].hold_s if before else 0.0) + e.wait_s
        if e.every_s is not None and e.for_s is not None:
            n = 0
            times = []
            while first + n * e.every_s < first + e.for_s - 1e-9:
                times.append(first + n * e.every_s)
                n += 1
                if n > MAX_REPEATS:
                    at(e.where, f"every {e.every_s:g} s for {e.for_s:g} s is more than "
                                f"{MAX_REPEATS} repeats; repeat less often")  # fmt: skip
                    break
        else:
            times = [first]
        out[i] = times
        return times

    for i in range(len(entries)):
        solve(i, ())
    return [t or [] for t in out], problems


def expand(drill: Drill) -> tuple[DrillEvent, ...]:
    """Every inject and restore of ``drill``, in time order; raises :class:`ScenarioError`
    with every problem (cycles, repeats, restores past ``time_limit``)."""
    times, problems = starts(drill)
    events: list[DrillEvent] = []
    for i, (entry, ts) in enumerate(zip(drill.timeline, times, strict=True)):
        repeated = entry.every_s is not None
        for k, t in enumerate(ts, start=1 if repeated else 0):
            label = _label(entry, i, k)
            fault = _reseeded(entry.fault, k)
            end = t + entry.hold_s
            if drill.baseline_s + end > drill.time_limit_s + 1e-9:
                w = entry.where
                problems.append(Problem(
                    f"{label}: restored at t={end:g} s ({drill.baseline_s:g} s of baseline "
                    f"before t=0), past the drill's time_limit ({drill.time_limit_s:g} s); "
                    "shorten the hold or raise time_limit", w.path, w.line, w.column,
                ))  # fmt: skip
                break
            events.append(DrillEvent(t, "inject", label, fault, i, k, entry.where))
            events.append(DrillEvent(end, "restore", label, fault, i, k, entry.where))
    whole = drill.baseline_s + method_end(events) + drill.recover_within_s
    if not problems and whole > drill.time_limit_s + 1e-9:
        w = drill.where
        problems.append(Problem(
            f"the drill needs {whole:g} s (baseline {drill.baseline_s:g} + timeline "
            f"{method_end(events):g} + recover_within {drill.recover_within_s:g}), more than its "
            f"time_limit ({drill.time_limit_s:g} s); raise time_limit", w.path, w.line, w.column,
        ))  # fmt: skip
    if problems:
        raise ScenarioError(problems)
    order = {"restore": 0, "inject": 1}
    return tuple(sorted(events, key=lambda e: (round(e.at_s, 9), order[e.action], e.entry,
                                               e.repeat)))  # fmt: skip


def method_end(events: Sequence[DrillEvent]) -> float:
    """When the last event happens (0 with none)."""
    return max((e.at_s for e in events), default=0.0)
