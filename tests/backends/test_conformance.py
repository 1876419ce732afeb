"""The backend conformance suite: every backend available here keeps the protocol.

Parametrized over :func:`harness.backends.available_backends` -- the model
everywhere, ``netns`` (and the others) wherever they can run, which CI
arranges -- so a new backend is checked by registering it, nothing more.
Each test builds a small two-tier fabric (2 SUs x 2 servers, 8 leaves, 2
spines, storage) and checks what ``docs/backends.md`` promises: the life
cycle, honest capabilities (every fault kind it claims measures as the model
predicts and reverts; every one it does not claim skips the scenario),
measurements keyed by the fabric's own ids, and reverts in reverse order.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import pytest

from harness.backends import available_backends
from harness.backends import make_backend
from harness.backends.measurement import MEASUREMENT_KINDS
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.model_measure import predict_measurements
from harness.backends.protocol import Backend
from harness.backends.protocol import Capabilities
from harness.errors import BackendError
from harness.fabric.generators import two_tier
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.resolve import FabricRef
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import FAULT_KINDS
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.compare import disagreements
from harness.observations.expect import Expect
from harness.observations.plans import MeasureOptions
from harness.observations.plans import island_plan
from harness.observations.plans import uplink_flow_group
from harness.run.scenario import run_scenario
from harness.scenario.model import Expectation
from harness.scenario.model import ExpectStep
from harness.scenario.model import InjectStep
from harness.scenario.model import Scenario

BACKENDS = available_backends()
PARAMS = {"sus": 2, "nodes_per_su": 2, "node": "a800", "spines": 2, "leaf_radix": 8,
          "storage": True, "name": "conformance"}  # fmt: skip
FABRIC = two_tier(**PARAMS)  # type: ignore[arg-type]
REF = FabricRef(generator="two-tier", params=tuple(sorted(PARAMS.items())))
JOBS = resolve_jobs([JobSpec(per_su=True, timeout=5.0)], FABRIC)  # a lost job fails in 5 s
SETTLE = 120.0


def _link(kind: LinkKind) -> int:
    return int(FABRIC.links_of_kind(kind)[0])


UPLINK = FABRIC.link_ids[_link(LinkKind.LEAF_SPINE)]
#: One representative fault of each kind on the conformance fabric.
FAULTS: dict[str, Any] = {
    "kill": {"kill": "spine-01"},
    "drain": {"drain": "spine-02"},
    "cut": {"cut": UPLINK},
    "optic": {"optic": FABRIC.port_id(_link(LinkKind.ACCESS), 1)},
    "degrade": {"degrade": {"target": UPLINK, "fraction": 0.5}},
    "bond-member": {"bond-member": "su01/node01/stor0"},
    "flaky": {"flaky": {"target": UPLINK, "loss": "10%", "from": UPLINK.split(":")[0]}},
}
#: Both directions of the flaky uplink (a backend that counts loss counts both).
UPLINK_ENDS = tuple((UPLINK, end.split(":")[0]) for end in UPLINK.split("--"))
#: Further kill targets: a backend may kill some element kinds and not others.
KILLS = ["su01/leaf-r0", "su01/node01", "su01/node01/nic0", "su01/node01/gpu0"]


#: (backend, control plane, whether it measures flows): every backend with ``routing: sm``,
#: and each emulated one with every other control plane it runs (``netns`` with ``bgp``:
#: FRR on every switch).
CASES = [
    (name, control, "flows" in caps.measurements and name != "model")
    for name, caps in ((n, make_backend(n).capabilities) for n in BACKENDS)
    for control in sorted(caps.routing)
    if control == "sm" or name != "model"
]


def _case(name: str, control: str, flows: bool) -> Any:
    """A backend that measures flows with real TCP runs its tests alone (tests/conftest.py)."""
    return pytest.param(
        (name, control),
        id=name if control == "sm" else f"{name}-{control}",
        marks=[pytest.mark.alone] if flows else [],
    )


@pytest.fixture(params=[_case(*c) for c in CASES])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    name, control = request.param
    be = make_backend(name)
    if control != "sm":
        be = Routed(be, Routing(control))
    yield be
    be.close()


def plan_for(a: Analysis, caps: Capabilities) -> MeasurePlan:
    """Every NIC, the traced path across SUs, the uplink flows, the jobs, every cable."""
    plan = MeasurePlan()
    if "probes" in caps.measurements:
        plan = plan | island_plan(a, MeasureOptions())
    if "paths" in caps.measurements:
        plan = plan | MeasurePlan(paths=(("su01/node01/nic0", "su02/node02/nic0"),))
    if "flows" in caps.measurements:
        leaf = FABRIC.index["su01/leaf-r0"]
        plan = plan | MeasurePlan(flows=(uplink_flow_group(a, leaf),), flow_seconds=1.0)
    if "jobs" in caps.measurements:
        plan = plan | MeasurePlan(jobs=tuple(j.name for j in JOBS))
    if "links" in caps.measurements:
        cables = FABRIC.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE).tolist()
        plan = plan | MeasurePlan(links=tuple(FABRIC.link_ids[x] for x in cables))
    if "losses" in caps.measurements:
        plan = plan | MeasurePlan(losses=UPLINK_ENDS)
    return plan


def analysis(state: FaultState) -> Analysis:
    return Analysis(FABRIC, Observation.from_state(state), JOBS)


def measure_and_compare(be: Backend, state: FaultState) -> Measurements:
    a = analysis(state)
    plan = plan_for(a, be.capabilities)
    m = be.measure(plan)
    assert m.missing(plan) == []
    assert disagreements(predict_measurements(a, plan), m) == []
    return m


# -- the protocol itself ---------------------------------------------------------------------
def test_is_a_backend_with_honest_capability_names(backend: Backend) -> None:
    assert isinstance(backend, Backend)
    assert backend.name in BACKENDS
    caps = backend.capabilities
    assert isinstance(caps, Capabilities)
    assert caps.faults <= set(FAULT_KINDS)
    assert caps.elements <= {k.label for k in Kind}
    assert caps.links <= {k.label for k in LinkKind}
    assert caps.measurements <= set(MEASUREMENT_KINDS)
    assert caps.faults, "a backend that injects nothing tests nothing"
    assert "probes" in caps.measurements, "preflight needs probes"


def test_close_is_safe_before_apply_and_twice(backend: Backend) -> None:
    backend.close()
    with backend as be:
        be.apply(FABRIC, JOBS)
    backend.close()


def test_the_healthy_fabric_measures_as_described(backend: Backend) -> None:
    with backend as be:
        be.apply(FABRIC, JOBS)
        seconds = be.settle(SETTLE)
        assert isinstance(seconds, float)
        assert 0.0 <= seconds <= SETTLE
        m = measure_and_compare(be, FaultState.healthy(FABRIC))
    # keyed by the fabric's own ids, and nothing that was not asked for
    plan = plan_for(analysis(FaultState.healthy(FABRIC)), backend.capabilities)
    assert m.backend == backend.name
    asked = set(plan.probes)
    assert {(p.src, p.dst) for p in m.probes} <= asked
    for p in m.probes:
        assert FABRIC.kind[FABRIC.index[p.src]] == int(Kind.NIC)
        assert p.rtt_ms is None or p.rtt_ms >= 0
    for t in m.paths:
        assert all(
            FABRIC.kind[FABRIC.index[h]] in (int(Kind.LEAF), int(Kind.SPINE)) for h in t.hops
        )
    assert {x.link for x in m.links} == set(plan.links)
    assert {j.name for j in m.jobs} == set(plan.jobs)
    assert all(f.gbps >= 0 and f.seconds >= 0 for f in m.flows)
    assert m.scale > 0


def _applied(raw: Any) -> AppliedFault:
    return Fault.parse(raw).resolve(FABRIC)


@pytest.mark.parametrize("kind", list(FAULTS))
def test_every_claimed_fault_measures_as_predicted_and_reverts(backend: Backend, kind: str) -> None:
    applied = _applied(FAULTS[kind])
    why = backend.capabilities.unsupported(applied, FABRIC)
    if why is not None:  # not claimed: the runner must skip, never attempt it
        checks = ExpectStep((Expectation("jobs_lost", Expect.parse(0)),))
        sc = Scenario("unsupported", "d", REF, (InjectStep(Fault.parse(FAULTS[kind])), checks),
                      (JobSpec(per_su=True),), backends=(backend.name,))  # fmt: skip
        result = run_scenario(sc, backend)
        assert result.status == "skipped"
        assert result.error == f"not supported on {backend.name}: {why}"
        return
    with backend as be:
        be.apply(FABRIC, JOBS)
        be.settle(SETTLE)
        healthy = FaultState.healthy(FABRIC)
        measure_and_compare(be, healthy)
        be.inject(applied)
        be.settle(SETTLE)
        measure_and_compare(be, healthy.inject(applied))
        be.revert(applied)
        be.settle(SETTLE)
        be.restart([j.name for j in JOBS])  # a job the fault crashed stays down until then
        measure_and_compare(be, healthy)


def test_a_crashed_job_stays_down_until_restarted(backend: Backend) -> None:
    plan = MeasurePlan(jobs=tuple(j.name for j in JOBS))
    if "jobs" not in backend.capabilities.measurements:  # it must say so when asked
        with backend as be:
            be.apply(FABRIC, JOBS)
            be.settle(SETTLE)
            with pytest.raises(BackendError):
                be.measure(plan)
        return
    leaf = _applied({"kill": "su01/leaf-r0"})
    if backend.capabilities.unsupported(leaf, FABRIC) is not None:
        leaf = _applied({"cut": FABRIC.link_ids[_link(LinkKind.ACCESS)]})
    with backend as be:
        be.apply(FABRIC, JOBS)
        be.settle(SETTLE)
        be.inject(leaf)
        be.settle(SETTLE)
        assert not be.measure(plan).job("su01").alive  # type: ignore[union-attr]
        be.revert(leaf)
        be.settle(SETTLE)
        back = be.measure(plan).job("su01")
        assert back is not None
        assert not back.alive, "a repaired fabric does not bring a crashed job back"
        be.restart(["su01"])
        be.settle(SETTLE)
        assert all(r.alive for r in be.measure(plan).jobs)


@pytest.mark.parametrize("target", KILLS)
def test_kills_it_claims_work_and_the_others_skip(backend: Backend, target: str) -> None:
    applied = _applied({"kill": target})
    if backend.capabilities.unsupported(applied, FABRIC) is not None:
        assert (
            Kind(int(FABRIC.kind[applied.elements[0]])).label not in backend.capabilities.elements
        )
        return
    with backend as be:
        be.apply(FABRIC, JOBS)
        be.settle(SETTLE)
        be.inject(applied)
        be.settle(SETTLE)
        measure_and_compare(be, FaultState.healthy(FABRIC).inject(applied))


class Recording:
    """Wraps a backend and records the calls the runner makes."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[str] = []

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    def apply(
        self, fabric: Fabric, jobs: Sequence[Job] = (), *, routing: Routing = DEFAULT_ROUTING
    ) -> None:
        self.calls.append("apply")
        self.inner.apply(fabric, jobs, routing=routing)

    def inject(self, fault: AppliedFault) -> None:
        self.calls.append(f"inject {fault.fault.describe()}")
        self.inner.inject(fault)

    def revert(self, fault: AppliedFault) -> None:
        self.calls.append(f"revert {fault.fault.describe()}")
        self.inner.revert(fault)

    def settle(self, timeout: float) -> float:
        return self.inner.settle(timeout)

    def measure(self, plan: MeasurePlan) -> Measurements:
        self.calls.append("measure")
        return self.inner.measure(plan)

    def wait(self, seconds: float) -> None:
        self.calls.append(f"wait {seconds:g}")
        self.inner.wait(seconds)

    def restart(self, jobs: Sequence[str]) -> None:
        self.calls.append(f"restart {', '.join(jobs)}")
        self.inner.restart(jobs)

    def close(self) -> None:
        self.calls.append("close")
        self.inner.close()

    def __enter__(self) -> Recording:
        self.inner.__enter__()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Routed(Recording):
    """A backend that realizes every fabric with one control plane (``routing:``)."""

    def __init__(self, inner: Backend, routing: Routing) -> None:
        super().__init__(inner)
        self.routing = routing

    def apply(
        self, fabric: Fabric, jobs: Sequence[Job] = (), *, routing: Routing = DEFAULT_ROUTING
    ) -> None:
        super().apply(fabric, jobs, routing=self.routing)


def test_the_runner_reverts_in_reverse_order(backend: Backend) -> None:
    supported = [
        raw for raw in FAULTS.values()
        if backend.capabilities.unsupported(_applied(raw), FABRIC) is None
    ][:2]  # fmt: skip
    assert supported, "the backend supports none of the representative faults"
    checks = ExpectStep((Expectation("islands", Expect.parse(1)),))
    steps = tuple(InjectStep(Fault.parse(raw)) for raw in supported)
    sc = Scenario("order", "d", REF, (*steps, checks), (JobSpec(per_su=True),),
                  backends=(backend.name,))  # fmt: skip
    rec = Recording(backend)
    result = run_scenario(sc, rec)
    assert result.status in ("passed", "failed"), result.failures  # never a mismatch
    names = [Fault.parse(raw).describe() for raw in supported]
    injects = [f"inject {n}" for n in names]
    reverts = [f"revert {n}" for n in reversed(names)]
    assert [c for c in rec.calls if c.startswith(("inject", "revert"))] == injects + reverts
    assert rec.calls[0] == "apply"
    assert rec.calls[-1] == "close"
    assert "measure" in rec.calls  # the preflight and the expect step
