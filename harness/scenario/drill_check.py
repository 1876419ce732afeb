"""The ``drill:`` section of a scenario, checked and located (scenario stage, pure).

:class:`DrillChecker` reads ``drill:`` into a :class:`~harness.scenario.drill_model.Drill`:
every problem at its own file:line, all reported at once with the scenario's
others.  The timeline is expanded (and checked against ``time_limit``) by
:mod:`harness.scenario.drill_events`.

>>> from harness.inputs.yaml import read_yaml
>>> doc = read_yaml('''
... drill:
...   time_limit: 1m
...   timeline:
...     - {at: 0s, inject: {drain: spine-01}, hold: 10s, as: s1}
...     - {after: s1, wait: 5s, inject: {drain: spine-02}, hold: 10s}
... ''', "<string>")
>>> c = DrillChecker(doc)
>>> d = c.drill(doc.data["drill"], ("drill",))
>>> [(e.name, e.at_s, e.after, e.hold_s) for e in d.timeline]
[('s1', 0.0, None, 10.0), (None, None, 's1', 10.0)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import TypedDict

from harness.errors import ScenarioError
from harness.inputs.checker import did_you_mean
from harness.inputs.checker import type_word
from harness.inputs.durations import parse_duration
from harness.inputs.yaml import KeyPath
from harness.observations.budget import parse_budget
from harness.observations.expect import Expect
from harness.observations.registry import OBSERVATIONS
from harness.scenario.drill_events import expand
from harness.scenario.drill_model import JOB_PROBES
from harness.scenario.drill_model import OUTCOMES
from harness.scenario.drill_model import PROBE_KINDS
from harness.scenario.drill_model import PROBE_MODES
from harness.scenario.drill_model import AbortRule
from harness.scenario.drill_model import Drill
from harness.scenario.drill_model import Probe
from harness.scenario.drill_model import TimelineEntry
from harness.scenario.drill_model import Tolerance
from harness.scenario.model import Expectation
from harness.scenario.steps import RESTORE_WORDS
from harness.scenario.steps import StepChecker


class RawDrill(TypedDict, total=False):
    """The raw ``drill:`` section, before validation."""

    time_limit: str
    baseline: str
    recover_within: str
    guard: str
    probes: list[dict[str, Any]]
    abort: list[dict[str, Any]]
    timeline: list[dict[str, Any]]
    expect: dict[str, Any]
    outcome: str


RawEntry = TypedDict(
    "RawEntry",
    {
        "at": str,
        "after": str,
        "wait": str,
        "every": str,
        "for": str,
        "inject": dict[str, Any],
        "hold": str,
        "as": str,
    },
    total=False,
)


class RawProbe(TypedDict, total=False):
    """The raw keys of a probe (an observation probe adds the observation's arguments)."""

    name: str
    probe: str
    every: str
    mode: str
    tolerance: str
    fail_after: int


RawAbort = TypedDict(
    "RawAbort", {"probe": str, "below": float, "above": float, "for": str, "job_lost": str},
    total=False,
)  # fmt: skip

DRILL_KEYS = tuple(RawDrill.__annotations__)
ENTRY_KEYS = tuple(RawEntry.__annotations__)
PROBE_KEYS = tuple(RawProbe.__annotations__)
ABORT_KEYS = tuple(RawAbort.__annotations__)
#: The arguments of the drill's own probe kinds (observations take their own).
KIND_ARGS: dict[str, tuple[str, ...]] = {
    "reachability": ("sample",),
    "job_rate": ("job",),
    "job_ratio": ("job", "control"),
    "settle": (),
    "flow": ("pairs",),
}
#: The most flows one ``flow`` probe keeps running (each is an iperf3 pair on an emulation).
MAX_FLOW_PAIRS = 16
#: The least probe period: a sample more often than this measures the prober, not the fabric.
MIN_EVERY_S = 0.05
DRILL_EXAMPLE = (
    "drill: {time_limit: 2m, timeline: [{at: 0s, inject: {drain: spine-01}, hold: 10s}]}"
)


class DrillChecker(StepChecker):
    """Checks a scenario's ``drill:`` section (the scenario checker sets the jobs first)."""

    def drill(self, raw: Any, path: KeyPath) -> Drill | None:
        """Check ``drill:``; the drill, or None when it has a problem."""
        body = self.mapping(raw, path, "a drill")
        if body is None:
            return None
        before = len(self.problems)
        self.check_keys(body, path, DRILL_KEYS, "a drill")
        limit = self._duration(body, "time_limit", path, required=True)
        baseline = self._duration(body, "baseline", path) or 0.0
        recover = self._duration(body, "recover_within", path) or 0.0
        guard = body.get("guard")
        if guard is not None:
            if not isinstance(guard, str):
                self.add('guard is a budget such as "jobs_lost=0"', (*path, "guard"))
                guard = None
            else:
                try:
                    parse_budget(guard)
                except ScenarioError as err:
                    self.wrap(err, (*path, "guard"))
        probes = self._list(body, "probes", path, self.probe)
        got = body.get("probes")
        raw_probes: list[Any] = got if isinstance(got, list) else []
        names = [str(p.get("name")) for p in raw_probes if isinstance(p, dict) and "name" in p]
        for i, n in enumerate(names):
            if n in names[:i]:
                self.add(f"probe name {n!r} is given twice; probe names must differ",
                         (*path, "probes", i, "name"))  # fmt: skip
        aborts = self._list(body, "abort", path, lambda r, p: self.abort(r, p, names))
        if "timeline" not in body:
            self.add(f"a drill needs a timeline of faults, e.g. {DRILL_EXAMPLE}", path, key=True)
        entries = self._list(body, "timeline", path, self.entry)
        given: dict[str, int] = {}
        for i, e in enumerate(entries):
            if e.name is None:
                continue
            if e.name in given:
                self.add(f"'as: {e.name}' is given twice (timeline[{given[e.name]}] and "
                         f"timeline[{i}]); give each entry its own name",
                         (*path, "timeline", i, "as"))  # fmt: skip
            given.setdefault(e.name, i)
        for i, e in enumerate(entries):
            if e.after is not None and e.after not in given:
                self.add(f"after {e.after}: no timeline entry has 'as: {e.after}'"
                         f"{did_you_mean(e.after, list(given))}",
                         (*path, "timeline", i, "after"))  # fmt: skip
        expect: tuple[Expectation, ...] = ()
        if "expect" in body:
            got = self.expect(body["expect"], (*path, "expect"))
            expect = got or ()
        if limit is not None and entries:  # the timeline's own problems, with the others
            try:
                expand(Drill(limit, tuple(e for e in entries if e.after in (None, *given)),
                             baseline, recover))  # fmt: skip
            except ScenarioError as err:
                self.problems.extend(err.problems)
        outcome = body.get("outcome", "passed")
        if outcome not in OUTCOMES:
            self.add(f"outcome {outcome!r}: how the drill is expected to end, one of "
                     f"{', '.join(OUTCOMES)}", (*path, "outcome"))  # fmt: skip
        if len(self.problems) > before or limit is None:
            return None
        return Drill(limit, tuple(entries), baseline, recover, guard, tuple(probes),
                     tuple(aborts), expect, str(outcome), self.where(path, key=True))  # fmt: skip

    # -- pieces ------------------------------------------------------------------------
    def _duration(
        self, body: Mapping[str, Any], key: str, path: KeyPath, *, required: bool = False,
        zero: bool = True,
    ) -> float | None:  # fmt: skip
        if key not in body:
            if required:
                self.add(f"missing {key!r}: e.g. {key}: 2m", path, key=True)
            return None
        try:
            return parse_duration(body[key], key, zero=zero)
        except ScenarioError as err:
            self.wrap(err, (*path, key))
            return None

    def _list(self, body: Mapping[str, Any], key: str, path: KeyPath, each: Any) -> list[Any]:
        raw = body.get(key)
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.add(f"{key} must be a list (lines starting with '- '), not {type_word(raw)}",
                     (*path, key))  # fmt: skip
            return []
        out = []
        for i, item in enumerate(raw):
            got = each(item, (*path, key, i))
            if got is not None:
                out.append(got)
        return out

    def probe(self, raw: Any, path: KeyPath) -> Probe | None:
        """Check one probe: its kind and arguments, period, mode and tolerance."""
        body = self.mapping(raw, path, "a probe")
        if body is None:
            return None
        before = len(self.problems)
        kind = body.get("probe")
        kinds = [*PROBE_KINDS, *OBSERVATIONS]
        if not isinstance(kind, str) or kind not in kinds:
            hint = did_you_mean(kind, kinds) if isinstance(kind, str) else ""
            self.add(f"probe: {kind!r} is not a probe kind{hint} (kinds: "
                     f"{', '.join(PROBE_KINDS)}, or an observation's name)",
                     (*path, "probe") if "probe" in body else path)  # fmt: skip
            return None
        if kind in OBSERVATIONS:
            known = (*PROBE_KEYS, *OBSERVATIONS[kind].args)
            d = OBSERVATIONS[kind]
            if d.value_type not in ("number", "integer", "boolean"):
                self.add(f"probe {kind}: its values are {d.value_type}s; a probe samples a "
                         "number or a boolean", (*path, "probe"))  # fmt: skip
        else:
            known = (*PROBE_KEYS, *KIND_ARGS[kind])
        self.check_keys(body, path, known, f"a {kind} probe")
        args = {k: v for k, v in body.items() if k not in PROBE_KEYS and k in known}
        if kind in OBSERVATIONS:
            self.arguments(OBSERVATIONS[kind], args, path)
            self.context(OBSERVATIONS[kind], args, path)
        elif kind in JOB_PROBES:
            for key in JOB_PROBES[kind]:
                if key not in args:
                    self.add(f"a {kind} probe names its {key}: {key}: JOB", path, key=True)
                elif self._jobs:
                    named = [j.name for j in self._jobs if not j.per_su]
                    per_su = any(j.per_su for j in self._jobs)
                    job = args[key]
                    if job not in named and not (per_su and isinstance(job, str)
                                                 and job.startswith("su")):  # fmt: skip
                        self.add(f"{kind}: no job named {job!r}{did_you_mean(str(job), named)}",
                                 (*path, key))  # fmt: skip
            if kind == "job_ratio" and args.get("job") == args.get("control"):
                self.add("job_ratio compares two jobs: the control must be another job",
                         (*path, "control"))  # fmt: skip
        elif kind == "flow":
            pairs = self._flow_pairs(args.get("pairs"), path)
            if pairs is not None:
                args["pairs"] = pairs
        elif kind == "reachability" and "sample" in args:
            s = args["sample"]
            if isinstance(s, bool) or not isinstance(s, int) or s < 1:
                self.add("sample is the number of NIC pairs sampled per rail, e.g. 32",
                         (*path, "sample"))  # fmt: skip
        name = self.name(body.get("name"), (*path, "name"), "probe name") if "name" in body else ""
        if "name" not in body:
            self.add("a probe needs a name (abort rules and the journal use it)", path, key=True)
        every = self._duration(body, "every", path, zero=False)
        if every is not None and every < MIN_EVERY_S:
            self.add(f"every {every:g} s: probes sample at most every {MIN_EVERY_S:g} s",
                     (*path, "every"))  # fmt: skip
        mode = body.get("mode", "continuous")
        if mode not in PROBE_MODES:
            self.add(f"mode {mode!r}{did_you_mean(str(mode), PROBE_MODES)}: one of "
                     f"{', '.join(PROBE_MODES)}", (*path, "mode"))  # fmt: skip
        if kind == "settle" and "mode" in body and mode != "during-fault":
            self.add("a settle probe is judged per action: its mode is during-fault",
                     (*path, "mode"))  # fmt: skip
        tolerance = self.tolerance(body.get("tolerance"), (*path, "tolerance"))
        fail_after = body.get("fail_after", 1)
        if isinstance(fail_after, bool) or not isinstance(fail_after, int) or fail_after < 1:
            self.add("fail_after is a count of consecutive samples, 1 or more",
                     (*path, "fail_after"))  # fmt: skip
        if len(self.problems) > before:
            return None
        return Probe(name, kind, tuple(args.items()), tolerance,
                     "during-fault" if kind == "settle" else str(mode), every or 1.0,
                     int(fail_after), self.where(path))  # fmt: skip

    def _flow_pairs(self, raw: Any, path: KeyPath) -> tuple[tuple[str, str], ...] | None:
        """A flow probe's ``pairs: [[SRC, DST], ...]`` (NIC ids, checked on the fabric later)."""
        hint = "pairs: [[su01/s00/nic0, su02/s00/nic0], ...] (source and destination NIC ids)"
        if raw is None:
            self.add(f"a flow probe names its flows: {hint}", path, key=True)
            return None
        ok = isinstance(raw, list) and 0 < len(raw) <= MAX_FLOW_PAIRS and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in raw)  # fmt: skip
        if not ok:
            self.add(f"a flow probe's pairs are 1 to {MAX_FLOW_PAIRS} [SRC, DST] lists: {hint}",
                     (*path, "pairs"))  # fmt: skip
            return None
        pairs = tuple((str(a), str(b)) for a, b in raw)
        for i, (a, b) in enumerate(pairs):
            if a == b:
                self.add(f"flow {a} -> {b}: a flow runs between two NICs", (*path, "pairs", i))
        if len(set(pairs)) < len(pairs):
            self.add("a flow probe lists a pair twice", (*path, "pairs"))
        return pairs

    def tolerance(self, raw: Any, path: KeyPath) -> Tolerance | None:
        """``">= 0.99"``, ``"<= 5s"`` or ``">= 0.7 baseline"``."""
        if raw is None:
            return None
        relative = False
        if isinstance(raw, str) and raw.strip().endswith("baseline"):
            raw, relative = raw.strip()[: -len("baseline")].strip(), True
        if isinstance(raw, str) and raw.strip().endswith("s") and raw.strip()[-2:-1].isdigit():
            raw = raw.strip()[:-1]  # "<= 5s": seconds
        try:
            return Tolerance(Expect.parse(raw), relative)
        except ScenarioError as err:
            self.wrap(err, path)
            return None

    def abort(self, raw: Any, path: KeyPath, probes: list[str]) -> AbortRule | None:
        """Check one abort rule: ``{probe: P, below: X, for: 2s}`` or ``{job_lost: NAME}``."""
        body = self.mapping(raw, path, "an abort rule")
        if body is None:
            return None
        before = len(self.problems)
        self.check_keys(body, path, ABORT_KEYS, "an abort rule")
        where = self.where(path)
        if "job_lost" in body:
            job = body["job_lost"]
            if not isinstance(job, str) or not job:
                self.add("job_lost names a job (or any)", (*path, "job_lost"))
                return None
            jobs = self._jobs
            named = [j.name for j in jobs or () if not j.per_su]
            if (
                jobs is not None
                and job != "any"
                and job not in named
                and not any(j.per_su for j in jobs)
            ):
                self.add(f"job_lost {job}: no job is named so{did_you_mean(job, named)}",
                         (*path, "job_lost"))  # fmt: skip
            extra = [k for k in ("probe", "below", "above", "for") if k in body]
            if extra:
                self.add(f"an abort rule is either a job lost or a probe bound, not both "
                         f"(drop {', '.join(extra)})", path)  # fmt: skip
            return AbortRule(job_lost=job, where=where) if len(self.problems) == before else None
        probe = body.get("probe")
        if not isinstance(probe, str) or probe not in probes:
            self.add(f"abort: probe {probe!r} is not one of this drill's probes"
                     f"{did_you_mean(str(probe), probes)} (probes: {', '.join(probes) or 'none'})",
                     (*path, "probe") if "probe" in body else path)  # fmt: skip
        bounds = [k for k in ("below", "above") if k in body]
        if len(bounds) != 1:
            self.add("an abort rule on a probe gives one bound: below: X or above: X", path)
            return None
        value = body[bounds[0]]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add(f"{bounds[0]} is a number", (*path, bounds[0]))
            return None
        held = self._duration(body, "for", path) or 0.0
        if len(self.problems) > before:
            return None
        return AbortRule(str(probe), float(value) if bounds[0] == "below" else None,
                         float(value) if bounds[0] == "above" else None, held,
                         where=where)  # fmt: skip

    def entry(self, raw: Any, path: KeyPath) -> TimelineEntry | None:
        """Check one timeline entry: when it starts, its fault, its hold."""
        body = self.mapping(raw, path, "a timeline entry")
        if body is None:
            return None
        before = len(self.problems)
        self.check_keys(body, path, ENTRY_KEYS, "a timeline entry")
        if "inject" not in body:
            self.add("a timeline entry injects a fault: inject: {kill: spine-01}", path)
            return None
        fault = self.fault(body["inject"], (*path, "inject"))
        if "hold" not in body:
            self.add("every fault in a drill has a hold after which it is restored by itself, "
                     "e.g. hold: 10s", path, key=True)  # fmt: skip
        hold = self._duration(body, "hold", path, zero=False)
        name = None
        if "as" in body:
            name = self.name(body["as"], (*path, "as"), "entry name ('as')")
            if name in RESTORE_WORDS:
                self.add(f"{name!r} is reserved; choose another name", (*path, "as"))
        at = self._duration(body, "at", path)
        after = body.get("after")
        if after is not None and not isinstance(after, str):
            self.add("after names an earlier entry's 'as:'", (*path, "after"))
        if "at" in body and "after" in body:
            self.add("an entry starts at a time or after another entry, not both", path)
        elif "at" not in body and "after" not in body:
            self.add("say when the entry starts: at: 0s, or after: NAME (when that entry's "
                     "fault is restored)", path)  # fmt: skip
        if "wait" in body and "after" not in body:
            self.add("wait is the time after an 'after:' entry; with at: give the time itself",
                     (*path, "wait"), key=True)  # fmt: skip
        wait = self._duration(body, "wait", path) or 0.0
        every = self._duration(body, "every", path, zero=False)
        span = self._duration(body, "for", path, zero=False)
        if ("every" in body) != ("for" in body):
            self.add("every and for go together: every: 30s, for: 2m", path)
        if every is not None and hold is not None and hold >= every:
            self.add(f"hold {hold:g} s is not shorter than every {every:g} s: the repeats "
                     "would overlap", (*path, "hold"))  # fmt: skip
        if len(self.problems) > before or fault is None or hold is None:
            return None
        return TimelineEntry(fault, hold, name, at, after if isinstance(after, str) else None,
                             wait, every, span, self.where(path))  # fmt: skip
