"""The backend protocol: how a fabric is realized, broken and measured.

Every backend (``model``: in memory; ``netns``: Linux network namespaces with
real routing and traffic; ``ibsim``: an InfiniBand simulator routed by a real
OpenSM; ``docker``: containers as servers) implements :class:`Backend`.  The
runner only ever talks to this protocol, so adding a backend changes no
scenario and no observation.

A backend **measures, it never predicts or judges**.  The runner computes the
prediction from the fault state itself (pure, :mod:`harness.invariants.analysis`), asks
the backend to measure what the scenario's expectations need
(:class:`~harness.backends.measurement.MeasurePlan`), and compares: a disagreement is a
*mismatch*, a finding of its own (see ``docs/backends.md``).

Life cycle (a transaction, as pyroute2's ``Transaction``)::

    with backend:                          # __enter__; close() on the way out, always
        backend.apply(fabric, jobs, routing=routing)  # realize it, start the jobs
        backend.settle(timeout)            # wait for the control plane -> seconds
        backend.measure(preflight_plan)    # the healthy fabric, checked against the model
        backend.inject(applied_fault)      # break something (the runner records it first)
        backend.settle(timeout)            # routing converges around it -> seconds
        backend.measure(plan)              # -> Measurements (probes, paths, flows, jobs, links)
        backend.wait(seconds)              # time passes (a `wait:` step); jobs run on
        backend.restart(job_names)         # a `restart:` step: crashed jobs start again
        backend.revert(applied_fault)      # undo it; the runner reverts in reverse order
    # __exit__ -> close(): reverts what is left and removes everything it created

Rules every backend keeps (the conformance suite, ``tests/backends``, checks them):

* ``capabilities`` is honest: a fault kind, target kind or measurement it lists
  works; one it does not list is never attempted (the runner skips the
  scenario as "not supported on BACKEND" before anything is injected).
* ``inject`` raises :class:`~harness.errors.BackendError` when the environment
  fails, and when the fault changed nothing (never a silent pass).
* ``revert`` undoes exactly that fault; faults are reverted in reverse order.
* ``measure`` answers every item of the plan, keyed by the fabric's ids, and
  nothing about faults it was not told of.
* ``close`` is idempotent and safe after a failed ``apply``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Literal
from typing import Protocol
from typing import get_args
from typing import runtime_checkable

from harness.backends import BACKENDS
from harness.backends.measurement import MEASUREMENT_KINDS
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import CONTROLS
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind

BackendName = Literal["model", "netns", "ibsim", "docker"]
assert get_args(BackendName) == BACKENDS, "BackendName and harness.backends.REGISTRY differ"


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do: fault kinds, what they may hit, what it measures.

    ``faults``: fault kind names (``kill``, ``cut``...).  ``elements``: element
    kinds it realizes (``Kind.label``: ``leaf``, ``nic``...), so a ``kill`` or
    ``drain`` of anything else is unsupported; ``links``: link kinds it
    realizes (``LinkKind.label``), likewise for ``cut``/``optic``/``degrade``.
    ``measurements``: kinds from :data:`~harness.backends.measurement.MEASUREMENT_KINDS`.
    ``routing``: the control planes it runs (``routing: {control: ...}``, see
    :mod:`harness.fabric.routing`); a scenario asking for another one is skipped.
    ``why_not``: (fault kind, why this backend cannot inject it) for kinds it leaves
    out on purpose, said with the refusal.

    >>> from harness.fabric import preset
    >>> from harness.faults.fault import Fault
    >>> f = preset("seed-a800")
    >>> caps = Capabilities(frozenset({"kill"}), frozenset({"spine"}), frozenset(), frozenset())
    >>> caps.unsupported(Fault.parse({"kill": "spine-01"}).resolve(f), f) is None
    True
    >>> caps.unsupported(Fault.parse({"kill": "su01/node01/gpu0"}).resolve(f), f)
    'kill of a gpu (su01/node01/gpu0)'
    >>> none = Capabilities(frozenset(), frozenset(), frozenset(), frozenset(),
    ...                     why_not=(("kill", "nothing here can die"),))
    >>> none.unsupported(Fault.parse({"kill": "spine-01"}).resolve(f), f)
    "fault kind 'kill' (nothing here can die)"
    """

    faults: frozenset[str]
    elements: frozenset[str]
    links: frozenset[str]
    measurements: frozenset[str]
    routing: frozenset[str] = frozenset({"sm"})
    why_not: tuple[tuple[str, str], ...] = ()

    @classmethod
    def everything(cls) -> Capabilities:
        """Every fault on every element and link, every measurement (the model) but
        ``traffic``: the model predicts a collective's bus bandwidth, it moves no packets."""
        return cls(
            frozenset(k.value for k in FaultKind),
            frozenset(k.label for k in Kind),
            frozenset(k.label for k in LinkKind),
            frozenset(MEASUREMENT_KINDS) - {"traffic"},
            frozenset(CONTROLS),
        )

    def unsupported(self, applied: AppliedFault, fabric: Fabric) -> str | None:
        """Why this backend cannot inject ``applied`` (``None``: it can)."""
        kind = applied.fault.kind.value
        if kind not in self.faults:
            why = dict(self.why_not).get(kind)
            return f"fault kind {kind!r}" + (f" ({why})" if why else "")
        for e in applied.elements:
            label = Kind(int(fabric.kind[e])).label
            if label not in self.elements:
                return f"{kind} of a {label} ({fabric.ids[e]})"
        for link in applied.links:
            label = LinkKind(int(fabric.link_kind[link])).label
            if label not in self.links:
                return f"{kind} of a {label} link ({fabric.link_ids[link]})"
        return None


@runtime_checkable
class Backend(Protocol):
    """A place where a fabric is realized, faults are injected and things are measured."""

    name: str

    @property
    def capabilities(self) -> Capabilities:
        """What this backend can inject and measure (honest: see the module docstring)."""
        ...

    def apply(
        self, fabric: Fabric, jobs: Sequence[Job] = (), *, routing: Routing = DEFAULT_ROUTING
    ) -> None:
        """Realize the healthy fabric routed as ``routing`` says and start ``jobs``.

        The jobs run across the faults; ``routing.control`` is one of
        ``capabilities.routing``.
        """

    def inject(self, fault: AppliedFault) -> None:
        """Apply one resolved fault; raise BackendError if it fails or changes nothing."""

    def revert(self, fault: AppliedFault) -> None:
        """Undo one fault injected earlier."""

    def settle(self, timeout: float) -> float:
        """Wait until the control plane has converged; return the seconds it took.

        Raise BackendError if it has not settled within ``timeout`` seconds.
        """
        ...

    def measure(self, plan: MeasurePlan) -> Measurements:
        """Measure what ``plan`` names (every item of it), now."""
        ...

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass with the faults as they are (the jobs keep running).

        An emulated backend waits for real; the model moves its clock.
        """

    def restart(self, jobs: Sequence[str]) -> None:
        """Start the crashed jobs named again (a crashed job stays down until then)."""

    def close(self) -> None:
        """Revert every fault still applied, stop the jobs, remove everything created."""

    def __enter__(self) -> Backend: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
