"""Scenario steps: each inject, restore, expect, wait and restart step, checked and located.

:class:`StepChecker` reads a scenario's ``steps:`` list into
:class:`~harness.scenario.model.Step` values: an ``inject:`` holds one fault
whose selector is checked piece by piece (each problem at its own line), a
``restore:`` must name a fault that is applied at that point (``as:`` names,
``all`` or ``last``), an ``expect:`` is checked by
:class:`~harness.scenario.expectations.ExpectChecker`.  The scenario loader
(:mod:`harness.scenario.load`) checks the rest of a scenario and hands the
steps here.

>>> from harness.inputs.yaml import read_yaml
>>> c = StepChecker(read_yaml("steps: [{restore: last}]", "<string>"))
>>> c.steps(c.doc.data, (), fabric_error=False)[0].target
'last'
>>> c.problems[0].message
'restore last: no fault is applied at this point; inject one first'
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import TypedDict

from harness.errors import ScenarioError
from harness.faults.fault import FAULT_KINDS
from harness.faults.fault import FLAKY_KEYS
from harness.faults.fault import Fault
from harness.faults.selectors import SELECTOR_KEYS
from harness.faults.selectors import parse_selector
from harness.inputs.checker import did_you_mean
from harness.inputs.checker import type_word
from harness.inputs.durations import parse_duration
from harness.inputs.location import Location
from harness.inputs.yaml import KeyPath
from harness.inputs.yaml import YamlDoc
from harness.scenario.expectations import ExpectChecker
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import RestartStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Step
from harness.scenario.model import WaitStep

#: The most steps one scenario may have (docs/scenario-format.md, "Limits of a scenario"):
#: far above any real scenario (tens of steps), and low enough that the checks end at once
#: and a run of that many steps on seed-a800 takes seconds (~12 s on a busy 2-core box).
MAX_STEPS = 1_000

# The raw YAML shapes of a step (what a user writes, before validation).  The
# key tables the checks use come from these, and tests/scenario/test_schema.py
# checks the JSON Schema (harness.scenario.step_schema) against the same tables.


class RawDegrade(TypedDict, total=False):
    """The raw ``degrade:`` body of an inject step."""

    target: Any
    fraction: float
    lanes: int


RawStep = TypedDict(
    "RawStep",
    {
        "inject": dict[str, Any],
        "as": str,
        "restore": str,
        "expect": dict[str, Any],
        "wait": str,
        "restart": str,
    },
    total=False,
)


STEP_KEYS = tuple(RawStep.__annotations__)
DEGRADE_KEYS = tuple(RawDegrade.__annotations__)
LINK_FAULT_KEYS = {"degrade": DEGRADE_KEYS, "flaky": FLAKY_KEYS}
LINK_FAULT_FORMS = {
    "degrade": "degrade takes {target: SELECTOR, fraction: F} or {target: SELECTOR, lanes: N}",
    "flaky": "flaky takes {target: SELECTOR, loss: 5%} or {target: SELECTOR, loss: 5%, from: END}",
}
STEP_ACTIONS = ("inject", "restore", "expect", "wait", "restart")
RESTORE_WORDS = ("all", "last")


@dataclass
class _StepState:
    """What the steps have named and applied so far (to check ``restore:``)."""

    all_names: dict[str, int]  # as-name -> index of the first step that gives it
    defined: dict[str, int]
    active: list[str | None]
    restored: dict[str, int]


class StepChecker(ExpectChecker):
    """Checks the ``steps:`` of a scenario: each step, its fault and its expectations.

    The scenario checker (:mod:`harness.scenario.load`) sets, per scenario,
    ``_typos`` (the keys its unknown keys are typos of: a misspelt ``steps:`` is
    not reported again as missing) and what the expectations need (see
    :class:`~harness.scenario.expectations.ExpectChecker`).
    """

    def __init__(self, doc: YamlDoc) -> None:
        super().__init__(doc)
        self._typos: set[str] = set()  # keys that an unknown key is a typo of

    def steps(
        self,
        raw: Mapping[str, Any],
        path: KeyPath,
        fabric_error: bool,
    ) -> tuple[Step, ...]:
        """Check a scenario's ``steps:`` list; the steps that passed the checks."""
        spath = (*path, "steps")
        items = raw.get("steps")
        if items is None:
            if not fabric_error and "steps" not in self._typos:
                self.add(
                    "missing 'steps': list what to break and what to expect, e.g. "
                    "steps: [{inject: {kill: spine-05}}, {expect: {jobs_lost: 0}}]",
                    spath if "steps" in raw else path,
                    key=True,
                )
            return ()
        if not isinstance(items, list):
            self.add(
                f"steps must be a list of steps (lines starting with '- '), not {type_word(items)}",
                spath,
            )
            return ()
        if not items and not fabric_error:
            self.add(
                "steps is empty: add at least one inject/expect step "
                "(only a scenario with expect_fabric_error may have none)",
                spath,
            )
            return ()
        if len(items) > MAX_STEPS:
            self.add(
                f"{len(items):,} steps is more than a scenario may have (MAX_STEPS = "
                f"{MAX_STEPS:,}); split it into several scenarios (a file may hold a list "
                "of them)",
                spath,
            )
            return ()
        names: dict[str, int] = {}
        for i, item in enumerate(items):
            if isinstance(item, dict) and isinstance(item.get("as"), str):
                names.setdefault(item["as"], i)
        state = _StepState(names, {}, [], {})
        out: list[Step] = []
        for i, item in enumerate(items):
            step = self.step(item, (*spath, i), state)
            if step is not None:
                out.append(step)
        return tuple(out)

    def step(
        self,
        raw: Any,
        path: KeyPath,
        state: _StepState,
    ) -> Step | None:
        """Check one step (exactly one action); None when it has a problem."""
        body = self.mapping(raw, path, "a step")
        if body is None:
            return None
        self.check_keys(body, path, STEP_KEYS, "a step")
        actions = [k for k in STEP_ACTIONS if k in body]
        where = self.where(path)
        if not actions:
            self.add(
                "a step needs one of inject, restore, expect, wait or restart, e.g. "
                "- inject: {kill: spine-05}",
                path,
            )
            return None
        if len(actions) > 1:
            self.add(
                f"a step does one thing, this one has {' and '.join(actions)}; "
                "split it into separate steps",
                path,
            )
            return None
        if "as" in body and actions[0] != "inject":
            self.add(
                "'as' names an inject step (for a later restore:); move it to one",
                (*path, "as"),
                key=True,
            )
        if actions[0] == "inject":
            return self.inject(body, path, state, where)
        if actions[0] == "restore":
            return self.restore(body["restore"], (*path, "restore"), state, where)
        if actions[0] == "wait":
            return self.wait(body["wait"], (*path, "wait"), where)
        if actions[0] == "restart":
            return self.restart(body["restart"], (*path, "restart"), where)
        expectations = self.expect(body["expect"], (*path, "expect"))
        return ExpectStep(expectations, where) if expectations is not None else None

    def inject(
        self, body: Mapping[str, Any], path: KeyPath, state: _StepState, where: Location
    ) -> InjectStep | None:
        """Check an ``inject:`` step and its ``as:`` name."""
        ipath = (*path, "inject")
        name: str | None = None
        if "as" in body:
            name = self.name(body["as"], (*path, "as"), "step name ('as')")
            if name in RESTORE_WORDS:
                self.add(f"{name!r} is reserved for restore:; choose another name", (*path, "as"))
            state.defined.setdefault(name, len(state.defined))
        state.active.append(name)
        fault = self.fault(body["inject"], ipath)
        return InjectStep(fault, name, where) if fault is not None else None

    def fault(self, raw: Any, path: KeyPath) -> Fault | None:
        """Check one fault (``{kill: SELECTOR}`` and the others); None on a problem."""
        kinds = ", ".join(FAULT_KINDS)
        if not isinstance(raw, dict) or len(raw) != 1:
            found = f"{len(raw)} keys" if isinstance(raw, dict) else type_word(raw)
            self.add(
                f"inject takes exactly one fault, e.g. inject: {{kill: spine-05}}, not "
                f"{found} (fault kinds: {kinds})",
                path,
            )
            return None
        ((kind, body),) = raw.items()
        kpath = (*path, kind)
        if kind not in FAULT_KINDS:
            self.add(
                f"unknown fault kind {kind!r}{did_you_mean(kind, FAULT_KINDS)}", kpath, key=True
            )
            return None
        if kind in LINK_FAULT_KEYS:
            if not isinstance(body, dict):
                self.add(LINK_FAULT_FORMS[kind], kpath)
                return None
            if not self.check_keys(body, kpath, LINK_FAULT_KEYS[kind], kind):
                return None
            if "target" in body and not self.selector(body["target"], (*kpath, "target"), kind):
                return None
        elif not self.selector(body, kpath, kind):
            return None
        try:
            return Fault.parse(raw)
        except ScenarioError as err:
            self.wrap(err, kpath, key=True)
            return None

    def selector(self, raw: Any, path: KeyPath, kind: str) -> bool:
        """Check a selector piece by piece, so each problem points at its own line."""
        if raw is None:
            self.add(
                f"{kind} needs a selector: an id, a glob, a list or a mapping, e.g. "
                f"{kind}: spine-05 or {kind}: {{tier: spine, all-but: 1}}",
                path,
                key=True,
            )
            return False
        if isinstance(raw, list) and raw:
            results = [self.selector(item, (*path, i), kind) for i, item in enumerate(raw)]
            return all(results)
        if isinstance(raw, dict):
            if not raw:
                self.add(
                    "empty selector mapping: it would select everything; give an id, a "
                    "glob or filters such as {tier: spine}",
                    path,
                )
                return False
            ok = self.check_keys(raw, path, SELECTOR_KEYS, "a selector")
            for k, v in raw.items():
                if k not in SELECTOR_KEYS:
                    continue
                if v == []:
                    self.add(
                        f"selector key {k!r} has an empty list; list at least one value", (*path, k)
                    )
                    ok = False
                    continue
                try:
                    parse_selector({k: v})
                except ScenarioError as err:
                    self.wrap(err, (*path, k))
                    ok = False
            if not ok:
                return False
        try:
            parse_selector(raw)
        except ScenarioError as err:
            self.wrap(err, path)
            return False
        return True

    def wait(self, raw: Any, path: KeyPath, where: Location) -> WaitStep | None:
        """Check a ``wait:`` duration."""
        try:
            seconds = parse_duration(raw, "wait")
        except ScenarioError as err:
            self.wrap(err, path)
            return None
        return WaitStep(seconds, where)

    def restart(self, raw: Any, path: KeyPath, where: Location) -> RestartStep | None:
        """Check a ``restart:`` job name (or ``all``)."""
        if not isinstance(raw, str) or not raw:
            self.add("restart takes a job name, or all, e.g. restart: all", path)
            return None
        return RestartStep(raw, where)

    def restore(
        self, raw: Any, path: KeyPath, state: _StepState, where: Location
    ) -> RestoreStep | None:
        """Check a ``restore:`` target against the faults applied at that point."""
        if not isinstance(raw, str) or not raw:
            self.add("restore takes a step name given with 'as:', or all, or last", path)
            return None
        if not state.active:
            self.add(f"restore {raw}: no fault is applied at this point; inject one first", path)
            return RestoreStep(raw, where)
        if raw == "all":
            state.active.clear()
        elif raw == "last":
            state.active.pop()
        elif raw in state.active:
            state.active[:] = [n for n in state.active if n != raw]
            state.restored[raw] = self.doc.position(path)[0]
        elif raw in state.restored:
            self.add(f"restore {raw}: already restored on line {state.restored[raw]}", path)
        elif raw in state.all_names:
            self.add(
                f"restore {raw}: that name is given by a later step (steps"
                f"[{state.all_names[raw]}]); a restore must come after its inject",
                path,
            )
        else:
            names = [n for n in state.defined if n]
            near = difflib.get_close_matches(raw, [*names, *RESTORE_WORDS], n=1)
            hint = (
                f"; did you mean {near[0]!r}?"
                if near
                else f"; give the inject step 'as: {raw}', or restore all or last"
            )
            self.add(f"restore {raw}: no earlier inject step has 'as: {raw}'{hint}", path)
        return RestoreStep(raw, where)
