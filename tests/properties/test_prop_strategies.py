"""The public strategies (harness.search.strategies): what they draw is valid and as promised."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck
from hypothesis import find
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.fabric import dual_tor
from harness.fabric import two_tier
from harness.fabric.resolve import build_fabric
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.selectors import Selector
from harness.search import strategies as hst
from harness.search.reproducer import fabric_ref

ALL_KINDS = ("kill", "drain", "cut", "optic", "degrade", "bond-member")
FIND = settings(max_examples=2000, database=None, suppress_health_check=list(HealthCheck))


@settings(max_examples=40, deadline=None)
@given(f=hst.fabrics(min_sus=1, max_sus=4, min_nodes_per_su=2, max_nodes_per_su=3))
def test_fabrics_are_small_valid_and_rebuildable(f: Fabric) -> None:
    s = f.summary()
    assert 1 <= s["sus"] <= 4
    counts = np.bincount(f.su[f.servers])[1:]
    assert counts.min() >= 2
    assert counts.max() <= 3
    assert s["tiers"] == (3 if s["cores"] else 2)
    ref = fabric_ref(f)  # remembered, so a reproducer can name it
    again = build_fabric(ref)
    assert again.summary() == s
    assert again.ids == f.ids


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_fault_sets_resolve_to_exact_ids(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(storage=data.draw(st.booleans())), label="fabric")
    kinds = data.draw(st.sets(st.sampled_from(ALL_KINDS), min_size=1), label="kinds")
    faults = data.draw(hst.fault_sets(f, kinds=kinds, min_size=2, max_size=3), label="faults")
    assert 2 <= len(faults) <= 3
    for fault in faults:
        assert isinstance(fault, Fault)
        assert fault.kind.value in kinds
        assert fault.target.ids
        assert fault.target == Selector(ids=fault.target.ids)
        applied = fault.resolve(f)  # never a ScenarioError
        assert len(applied.ports or applied.elements or applied.links) == len(fault.target.ids)
        if fault.kind is FaultKind.DEGRADE:
            assert fault.fraction in hst.DEGRADE_FRACTIONS


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_uncorrelated_faults_hit_one_target(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(), label="fabric")
    fault = data.draw(hst.faults(f, kinds=ALL_KINDS, correlated=False), label="fault")
    assert len(fault.target.ids) == 1


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_fault_programs_restore_only_applied_faults(data: st.DataObject) -> None:
    f = data.draw(hst.fabrics(), label="fabric")
    program = data.draw(hst.fault_programs(f, max_steps=10, max_applied=3), label="program")
    assert 1 <= len(program) <= 10
    applied = 0
    for step in program:
        if step.op == "inject":
            assert step.fault is not None
            applied += 1
        else:
            assert 0 <= step.index < applied
            applied -= 1
        assert applied <= 3
    assert program[0].op == "inject"
    assert program[0].describe().startswith("inject ")


# -- correlated groups are drawn ---------------------------------------------------------------


def small_seed() -> Fabric:
    return two_tier(sus=2, nodes_per_su=3, spines=2, cables_per_pair=2, leaf_radix=16,
                    storage=False)  # fmt: skip


def small_hpn() -> Fabric:
    return dual_tor(segments=1, hosts_per_segment=2, spines_per_plane=2, leaf_radix=8,
                    spine_radix=64, storage=False)  # fmt: skip


def test_all_cables_of_one_leaf() -> None:
    f = small_seed()

    def whole_leaf(fault: Fault) -> bool:
        ends = {e for c in fault.target.ids for e in (c.split("--")[0], c.split("--")[1])}
        leaves = {e.split(":")[0] for e in ends if "/leaf-" in e}
        return (
            fault.kind is FaultKind.CUT
            and len(fault.target.ids) == 3 + 2 * 2
            and (len(leaves) == 1)
        )

    fault = find(hst.faults(f, kinds=["cut"]), whole_leaf, settings=FIND)
    a = fault.resolve(f)
    kinds = sorted(LinkKind(int(f.link_kind[i])).label for i in a.links)
    assert kinds == ["access"] * 3 + ["leaf-spine"] * 4


def test_both_planes_of_one_nic() -> None:
    f = small_hpn()

    def both_planes(fault: Fault) -> bool:
        nics = {c.split(":")[0] for c in fault.target.ids}
        return fault.kind is FaultKind.CUT and len(fault.target.ids) == 2 and len(nics) == 1

    fault = find(hst.faults(f, kinds=["cut"]), both_planes, settings=FIND)
    a = fault.resolve(f)
    assert sorted(int(f.plane[f.link_b[i]]) for i in a.links) == [1, 2]
    optics = find(
        hst.faults(f, kinds=["optic"]),
        lambda x: (
            len(x.target.ids) == 2
            and {p.split(":")[0] for p in x.target.ids} == {x.target.ids[0].split(":")[0]}
            and "/nic" in x.target.ids[0]
        ),
        settings=FIND,
    )
    assert [p.split(":")[1] for p in optics.target.ids] == ["1", "2"]


@pytest.mark.parametrize(
    ("fabric", "flavour", "size"),
    [
        (small_seed, "su-leaves", 4),
        (small_seed, "rail-leaves", 2),
        (small_seed, "leaf-spine-bundle", 2),
        (small_hpn, "plane-spines", 2),
    ],
)
def test_group_flavours(fabric: object, flavour: str, size: int) -> None:
    f = fabric()  # type: ignore[operator]
    kind = hst.CORRELATED[flavour]
    groups = hst.correlated_groups(f)[flavour]
    assert groups
    assert {len(g) for g in groups} == {size}
    wanted = set(groups)
    fault = find(hst.faults(f, kinds=[kind.value]), lambda x: x.target.ids in wanted, settings=FIND)
    assert fault.kind is kind


# -- errors --------------------------------------------------------------------------------------


def test_unknown_names_are_errors() -> None:
    f = small_seed()
    with pytest.raises(ScenarioError, match="unknown fault kind 'explode'"):
        hst.faults(f, kinds=["explode"])
    with pytest.raises(ScenarioError, match="give at least one fault kind"):
        hst.faults(f, kinds=[])
    with pytest.raises(ScenarioError, match=r"unknown generator\(s\) \['four-tier'\]"):
        hst.fabric_refs(["four-tier"])  # type: ignore[list-item]
    with pytest.raises(ScenarioError, match="min_nodes_per_su <= max_nodes_per_su"):
        hst.fabric_refs(min_nodes_per_su=3, max_nodes_per_su=2)
    with pytest.raises(ScenarioError, match="min_sus <= max_sus"):
        hst.fabric_refs(min_sus=3, max_sus=2)


def test_fault_constructors() -> None:
    assert hst.kill("spine-01") == Fault(FaultKind.KILL, Selector(ids=("spine-01",)))
    assert hst.cut(["a", "b"]).target.ids == ("a", "b")
    assert hst.degrade("a", 0.5).fraction == 0.5
    assert hst.drain("x").kind is FaultKind.DRAIN
    assert hst.optic("x:1").kind is FaultKind.OPTIC
    assert hst.bond_member("n/stor0").kind is FaultKind.BOND_MEMBER
