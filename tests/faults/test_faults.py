"""Faults: parsing, resolution against a fabric, and the immutable fault state."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import Kind
from harness.fabric import preset
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.fault import FaultState
from harness.faults.selectors import Selector

ACCESS = "su01/node01/nic0:1--su01/leaf-r0:1"
NVLINK = "su01/node01/gpu0--su01/node01/nvsw0"  # 2 NVLink3 lanes on an A800


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


def applied(raw: Any) -> Any:
    return Fault.parse(raw).resolve(seed())


# -- parsing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["kill", "drain", "cut", "optic", "bond-member"])
def test_parse_simple_kinds(kind: str) -> None:
    fault = Fault.parse({kind: "x"})
    assert fault.kind is FaultKind(kind)
    assert fault.target == Selector(ids=("x",))
    assert (fault.fraction, fault.lanes) == (None, None)


def test_parse_degrade() -> None:
    f = Fault.parse({"degrade": {"target": "x*", "fraction": 0.25}})
    assert (f.kind, f.target, f.fraction, f.lanes) == (
        FaultKind.DEGRADE, Selector(globs=("x*",)), 0.25, None,
    )  # fmt: skip
    g = Fault.parse({"degrade": {"target": "x", "lanes": 1}})
    assert (g.fraction, g.lanes) == (None, 1)
    assert Fault.parse({"degrade": {"target": "x", "fraction": 1 / 2}}).fraction == 0.5


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("kill", "an inject step takes exactly one fault, e.g. {kill: spine-05}"),
        ({"kill": "a", "cut": "b"}, "an inject step takes exactly one fault"),
        ({"kil": "x"}, "unknown fault kind 'kil'; did you mean 'kill'?"),
        ({"explode": "x"}, "unknown fault kind 'explode' (known: kill, drain, cut, optic"),
        ({"degrade": "x"}, "degrade takes {target: SELECTOR, fraction: F}"),
        ({"degrade": {"target": "x"}}, "degrade needs exactly one of 'fraction'"),
        ({"degrade": {"target": "x", "fraction": 0.5, "lanes": 1}}, "exactly one of"),
        ({"degrade": {"target": "x", "fraction": 1.5}}, "between 0 and 1 (exclusive), got 1.5"),
        ({"degrade": {"target": "x", "fraction": 0}}, "between 0 and 1 (exclusive), got 0"),
        ({"degrade": {"target": "x", "fraction": True}}, "between 0 and 1 (exclusive), got True"),
        ({"degrade": {"target": "x", "lanes": 0}}, "lanes must be a whole number >= 1, got 0"),
        ({"degrade": {"target": "x", "speed": 1}}, "unknown key 'speed'"),
        ({"kill": ""}, "empty selector"),
    ],
)
def test_parse_errors(raw: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        Fault.parse(raw)
    assert message in str(info.value)


def test_describe() -> None:
    assert Fault.parse({"kill": {"tier": "spine", "all-but": 1}}).describe() == (
        "kill tier=spine all but 1"
    )
    assert Fault.parse({"degrade": {"target": "x", "fraction": 0.25}}).describe() == (
        "degrade x to 0.25 of its speed"
    )
    assert Fault.parse({"degrade": {"target": "x", "lanes": 1}}).describe() == (
        "degrade x to 1 lane(s)"
    )


# -- resolution ------------------------------------------------------------------------------------


def test_kill_resolves_to_elements() -> None:
    a = applied({"kill": "spine-05"})
    assert [seed().ids[i] for i in a.elements] == ["spine-05"]
    assert (a.links, a.factors, a.ports) == ((), (), ())
    assert a.describe(seed()) == "killed spine-05"


def test_long_target_lists_are_shortened() -> None:
    a = applied({"kill": {"tier": "spine"}})
    assert a.describe(seed()) == (
        "killed spine-01, spine-02, spine-03, spine-04, spine-05, spine-06 and 14 more"
    )


def test_cut_resolves_to_cables() -> None:
    a = applied({"cut": ACCESS})
    assert [seed().link_ids[i] for i in a.links] == [ACCESS]
    assert a.factors == (0.0,)


def test_optic_resolves_to_its_cable_once() -> None:
    a = applied({"optic": ["su01/node01/nic0:1", "su01/leaf-r0:1"]})
    assert [seed().link_ids[i] for i in a.links] == [ACCESS]
    assert a.ports == ("su01/node01/nic0:1", "su01/leaf-r0:1")
    assert a.describe(seed()) == "optic failed on su01/node01/nic0:1, su01/leaf-r0:1"


def test_degrade_fraction_and_lanes() -> None:
    a = applied({"degrade": {"target": {"tier": "leaf-spine", "su": 1}, "fraction": 0.25}})
    assert len(a.links) == 80
    assert set(a.factors) == {0.25}
    b = applied({"degrade": {"target": NVLINK, "lanes": 1}})
    assert b.factors == (0.5,)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"drain": "su01/node01/nic0"},
         "drain cannot apply to su01/node01/nic0 (a nic); it applies to: core, leaf, spine, "
         "storage-switch"),
        ({"bond-member": "su01/node01/nic0"}, "it applies to: storage-nic"),
        ({"kill": "storage"}, "kill cannot apply to storage (a storage)"),
        ({"cut": NVLINK}, f"selector {NVLINK!r} matches no cables"),
        ({"degrade": {"target": NVLINK, "lanes": 2}},
         f"degrade to 2 lane(s): {NVLINK} has only 2; give fewer lanes or use fraction:"),
        ({"degrade": {"target": ACCESS, "lanes": 4}}, "has only 4"),
        ({"kill": "spine-99"}, "matches no elements; closest: spine-09, spine-19"),
    ],
)  # fmt: skip
def test_resolve_errors(raw: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        applied(raw)
    assert message in str(info.value)


def test_kill_needs_narrowing_to_killable_kinds() -> None:
    with pytest.raises(ScenarioError, match=r"Narrow the selector, e\.g\. with kind: or tier:"):
        applied({"drain": "su01/*"})
    assert len(applied({"drain": {"glob": "su01/*", "tier": "leaf"}}).elements) == 4


# -- fault state -----------------------------------------------------------------------------------


def test_healthy_state() -> None:
    s = FaultState.healthy(seed())
    assert s.is_healthy
    assert s.element_up.all()
    assert np.array_equal(s.link_capacity, seed().link_capacity)


def test_inject_returns_a_new_state() -> None:
    h = FaultState.healthy(seed())
    s = h.inject(Fault.parse({"kill": "spine-05"}))
    assert h.is_healthy
    assert not s.is_healthy
    assert int((~s.element_up).sum()) == 1
    assert not s.element_up[seed().index["spine-05"]]


def test_a_dead_server_takes_its_parts() -> None:
    f = seed()
    s = FaultState.healthy(f).inject(Fault.parse({"kill": "su02/node03"}))
    down = np.flatnonzero(~s.element_up)
    srv = f.index["su02/node03"]
    assert sorted(down.tolist()) == sorted([srv, *f.parts_of(srv).tolist()])
    # every link of the server's parts is down
    gone = np.flatnonzero(s.link_capacity == 0)
    assert set(gone.tolist()) == {
        i for p in f.parts_of(srv).tolist() for i in f.links_at(p).tolist()
    }


def test_a_dead_switch_takes_its_links() -> None:
    f = seed()
    s = FaultState.healthy(f).inject(Fault.parse({"kill": "su01/leaf-r0"}))
    leaf = f.index["su01/leaf-r0"]
    assert set(np.flatnonzero(s.link_capacity == 0).tolist()) == set(f.links_at(leaf).tolist())
    assert len(f.links_at(leaf)) == 40


def test_degrades_multiply() -> None:
    f = seed()
    half = Fault.parse({"degrade": {"target": ACCESS, "fraction": 0.5}})
    s = FaultState.healthy(f).inject(half).inject(half)
    i = f.link_index[ACCESS]
    assert s.link_factor[i] == 0.25
    assert s.link_capacity[i] == 50.0


def test_revert_restores_the_exact_previous_state() -> None:
    f = seed()
    h = FaultState.healthy(f)
    a = Fault.parse({"cut": ACCESS}).resolve(f)
    b = Fault.parse({"kill": "spine-01"}).resolve(f)
    s = h.inject(a).inject(b)
    assert s.revert(b).applied == (a,)
    back = s.revert(a).revert(b)
    assert back.is_healthy
    assert np.array_equal(back.element_up, h.element_up)
    assert np.array_equal(back.link_capacity, h.link_capacity)


def test_revert_removes_one_of_two_identical_faults() -> None:
    f = seed()
    a1 = Fault.parse({"cut": ACCESS}).resolve(f)
    a2 = Fault.parse({"cut": ACCESS}).resolve(f)
    s = FaultState.healthy(f).inject(a1).inject(a2).revert(a1)
    assert s.applied == (a2,)
    assert s.link_capacity[f.link_index[ACCESS]] == 0.0


def test_revert_of_a_fault_not_applied() -> None:
    f = seed()
    a = Fault.parse({"cut": ACCESS}).resolve(f)
    with pytest.raises(ScenarioError, match=f"fault cut {ACCESS} is not applied"):
        FaultState.healthy(f).revert(a)


def test_state_arrays_are_read_only() -> None:
    s = FaultState.healthy(seed()).inject(Fault.parse({"kill": "spine-01"}))
    for arr in (s.element_up, s.link_factor, s.link_capacity):
        assert not arr.flags.writeable


def test_kill_a_nic_counts_one_element() -> None:
    f = seed()
    s = FaultState.healthy(f).inject(Fault.parse({"kill": "su01/node01/nic0"}))
    assert [Kind(int(f.kind[i])) for i in np.flatnonzero(~s.element_up)] == [Kind.NIC]
    assert s.link_capacity[f.link_index[ACCESS]] == 0.0
