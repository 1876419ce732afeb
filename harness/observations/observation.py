"""What one observation is: its definition, the value observed, the inputs of its predict,
plan and measure functions, and the :class:`Family` that collects a family's definitions.

Each :class:`ObservationDef` names its arguments (for validation and the JSON
Schema), a ``predict`` function ``(Analysis, ctx, args) -> Observed`` (the
model's answer from the fault state) and, where a backend can measure it, a
:class:`MeasureDef`: a ``plan`` (what to measure, :mod:`harness.observations.plans`) and a
``measure`` function, pure, from the :class:`~harness.backends.measurement.Measurements`
to the observed value (``None`` when the measurements cannot say).  The families
(:mod:`harness.observations.connectivity` and its siblings) hold those functions;
:mod:`harness.observations.registry` gathers them into ``OBSERVATIONS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.fabric.jobs import CheckpointSpec
from harness.fabric.model import Fabric
from harness.invariants.analysis import Analysis
from harness.invariants.timeline import JobFate
from harness.observations.compare import agree
from harness.observations.plans import MeasureOptions


@dataclass(frozen=True, slots=True)
class Context:
    """Scenario-level inputs some observations need.

    ``fates``: each job's history so far (:mod:`harness.invariants.timeline`), when the
    caller keeps a clock (the runner does); without one a job is lost exactly
    when the fault state cuts it off.
    """

    checkpoint: CheckpointSpec | None = None
    fates: tuple[JobFate, ...] | None = None


@dataclass(frozen=True, slots=True)
class Observed:
    """A value plus what it is about (shown when an expectation fails)."""

    value: Any
    detail: str = ""
    involved: tuple[str, ...] = ()
    samples: int = 0  # a measured fraction: the trials it was counted over (0: exact)


ArgType = type | tuple[type, ...]
ObsFn = Callable[[Analysis, Context, Mapping[str, Any]], Observed]


@dataclass(frozen=True, slots=True)
class PlanInput:
    """What a plan is made from: the prediction for the step, the arguments, the options."""

    analysis: Analysis
    args: Mapping[str, Any]
    options: MeasureOptions


@dataclass(frozen=True, slots=True)
class MeasureInput:
    """What a measure function reads: this step's measurements, the preflight's, its plan."""

    measured: Measurements
    baseline: Measurements  # the healthy fabric, measured at preflight
    plan: MeasurePlan  # what this observation asked for (a part of what was measured)
    fabric: Fabric
    args: Mapping[str, Any]


PlanFn = Callable[[PlanInput], MeasurePlan]
MeasureFn = Callable[[MeasureInput], "Observed | None"]
AgreeFn = Callable[[Any, "Observed"], bool]


@dataclass(frozen=True, slots=True)
class MeasureDef:
    """How to measure an observation: what to ask the backend, and how to read it.

    ``tolerance``: the relative difference between prediction and measurement
    still counted as agreement (0: exact; rates measured on shaped links are
    not exact).  ``agree``, when set, decides instead, from the prediction and
    the measured :class:`Observed` (a counted fraction: a binomial test).
    """

    plan: PlanFn
    measure: MeasureFn
    tolerance: float = 0.0
    agree: AgreeFn | None = None

    def agrees(self, predicted: Any, got: Observed) -> bool:
        """Whether the measurement ``got`` is the prediction (within what it allows)."""
        if self.agree is not None:
            return self.agree(predicted, got)
        return agree(predicted, got.value, self.tolerance)


@dataclass(frozen=True, slots=True)
class ObservationDef:
    """One observation: its name, what it means, how the model predicts it and its arguments.

    ``measure`` says how a backend measures it (None: it stays in the model); ``value_type`` and
    ``value_range`` say what its values can be.
    """

    name: str
    doc: str
    predict: ObsFn
    args: Mapping[str, ArgType] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    value_type: str = "number"  # number | integer | boolean | string | list
    measure: MeasureDef | None = None
    value_range: tuple[float, float] = (-math.inf, math.inf)  # what a number can be (VALUE_RANGES)


class Family:
    """The observations one module defines, in the order it defines them.

    ``predicts`` registers an observation's predict function; ``measures`` adds,
    to an observation this family predicts, how a backend measures it.  A
    family only collects: :mod:`harness.observations.registry` lists every
    family and builds ``OBSERVATIONS`` from them, so the registry does not
    depend on which module happens to be imported first.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.definitions: dict[str, ObservationDef] = {}

    def predicts(
        self,
        name: str,
        doc: str,
        args: Mapping[str, ArgType] | None = None,
        required: tuple[str, ...] = (),
        value_type: str = "number",
    ) -> Callable[[ObsFn], ObsFn]:
        """Register ``fn`` as the prediction of observation ``name``."""

        def deco(fn: ObsFn) -> ObsFn:
            self.definitions[name] = ObservationDef(name, doc, fn, args or {}, required, value_type)
            return fn

        return deco

    def measures(
        self, name: str, plan: PlanFn, tolerance: float = 0.0, agree_fn: AgreeFn | None = None
    ) -> Callable[[MeasureFn], MeasureFn]:
        """Register ``fn`` as the measurement of observation ``name`` (predicted here).

        A measure function reads only the measurements (and the fabric's static
        wiring); ``None`` means the measurements cannot answer (the report then
        shows the prediction only).
        """

        def deco(fn: MeasureFn) -> MeasureFn:
            d = self.definitions[name]
            self.definitions[name] = replace(d, measure=MeasureDef(plan, fn, tolerance, agree_fn))
            return fn

        return deco
