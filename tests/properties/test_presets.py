"""Properties of the presets: which single failures a design survives (DOMAIN.md §6).

* seed-a800: no single failure above the leaf layer (a spine, a leaf-spine cable, one of
  its optics) loses a job -- "even with a single spine left alive, the whole cluster can
  still communicate"; spines exhaustively, cables and optics by hypothesis sample.
* hpn-dual-tor: no single ToR (leaf), aggregation switch, access or ToR-aggregation cable
  failure loses a job (HPN's non-stacked dual-ToR).
* single-ToR designs (seed-a800, superpod-h100): a leaf loss, or one access cable, does.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.fabric import preset
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation

# per-SU jobs, one job over everything, and one over two SUs (crossing the spines)
SEED_JOBS = (
    JobSpec(per_su=True),
    JobSpec(name="all", nodes=("*",)),
    JobSpec(name="su01-02", nodes=("su01/*", "su02/*")),
)
HPN_JOBS = (
    JobSpec(per_su=True),
    JobSpec(name="first-half", nodes=("su01/node0[0-5]*",)),
    JobSpec(name="pair", nodes=("su01/node001", "su01/node128")),
)


@functools.cache
def fabric(name: str) -> Fabric:
    return preset(name)


@functools.cache
def healthy(name: str) -> Analysis:
    f = fabric(name)
    jobs = SEED_JOBS if name != "hpn-dual-tor" else HPN_JOBS
    return Analysis(f, Observation.from_state(FaultState.healthy(f)), resolve_jobs(jobs, f))


def after(name: str, raw: Any) -> Analysis:
    h = healthy(name)
    s = FaultState.healthy(h.fabric).inject(Fault.parse(raw))
    return Analysis(h.fabric, Observation.from_state(s), h.jobs, healthy=h)


def ids(name: str, *kinds: LinkKind) -> list[str]:
    f = fabric(name)
    return [f.link_ids[i] for i in f.links_of_kind(*kinds).tolist()]


def element_ids(name: str, which: str) -> list[str]:
    f = fabric(name)
    return [f.ids[i] for i in getattr(f, which).tolist()]


def ports(name: str, kind: LinkKind) -> list[str]:
    f = fabric(name)
    return [f.port_id(i, end) for i in f.links_of_kind(kind).tolist() for end in (0, 1)]


# -- seed-a800: nothing above the leaf layer is a single point of failure -----------------


@pytest.mark.parametrize("spine", element_ids("seed-a800", "spines"))
@pytest.mark.parametrize("how", ["kill", "drain"])
def test_seed_survives_any_single_spine(spine: str, how: str) -> None:
    a = after("seed-a800", {how: spine})
    assert a.jobs_lost() == []
    assert a.gpu_pairs_disconnected() == 0
    assert a.leaf_uplink_ratio() == 0.95


@settings(max_examples=60, deadline=None)
@given(cable=st.sampled_from(ids("seed-a800", LinkKind.LEAF_SPINE)))
def test_seed_survives_any_single_leaf_spine_cable(cable: str) -> None:
    a = after("seed-a800", {"cut": cable})
    assert a.jobs_lost() == []
    leaf = cable.split(":", maxsplit=1)[0]
    assert a.leaf_uplink_ratio(leaf) == 0.95


@settings(max_examples=60, deadline=None)
@given(port=st.sampled_from(ports("seed-a800", LinkKind.LEAF_SPINE)))
def test_seed_survives_any_single_leaf_spine_optic(port: str) -> None:
    a = after("seed-a800", {"optic": port})
    assert a.jobs_lost() == []
    assert a.gpu_pairs_disconnected() == 0


# -- hpn-dual-tor: no single ToR, aggregation switch or cable ------------------------------------


@pytest.mark.parametrize("leaf", element_ids("hpn-dual-tor", "leaves"))
def test_hpn_survives_any_single_tor(leaf: str) -> None:
    a = after("hpn-dual-tor", {"kill": leaf})
    assert a.jobs_lost() == []
    assert a.gpu_pairs_disconnected() == 0


@settings(max_examples=30, deadline=None)
@given(spine=st.sampled_from(element_ids("hpn-dual-tor", "spines")))
def test_hpn_survives_any_single_aggregation_switch(spine: str) -> None:
    a = after("hpn-dual-tor", {"kill": spine})
    assert a.jobs_lost() == []


@settings(max_examples=60, deadline=None)
@given(cable=st.sampled_from(ids("hpn-dual-tor", LinkKind.ACCESS, LinkKind.LEAF_SPINE)))
def test_hpn_survives_any_single_cable(cable: str) -> None:
    a = after("hpn-dual-tor", {"cut": cable})
    assert a.jobs_lost() == []
    assert a.nics_isolated() == 0


@settings(max_examples=30, deadline=None)
@given(port=st.sampled_from(ports("hpn-dual-tor", LinkKind.ACCESS)))
def test_hpn_survives_any_single_access_optic(port: str) -> None:
    a = after("hpn-dual-tor", {"optic": port})
    assert a.jobs_lost() == []


# -- single-ToR designs: the leaf and the access cable are single points of failure -----------


@pytest.mark.parametrize("leaf", element_ids("seed-a800", "leaves"))
def test_seed_loses_a_job_to_any_leaf(leaf: str) -> None:
    su = leaf.split("/", maxsplit=1)[0]
    lost = after("seed-a800", {"kill": leaf}).jobs_lost()
    expected = {su, "all"} | ({"su01-02"} if su in ("su01", "su02") else set())
    assert set(lost) == expected


@settings(max_examples=30, deadline=None)
@given(cable=st.sampled_from(ids("superpod-h100", LinkKind.ACCESS)))
def test_superpod_loses_a_job_to_any_access_cable(cable: str) -> None:
    a = after("superpod-h100", {"cut": cable})
    su = cable.split("/", maxsplit=1)[0]
    assert su in a.jobs_lost()
    assert a.nics_isolated() == 1
