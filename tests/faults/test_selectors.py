"""Selectors: parsing, resolution over elements/links/cables/ports, and their errors."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
import yaml

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric import three_tier
from harness.faults.selectors import Domain
from harness.faults.selectors import Selector
from harness.faults.selectors import as_selector
from harness.faults.selectors import parse_selector
from harness.faults.selectors import resolve
from harness.faults.selectors import select


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


@functools.cache
def pods() -> Fabric:
    return three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=2,
                      radix=16, storage=False)  # fmt: skip


# -- parsing ---------------------------------------------------------------------------


def test_strings_are_ids_or_globs() -> None:
    assert parse_selector("spine-05") == Selector(ids=("spine-05",))
    assert parse_selector("spine-0[1-5]") == Selector(globs=("spine-0[1-5]",))
    assert parse_selector("su01/*") == Selector(globs=("su01/*",))


def test_lists_are_unions() -> None:
    sel = parse_selector(["spine-01", {"tier": "leaf", "su": 1}])
    assert sel.union == (Selector(ids=("spine-01",)), Selector(tiers=("leaf",), su=(1,)))


def test_mapping_keys() -> None:
    sel = parse_selector({
        "id": "a", "ids": ["b", "c"], "glob": "d*", "kind": ["gpu", "nic"], "tier": "leaf",
        "su": [1, 2], "rail": 0, "node": 3, "pod": 1, "plane": [1, 2], "between": ["x", "y"],
        "end": "upper", "all-but": 2,
    })  # fmt: skip
    assert sel.ids == ("a", "b", "c")
    assert sel.globs == ("d*",)
    assert sel.kinds == ("gpu", "nic")
    assert (sel.su, sel.rail, sel.node, sel.pod, sel.plane) == ((1, 2), (0,), (3,), (1,), (1, 2))
    assert (sel.between, sel.end, sel.all_but) == (("x", "y"), "upper", 2)


def test_random_takes_count_and_seed() -> None:
    sel = parse_selector({"tier": "spine", "random": {"count": 3, "seed": 7}})
    assert (sel.random_count, sel.random_seed) == (3, 7)
    assert parse_selector({"tier": "spine", "random": {"count": 1}}).random_seed == 0


def test_describe() -> None:
    sel = parse_selector({"tier": "spine", "all-but": 1, "su": [1, 2], "between": ["a", "b"]})
    assert sel.describe() == "tier=spine su=1,2 between a and b all but 1"
    assert parse_selector({"tier": "spine", "random": {"count": 2, "seed": 3}}).describe() == (
        "tier=spine random 2 (seed 3)"
    )
    assert parse_selector(["a", "b*"]).describe() == "a + b*"
    assert Selector().describe() == "everything"


def test_as_selector_accepts_selectors_strings_tuples_and_mappings() -> None:
    sel = Selector(ids=("x",))
    assert as_selector(sel) is sel
    assert as_selector("x") == sel
    assert as_selector(("x", "y")).union == (Selector(ids=("x",)), Selector(ids=("y",)))
    assert as_selector({"id": "x"}) == sel


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "empty selector; give an id, a glob or a mapping"),
        ("  ", "empty selector"),
        ([], "empty selector list"),
        (5, "a selector is an id, a glob, a list or a mapping, not int"),
        ({"tierr": "spine"}, "unknown selector key 'tierr'; did you mean 'tier'?"),
        ({"colour": "red"}, "unknown selector key 'colour' (known: id, ids, glob"),
        ({"kind": "gpus"}, "unknown kind 'gpus'; did you mean 'gpu'?"),
        ({"tier": "spin"}, "unknown tier 'spin'; did you mean 'spine'?"),
        ({"su": "3"}, "selector key 'su' takes an integer or a list of integers, got '3'"),
        ({"su": True}, "selector key 'su' takes an integer"),
        ({"glob": 3}, "selector key 'glob' takes a string or a list of strings"),
        ({"between": ["a"]}, "'between' takes a list of two ids or globs"),
        ({"end": "top"}, "'end' is 'lower' or 'upper', got 'top'"),
        ({"all-but": -1}, "'all-but' takes a whole number >= 0, got -1"),
        ({"all-but": True}, "'all-but' takes a whole number"),
        ({"random": 3}, "'random' takes {count: N, seed: S}"),
        ({"random": {"count": 0}}, "'random' needs a count >= 1 and an integer seed"),
        ({"random": {"count": 1, "sed": 2}}, "'random' takes {count: N, seed: S}"),
        ({"all-but": 1, "random": {"count": 1}}, "use either 'all-but' or 'random'"),
    ],
)
def test_parse_errors(raw: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_selector(raw)
    assert message in str(info.value)


# -- resolution: elements -------------------------------------------------------------------


def test_exact_id_selects_only_that_element() -> None:
    assert select("su01/node01", seed()) == ["su01/node01"]
    assert select("spine-05", seed()) == ["spine-05"]


def test_glob_and_union() -> None:
    assert select("spine-0[1-3]", seed()) == ["spine-01", "spine-02", "spine-03"]
    assert select(["spine-02", "spine-01", "spine-02"], seed()) == ["spine-01", "spine-02"]
    assert len(select("su01/leaf-*", seed())) == 4


def test_structural_filters_on_elements() -> None:
    f = seed()
    assert len(select({"tier": "spine"}, f)) == 20
    assert len(select({"tier": "leaf"}, f)) == 40
    assert select({"tier": "leaf", "su": 3, "rail": 1}, f) == ["su03/leaf-r1"]
    assert len(select({"kind": "gpu", "su": 2, "node": [1, 2]}, f)) == 16
    assert len(select({"kind": "nic", "rail": 2}, f)) == 200
    assert select({"kind": "gpu", "glob": "su01/node01/*", "rail": 3}, f) == [
        "su01/node01/gpu6",
        "su01/node01/gpu7",
    ]


def test_pod_and_plane_filters() -> None:
    assert select({"tier": "spine", "pod": 2}, pods()) == ["pod02/spine-01", "pod02/spine-02"]
    assert len(select({"tier": "spine-core", "pod": 1}, pods(), Domain.CABLES)) == 16
    hpn = preset("hpn-dual-tor")
    assert len(select({"tier": "spine", "plane": 2}, hpn)) == 60
    assert select({"tier": "leaf", "plane": 1, "rail": 0}, hpn) == ["su01/leaf-r0a"]


def test_all_but_keeps_the_first_by_id() -> None:
    assert select({"tier": "spine", "all-but": 18}, seed()) == ["spine-19", "spine-20"]
    assert len(select({"tier": "spine", "all-but": 0}, seed())) == 20


def test_random_is_seeded_and_reproducible() -> None:
    f = seed()
    raw = {"tier": "spine", "random": {"count": 3, "seed": 7}}
    first = select(raw, f)
    assert first == select(raw, f) == select(raw, preset("seed-a800"))
    spines = sorted(f.index[s] for s in select({"tier": "spine"}, f))
    expect = sorted(random.Random(7).sample(spines, 3))
    assert first == [f.ids[i] for i in expect]
    assert select({"tier": "spine", "random": {"count": 3, "seed": 8}}, f) != first


# -- resolution: links, cables and ports ----------------------------------------------------------


def test_link_tiers_and_lower_end_filters() -> None:
    f = seed()
    assert len(select({"tier": "access", "su": 3}, f, Domain.CABLES)) == 80
    assert len(select({"tier": "leaf-spine", "rail": 1}, f, Domain.CABLES)) == 200
    assert len(select({"tier": "leaf-spine", "su": 1}, f, Domain.CABLES)) == 80
    # 8 GPUs x 6 NVSwitches of one server
    assert len(select({"tier": "nvlink", "su": 1, "node": 1}, f, Domain.LINKS)) == 48
    # a switch tier on cables is ambiguous (a leaf's access cables or its uplinks?)
    with pytest.raises(ScenarioError) as info:
        select({"tier": "leaf"}, f, Domain.CABLES)
    assert str(info.value).endswith(
        "for the cables of leaf switches write {tier: access} or {tier: leaf-spine}"
    )
    # kind: matches the lower end, so kind: leaf is a leaf's uplinks
    leaf_cables = select({"kind": "leaf"}, f, Domain.CABLES)
    assert len(leaf_cables) == 800
    assert all("--spine-" in c for c in leaf_cables)


def test_cables_domain_excludes_internal_links() -> None:
    with pytest.raises(ScenarioError, match="matches no cables"):
        select({"tier": "nvlink"}, seed(), Domain.CABLES)
    assert select("su01/node01/gpu0--su01/node01/nvsw0", seed(), Domain.LINKS) == [
        "su01/node01/gpu0--su01/node01/nvsw0"
    ]


def test_between_matches_parts_and_globs() -> None:
    f = seed()
    assert select({"between": ["su01/node01", "su01/leaf-r0"]}, f, Domain.CABLES) == [
        "su01/node01/nic0:1--su01/leaf-r0:1"
    ]
    assert select({"between": ["spine-0[1-3]", "su01/leaf-r0"]}, f, Domain.CABLES) == [
        "su01/leaf-r0:21--spine-01:1",
        "su01/leaf-r0:22--spine-02:1",
        "su01/leaf-r0:23--spine-03:1",
    ]


def test_ports_by_id_glob_and_end() -> None:
    f = seed()
    assert select("su01/node01/nic0:1", f, Domain.PORTS) == ["su01/node01/nic0:1"]
    # port 2 and ports 20..29
    assert len(select("su01/leaf-r0:2*", f, Domain.PORTS)) == 11
    sel = {"between": ["su01/node01/nic0", "su01/leaf-r0"], "end": "upper"}
    assert select(sel, f, Domain.PORTS) == ["su01/leaf-r0:1"]
    sel["end"] = "lower"
    assert select(sel, f, Domain.PORTS) == ["su01/node01/nic0:1"]


def test_resolve_returns_sorted_indices() -> None:
    f = seed()
    idx = resolve(parse_selector(["spine-03", "spine-01"]), f, Domain.ELEMENTS)
    assert idx == sorted(idx)
    assert [f.ids[i] for i in idx] == ["spine-01", "spine-03"]
    ports = resolve(parse_selector("su01/leaf-r0:1"), f, Domain.PORTS)
    assert [list(f.port_index)[i] for i in ports] == ["su01/leaf-r0:1"]


# -- resolution errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "domain", "message"),
    [
        ("spine-99", Domain.ELEMENTS,
         "selector 'spine-99' matches no elements; closest: spine-09, spine-19"),
        ("zzz*", Domain.ELEMENTS, "selector 'zzz*' matches no elements"),
        ({"tier": "core"}, Domain.ELEMENTS, "matches no elements of fabric 'seed-a800'"),
        ({"tier": "spine", "all-but": 20}, Domain.ELEMENTS,
         "keeps 20 of 20 matches up, so it selects nothing; use a smaller all-but"),
        ({"tier": "spine", "random": {"count": 21}}, Domain.ELEMENTS,
         "asks for 21 random matches but only 20 exist"),
        ({"between": ["nope", "spine-01"]}, Domain.CABLES, "selector 'nope' matches no elements"),
        ("su01/node01/nic0:9", Domain.PORTS, "matches no ports"),
        ("spine-01", Domain.CABLES, "matches no cables"),
    ],
)  # fmt: skip
def test_resolve_errors(raw: Any, domain: Domain, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        select(raw, seed(), domain)
    assert message in str(info.value)


# -- every documented port (optic) form: a cable's end, by tier, su/rail of the lower end -------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # an exact port id, a glob, a list
        ("su03/node07/nic1:1", ["su03/node07/nic1:1"]),
        ("spine-0[12]:3", ["spine-01:3", "spine-02:3"]),
        (["su01/leaf-r0:1", "spine-05:1"], ["spine-05:1", "su01/leaf-r0:1"]),
        ({"id": "su01/leaf-r0:21"}, ["su01/leaf-r0:21"]),
        ({"ids": ["spine-01:1", "spine-02:1"]}, ["spine-01:1", "spine-02:1"]),
        ({"glob": "su02/leaf-r3:3?"}, [f"su02/leaf-r3:3{i}" for i in range(10)]),
        # the access optics of one NIC: the NIC side and the leaf side
        ({"tier": "access", "su": 3, "node": 7, "rail": 1, "end": "lower"}, ["su03/node07/nic1:1"]),
        ({"tier": "access", "su": 3, "node": 7, "rail": 1, "end": "upper"}, ["su03/leaf-r1:7"]),
        ({"tier": "access", "su": 3, "node": 7, "rail": 1},
         ["su03/leaf-r1:7", "su03/node07/nic1:1"]),
        # a leaf's access optics on the leaf (upper end of the NIC cables)
        ({"tier": "access", "su": 1, "rail": 0, "end": "upper"},
         [f"su01/leaf-r0:{p}" for p in sorted(range(1, 21), key=str)]),
        # a leaf's uplink optics: on the leaf (lower end), on the spines (upper end)
        ({"tier": "leaf-spine", "su": 1, "rail": 0, "end": "lower"},
         [f"su01/leaf-r0:{p}" for p in range(21, 41)]),
        ({"tier": "leaf-spine", "su": 1, "rail": 0, "end": "upper"},
         [f"spine-{s:02d}:1" for s in range(1, 21)]),
        ({"tier": "leaf-spine", "su": 2, "rail": 3, "end": "upper", "all-but": 18},
         ["spine-19:8", "spine-20:8"]),
        # between two elements (parts included), one end of it
        ({"between": ["su01/node01", "su01/leaf-r0"], "end": "upper"}, ["su01/leaf-r0:1"]),
        ({"kind": "nic", "su": 1, "node": 1, "rail": 2, "end": "lower"}, ["su01/node01/nic2:1"]),
    ],
)  # fmt: skip
def test_documented_port_forms(raw: Any, expected: list[str]) -> None:
    f = seed()
    got = select(raw, f, Domain.PORTS)
    assert sorted(got) == sorted(expected)
    # the documented meaning: each port's cable has the filtered lower end
    if isinstance(raw, dict) and "su" in raw:
        for port in got:
            link, end = f.port_index[port]
            lower = int(f.link_a[link])
            assert int(f.su[lower]) == raw["su"]
            if "rail" in raw:
                assert int(f.rail[lower]) == raw["rail"]
            if "end" in raw:
                assert end == (0 if raw["end"] == "lower" else 1)


def test_random_optics_on_the_spine_side_of_one_leaf() -> None:
    f = seed()
    raw = {"tier": "leaf-spine", "su": 1, "rail": 0, "end": "upper",
           "random": {"count": 3, "seed": 4}}  # fmt: skip
    got = select(raw, f, Domain.PORTS)
    assert len(got) == 3
    assert got == select(raw, f, Domain.PORTS)
    assert all(p.startswith("spine-") and p.endswith(":1") for p in got)


def test_port_forms_on_a_three_tier_fabric() -> None:
    f = pods()
    got = select({"tier": "spine-core", "pod": 1, "end": "upper"}, f, Domain.PORTS)
    assert got
    assert all(p.startswith("core-") for p in got)
    assert len(got) == len(select({"tier": "spine-core", "pod": 1}, f, Domain.CABLES))


@pytest.mark.parametrize(
    ("raw", "domain", "says"),
    [
        ({"su": 1, "rail": 0, "end": "upper"}, Domain.PORTS,
         "is ambiguous: it matches optics of several link tiers (20 access, 20 leaf-spine), "
         "because su/rail/node/kind filters match each cable's lower end (the NIC of an access "
         "cable, the leaf of a leaf-spine cable); add tier:, e.g. "
         "{tier: access, su: 1, rail: 0, end: upper} or "
         "{tier: leaf-spine, su: 1, rail: 0, end: upper}"),
        ({"su": 2, "rail": 1}, Domain.CABLES, "e.g. {tier: access, su: 2, rail: 1} or "
                                              "{tier: leaf-spine, su: 2, rail: 1}"),
        ({"su": 1, "node": 1}, Domain.LINKS, "{tier: nvlink, su: 1, node: 1}"),
        ({"tier": "spine", "end": "upper"}, Domain.PORTS,
         "for the optics of spine switches write {tier: leaf-spine, end: upper} or "
         "{tier: spine-core, end: upper}"),
        ({"tier": "access", "end": "upper"}, Domain.CABLES,
         "'end' picks an optic, but this fault takes cables; drop end:, or use optic:"),
        ({"tier": "spine", "end": "upper"}, Domain.ELEMENTS, "'end' picks the optic"),
        ({"between": ["spine-01", "su01/leaf-r0"]}, Domain.ELEMENTS,
         "'between' picks the cables or links between two elements, not elements"),
    ],
)  # fmt: skip
def test_ambiguous_or_meaningless_selectors_say_what_to_write(
    raw: Any, domain: Domain, says: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        select(raw, seed(), domain)
    assert says in str(info.value)


def test_flow_round_trips() -> None:
    for raw in (
        {"tier": "leaf-spine", "su": [1, 2], "rail": 0, "end": "upper", "all-but": 2},
        {"kind": "gpu", "glob": "su01/*", "random": {"count": 2, "seed": 5}},
        {"between": ["spine-01", "su01/leaf-r0"], "end": "lower"},
        {"ids": ["spine-01", "spine-02"]},
    ):
        sel = parse_selector(raw)
        assert parse_selector(yaml.safe_load(sel.flow())) == sel
