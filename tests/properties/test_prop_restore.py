"""Restoring every fault returns the healthy state: arrays equal, every observation equal.

Fault programs (inject/restore sequences) run on the model backend; after every step the
state equals one built from scratch from the faults still applied (history does not
matter), and after restoring the rest everything is as healthy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.backends.model import ModelBackend
from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.checks import OBSERVATIONS
from harness.observations.checks import CheckpointSpec
from harness.observations.checks import Context
from harness.observations.checks import observe
from harness.search import strategies as hst

ALL_KINDS = ("kill", "drain", "cut", "optic", "degrade", "bond-member")
CTX = Context(CheckpointSpec(size_gb=64.0, sharded=True, interval_s=600.0))


def args_for(name: str, f: Fabric) -> dict[str, Any]:
    if "between" in OBSERVATIONS[name].required:
        return {"between": [f.ids[int(f.gpus[0])], f.ids[int(f.gpus[-1])]]}
    return {}


def every_observation(a: Analysis) -> dict[str, Any]:
    """Every registered observation, with its default arguments (and PXN where it has one)."""
    out: dict[str, Any] = {}
    for name, d in OBSERVATIONS.items():
        variants = [args_for(name, a.fabric)]
        if "pxn" in d.args:
            variants.append({**variants[0], "pxn": True})
        for args in variants:
            key = f"{name}{sorted(args.items())}"
            try:
                got = observe(name, a, CTX, args)
                out[key] = (got.value, got.detail, got.involved)
            except ScenarioError as err:  # e.g. bisection of a one-SU fabric
                out[key] = ("error", str(err))
    return out


def arrays_equal(x: Observation, y: Observation) -> bool:
    return np.array_equal(x.element_up, y.element_up) and np.array_equal(
        x.link_capacity, y.link_capacity
    )


@st.composite
def fabric_and_program(draw: st.DrawFn) -> tuple[Fabric, list[hst.ProgramStep]]:
    f = draw(hst.fabrics(storage=draw(st.booleans())), label="fabric")
    return f, draw(hst.fault_programs(f, kinds=ALL_KINDS, max_steps=8), label="program")


@settings(max_examples=40, deadline=None)
@given(case=fabric_and_program(), order=st.randoms(use_true_random=False))
def test_restoring_every_fault_returns_the_healthy_state(
    case: tuple[Fabric, list[hst.ProgramStep]], order: Any
) -> None:
    f, program = case
    jobs = resolve_jobs([JobSpec(per_su=True), JobSpec(name="all", nodes=("*",))], f)
    backend = ModelBackend()
    backend.apply(f)
    healthy_obs = backend.observe()
    healthy = every_observation(Analysis(f, healthy_obs, jobs))
    applied: list[AppliedFault] = []
    for step in program:
        if step.op == "inject":
            assert step.fault is not None
            a = step.fault.resolve(f)
            backend.inject(a)
            applied.append(a)
        else:
            backend.revert(applied.pop(step.index))
        # the state depends only on the faults applied, not on the way there
        fresh = FaultState.healthy(f)
        for a in applied:
            fresh = fresh.inject(a)
        assert arrays_equal(backend.observe(), Observation.from_state(fresh))
    order.shuffle(applied)
    for a in applied:
        backend.revert(a)
    assert backend.state.is_healthy
    obs = backend.observe()
    assert arrays_equal(obs, healthy_obs)
    assert every_observation(Analysis(f, obs, jobs)) == healthy


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_reverting_a_fault_set_in_any_order_is_healthy(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(), label="fabric")
    faults = data.draw(hst.fault_sets(f, kinds=ALL_KINDS, max_size=6), label="faults")
    s = FaultState.healthy(f)
    applied = [fault.resolve(f) for fault in faults]
    for a in applied:
        s = s.inject(a)
    for a in data.draw(st.permutations(applied), label="revert order"):
        s = s.revert(a)
    assert s.is_healthy
    h = FaultState.healthy(f)
    assert np.array_equal(s.element_up, h.element_up)
    assert np.array_equal(s.link_capacity, h.link_capacity)
    assert np.array_equal(s.link_factor, h.link_factor)
