"""Load scenario files into frozen dataclasses (scenario layer: reads files, nothing else).

A scenario file holds one scenario (a mapping) or a YAML list of them.  The
loader composes the YAML (``yaml.compose`` with the safe loader) so every node
keeps its line and column, converts it to plain Python while recording where
each key path came from, then validates the whole file and reports *every*
problem at once as one :class:`~harness.errors.ScenarioError`: each
:class:`~harness.errors.Problem` names the file, the 1-based line:column, the
key path (``steps[2].expect.jobs_lost``) and the fix.  Bad input never ends in
a traceback.

The YAML reader (:mod:`harness.inputs.yaml`) and the problem collector
(:class:`Checker`) are shared with :mod:`harness.fabric.fabric_file`.

>>> s = load_text('''
... name: one-spine-down
... description: kill one spine; every job survives
... fabric: {preset: seed-a800}
... jobs: [per-su]
... steps:
...   - inject: {kill: spine-05}
...   - expect: {jobs_lost: 0}
... ''')
>>> s[0].name, s[0].steps[1].where.line
('one-spine-down', 8)
"""

from __future__ import annotations

import difflib
import inspect
import math
import os
import re
import types
import typing
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import NoReturn
from typing import TypedDict

from harness.backends import BACKENDS
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.generators import GENERATORS
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import JobSpec
from harness.fabric.model import Fabric
from harness.fabric.presets import PRESETS
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import parse_override
from harness.faults.fault import FAULT_KINDS
from harness.faults.fault import FLAKY_KEYS
from harness.faults.fault import Fault
from harness.faults.selectors import KIND_NAMES
from harness.faults.selectors import SELECTOR_KEYS
from harness.faults.selectors import parse_selector
from harness.inputs.durations import parse_duration
from harness.inputs.files import display_path
from harness.inputs.suggest import closest
from harness.inputs.yaml import KeyPath
from harness.inputs.yaml import YamlDoc
from harness.inputs.yaml import key_text
from harness.inputs.yaml import read_yaml
from harness.inputs.yaml import read_yaml_file
from harness.observations.expect import Expect
from harness.observations.observation import ObservationDef
from harness.observations.registry import OBSERVATIONS
from harness.observations.registry import check_args
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import FabricRef
from harness.scenario.model import InjectStep
from harness.scenario.model import Location
from harness.scenario.model import RestartStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from harness.scenario.model import Step
from harness.scenario.model import WaitStep

NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")
YAML_SUFFIXES = (".yaml", ".yml")

# The raw YAML shapes (what a user writes, before validation).  The key tables
# the loader checks against come from these, and tests/unit/test_schema.py
# checks the JSON Schema (harness.scenario.schema) against the same tables.


class RawFabricRef(TypedDict, total=False):
    preset: str
    file: str
    generator: str
    params: dict[str, Any]


RawJob = TypedDict(
    "RawJob",
    {
        "name": str,
        "nodes": str | list[str],
        "per-su": bool,
        "failover": str,
        "timeout": float | str,
        "collectives": str | list[str],
        "ranks": str,
    },
    total=False,
)


class RawCheckpoint(TypedDict, total=False):
    size_gb: float
    sharded: bool
    shards_per_server: int
    interval_s: float


class RawDegrade(TypedDict, total=False):
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


class RawScenario(TypedDict, total=False):
    name: str
    description: str
    tags: list[str]
    backends: list[str]
    fabric: RawFabricRef
    routing: str | dict[str, str]
    expect_fabric_error: str
    jobs: list[RawJob | str]
    checkpoint: RawCheckpoint
    steps: list[RawStep]


SCENARIO_KEYS = tuple(RawScenario.__annotations__)
FABRIC_KEYS = tuple(RawFabricRef.__annotations__)
JOB_KEYS = tuple(RawJob.__annotations__)
CHECKPOINT_KEYS = tuple(RawCheckpoint.__annotations__)
STEP_KEYS = tuple(RawStep.__annotations__)
DEGRADE_KEYS = tuple(RawDegrade.__annotations__)
LINK_FAULT_KEYS = {"degrade": DEGRADE_KEYS, "flaky": FLAKY_KEYS}
LINK_FAULT_FORMS = {
    "degrade": "degrade takes {target: SELECTOR, fraction: F} or {target: SELECTOR, lanes: N}",
    "flaky": "flaky takes {target: SELECTOR, loss: 5%} or {target: SELECTOR, loss: 5%, from: END}",
}
FABRIC_SOURCES = ("preset", "file", "generator")
STEP_ACTIONS = ("inject", "restore", "expect", "wait", "restart")
RESTORE_WORDS = ("all", "last")
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


# -- small helpers -----------------------------------------------------------


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` when a choice is close, else the list of choices."""
    options = list(choices)
    near = closest(str(word), options, n=1, cutoff=0.6)  # numbers compared as numbers
    if near:
        return f"; did you mean {near[0]!r}?"
    return f" (known: {', '.join(options)})" if options else ""


def slug(text: str) -> str:
    """A valid name close to ``text`` (for "use e.g. ..." hints)."""
    out = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return out or "my-scenario"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_word(value: object) -> str:
    if value is None:
        return "nothing"
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


# -- the problem collector -------------------------------------------------------


class Checker:
    """Collects located problems for one :class:`YamlDoc`; raises them all at once."""

    def __init__(self, doc: YamlDoc) -> None:
        self.doc = doc
        self.problems: list[Problem] = list(doc.problems)

    def add(self, message: str, path: KeyPath, *, key: bool = False) -> None:
        line, column = self.doc.position(path, key=key)
        self.problems.append(Problem(message, self.doc.path, line, column, key_text(path)))

    def wrap(self, err: ScenarioError, path: KeyPath, *, key: bool = False) -> None:
        """Locate the (location-less) problems of an error raised by a core parser."""
        for p in err.problems:
            self.add(p.message, path, key=key)

    def check_keys(
        self, raw: Mapping[str, Any], path: KeyPath, known: Sequence[str], what: str
    ) -> bool:
        """Report every unknown key of ``raw`` (with a did-you-mean); True when none."""
        ok = True
        for k in raw:
            if k not in known:
                self.add(
                    f"unknown key {k!r} in {what}{did_you_mean(k, known)}", (*path, k), key=True
                )
                ok = False
        return ok

    def mapping(self, raw: Any, path: KeyPath, what: str) -> dict[str, Any] | None:
        if isinstance(raw, dict):
            return raw
        self.add(f"{what} must be a mapping (key: value lines), not {_type_word(raw)}", path)
        return None

    def name(self, raw: Any, path: KeyPath, what: str) -> str:
        if not isinstance(raw, str) or not raw:
            self.add(f"{what} must be a name such as 'one-spine-left', not {_type_word(raw)}", path)
            return ""
        if not NAME_RE.fullmatch(raw):
            self.add(
                f"{what} {raw!r} is not a valid name: use lowercase letters, digits, '.', '_' "
                f"and '-', starting with a letter or digit, e.g. {slug(raw)!r}",
                path,
            )
        return raw

    def params(
        self,
        raw: Mapping[str, Any],
        path: KeyPath,
        gen: Callable[..., Any],
        what: str,
        *,
        exclude: Iterable[str] = (),
        require: bool = False,
        given: Iterable[str] = (),
    ) -> None:
        """Check generator parameters by name and type (and, with ``require``, completeness)."""
        info = generator_params(gen, exclude=exclude)
        for key, value in raw.items():
            if key not in info:
                self.add(
                    f"{what} has no parameter {key!r}{did_you_mean(key, info)}",
                    (*path, key),
                    key=True,
                )
                continue
            problem = param_problem(key, value, info[key][0], what)
            if problem:
                self.add(problem, (*path, key))
        if require:
            have = set(raw) | set(given)
            missing = [k for k, (_, req) in info.items() if req and k not in have]
            if missing:
                self.add(
                    f"{what} needs parameter(s) {', '.join(missing)} under params:, "
                    f"e.g. params: {{{missing[0]}: ...}}",
                    path,
                    key=True,
                )

    def routing(self, raw: Any, path: KeyPath) -> RoutingOverride:
        """A ``routing:`` value (scenario or fabric file); nothing stated when absent or bad."""
        if raw is None:
            return RoutingOverride()
        try:
            return parse_override(raw)
        except ScenarioError as err:
            for p in err.problems:
                self.add(p.message, (*path, p.key) if p.key else path, key=bool(p.key))
            return RoutingOverride()

    def fail(self, message: str, path: KeyPath) -> NoReturn:
        """Add a last problem and raise them all (the input cannot be read further)."""
        self.add(message, path)
        self.raise_if_any()
        raise AssertionError(message)  # pragma: no cover - raise_if_any raised

    def raise_if_any(self, cls: type[ScenarioError] = ScenarioError) -> None:
        if self.problems:
            unique = list(dict.fromkeys(self.problems))
            unique.sort(key=lambda p: (p.line, p.column))
            raise cls(unique)


# -- generator parameters (shared with fabric files and the JSON Schema) -------------


def generator_function(name: str) -> Callable[..., Fabric]:
    """``GENERATORS[name]``, typed (the generators' signatures differ)."""
    return typing.cast("Callable[..., Fabric]", GENERATORS[name])


def generator_params(
    gen: Callable[..., Any], *, exclude: Iterable[str] = ()
) -> dict[str, tuple[Any, bool]]:
    """Keyword parameters of a generator: name -> (type hint, required)."""
    hints = typing.get_type_hints(gen)
    skip = set(exclude)
    return {
        name: (hints.get(name, Any), p.default is inspect.Parameter.empty)
        for name, p in inspect.signature(gen).parameters.items()
        if name not in skip and p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def param_problem(key: str, value: Any, hint: Any, what: str) -> str | None:
    """What is wrong with one generator parameter value (None: fine).

    Every number a generator takes (counts, radixes, speeds) must be positive.
    """
    if not matches_type(value, hint):
        return f"parameter {key!r} of {what} must be {describe_type(hint)}, got {value!r}"
    numbers = value if isinstance(value, list) else [value]
    if any(_is_number(v) and not 0 < v < math.inf for v in numbers):
        return f"parameter {key!r} of {what} must be a finite number > 0, got {value!r}"
    return None


def _union_args(hint: Any) -> tuple[Any, ...] | None:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return typing.get_args(hint)
    return None


def matches_type(value: Any, hint: Any) -> bool:
    """Whether a YAML value fits a (simple) type hint of a generator parameter."""
    members = _union_args(hint)
    if members is not None:
        return any(matches_type(value, m) for m in members)
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return _is_int(value)
    if hint is float:
        return _is_number(value)
    if hint is str:
        return isinstance(value, str)
    origin = typing.get_origin(hint)
    if origin in (list, Sequence, tuple) or hint in (list, tuple):
        args = typing.get_args(hint)
        return isinstance(value, list) and all(matches_type(v, args[0]) for v in value if args)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    return False  # classes (e.g. NodeTemplate) cannot come from YAML


_TYPE_WORDS: dict[object, str] = {
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    str: "a string",
    type(None): "null",
    dict: "a mapping",
}


def describe_type(hint: Any) -> str:
    members = _union_args(hint)
    if members is not None:
        words = [describe_type(m) for m in members]
        return " or ".join(w for w in dict.fromkeys(words) if w)
    origin = typing.get_origin(hint)
    if origin in (list, Sequence, tuple):
        (arg, *_) = typing.get_args(hint) or (Any,)
        return f"a list of {describe_type(arg).removeprefix('a ')}s"
    if origin is dict:
        return "a mapping"
    return _TYPE_WORDS.get(hint, "")


# -- scenarios -------------------------------------------------------------------


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
        if ex.op == "range" or _is_number(ex.value):
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


@dataclass
class _StepState:
    """What the steps have named and applied so far (to check ``restore:``)."""

    all_names: dict[str, int]  # as-name -> index of the first step that gives it
    defined: dict[str, int]
    active: list[str | None]
    restored: dict[str, int]


class _ScenarioChecker(Checker):
    def __init__(self, doc: YamlDoc, source: Path | None) -> None:
        super().__init__(doc)
        self.source = source
        # per scenario, for the checks of its expectations:
        self._jobs: tuple[JobSpec, ...] | None = ()  # None: the jobs have problems
        self._checkpoint = False  # has a checkpoint: key
        self._typos: set[str] = set()  # keys that an unknown key is a typo of

    def file(self) -> list[Scenario]:
        data = self.doc.data
        if data is None:
            self.add(
                "empty file: a scenario file holds one scenario (a mapping with name, "
                "description, fabric and steps) or a list of them",
                (),
            )
            return []
        if isinstance(data, list):
            if not data:
                self.add("empty list: give at least one scenario", ())
            items: list[tuple[Any, KeyPath]] = [(item, (i,)) for i, item in enumerate(data)]
        elif isinstance(data, dict):
            items = [(data, ())]
        else:
            self.add(
                f"a scenario file holds a mapping (one scenario) or a list of them, not "
                f"{_type_word(data)}",
                (),
            )
            return []
        out: list[Scenario] = []
        names: dict[str, int] = {}
        for raw, path in items:
            scenario = self.scenario(raw, path)
            name = raw.get("name") if isinstance(raw, dict) else None
            if isinstance(name, str) and name:
                if name in names:
                    self.add(
                        f"scenario name {name!r} is already used on line {names[name]}; "
                        "names must be unique within a file",
                        (*path, "name"),
                    )
                else:
                    names[name] = self.doc.position((*path, "name"))[0]
            if scenario is not None:
                out.append(scenario)
        return out

    def where(self, path: KeyPath, *, key: bool = False) -> Location:
        line, column = self.doc.position(path, key=key)
        return Location(self.doc.path, line, column)

    def scenario(self, raw: Any, path: KeyPath) -> Scenario | None:
        if not isinstance(raw, dict):
            self.add(
                f"a scenario must be a mapping with name, description, fabric and steps, "
                f"not {_type_word(raw)}",
                path,
            )
            return None
        before = len(self.problems)
        self.check_keys(raw, path, SCENARIO_KEYS, "a scenario")
        # a misspelt key is reported once, as a typo, not again as missing
        self._typos = {
            near[0]
            for k in raw
            if k not in SCENARIO_KEYS
            for near in [difflib.get_close_matches(k, SCENARIO_KEYS, n=1)]
            if near
        }
        if "name" in raw:
            name = self.name(raw["name"], (*path, "name"), "scenario name")
        else:
            name = ""
            if "name" not in self._typos:
                self.add(
                    "missing 'name': every scenario needs one, e.g. name: one-spine-left", path
                )
        description = raw.get("description")
        if description is None and "description" in self._typos:
            pass
        elif description is None:
            self.add(
                "missing 'description': say in plain words what the scenario breaks and why",
                (*path, "description") if "description" in raw else path,
                key=True,
            )
        elif not isinstance(description, str) or not description.strip():
            self.add(
                "'description' must be plain words (a non-empty string)", (*path, "description")
            )
        tags = self.strings(raw.get("tags"), (*path, "tags"), "tags")
        backends = self.backends(raw.get("backends"), (*path, "backends"))
        fabric_error = raw.get("expect_fabric_error")
        if "expect_fabric_error" in raw and not (
            isinstance(fabric_error, str) and fabric_error.strip()
        ):
            self.add(
                "'expect_fabric_error' is text the fabric error must contain, e.g. "
                "expect_fabric_error: past its limit",
                (*path, "expect_fabric_error"),
            )
            fabric_error = None
        fabric = self.fabric(raw, path, expecting_error="expect_fabric_error" in raw)
        routing = self.routing(raw.get("routing"), (*path, "routing"))
        before_jobs = len(self.problems)
        jobs = self.jobs(raw.get("jobs"), (*path, "jobs"))
        self._jobs = jobs if len(self.problems) == before_jobs else None
        checkpoint = self.checkpoint(raw.get("checkpoint"), (*path, "checkpoint"))
        self._checkpoint = "checkpoint" in raw
        steps = self.steps(raw, path, fabric_error is not None)
        if len(self.problems) > before:
            return None
        return Scenario(
            name=name,
            description=str(description).strip(),
            fabric=fabric,
            steps=steps,
            jobs=jobs,
            tags=tags,
            backends=backends,
            checkpoint=checkpoint,
            expect_fabric_error=fabric_error,
            routing=routing,
            where=self.where(path),
        )

    def strings(self, raw: Any, path: KeyPath, what: str) -> tuple[str, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, list) or not all(isinstance(t, str) and t for t in raw):
            self.add(f"{what} must be a list of words, e.g. {what}: [seed, connectivity]", path)
            return ()
        return tuple(raw)

    def backends(self, raw: Any, path: KeyPath) -> tuple[str, ...]:
        if raw is None:
            return ("model",)
        if not isinstance(raw, list) or not raw:
            self.add(
                f"backends must be a non-empty list, e.g. backends: [model] "
                f"(known: {', '.join(BACKENDS)})",
                path,
            )
            return ("model",)
        seen: list[str] = []
        for i, b in enumerate(raw):
            if b not in BACKENDS:
                self.add(f"unknown backend {b!r}{did_you_mean(b, BACKENDS)}", (*path, i))
            elif b in seen:
                self.add(f"backend {b!r} is listed twice", (*path, i))
            else:
                seen.append(b)
        return tuple(seen) or ("model",)

    def fabric(self, raw: Mapping[str, Any], path: KeyPath, *, expecting_error: bool) -> FabricRef:
        fpath = (*path, "fabric")
        if "fabric" not in raw and "fabric" in self._typos:
            return FabricRef()
        if "fabric" not in raw:
            self.add(
                "missing 'fabric': give one of preset, file or generator, e.g. "
                "fabric: {preset: seed-a800}",
                path,
            )
            return FabricRef()
        body = self.mapping(raw["fabric"], fpath, "fabric")
        where = self.where(fpath, key=True)
        if body is None:
            return FabricRef(where=where)
        self.check_keys(body, fpath, FABRIC_KEYS, "fabric")
        sources = [k for k in FABRIC_SOURCES if k in body]
        if len(sources) != 1:
            self.add(
                "fabric needs exactly one of preset, file or generator"
                + (f" (found {', '.join(sources)})" if sources else "")
                + "; e.g. fabric: {preset: seed-a800}",
                fpath,
                key=True,
            )
        check_params = len(sources) == 1 and not expecting_error
        params = body.get("params", {})
        if params is None or not isinstance(params, dict):
            self.add(
                "fabric params must be a mapping of generator parameters, e.g. params: {sus: 4}",
                (*fpath, "params"),
            )
            params = {}
        preset = body.get("preset")
        generator = body.get("generator")
        file = body.get("file")
        if "preset" in body:
            if not isinstance(preset, str) or preset not in PRESETS:
                self.add(
                    f"unknown fabric preset {preset!r}{did_you_mean(preset, PRESETS)}",
                    (*fpath, "preset"),
                )
            elif check_params:
                self.params(
                    params,
                    (*fpath, "params"),
                    PRESETS[preset][0],
                    f"preset {preset}",
                    exclude=("name",),
                )
        if "generator" in body:
            if not isinstance(generator, str) or generator not in GENERATORS:
                self.add(
                    f"unknown generator {generator!r}{did_you_mean(generator, GENERATORS)}",
                    (*fpath, "generator"),
                )
            elif check_params:
                self.params(
                    params,
                    (*fpath, "params"),
                    generator_function(generator),
                    f"generator {generator}",
                    require=True,
                )
        resolved: Path | None = None
        if "file" in body:
            if not isinstance(file, str) or not file:
                self.add(
                    "fabric file must be a path, e.g. file: ../fabrics/lab-2su.yaml",
                    (*fpath, "file"),
                )
            else:
                base = self.source.parent if self.source is not None else Path()
                resolved = Path(os.path.normpath(base / file))
                if not resolved.is_file():
                    self.add(
                        f"fabric file {file!r} not found (looked for {display_path(resolved)}); "
                        "the path is relative to this scenario file",
                        (*fpath, "file"),
                    )
        return FabricRef(
            preset=preset if isinstance(preset, str) else None,
            file=resolved,
            generator=generator if isinstance(generator, str) else None,
            params=tuple(params.items()),
            where=where,
        )

    def jobs(self, raw: Any, path: KeyPath) -> tuple[JobSpec, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, list):
            self.add(
                "jobs must be a list, e.g. jobs: [per-su] or "
                "jobs: [{name: big, nodes: 'su0[1-2]/*'}]",
                path,
            )
            return ()
        out: list[JobSpec] = []
        names: dict[str, int] = {}
        per_su = False
        for i, item in enumerate(raw):
            jpath = (*path, i)
            if isinstance(item, dict) and not self.check_keys(item, jpath, JOB_KEYS, "a job"):
                continue
            try:
                job = JobSpec.parse(item)
            except ScenarioError as err:
                self.wrap(err, jpath)
                continue
            if job.per_su:
                if per_su:
                    self.add("per-su is listed twice; it already makes one job per SU", jpath)
                per_su = True
            elif job.name in names:
                self.add(
                    f"two jobs are named {job.name!r} (also on line {names[job.name]}); "
                    "job names must be unique",
                    (*jpath, "name"),
                )
            else:
                names[job.name] = self.doc.position(jpath)[0]
            out.append(job)
        return tuple(out)

    def checkpoint(self, raw: Any, path: KeyPath) -> CheckpointSpec | None:
        if raw is None:
            return None
        body = self.mapping(raw, path, "checkpoint")
        if body is None:
            return None
        ok = self.check_keys(body, path, CHECKPOINT_KEYS, "checkpoint")
        size: Any = body.get("size_gb")
        if "size_gb" not in body:
            self.add(
                "checkpoint needs size_gb: the whole checkpoint of one job in GB (14 bytes "
                "per parameter: a 7B model is 98 GB), e.g. checkpoint: {size_gb: 98}",
                path,
                key=True,
            )
            ok = False
        elif not (_is_number(size) and 0 < size < math.inf):
            self.add(
                f"checkpoint size_gb must be a finite number > 0 (GB), got {size!r}",
                (*path, "size_gb"),
            )
            ok = False
        sharded = body.get("sharded", True)
        if not isinstance(sharded, bool):
            self.add(f"checkpoint sharded is true or false, got {sharded!r}", (*path, "sharded"))
            ok = False
        shards: Any = body.get("shards_per_server")
        if shards is not None and not (
            isinstance(shards, int) and not isinstance(shards, bool) and 0 < shards <= 65536
        ):
            self.add(
                f"checkpoint shards_per_server is a whole number of streams per server "
                f"(1 to 65536), got {shards!r}",
                (*path, "shards_per_server"),
            )
            ok = False
        elif shards is not None and sharded is False:
            self.add(
                "shards_per_server applies to sharded checkpoints; an unsharded one is one "
                "stream from one server: drop shards_per_server or set sharded: true",
                (*path, "shards_per_server"),
            )
            ok = False
        interval: Any = body.get("interval_s")
        if interval is not None and not (_is_number(interval) and 0 < interval < math.inf):
            self.add(
                f"checkpoint interval_s must be a finite number of seconds > 0, got {interval!r}",
                (*path, "interval_s"),
            )
            ok = False
        if not ok:
            return None
        return CheckpointSpec(float(size), sharded, float(interval) if interval else None, shards)

    # -- steps -------------------------------------------------------------------

    def steps(
        self,
        raw: Mapping[str, Any],
        path: KeyPath,
        fabric_error: bool,
    ) -> tuple[Step, ...]:
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
                f"steps must be a list of steps (lines starting with '- '), not "
                f"{_type_word(items)}",
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
        kinds = ", ".join(FAULT_KINDS)
        if not isinstance(raw, dict) or len(raw) != 1:
            found = f"{len(raw)} keys" if isinstance(raw, dict) else _type_word(raw)
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
        try:
            seconds = parse_duration(raw, "wait")
        except ScenarioError as err:
            self.wrap(err, path)
            return None
        return WaitStep(seconds, where)

    def restart(self, raw: Any, path: KeyPath, where: Location) -> RestartStep | None:
        if not isinstance(raw, str) or not raw:
            self.add("restart takes a job name, or all, e.g. restart: all", path)
            return None
        return RestartStep(raw, where)

    def restore(
        self, raw: Any, path: KeyPath, state: _StepState, where: Location
    ) -> RestoreStep | None:
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

    def expect(
        self,
        raw: Any,
        path: KeyPath,
    ) -> tuple[Expectation, ...] | None:
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


# -- public API -------------------------------------------------------------------


def load_text(text: str, path: Path | None = None) -> list[Scenario]:
    """Load scenarios from YAML text; ``path`` (if any) locates messages and ``fabric.file``."""
    doc = read_yaml(text, display_path(path) if path is not None else "<string>")
    checker = _ScenarioChecker(doc, path)
    scenarios = checker.file()
    checker.raise_if_any()
    return scenarios


def load_file(path: Path) -> list[Scenario]:
    """Load every scenario of one file; all its problems come in one :class:`ScenarioError`."""
    doc = read_yaml_file(path, "scenario")
    checker = _ScenarioChecker(doc, path)
    scenarios = checker.file()
    checker.raise_if_any()
    return scenarios


def discover(paths: Sequence[Path]) -> list[Path]:
    """Scenario files under ``paths``: directories expand to sorted ``*.yaml``/``*.yml``.

    A path that does not exist is a :class:`ScenarioError` (all of them listed).
    """
    found: list[Path] = []
    missing: list[Problem] = []
    for p in paths:
        if p.is_dir():
            files = [
                f
                for f in p.rglob("*")
                if f.suffix in YAML_SUFFIXES
                and f.is_file()
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            ]
            found.extend(sorted(files))
        elif p.is_file() or p.exists():
            found.append(p)  # not a regular file: the reader says what it is
        else:
            missing.append(Problem("no such file or directory; check the path", str(p)))
    if missing:
        raise ScenarioError(missing)
    return list(dict.fromkeys(found))


def load_paths(paths: Sequence[Path]) -> list[Scenario]:
    """Discover and load; problems of every file are reported together."""
    out: list[Scenario] = []
    problems: list[Problem] = []
    for f in discover(paths):
        try:
            out.extend(load_file(f))
        except ScenarioError as err:
            problems.extend(err.problems)
    if problems:
        raise ScenarioError(problems)
    return out


__all__ = [
    "Checker",
    "YamlDoc",
    "discover",
    "load_file",
    "load_paths",
    "load_text",
    "read_yaml",
    "read_yaml_file",
]
