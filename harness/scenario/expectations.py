"""Scenario expectations: each ``observation: expectation`` of an ``expect:`` step, checked.

An expectation must name a known observation (:data:`~harness.observations.registry.OBSERVATIONS`),
give it the arguments it takes, expect a value of the observation's kind
(true/false, a number or range, a word, a list) that can both fail and pass
within the observation's range, and need only the jobs and checkpoint the
scenario gives.  :class:`ExpectChecker` places every problem at its own key;
the step checker (:mod:`harness.scenario.steps`) hands it each ``expect:``.

>>> from harness.inputs.yaml import read_yaml
>>> c = ExpectChecker(read_yaml("expect: {jobs_lost: yes}", "<string>"))
>>> c.expect(c.doc.data["expect"], ("expect",)) is None
True
>>> c.problems[0].message
"jobs_lost is a number; expected e.g. jobs_lost: 0, '>= 0.9', '< 5' or '0.9..1.0', got True"
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from harness.errors import ScenarioError
from harness.fabric.jobs import JobSpec
from harness.faults.selectors import KIND_NAMES
from harness.inputs.checker import Checker
from harness.inputs.checker import did_you_mean
from harness.inputs.location import Location
from harness.inputs.values import is_number
from harness.inputs.yaml import KeyPath
from harness.inputs.yaml import YamlDoc
from harness.observations.expect import Expect
from harness.observations.observation import ObservationDef
from harness.observations.registry import OBSERVATIONS
from harness.observations.registry import check_args
from harness.scenario.model import Expectation

EXPECT_IS = "is"

_VALUE_EXAMPLES = {
    "boolean": "true",
    "integer": "0",
    "number": "'>= 0.9'",
    "string": "cross-su",
    "list": "[0, 1, 2, 3]",
}
_VALUE_WORDS = {
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "string": "a word",
    "list": "a list",
}


def _observation_hint(d: ObservationDef) -> str:
    return f"{d.name}: {_VALUE_EXAMPLES.get(d.value_type, '0')}"


def _expect_type_problem(d: ObservationDef, ex: Expect) -> str | None:
    """Whether an expectation can ever hold for the observation's kind of value."""
    vt = d.value_type
    example = _observation_hint(d)
    if ex.op == "list":
        if vt == "list":
            return None
        return f"{d.name} is {_VALUE_WORDS[vt]}, not a list; e.g. {example}"
    if vt == "list":
        return f"{d.name} is a list; write the expected list (order ignored), e.g. {example}"
    if vt == "boolean":
        if ex.op in ("==", "!=") and isinstance(ex.value, bool):
            return None
        return f"{d.name} is true or false; e.g. {example}"
    if vt in ("number", "integer"):
        if ex.op == "range" or is_number(ex.value):
            return None
        return (
            f"{d.name} is a number; expected e.g. {d.name}: 0, '>= 0.9', '< 5' or '0.9..1.0', "
            f"got {ex.describe()}"
        )
    if not isinstance(ex.value, str):
        return f"{d.name} is a word such as 'cross-su'; got {ex.describe()}"
    return None


def _expect_range_problem(d: ObservationDef, ex: Expect) -> str | None:
    """Whether an expectation can fail and pass at all, given what the observation can be."""
    low, high = d.value_range
    why = ex.vacuity(low, high)
    if why is None:
        return None
    span = f"{low:g} or more" if high == math.inf else f"from {low:g} to {high:g}"
    return f"{d.name} is {span}, so {why}; expect a value inside that range"


class ExpectChecker(Checker):
    """Checks the expectations of ``expect:`` steps against one scenario's jobs and checkpoint.

    The scenario checker (:mod:`harness.scenario.load`) sets ``_jobs`` and
    ``_checkpoint`` for each scenario before its steps are checked.
    """

    def __init__(self, doc: YamlDoc) -> None:
        super().__init__(doc)
        self._jobs: tuple[JobSpec, ...] | None = ()  # None: the jobs have problems
        self._checkpoint = False  # has a checkpoint: key

    def where(self, path: KeyPath, *, key: bool = False) -> Location:
        """Where ``path`` (or, with ``key``, its key) is in the file, for a model's ``where``."""
        line, column = self.doc.position(path, key=key)
        return Location(self.doc.path, line, column)

    def expect(
        self,
        raw: Any,
        path: KeyPath,
    ) -> tuple[Expectation, ...] | None:
        """Check an ``expect:`` mapping; its expectations, or None when any has a problem."""
        if not isinstance(raw, dict) or not raw:
            self.add(
                "expect takes a mapping of observation: expectation, e.g. "
                "expect: {jobs_lost: 0, all_gpus_connected: true}",
                path,
            )
            return None
        out: list[Expectation] = []
        ok = True
        for obs, value in raw.items():
            e = self.expectation(obs, value, (*path, obs))
            ok = ok and e is not None
            if e is not None:
                out.append(e)
        return tuple(out) if ok else None

    def expectation(
        self,
        obs: str,
        value: Any,
        path: KeyPath,
    ) -> Expectation | None:
        """Check one ``observation: expectation`` entry (its arguments too); None on a problem."""
        if obs not in OBSERVATIONS:
            self.add(
                f"unknown observation {obs!r}{did_you_mean(obs, OBSERVATIONS)}", path, key=True
            )
            return None
        d = OBSERVATIONS[obs]
        before = len(self.problems)
        args: dict[str, Any] = {}
        target, tpath = value, path
        if isinstance(value, dict):
            args = {k: v for k, v in value.items() if k != EXPECT_IS}
            target, tpath = value.get(EXPECT_IS), (*path, EXPECT_IS)
            if EXPECT_IS not in value:
                self.add(
                    f"{obs}: a mapping gives arguments plus 'is: EXPECTATION', e.g. "
                    f"{obs}: {{{next(iter(d.args), 'arg')}: ..., is: "
                    f"{_VALUE_EXAMPLES[d.value_type]}}}",
                    path,
                    key=True,
                )
        self.arguments(d, args, path)
        self.context(d, args, path)
        if target is None and (not isinstance(value, dict) or EXPECT_IS in value):
            self.add(f"{obs}: no expectation given; e.g. {_observation_hint(d)}", tpath, key=True)
        elif target is not None:
            try:
                ex = Expect.parse(target)
            except ScenarioError as err:
                self.wrap(err, tpath)
            else:
                problem = _expect_type_problem(d, ex) or _expect_range_problem(d, ex)
                if problem:
                    self.add(problem, tpath)
                elif len(self.problems) == before:
                    where = self.where(path, key=True)
                    return Expectation(obs, ex, tuple(args.items()), where)
        return None

    def arguments(self, d: ObservationDef, args: Mapping[str, Any], path: KeyPath) -> None:
        """check_args's problems, each at the argument it is about."""
        baseline = set(check_args(d.name, {}))  # missing required arguments
        per_key = {k: set(check_args(d.name, {k: v})) - baseline for k, v in args.items()}
        for message in check_args(d.name, args):
            key = next((k for k, msgs in per_key.items() if message in msgs), None)
            self.add(message, (*path, key) if key is not None else path, key=True)
        kind = args.get("kind")
        if "kind" in d.args and isinstance(kind, str) and kind not in KIND_NAMES:
            self.add(
                f"{d.name}: unknown kind {kind!r}{did_you_mean(kind, KIND_NAMES)}", (*path, "kind")
            )

    def context(
        self,
        d: ObservationDef,
        args: Mapping[str, Any],
        path: KeyPath,
    ) -> None:
        """Observations that need jobs or a checkpoint the scenario does not give."""
        job = args.get("job")
        jobs = self._jobs
        if jobs is None:  # the jobs have problems of their own
            return
        if d.name.startswith("checkpoint_") and not self._checkpoint:
            self.add(
                f"{d.name} needs the scenario's checkpoint size: add checkpoint: {{size_gb: ...}}",
                path,
                key=True,
            )
        if ("job" in d.args or d.name == "min_job_busbw_ratio") and not jobs:
            self.add(f"{d.name} needs jobs: add e.g. jobs: [per-su]", path, key=True)
        elif isinstance(job, str) and jobs:
            named = [j.name for j in jobs if not j.per_su]
            per_su = any(j.per_su for j in jobs)
            if job not in named and not (per_su and re.fullmatch(r"su\d+", job)):
                known = named + (["su01", "su02", "..."] if per_su else [])
                self.add(
                    f"{d.name}: no job named {job!r}{did_you_mean(job, known)}", (*path, "job")
                )
