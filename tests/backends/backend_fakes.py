"""Test-only backends: the model, but lying about one NIC, or able to do less.

``LyingBackend`` measures a wrong answer on purpose (packets to and from one
NIC are lost), so the runner's preflight and mismatch detection can be shown
to work without root.  ``LimitedBackend`` cannot kill GPUs and measures no
flows, to show that unsupported faults skip a scenario.  This module is also a
backend module as the registry expects (``unavailable()``, ``create()``), so a
test can register it under a name.
"""

from __future__ import annotations

import dataclasses

from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.model import ModelBackend
from harness.backends.model_measure import cable_kinds
from harness.backends.protocol import Capabilities
from harness.fabric.model import Kind
from harness.faults.fault import AppliedFault


class LyingBackend(ModelBackend):
    """The model backend, except that probes to or from ``nic`` fail once ``after``
    faults are applied (``after=0``: from the start, which the preflight must catch)."""

    name = "lying"

    def __init__(self, nic: str, after: int = 0) -> None:
        super().__init__()
        self.nic = nic
        self.after = after
        self.closed = False

    def measure(self, plan: MeasurePlan) -> Measurements:
        m = super().measure(plan)
        if len(self.state.applied) < self.after:
            return m
        probes = tuple(
            dataclasses.replace(p, ok=False) if self.nic in (p.src, p.dst) else p for p in m.probes
        )
        return dataclasses.replace(m, probes=probes)

    def close(self) -> None:
        self.closed = True
        super().close()


class LimitedBackend(ModelBackend):
    """Kills switches, servers and NICs, cuts cables; measures probes, jobs and links."""

    def __init__(self, name: str = "limited") -> None:
        super().__init__()
        self.name = name
        self.injected = 0
        kinds = {Kind.NODE, Kind.NIC, Kind.LEAF, Kind.SPINE, Kind.CORE}
        self.capabilities = Capabilities(
            frozenset({"kill", "cut"}),
            frozenset(k.label for k in kinds),
            cable_kinds(),
            frozenset({"probes", "jobs", "links"}),
        )

    def inject(self, fault: AppliedFault) -> None:
        self.injected += 1
        super().inject(fault)


def unavailable() -> str | None:
    return None


def create() -> LimitedBackend:
    return LimitedBackend("netns")
