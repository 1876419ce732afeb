"""Scenario files -> scenarios: a YAML file read, checked and turned into frozen dataclasses.

A scenario file holds one scenario (a mapping) or a YAML list of them.  The
loader composes the YAML (``yaml.compose`` with the safe loader) so every node
keeps its line and column, converts it to plain Python while recording where
each key path came from, then validates the whole file and reports *every*
problem at once as one :class:`~harness.errors.ScenarioError`: each
:class:`~harness.errors.Problem` names the file, the 1-based line:column, the
key path (``steps[2].expect.jobs_lost``) and the fix.  Bad input never ends in
a traceback.

This module checks a scenario's own keys (name, description, backends,
fabric, routing, jobs, checkpoint); its steps are checked by
:mod:`harness.scenario.steps` (expectations by
:mod:`harness.scenario.expectations`), on the rules every input file shares
(:mod:`harness.inputs.checker`).  Finding the files is
:mod:`harness.scenario.discover`.

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
import math
import os
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import TypedDict

from harness.backends import BACKENDS
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.generators import GENERATORS
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import JobSpec
from harness.fabric.params import check_params
from harness.fabric.params import generator_function
from harness.fabric.presets import PRESETS
from harness.fabric.resolve import FabricRef
from harness.fabric.routing import check_override
from harness.inputs.checker import did_you_mean
from harness.inputs.checker import type_word
from harness.inputs.files import display_path
from harness.inputs.values import is_number
from harness.inputs.yaml import KeyPath
from harness.inputs.yaml import YamlDoc
from harness.inputs.yaml import read_yaml
from harness.inputs.yaml import read_yaml_file
from harness.scenario.discover import discover
from harness.scenario.drill_check import DrillChecker
from harness.scenario.drill_check import RawDrill
from harness.scenario.model import Scenario
from harness.scenario.model import Step
from harness.scenario.steps import RawStep

# The raw YAML shapes (what a user writes, before validation).  The key tables
# the loader checks against come from these, and tests/scenario/test_schema.py
# checks the JSON Schema (harness.scenario.schema) against the same tables.
# The shapes of a step are in harness.scenario.steps.


class RawFabricRef(TypedDict, total=False):
    """The raw ``fabric:`` of a scenario (a preset, a file or a generator, and parameters)."""

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
    """The raw ``checkpoint:`` of a scenario."""

    size_gb: float
    sharded: bool
    shards_per_server: int
    interval_s: float


class RawScenario(TypedDict, total=False):
    """The raw YAML of one scenario, before validation."""

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
    drill: RawDrill


SCENARIO_KEYS = tuple(RawScenario.__annotations__)
FABRIC_KEYS = tuple(RawFabricRef.__annotations__)
JOB_KEYS = tuple(RawJob.__annotations__)
CHECKPOINT_KEYS = tuple(RawCheckpoint.__annotations__)
FABRIC_SOURCES = ("preset", "file", "generator")


class _ScenarioChecker(DrillChecker):
    """Checks a whole scenario file: each scenario's own keys, then its steps."""

    def __init__(self, doc: YamlDoc, source: Path | None) -> None:
        super().__init__(doc)
        self.source = source

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
                f"{type_word(data)}",
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

    def scenario(self, raw: Any, path: KeyPath) -> Scenario | None:
        if not isinstance(raw, dict):
            self.add(
                f"a scenario must be a mapping with name, description, fabric and steps, "
                f"not {type_word(raw)}",
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
        routing = check_override(self, raw.get("routing"), (*path, "routing"))
        before_jobs = len(self.problems)
        jobs = self.jobs(raw.get("jobs"), (*path, "jobs"))
        self._jobs = jobs if len(self.problems) == before_jobs else None
        checkpoint = self.checkpoint(raw.get("checkpoint"), (*path, "checkpoint"))
        self._checkpoint = "checkpoint" in raw
        drill = None
        if "drill" in raw:
            drill = self.drill(raw["drill"], (*path, "drill"))
        if "drill" in raw and "expect_fabric_error" in raw:
            self.add("a drill runs on a fabric that builds: drop expect_fabric_error",
                     (*path, "expect_fabric_error"), key=True)  # fmt: skip
        if "drill" in raw and "steps" not in raw:
            steps: tuple[Step, ...] = ()
        else:
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
            drill=drill,
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
        params_checked = len(sources) == 1 and not expecting_error
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
            elif params_checked:
                check_params(
                    self,
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
            elif params_checked:
                check_params(
                    self,
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
        elif not (is_number(size) and 0 < size < math.inf):
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
        if interval is not None and not (is_number(interval) and 0 < interval < math.inf):
            self.add(
                f"checkpoint interval_s must be a finite number of seconds > 0, got {interval!r}",
                (*path, "interval_s"),
            )
            ok = False
        if not ok:
            return None
        return CheckpointSpec(float(size), sharded, float(interval) if interval else None, shards)


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
    "load_file",
    "load_paths",
    "load_text",
]
