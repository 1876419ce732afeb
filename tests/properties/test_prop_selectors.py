"""Selector resolution is deterministic: seeded random picks, all-but, and rebuilt fabrics."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric.generators import GENERATORS
from harness.fabric.resolve import build_fabric
from harness.faults.selectors import Domain
from harness.faults.selectors import parse_selector
from harness.faults.selectors import resolve
from harness.faults.selectors import select
from harness.scenario.model import FabricRef
from harness.search import strategies as hst

# (selector without random/all-but, domain) pairs that match something on every design
BASES = [
    ({"tier": "leaf"}, Domain.ELEMENTS),
    ({"tier": "spine"}, Domain.ELEMENTS),
    ({"kind": "nic"}, Domain.ELEMENTS),
    ({"kind": "gpu", "su": 1}, Domain.ELEMENTS),
    ({"tier": "access"}, Domain.CABLES),
    ({"tier": "leaf-spine"}, Domain.CABLES),
    ({"tier": "nvlink"}, Domain.LINKS),
    ({"tier": "access", "end": "upper"}, Domain.PORTS),
    ({"glob": "su01/*"}, Domain.ELEMENTS),
]


def rebuilt(ref: FabricRef) -> Fabric:
    """The same design built again, bypassing every cache."""
    return GENERATORS[str(ref.generator)](**dict(ref.params))


@settings(max_examples=60, deadline=None)
@given(
    ref=hst.fabric_refs(),
    base=st.sampled_from(BASES),
    seed=st.integers(-(2**63), 2**63 - 1),
    data=st.data(),
)
def test_seeded_random_resolution_is_deterministic(
    ref: FabricRef, base: tuple[dict[str, object], Domain], seed: int, data: st.DataObject
) -> None:
    f = build_fabric(ref)
    raw, domain = base
    everything = resolve(parse_selector(raw), f, domain)
    count = data.draw(st.integers(1, len(everything)), label="count")
    sel = parse_selector({**raw, "random": {"count": count, "seed": seed}})
    first = resolve(sel, f, domain)
    assert first == resolve(sel, f, domain)
    again = rebuilt(ref)
    assert again is not f
    assert select(sel, again, domain) == select(sel, f, domain)
    assert first == sorted(random.Random(seed).sample(everything, count))
    assert len(set(first)) == count
    assert set(first) <= set(everything)


@settings(max_examples=40, deadline=None)
@given(ref=hst.fabric_refs(), base=st.sampled_from(BASES), data=st.data())
def test_all_but_keeps_the_first_matches(
    ref: FabricRef, base: tuple[dict[str, object], Domain], data: st.DataObject
) -> None:
    f = build_fabric(ref)
    raw, domain = base
    everything = resolve(parse_selector(raw), f, domain)
    keep = data.draw(st.integers(0, len(everything) - 1), label="keep")
    chosen = resolve(parse_selector({**raw, "all-but": keep}), f, domain)
    assert chosen == everything[keep:]
