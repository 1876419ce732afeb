"""The backend conformance suite: every backend available here keeps the protocol.

Parametrized over :func:`harness.backends.available_backends` -- the model
everywhere, ``netns`` (and the others) wherever they can run, which CI
arranges -- so a new backend is checked by registering it, nothing more.
The tests check what ``docs/backends.md`` promises on a small two-tier fabric
(2 SUs x 2 servers, 8 leaves, 2 spines, storage): the life cycle, honest
capabilities (every fault kind it claims measures as the model predicts and
reverts; every one it does not claim skips the scenario), measurements keyed by
the fabric's own ids, and reverts in reverse order.

The fabric is realized once per backend case and shared by the tests that break
it (the ``up`` fixture), as FRR's topotests share a topology: after each test
whatever it left injected is reverted, crashed jobs are restarted, and the
healthy fabric is measured and compared with the model before the next test
starts (a failed check rebuilds it).  Only the life-cycle tests build their own.
All of a case's tests run in one xdist worker (``xdist_group``, with
``--dist loadgroup``), so the fabric is built once per run.
"""

from __future__ import annotations

import dataclasses
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
#: The uplink flows' seconds: a 4 s iperf3 test, which resolves every fault kind's flows
#: under both control planes (docs/netns.md "Flows").  Asked for since they were added, but
#: the union with the other plans (2 s by default) had made it 2 s.
FLOW_SECONDS = 1.0


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
    """A case's tests share one worker, where its fabric is built once (``up``); on a backend
    that measures flows with real TCP (``real_tcp``) the tests that measure flows
    (``measures_flows``) run alone (tests/backends/conftest.py, tests/support/alone.py)."""
    case = name if control == "sm" else f"{name}-{control}"
    marks = [pytest.mark.xdist_group(f"conformance-{case}")]
    return pytest.param(
        (name, control), id=case, marks=[*marks, pytest.mark.real_tcp] if flows else marks
    )


PARAMS_BY_CASE = [_case(*c) for c in CASES]


def _make(name: str, control: str) -> Backend:
    be = make_backend(name)
    return be if control == "sm" else Routed(be, Routing(control))


@pytest.fixture(params=PARAMS_BY_CASE)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """A new backend of the case, not applied yet: for the tests of the life cycle."""
    be = _make(*request.param)
    yield be
    be.close()


@pytest.fixture(scope="module", params=PARAMS_BY_CASE)
def live(request: pytest.FixtureRequest) -> Iterator[Shared]:
    """The case's conformance fabric, realized and settled once for the module."""
    shared = Shared(_make(*request.param), request.param)
    with shared:
        shared.build()
        yield shared


@pytest.fixture
def up(live: Shared) -> Iterator[Shared]:
    """The shared healthy fabric; afterwards put back and verified healthy (see the docstring)."""
    live.calls.clear()
    yield live
    live.reset()


def plan_for(a: Analysis, caps: Capabilities, *, flows: bool = True) -> MeasurePlan:
    """Every NIC, the traced path across SUs, the uplink flows, the jobs, every cable."""
    plan = MeasurePlan()
    if "probes" in caps.measurements:
        plan = plan | island_plan(a, MeasureOptions())
    if "paths" in caps.measurements:
        plan = plan | MeasurePlan(paths=(("su01/node01/nic0", "su02/node02/nic0"),))
    if flows and "flows" in caps.measurements:
        leaf = FABRIC.index["su01/leaf-r0"]
        plan = plan | MeasurePlan(flows=(uplink_flow_group(a, leaf),))
    if "jobs" in caps.measurements:
        plan = plan | MeasurePlan(jobs=tuple(j.name for j in JOBS))
    if "links" in caps.measurements:
        cables = FABRIC.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE).tolist()
        plan = plan | MeasurePlan(links=tuple(FABRIC.link_ids[x] for x in cables))
    if "losses" in caps.measurements:
        plan = plan | MeasurePlan(losses=UPLINK_ENDS)
    # set last: a union keeps the longest flow_seconds, and every plan has one (2 s by default)
    return dataclasses.replace(plan, flow_seconds=FLOW_SECONDS)


def analysis(state: FaultState) -> Analysis:
    return Analysis(FABRIC, Observation.from_state(state), JOBS)


def measure_and_compare(be: Backend, state: FaultState, *, flows: bool = True) -> Measurements:
    a = analysis(state)
    plan = plan_for(a, be.capabilities, flows=flows)
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


@pytest.mark.measures_flows
def test_the_healthy_fabric_measures_as_described(up: Shared) -> None:
    seconds = up.settle(SETTLE)
    assert isinstance(seconds, float)
    assert 0.0 <= seconds <= SETTLE
    m = up.check_healthy(again=True)
    assert m is not None
    # keyed by the fabric's own ids, and nothing that was not asked for
    plan = plan_for(analysis(FaultState.healthy(FABRIC)), up.capabilities)
    assert m.backend == up.name
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


@pytest.mark.measures_flows
@pytest.mark.parametrize("kind", list(FAULTS))
def test_every_claimed_fault_measures_as_predicted_and_reverts(up: Shared, kind: str) -> None:
    applied = _applied(FAULTS[kind])
    why = up.capabilities.unsupported(applied, FABRIC)
    if why is not None:  # not claimed: the runner must skip, never attempt it
        checks = ExpectStep((Expectation("jobs_lost", Expect.parse(0)),))
        sc = Scenario("unsupported", "d", REF, (InjectStep(Fault.parse(FAULTS[kind])), checks),
                      (JobSpec(per_su=True),), backends=(up.name,))  # fmt: skip
        with _make(*up.case) as fresh:  # the runner closes what it ran on
            result = run_scenario(sc, fresh)
        assert result.status == "skipped"
        assert result.error == f"not supported on {up.name}: {why}"
        return
    healthy = FaultState.healthy(FABRIC)
    up.check_healthy()  # measured unless nothing changed since the fabric last measured healthy
    up.inject(applied)
    up.settle(SETTLE)
    measure_and_compare(up, healthy.inject(applied))
    up.revert(applied)
    up.settle(SETTLE)
    up.restart([j.name for j in JOBS])  # a job the fault crashed stays down until then
    up.check_healthy()


def test_a_crashed_job_stays_down_until_restarted(up: Shared) -> None:
    plan = MeasurePlan(jobs=tuple(j.name for j in JOBS))
    if "jobs" not in up.capabilities.measurements:  # it must say so when asked
        with pytest.raises(BackendError):
            up.measure(plan)
        return
    leaf = _applied({"kill": "su01/leaf-r0"})
    if up.capabilities.unsupported(leaf, FABRIC) is not None:
        leaf = _applied({"cut": FABRIC.link_ids[_link(LinkKind.ACCESS)]})
    up.inject(leaf)
    up.settle(SETTLE)
    assert not up.measure(plan).job("su01").alive  # type: ignore[union-attr]
    up.revert(leaf)
    up.settle(SETTLE)
    back = up.measure(plan).job("su01")
    assert back is not None
    assert not back.alive, "a repaired fabric does not bring a crashed job back"
    up.restart(["su01"])
    up.settle(SETTLE)
    assert all(r.alive for r in up.measure(plan).jobs)


@pytest.mark.parametrize("target", KILLS)
def test_kills_it_claims_work_and_the_others_skip(up: Shared, target: str) -> None:
    applied = _applied({"kill": target})
    if up.capabilities.unsupported(applied, FABRIC) is not None:
        assert Kind(int(FABRIC.kind[applied.elements[0]])).label not in up.capabilities.elements
        return
    up.inject(applied)  # reverted after the test (``up``)
    up.settle(SETTLE)
    # flows are the fault tests' (every kind, spine kill included); without them this runs
    # beside other tests
    measure_and_compare(up, FaultState.healthy(FABRIC).inject(applied), flows=False)


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


class Shared(Recording):
    """The shared fabric of one backend case: knows what is injected, and puts it back.

    :meth:`reset` reverts what a test left injected (newest first), restarts the jobs
    that crashed, and measures the healthy fabric against the model (every measurement
    the backend has but flows, which the tests that measure them compare themselves).
    If any of that fails the fabric is rebuilt before the error is raised, so the next
    test starts healthy either way.

    :meth:`check_healthy` measures the healthy fabric with everything (flows too) and
    compares it with the model, unless it did so already and nothing was injected,
    reverted, restarted or rebuilt since (``verified``): a test that ends with the fabric
    measured healthy needs no :meth:`reset`, and the next one no new healthy measurement.
    """

    def __init__(self, inner: Backend, case: tuple[str, str]) -> None:
        super().__init__(inner)
        self.case = case  # (backend name, control plane)
        self.injected: list[AppliedFault] = []
        self.verified = False  # measured healthy, everything compared, since the last change

    def build(self) -> None:
        self.verified = False
        self.apply(FABRIC, JOBS)
        self.settle(SETTLE)

    def inject(self, fault: AppliedFault) -> None:
        self.verified = False
        super().inject(fault)
        self.injected.append(fault)

    def revert(self, fault: AppliedFault) -> None:
        self.verified = False
        super().revert(fault)
        self.injected = [f for f in self.injected if f is not fault]

    def restart(self, jobs: Sequence[str]) -> None:
        self.verified = False
        super().restart(jobs)

    def close(self) -> None:
        self.verified = False
        super().close()

    def check_healthy(self, *, again: bool = False) -> Measurements | None:
        """Measure the healthy fabric and compare (``None``: verified already, not measured)."""
        if self.verified and not again:
            return None
        assert not self.injected, "check_healthy with faults injected"
        m = measure_and_compare(self, FaultState.healthy(FABRIC))
        self.verified = True
        return m

    def reset(self) -> None:
        if self.verified and not self.injected:
            return  # the test ended measuring it healthy
        try:
            for fault in reversed(self.injected):
                self.revert(fault)
            self.settle(SETTLE)
            healthy = analysis(FaultState.healthy(FABRIC))
            plan = dataclasses.replace(plan_for(healthy, self.capabilities), flows=())
            if plan.jobs:
                crashed = [r.name for r in self.measure(MeasurePlan(jobs=plan.jobs)).jobs
                           if not r.alive]  # fmt: skip
                if crashed:
                    self.restart(crashed)
                    self.settle(SETTLE)
            m = self.measure(plan)
            assert m.missing(plan) == []
            assert disagreements(predict_measurements(healthy, plan), m) == [], (
                "the shared fabric is not healthy after the test's faults were reverted"
            )
        except BaseException:
            self.injected = []
            self.close()
            self.build()
            raise


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
