"""Prepare a scenario: everything ``run`` checks before it injects anything (scenario stage, pure).

:func:`prepare` builds the scenario's fabric, resolves its jobs, resolves every
inject step's selector, plays the restore steps against the faults applied by
then, and checks every expectation's arguments against the fabric and the jobs
(a ``job:`` that does not exist, a ``between:`` that is not a GPU, a
bisection on one SU, a bandwidth expected while a link is ``flaky``).  It
reports **every** problem at once, each located at its file:line:column, as
one :class:`~harness.errors.ScenarioError`.

``harness validate`` calls it and stops; the runner calls it and then runs the
prepared steps, so a file that ``run`` rejects is rejected by ``validate`` with
the same message.

>>> from harness.scenario.load import load_text
>>> (s,) = load_text('''
... name: demo
... description: kill a spine
... fabric: {preset: seed-a800}
... steps:
...   - inject: {kill: spine-05}
...   - expect: {all_gpus_connected: true}
... ''')
>>> p = prepare(s)
>>> p.fabric.name, [ps.applied.describe(p.fabric) for ps in p.steps if ps.applied]
('seed-a800', ['killed spine-05'])
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.errors import FabricDesignError
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.jobs import Job
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.resolve import build_fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import resolve
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultState
from harness.inputs.location import Location
from harness.inputs.suggest import did_you_mean
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.bandwidth import refuse_lossy
from harness.observations.bandwidth import refuses_lossy
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import RestartStep
from harness.scenario.model import RestoreStep
from harness.scenario.model import Scenario
from harness.scenario.model import Step


@dataclass(frozen=True, slots=True)
class PreparedStep:
    """One step with what it resolves to: the applied fault of an inject, the
    positions (in :attr:`Prepared.steps`) of the injects a restore reverts, in
    the order it reverts them."""

    step: Step
    applied: AppliedFault | None = None
    reverts: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Prepared:
    """A scenario checked against its fabric, ready to run.

    ``fabric`` is ``None`` only when building it failed and the scenario
    expects that (``expect_fabric_error``); ``fabric_error`` then holds the
    builder's message.
    """

    scenario: Scenario
    fabric: Fabric | None
    jobs: tuple[Job, ...] = ()
    steps: tuple[PreparedStep, ...] = ()
    fabric_error: str = ""
    routing: Routing = DEFAULT_ROUTING  # the fabric file's ``routing:``, then the scenario's


def located(err: ScenarioError, where: Location) -> list[Problem]:
    """``err``'s problems, each at ``where`` unless it already names a file."""
    return [
        p if p.path else Problem(p.message, where.path, where.line, where.column, p.key)
        for p in err.problems
    ]


def prepare(scenario: Scenario) -> Prepared:
    """Build, resolve and check everything; raise one :class:`ScenarioError` with all problems."""
    problems: list[Problem] = []
    try:
        fabric = build_fabric(scenario.fabric)
    except FabricDesignError as err:
        if scenario.expect_fabric_error is None:
            raise type(err)(located(err, scenario.fabric.where)) from None
        return Prepared(scenario, None, fabric_error=str(err))
    jobs = _jobs(scenario, fabric, problems)
    steps = _steps(scenario, fabric, jobs, problems)
    if problems or jobs is None:
        raise ScenarioError(problems)
    return Prepared(scenario, fabric, jobs, steps, routing=routing_of(scenario))


def routing_of(scenario: Scenario, over: RoutingOverride | None = None) -> Routing:
    """The scenario's routing: the defaults < its fabric file's ``routing:`` < its own <
    ``over`` (``harness run --routing``): the one order every result states."""
    from harness.fabric.fabric_file import fabric_file_routing

    ref = scenario.fabric
    from_file = fabric_file_routing(ref.file) if ref.file is not None else None
    return resolve(from_file, scenario.routing, over)


def reported_routing(scenario: Scenario, over: RoutingOverride | None = None) -> Routing:
    """:func:`routing_of` for a result that reports an error: without the fabric file's
    ``routing:`` only when that file cannot be read (it may be what the error is about)."""
    try:
        return routing_of(scenario, over)
    except (ScenarioError, OSError):
        return resolve(scenario.routing, over)


def _jobs(scenario: Scenario, fabric: Fabric, problems: list[Problem]) -> tuple[Job, ...] | None:
    """The resolved jobs, or ``None`` (their problems recorded) when some do not resolve."""
    ok = True
    for spec in scenario.jobs:  # each on its own, so every bad pattern is reported
        try:
            resolve_jobs([spec], fabric)
        except ScenarioError as err:
            problems.extend(located(err, scenario.where))
            ok = False
    if not ok:
        return None
    try:
        return resolve_jobs(scenario.jobs, fabric)
    except ScenarioError as err:  # names clash
        problems.extend(located(err, scenario.where))
        return None


def _steps(
    scenario: Scenario, fabric: Fabric, jobs: tuple[Job, ...] | None, problems: list[Problem]
) -> tuple[PreparedStep, ...]:
    out: list[PreparedStep] = []
    applied: list[tuple[int, str | None]] = []  # (position of the inject, its name)
    for pos, step in enumerate(scenario.steps):
        if isinstance(step, InjectStep):
            try:
                fault = step.fault.resolve(fabric)
            except ScenarioError as err:
                problems.extend(located(err, step.where))
                fault = None
            applied.append((pos, step.name))
            out.append(PreparedStep(step, fault))
        elif isinstance(step, RestoreStep):
            try:
                chosen = restore_choice([name for _, name in applied], step.target)
            except ScenarioError as err:
                problems.extend(located(err, step.where))
                chosen = []
            reverts = tuple(applied[i][0] for i in chosen)
            for i in sorted(chosen, reverse=True):
                del applied[i]
            out.append(PreparedStep(step, reverts=reverts))
        elif isinstance(step, RestartStep):
            names = [j.name for j in jobs or ()]
            if jobs is not None and step.target != "all" and step.target not in names:
                msg = (
                    f"restart {step.target}: no job is named so{did_you_mean(step.target, names)}"
                    f"; give a job name or all (jobs: {', '.join(names) or 'none'})"
                )
                problems.append(Problem(msg, step.where.path, step.where.line, step.where.column))
            out.append(PreparedStep(step))
        elif isinstance(step, ExpectStep):
            check_expectations(step, fabric, jobs, problems)
            held = [out[p].applied for p, _ in applied]
            _check_lossless(step, fabric, [a for a in held if a is not None], problems)
            out.append(PreparedStep(step))
        else:
            out.append(PreparedStep(step))
    return tuple(out)


def restore_choice(names: Sequence[str | None], target: str) -> list[int]:
    """Positions in ``names`` (the applied faults' names, oldest first) that a
    ``restore: target`` reverts, in the order it reverts them (newest first)."""
    if not names:
        msg = "restore: no fault is applied"
        raise ScenarioError(msg)
    if target == "all":
        return list(range(len(names) - 1, -1, -1))
    if target == "last":
        return [len(names) - 1]
    chosen = [i for i in range(len(names) - 1, -1, -1) if names[i] == target]
    if not chosen:
        named = [n for n in names if n]
        msg = f"restore: no applied fault is named {target!r} (named: {named or 'none'})"
        raise ScenarioError(msg)
    return chosen


# -- expectation arguments and context --------------------------------------------------
# Which argument names which kind of element (the observation registry checks types,
# the loader checks names against the scenario; here they meet the fabric), and which
# observations need what of the fabric (two SUs, a storage network).
_ELEMENT_ARGS: Mapping[str, Kind] = {"gpu": Kind.GPU, "node": Kind.NODE, "leaf": Kind.LEAF}
_BISECTION = frozenset({"bisection_gbps", "bisection_ratio"})
_STORAGE = frozenset(
    {"storage_gbps", "checkpoint_sync_stall_s", "checkpoint_async_stall_s",
     "checkpoint_background_s"}
)  # fmt: skip


def element_of_kind(fabric: Fabric, eid: str, kind: Kind) -> int:
    """The index of element ``eid``, which must be a ``kind``; else a ScenarioError."""
    i = fabric.index.get(eid)
    if i is None or fabric.kind[i] != int(kind):
        same = [fabric.ids[j] for j in fabric.indices_of_kind(kind).tolist()]
        msg = f"{eid!r} is not a {kind.label} of fabric {fabric.name!r}{did_you_mean(eid, same)}"
        raise ScenarioError(msg)
    return i


def check_expectations(
    step: ExpectStep, fabric: Fabric, jobs: tuple[Job, ...] | None, problems: list[Problem]
) -> None:
    """Each expectation's arguments against the fabric and the jobs, into ``problems``."""
    for e in step.expectations:
        for message in _argument_problems(e.observation, dict(e.args), fabric, jobs):
            problems.append(Problem(message, e.where.path, e.where.line, e.where.column))


def _check_lossless(
    step: ExpectStep, fabric: Fabric, held: list[AppliedFault], problems: list[Problem]
) -> None:
    """Refuse, now, the bandwidth expectations the model refuses while a link is ``flaky``
    (:func:`~harness.observations.bandwidth.refuses_lossy`): the run would build a whole
    emulation only to stop at this step with the same message."""
    asks = [e for e in step.expectations if refuses_lossy(e.observation, dict(e.args))]
    if not asks or not any(a.loss for a in held):
        return
    a = Analysis(fabric, Observation.from_state(FaultState(fabric, tuple(held))))
    for e in asks:
        try:
            refuse_lossy(a, e.observation)
        except ScenarioError as err:
            problems.extend(located(err, e.where))


def _argument_problems(
    observation: str, args: Mapping[str, Any], fabric: Fabric, jobs: tuple[Job, ...] | None
) -> list[str]:
    out: list[str] = []

    def check(eid: Any, kind: Kind) -> None:
        if isinstance(eid, str):
            try:
                element_of_kind(fabric, eid, kind)
            except ScenarioError as err:
                out.append(str(err))

    for key, kind in _ELEMENT_ARGS.items():
        if args.get(key):
            check(args[key], kind)
    pair = args.get("between")
    if isinstance(pair, list | tuple):
        for gid in pair:
            check(gid, Kind.GPU)
    job = args.get("job")
    if isinstance(job, str) and jobs is not None and job not in {j.name for j in jobs}:
        names = [j.name for j in jobs]
        out.append(
            f"no job named {job!r}{did_you_mean(job, names)} (jobs: {', '.join(names) or 'none'})"
        )
    if observation in _BISECTION and fabric.n_sus < 2:
        out.append(f"bisection needs at least 2 SUs; fabric {fabric.name!r} has {fabric.n_sus}")
    if observation in _STORAGE and not fabric.indices_of_kind(Kind.STORAGE_SWITCH).size:
        out.append(
            f"{observation} needs a storage network, and fabric {fabric.name!r} has none "
            "(no storage switches); use a fabric with storage, or drop this expectation"
        )
    return out
