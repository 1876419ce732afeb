"""Reproducers: faults and expectations written back as a scenario file (search stage, pure).

When a property-based search (:mod:`harness.search.stateful`) finds a fault set that
breaks an invariant, :func:`scenario_yaml` writes it in the format of
``docs/scenario-format.md`` -- fabric, jobs, one ``inject`` step per fault
with exact ids, and an ``expect`` step stating what the invariant expected --
so it can be committed under ``scenarios/`` as a regression test.  The file
fails until the system under test is fixed.

>>> from harness.fabric import preset
>>> from harness.faults.fault import Fault
>>> f = preset("seed-a800")
>>> applied = Fault.parse({"kill": "su03/leaf-r1"}).resolve(f)
>>> text = scenario_yaml(name="leaf-loss", description="A leaf loss loses its SU's job.",
...                      fabric="seed-a800", faults=[applied], expect={"jobs_lost": 0},
...                      jobs=["per-su"])
>>> "- inject: {kill: su03/leaf-r1}" in text
True
"""

from __future__ import annotations

import hashlib
import os
import re
import weakref
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from harness.errors import ScenarioError
from harness.fabric.jobs import DEFAULT_TIMEOUT_S
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import JobSpec
from harness.fabric.model import Fabric
from harness.fabric.presets import PRESETS
from harness.fabric.resolve import FabricRef
from harness.fabric.resolve import build_fabric
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.fault import percent
from harness.faults.selectors import GLOB_CHARS
from harness.faults.selectors import Selector

ENV_SAVE = "HARNESS_SAVE_REPRODUCER"
NAME_RE = re.compile(r"[^a-z0-9._-]+")
CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

FabricLike = Fabric | FabricRef | str

# Fabrics built from a known reference (by the strategies): the reference that rebuilds them.
_REFS: weakref.WeakKeyDictionary[Fabric, FabricRef] = weakref.WeakKeyDictionary()


def remember(fabric: Fabric, ref: FabricRef) -> Fabric:
    """Record the reference that rebuilds ``fabric`` (used for reproducers); return it."""
    _REFS[fabric] = ref
    return fabric


def fabric_ref(fabric: FabricLike) -> FabricRef:
    """The reference (preset or generator + parameters) that rebuilds a fabric.

    A string is a preset name.  A :class:`Fabric` must have been built from a
    preset with its default parameters or through :func:`remember` (the
    strategies do that); otherwise its recorded ``params`` may not rebuild it
    exactly, and a :class:`ScenarioError` says so.
    """
    if isinstance(fabric, FabricRef):
        return fabric
    if isinstance(fabric, str):
        if fabric not in PRESETS:
            msg = f"unknown fabric preset {fabric!r} (known: {', '.join(PRESETS)})"
            raise ScenarioError(msg)
        return FabricRef(preset=fabric)
    known = _REFS.get(fabric)
    if known is not None:
        return known
    if fabric.name in PRESETS:
        ref = FabricRef(preset=fabric.name)
        default = build_fabric(ref)
        if default.params == fabric.params and default.summary() == fabric.summary():
            return ref
    msg = (
        f"cannot tell how fabric {fabric.name!r} was built; pass a preset name or a "
        "FabricRef (generator + parameters), or build it with harness.search.strategies.fabrics()"
    )
    raise ScenarioError(msg)


def _plain(value: Any) -> Any:
    """Tuples to lists, recursively, so YAML shows plain sequences."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def fabric_to_raw(ref: FabricRef) -> dict[str, Any]:
    """The ``fabric:`` mapping of a scenario file."""
    out: dict[str, Any] = {}
    if ref.preset is not None:
        out["preset"] = ref.preset
    elif ref.generator is not None:
        out["generator"] = ref.generator
    elif ref.file is not None:
        out["file"] = str(ref.file)
    if ref.params:
        out["params"] = {k: _plain(v) for k, v in ref.params}
    return out


def _ids_raw(ids: Sequence[str]) -> Any:
    if len(ids) == 1 and not GLOB_CHARS.search(ids[0]):
        return ids[0]
    return {"ids": list(ids)}


def selector_to_raw(sel: Selector) -> Any:
    """A selector in the YAML form :func:`harness.faults.selectors.parse_selector` reads."""
    if sel.union:
        return [selector_to_raw(s) for s in sel.union]
    filters = (sel.kinds, sel.tiers, sel.su, sel.rail, sel.node, sel.pod, sel.plane)
    plain = not any(filters) and sel.between is None and sel.end is None
    plain = plain and sel.all_but is None and sel.random_count is None
    if plain and not sel.globs and sel.ids:
        return _ids_raw(sel.ids)
    if plain and not sel.ids and len(sel.globs) == 1:
        return sel.globs[0]
    out: dict[str, Any] = {}
    if sel.ids:
        out["ids"] = list(sel.ids)
    if sel.globs:
        out["glob"] = list(sel.globs)
    for key, val in (("kind", sel.kinds), ("tier", sel.tiers), ("su", sel.su), ("rail", sel.rail),
                     ("node", sel.node), ("pod", sel.pod), ("plane", sel.plane)):  # fmt: skip
        if val:
            out[key] = val[0] if len(val) == 1 else list(val)
    if sel.between is not None:
        out["between"] = list(sel.between)
    if sel.end is not None:
        out["end"] = sel.end
    if sel.all_but is not None:
        out["all-but"] = sel.all_but
    if sel.random_count is not None:
        out["random"] = {"count": sel.random_count, "seed": sel.random_seed}
    return out


def fault_to_raw(fault: Fault) -> dict[str, Any]:
    """A fault in the YAML form of an ``inject:`` step."""
    target = selector_to_raw(fault.target)
    if fault.kind is FaultKind.FLAKY:
        flaky: dict[str, Any] = {"target": target, "loss": percent(fault.loss or 0.0)}
        if fault.sender is not None:
            flaky["from"] = fault.sender
        return {"flaky": flaky}
    if fault.kind is not FaultKind.DEGRADE:
        return {fault.kind.value: target}
    body: dict[str, Any] = {"target": target}
    if fault.fraction is not None:
        body["fraction"] = fault.fraction
    if fault.lanes is not None:
        body["lanes"] = fault.lanes
    return {"degrade": body}


def exact_fault(applied: AppliedFault, fabric: Fabric) -> Fault:
    """The same fault with its selector replaced by the exact ids it hit."""
    f = applied.fault
    if applied.ports:
        ids = tuple(applied.ports)
    elif applied.elements:
        ids = tuple(fabric.ids[i] for i in applied.elements)
    else:
        ids = tuple(fabric.link_ids[i] for i in applied.links)
    return Fault(f.kind, Selector(ids=ids), f.fraction, f.lanes, loss=f.loss, sender=f.sender)


def job_to_raw(job: JobSpec | str | Mapping[str, Any]) -> Any:
    """A job in the YAML form of a ``jobs:`` entry."""
    if isinstance(job, str | Mapping):
        job = JobSpec.parse(dict(job) if isinstance(job, Mapping) else job)
    out: dict[str, Any] = {"per-su": True} if job.per_su else {
        "name": job.name, "nodes": job.nodes[0] if len(job.nodes) == 1 else list(job.nodes)
    }  # fmt: skip
    if job.failover != "none":
        out["failover"] = job.failover
    if job.timeout != DEFAULT_TIMEOUT_S:
        out["timeout"] = job.timeout
    return out


def expectation_raw(observation: str, expected: Any, args: Mapping[str, Any] | None = None) -> Any:
    """One ``expect:`` value: the expectation, or ``{ARGS..., is: EXPECTATION}``."""
    expected = _plain(expected)
    if not args:
        return expected
    return {**{k: _plain(v) for k, v in args.items()}, "is": expected}


def scenario_name(text: str) -> str:
    """A valid scenario name (``[a-z0-9][a-z0-9._-]*``) made from any text.

    >>> scenario_name("SeedKeepsJobs.no_job_lost")
    'seed-keeps-jobs.no-job-lost'
    """
    words = CAMEL_RE.sub("-", text.replace("_", "-"))
    slug = NAME_RE.sub("-", words.lower()).strip("-._")
    return re.sub(r"-{2,}", "-", slug) or "reproducer"


class _Dumper(yaml.SafeDumper):
    """Folded style for prose, flow style for short leaf collections."""


class _Prose(str):
    """A string written in folded style (``description: >``)."""

    __slots__ = ()


def _prose(dumper: yaml.SafeDumper, data: _Prose) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style=">")


_Dumper.add_representer(_Prose, _prose)


def scenario_yaml(
    *,
    name: str,
    description: str,
    fabric: FabricLike,
    faults: Sequence[Fault | AppliedFault],
    expect: Mapping[str, Any],
    jobs: Sequence[JobSpec | str | Mapping[str, Any]] = (),
    tags: Sequence[str] = ("reproducer",),
    checkpoint: CheckpointSpec | None = None,
    header: str = "",
) -> str:
    """A scenario file (YAML text) that injects ``faults`` and checks ``expect``.

    Parameters
    ----------
    name, description
        The scenario's name (made valid with :func:`scenario_name`) and its
        plain-words description.
    fabric
        A preset name, a :class:`FabricRef` or a fabric (see :func:`fabric_ref`).
    faults
        Faults to inject in order; applied faults are written with the exact
        ids they hit, plain faults with their selector.
    expect
        ``{observation: expectation}`` in the scenario format; use
        :func:`expectation_raw` for observations with arguments.
    jobs, tags, checkpoint
        As in the scenario format.
    header
        Comment lines put before the document (without ``#``).

    Returns
    -------
    str
        YAML that :func:`yaml.safe_load` reads back as one scenario mapping.
    """
    if not expect:
        msg = "a reproducer needs at least one expectation to state what failed"
        raise ScenarioError(msg)
    ref = fabric_ref(fabric)
    built: Fabric | None = fabric if isinstance(fabric, Fabric) else None
    steps: list[dict[str, Any]] = []
    for item in faults:
        if isinstance(item, AppliedFault):
            built = built if built is not None else build_fabric(ref)
            item = exact_fault(item, built)  # noqa: PLW2901  (written with its exact ids)
        steps.append({"inject": fault_to_raw(item)})
    steps.append({"expect": {k: _plain(v) for k, v in expect.items()}})
    doc: dict[str, Any] = {
        "name": scenario_name(name),
        "description": _Prose(description.strip() + "\n"),
        "tags": list(tags),
        "fabric": fabric_to_raw(ref),
    }
    if jobs:
        doc["jobs"] = [job_to_raw(j) for j in jobs]
    if checkpoint is not None:
        ck: dict[str, Any] = {"size_gb": checkpoint.size_gb, "sharded": checkpoint.sharded}
        if checkpoint.interval_s is not None:
            ck["interval_s"] = checkpoint.interval_s
        doc["checkpoint"] = ck
    doc["steps"] = steps
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=100)
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    return "\n".join([*lines, body]) if lines else body


def save(text: str, directory: str | os.PathLike[str], name: str) -> Path:
    """Write a reproducer to ``DIRECTORY/NAME.yaml`` (creating the directory); return the path.

    An existing file with other content is kept: the new one gets a content
    hash in its name.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scenario_name(name)}.yaml"
    if path.exists() and path.read_text(encoding="utf-8") != text:
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        path = folder / f"{scenario_name(name)}-{digest}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def save_dir(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """Where to save reproducers: ``explicit``, else ``$HARNESS_SAVE_REPRODUCER``, else nowhere."""
    if explicit is not None:
        return Path(explicit)
    env = os.environ.get(ENV_SAVE)
    return Path(env) if env else None
