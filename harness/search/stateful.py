"""Stateful fault search: a hypothesis state machine over a fabric (public API).

Subclass :class:`FabricStateMachine`, say which fabric and jobs, and state the
invariants; hypothesis then injects and restores faults looking for a fault
set that breaks one.  For example::

    from hypothesis.stateful import invariant
    from harness.search.stateful import FabricStateMachine

    class SeedKeepsJobs(FabricStateMachine):
        fabric = "seed-a800"
        jobs = ("per-su",)
        fault_kinds = ("kill", "cut")

        @invariant()
        def no_job_lost(self) -> None:
            self.expect("jobs_lost", 0)

    TestSeedKeepsJobs = SeedKeepsJobs.TestCase

Invariants read the state through :meth:`FabricStateMachine.analysis` (an
:class:`~harness.invariants.analysis.Analysis`), :meth:`~FabricStateMachine.observe` or
:meth:`~FabricStateMachine.expect` (any observation of the scenario format);
``expectations = {"all_gpus_connected": True}`` declares simple ones without
code.  When an invariant fails, the shrunk fault set is printed (as a
hypothesis note) as a ready-to-commit scenario file, and written to the
directory given by ``save_reproducer=DIR`` or ``$HARNESS_SAVE_REPRODUCER``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from typing import ClassVar

from hypothesis import note
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import INVARIANT_MARKER
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule
from hypothesis.stateful import run_state_machine_as_test

from harness.backends.model import ModelBackend
from harness.errors import InvariantViolation
from harness.errors import ScenarioError
from harness.fabric.fabric_file import fabric_file_routing
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.resolve import FabricRef
from harness.fabric.resolve import build_fabric
from harness.fabric.routing import resolve as resolve_routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.invariants.analysis import Analysis
from harness.observations.expect import Expect
from harness.observations.observation import Context
from harness.observations.registry import observe
from harness.search.reproducer import FabricLike
from harness.search.reproducer import expectation_raw
from harness.search.reproducer import fabric_ref
from harness.search.reproducer import save
from harness.search.reproducer import save_dir
from harness.search.reproducer import scenario_yaml
from harness.search.strategies import faults

__all__ = ["FabricStateMachine", "Violation", "run"]

# Observations compared with the healthy fabric when an invariant fails without
# saying what it expected (a plain ``assert``).
FALLBACK_OBSERVATIONS: tuple[str, ...] = (
    "all_gpus_connected",
    "gpu_pairs_disconnected",
    "islands",
    "nics_isolated",
    "jobs_lost",
    "leaf_uplink_ratio",
    "bisection_ratio",
    "min_job_busbw_ratio",
)


@dataclass(frozen=True, slots=True)
class Violation:
    """What an :meth:`FabricStateMachine.expect` call expected and what it observed."""

    observation: str
    args: tuple[tuple[str, Any], ...]
    expected: Any
    observed: Any
    detail: str = ""

    def describe(self) -> str:
        """The violation in words: what was expected and what was observed."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.args)
        what = f"{self.observation}({args})" if args else self.observation
        text = f"{what}: expected {Expect.parse(self.expected).describe()}, got {self.observed!r}"
        return f"{text} ({self.detail})" if self.detail else text


def _job_spec(raw: JobSpec | str | Mapping[str, Any]) -> JobSpec:
    if isinstance(raw, JobSpec):
        return raw
    return JobSpec.parse(dict(raw) if isinstance(raw, Mapping) else raw)


class FabricStateMachine(RuleBasedStateMachine):
    """Inject and restore faults on a fabric; subclasses state the invariants.

    Class attributes (set them in the subclass):

    ``fabric``
        A preset name, a :class:`~harness.fabric.resolve.FabricRef` or a fabric
        built by a preset or :func:`harness.search.strategies.fabrics` (required).  A
        fabric built any other way is searched too, but its reproducer cannot
        name it, so none is written.
    ``jobs``
        Job specs: :class:`~harness.fabric.jobs.JobSpec`, ``"per-su"`` or the scenario
        mapping form (``{"name": "big", "nodes": "su0[1-2]/*"}``).
    ``fault_kinds``, ``correlated``
        What the ``inject`` rule draws (see :func:`harness.search.strategies.faults`).
    ``max_faults``
        At most this many faults applied at once.
    ``expectations``
        ``{observation: expectation}`` checked after every step, as scenario
        ``expect:`` steps are; values may be ``{ARGS..., "is": EXPECTATION}``.
    ``checkpoint``
        For the checkpoint observations.
    ``save_reproducer``
        Directory for reproducer files (also ``$HARNESS_SAVE_REPRODUCER``).
    """

    fabric: ClassVar[FabricLike | None] = None
    jobs: ClassVar[Sequence[JobSpec | str | Mapping[str, Any]]] = ()
    fault_kinds: ClassVar[Sequence[str | FaultKind]] = ("kill", "cut", "optic")
    correlated: ClassVar[bool] = True
    max_faults: ClassVar[int] = 3
    expectations: ClassVar[Mapping[str, Any]] = {}
    checkpoint: ClassVar[CheckpointSpec | None] = None
    save_reproducer: ClassVar[str | os.PathLike[str] | None] = None

    def __init__(self, *, save_reproducer: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        cls = type(self)
        if cls.fabric is None:
            msg = (
                f'{cls.__name__} needs a fabric: set `fabric = "seed-a800"` (a preset), '
                "a FabricRef, or a fabric from harness.search.strategies.fabrics()"
            )
            raise ScenarioError(msg)
        self.fabric_ref: FabricRef | None = None  # None: built by hand, no reproducer file
        if isinstance(cls.fabric, Fabric):
            self.built_fabric: Fabric = cls.fabric
            with contextlib.suppress(ScenarioError):
                self.fabric_ref = fabric_ref(cls.fabric)
        else:
            self.fabric_ref = fabric_ref(cls.fabric)
            self.built_fabric = build_fabric(self.fabric_ref)
        self.job_specs: tuple[JobSpec, ...] = tuple(_job_spec(j) for j in cls.jobs)
        self.resolved_jobs: tuple[Job, ...] = resolve_jobs(self.job_specs, self.built_fabric)
        self.context = Context(cls.checkpoint)
        self.reproducer_dir = save_dir(save_reproducer or cls.save_reproducer)
        self.applied: list[AppliedFault] = []
        self.last_violation: Violation | None = None
        # the fabric file's routing: (else the defaults), as the reproducer scenario runs it
        self.routing = resolve_routing(
            fabric_file_routing(self.fabric_ref.file)
            if self.fabric_ref is not None and self.fabric_ref.file is not None
            else None
        )
        self._backend = ModelBackend()
        self._backend.apply(self.built_fabric, routing=self.routing)
        self._healthy = Analysis(self.built_fabric, self._backend.observe(), self.resolved_jobs,
                                 routing=self.routing)  # fmt: skip
        self._current: Analysis | None = self._healthy
        self._faults: st.SearchStrategy[Fault] = faults(
            self.built_fabric, kinds=cls.fault_kinds, correlated=cls.correlated
        )

    # -- reading the state ---------------------------------------------------
    def analysis(self) -> Analysis:
        """The analysis of the current fault state (cached until it changes)."""
        if self._current is None:
            self._current = Analysis(
                self.built_fabric, self._backend.observe(), self.resolved_jobs,
                healthy=self._healthy, routing=self.routing,
            )  # fmt: skip
        return self._current

    @property
    def healthy(self) -> Analysis:
        """The analysis of the healthy fabric."""
        return self._healthy

    def observe(self, observation: str, **args: Any) -> Any:
        """The value of one named observation (as in a scenario ``expect:``)."""
        return observe(observation, self.analysis(), self.context, args).value

    def expect(self, observation: str, expected: Any, **args: Any) -> None:
        """Check one observation against an expectation; raise :class:`InvariantViolation`.

        ``expected`` is written as in a scenario file: ``0``, ``True``,
        ``">= 0.9"``, ``"0.5..1.0"`` or a list.
        """
        got = observe(observation, self.analysis(), self.context, args)
        if not Expect.parse(expected).check(got.value):
            self.last_violation = Violation(
                observation, tuple(args.items()), expected, got.value, got.detail
            )
            raise InvariantViolation(self.last_violation.describe())

    # -- rules -----------------------------------------------------------------
    @precondition(lambda self: len(self.applied) < self.max_faults)
    @rule(data=st.data())
    def inject(self, data: st.DataObject) -> None:
        """Inject one drawn fault (a single target or a correlated group)."""
        fault = data.draw(self._faults, label="fault")
        applied = fault.resolve(self.built_fabric)
        self._backend.inject(applied)
        self.applied.append(applied)
        self._current = None
        note(f"injected: {applied.describe(self.built_fabric)}")

    @precondition(lambda self: bool(self.applied))
    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        """Revert one applied fault."""
        i = data.draw(st.integers(0, len(self.applied) - 1), label="applied fault #")
        applied = self.applied.pop(i)
        self._backend.revert(applied)
        self._current = None
        note(f"restored: {applied.describe(self.built_fabric)}")

    @precondition(lambda self: len(self.applied) > 1)
    @rule()
    def restore_all(self) -> None:
        """Revert every applied fault, newest first."""
        while self.applied:
            self._backend.revert(self.applied.pop())
        self._current = None

    @invariant()
    def harness_expectations(self) -> None:
        """The class's ``expectations`` mapping, checked after every step."""
        for name, raw in self.expectations.items():
            if isinstance(raw, Mapping) and "is" in raw:
                args = {k: v for k, v in raw.items() if k != "is"}
                self.expect(name, raw["is"], **args)
            else:
                self.expect(name, raw)

    # -- failure reporting -----------------------------------------------------
    def _failed_invariant(self, err: BaseException) -> str | None:
        """The name of the invariant of this machine that raised ``err``, if one did."""
        tb: TracebackType | None = err.__traceback__
        cls = type(self)
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_locals.get("self") is self:
                name = frame.f_code.co_name
                attr = getattr(cls, name, None)
                if attr is not None and getattr(attr, INVARIANT_MARKER, None) is not None:
                    return name
            tb = tb.tb_next
        return None

    def _fallback_expectations(self) -> dict[str, Any]:
        """Observations that differ from the healthy fabric, expecting the healthy value."""
        out: dict[str, Any] = {}
        a, h = self.analysis(), self._healthy
        for name in FALLBACK_OBSERVATIONS:
            try:
                now = observe(name, a, self.context).value
                base = observe(name, h, self.context).value
            except ScenarioError:
                continue  # not defined for this fabric (no jobs, one SU...)
            if not Expect.parse(_plain(base)).check(_plain(now)):
                out[name] = _plain(base)
        return out

    def reproducer(self, invariant_name: str, err: BaseException) -> str:
        """The current fault set as a scenario file that fails as ``invariant_name`` did."""
        cls = type(self)
        v = self.last_violation
        if v is not None and isinstance(err, InvariantViolation):
            expect = {v.observation: expectation_raw(v.observation, v.expected, dict(v.args))}
            what = v.describe()
        else:
            expect = self._fallback_expectations() or {
                "all_gpus_connected": _plain(self.observe("all_gpus_connected"))
            }
            lines = str(err).strip().splitlines() or [type(err).__name__]
            what = (
                f"A plain assertion failed ({lines[0][:200]}); the expect step lists the "
                "observations that differ from the healthy fabric"
            )
        faults_text = "; ".join(a.describe(self.built_fabric) for a in self.applied) or "none"
        description = (
            f"Found by hypothesis: {cls.__name__}.{invariant_name} fails after these faults: "
            f"{faults_text}. {what}. This scenario fails until the fabric, the jobs or the "
            "invariant is fixed."
        )
        header = (
            f"Reproducer for {cls.__module__}.{cls.__qualname__}.{invariant_name}, "
            "written by harness.search.stateful.\nCommit it under scenarios/ as a regression test."
        )
        if self.fabric_ref is None:
            return (
                f"# No reproducer file: {description}\n# Fabric {self.built_fabric.name!r} was "
                "built by hand; set `fabric` to a preset name or a FabricRef to get one.\n"
            )
        return scenario_yaml(
            name=f"{cls.__name__}.{invariant_name}",
            description=description,
            fabric=self.fabric_ref,
            faults=self.applied,
            expect=expect,
            jobs=self.job_specs,
            tags=("reproducer", "hypothesis"),
            checkpoint=cls.checkpoint,
            header=header,
        )

    def teardown(self) -> None:
        """Print (and save) a reproducer when an invariant of this machine failed."""
        try:
            err = sys.exc_info()[1]
            name = self._failed_invariant(err) if err is not None else None
            if err is not None and name is not None and currently_in_test_context():
                text = self.reproducer(name, err)
                note(f"Reproducer scenario ({len(self.applied)} fault(s)):\n{text}")
                final = current_build_context().is_final
                if self.reproducer_dir is not None and self.fabric_ref is not None and final:
                    path = save(text, self.reproducer_dir, f"{type(self).__name__}.{name}")
                    note(f"Reproducer written to {path}")
        finally:
            self._backend.close()


def _plain(value: Any) -> Any:
    """Observation values as YAML-friendly scalars and lists."""
    if isinstance(value, tuple):
        return list(value)
    return value


def run(
    machine: type[FabricStateMachine],
    *,
    settings: Settings | None = None,
    save_reproducer: str | os.PathLike[str] | None = None,
) -> None:
    """Run a :class:`FabricStateMachine` subclass as a test (raises on a violation).

    ``save_reproducer`` is the directory the reproducer scenario goes to.
    """

    def factory() -> FabricStateMachine:
        return machine(save_reproducer=save_reproducer)

    # Typed differently across hypothesis releases (a factory is accepted at run time).
    runner: Any = run_state_machine_as_test
    runner(factory, settings=settings)
