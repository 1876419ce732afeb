"""Failure sweeps: the fast paths agree with the full analysis, case by case, and the runs add up.

The oracle is :meth:`CaseEvaluator.evaluate_exact` (a full
:class:`~harness.invariants.analysis.Analysis` per case).  Every single failure of every
category is checked on small generated fabrics, under several job sets and
base states; seed-a800 is checked on a sample stratified by category.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import itertools
import json
from collections import defaultdict
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import dual_tor
from harness.fabric import preset
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.planning.sweep import CATEGORIES
from harness.planning.sweep import DEFAULT_CATEGORIES
from harness.planning.sweep import CaseEvaluator
from harness.planning.sweep import CaseResult
from harness.planning.sweep import Failure
from harness.planning.sweep import SweepResult
from harness.planning.sweep import SweepSpec
from harness.planning.sweep import parse_categories
from harness.planning.sweep import run_sweep
from harness.planning.sweep import sweep
from harness.planning.sweep.cases import cable_ids
from harness.planning.sweep.cases import single_failures
from harness.planning.sweep.run import enumerate_cases
from harness.reporting.sweep_files import plot
from harness.reporting.sweep_files import row
from harness.reporting.sweep_files import to_json
from harness.reporting.sweep_files import write_csv

PER_SU = JobSpec(per_su=True)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# -- fabrics, jobs and base states ------------------------------------------------------

SMALL: dict[str, Callable[[], Fabric]] = {
    "two-tier-1-spine": lambda: two_tier(
        sus=2, nodes_per_su=2, spines=1, leaf_radix=8, storage=False
    ),
    "two-tier-2-spines": lambda: two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8),
    "two-tier-3-spines-2-cables": lambda: two_tier(
        sus=2, nodes_per_su=2, spines=3, cables_per_pair=2, leaf_radix=16
    ),
    "three-tier": lambda: three_tier(
        sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=4, radix=16
    ),
    "dual-tor": lambda: dual_tor(
        segments=2, hosts_per_segment=2, spines_per_plane=2, leaf_radix=16, spine_radix=16
    ),
}

JOB_SETS: dict[str, tuple[JobSpec, ...]] = {
    "per-su": (PER_SU,),
    # one job across both SUs (its ring crosses the leaf uplinks) and a one-server job
    "cross-su": (
        JobSpec(name="cross", nodes=("su01/node01", "su02/node02")),
        JobSpec(name="solo", nodes=("su01/node02",)),
    ),
    # NCCL port failover: a NIC survives while one of its ports still reaches the others
    "cross-su-port-failover": (
        JobSpec(name="wide", nodes=("su01/node0*", "su02/node01"), failover="port"),
    ),
}


@functools.cache
def small(name: str) -> Fabric:
    return SMALL[name]()


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


def _first(fabric: Fabric, kind: Kind, nth: int = 0) -> str:
    return fabric.ids[int(fabric.indices_of_kind(kind)[nth])]


def _uplink(fabric: Fabric) -> str:
    return fabric.link_ids[int(fabric.links_of_kind(LinkKind.LEAF_SPINE)[0])]


BASES: dict[str, Callable[[Fabric], tuple[Fault, ...]]] = {
    "healthy": lambda f: (),
    "leaf-down": lambda f: (Fault.parse({"kill": _first(f, Kind.LEAF, 1)}),),
    "spine-drained": lambda f: (Fault.parse({"drain": _first(f, Kind.SPINE)}),),
    "uplink-degraded": lambda f: (
        Fault.parse({"degrade": {"target": _uplink(f), "fraction": 0.5}}),
    ),
}


def evaluator(
    fabric: Fabric, jobs: Sequence[JobSpec], base: Sequence[Fault] = (), **kw: bool
) -> CaseEvaluator:
    state = FaultState.healthy(fabric)
    for fault in base:
        state = state.inject(fault)
    return CaseEvaluator(fabric, resolve_jobs(jobs, fabric), state, **kw)


# -- comparing results ------------------------------------------------------------------

COMPARED = tuple(
    f.name for f in dataclasses.fields(CaseResult) if f.name not in ("exact", "reasons")
)


def differences(fabric: Fabric, fast: CaseResult, exact: CaseResult, path: str) -> list[str]:
    """One line per field where ``fast`` and ``exact`` differ (floats up to rounding)."""
    out = []
    for name in COMPARED:
        a, b = getattr(fast, name), getattr(exact, name)
        same = a == pytest.approx(b) if isinstance(b, float) and a is not None else a == b
        if not same:
            out.append(f"{path} {exact.label(fabric)}: {name} fast={a!r} exact={b!r}")
    return out


def check_singles(ev: CaseEvaluator, singles: Sequence[Failure], positions: Iterable[int]) -> None:
    """evaluate_singles (bulk) == evaluate == evaluate_exact on the chosen cases."""
    f = ev.fabric
    bulk = ev.evaluate_singles(singles)
    assert len(bulk) == len(singles)
    problems = []
    for k in positions:
        exact = ev.evaluate_exact([singles[k]])
        assert exact.exact
        assert bulk[k].failures == (singles[k],)
        problems += differences(f, bulk[k], exact, "evaluate_singles")
        problems += differences(f, ev.evaluate([singles[k]]), exact, "evaluate")
    assert problems == []


def overlap(fabric: Fabric, a: Failure, b: Failure) -> bool:
    """The two failures share a cable or an end: a spine and one of its cables, both
    optics of a cable, a storage NIC and its switch, two cables of one switch..."""

    def ends(x: Failure) -> set[int]:
        if x.kind == "element":
            return {x.index}
        return {int(fabric.link_a[x.index]), int(fabric.link_b[x.index])}

    def links(x: Failure) -> set[int]:
        return {int(i) for i in fabric.links_at(x.index)} if x.kind == "element" else {x.index}

    return bool(links(a) & links(b)) or bool(ends(a) & ends(b))


Pair = tuple[Failure, Failure]


def depth_two(
    fabric: Fabric, count: int, seed: int, categories: Sequence[str] = DEFAULT_CATEGORIES
) -> tuple[list[Pair], list[Pair]]:
    """(switch pairs, sampled pairs) as a depth-2 sweep enumerates them."""
    spec = SweepSpec(fabric, categories=tuple(categories), depth=2, pair_sample=count, seed=seed)
    cases, sampled = enumerate_cases(fabric, spec)
    pairs = [(c[0], c[1]) for c in cases if len(c) == 2]
    return pairs[: len(pairs) - sampled], pairs[len(pairs) - sampled :]


def check_pairs(ev: CaseEvaluator, pairs: Iterable[tuple[Failure, Failure]]) -> int:
    problems = []
    n = 0
    for pair in pairs:
        n += 1
        problems += differences(ev.fabric, ev.evaluate(pair), ev.evaluate_exact(pair), "pair")
    assert problems == []
    return n


# -- singles: every case of every category ------------------------------------------------


# dual-tor's two planes are two classes of leaves (a NIC's port p reaches only the leaves of
# plane p): the fast path keeps one up-down index per class and judges ports per plane.
SINGLE_CASES = [(name, jobs, base) for name in SMALL for jobs in JOB_SETS for base in BASES]


@pytest.mark.parametrize(("name", "jobs", "base"), SINGLE_CASES)
def test_every_single_failure_fast_equals_exact(name: str, jobs: str, base: str) -> None:
    f = small(name)
    ev = evaluator(f, JOB_SETS[jobs], BASES[base](f))
    singles = single_failures(f, CATEGORIES)
    categories = {x.category(f) for x in singles}
    assert {"leaf", "spine", "nic", "cable (access)", "optic (access)"} <= categories
    check_singles(ev, singles, range(len(singles)))
    if name == "dual-tor":  # two planes, each whole: NICs and their ports on the fast path
        slow = {c.category(f) for c in ev.evaluate_singles(singles) if c.exact}
        assert not slow & {"nic", "cable (access)", "optic (access)"}


SEED_CASES = [
    ("per-su", "healthy", ()),
    ("per-su", "two-spines-drained", ({"drain": ["spine-05", "spine-06"]},)),
    ("cross-su", "leaf-down", ({"kill": "su02/leaf-r1"},)),
    ("cross-su", "access-degraded", (
        {"degrade": {"target": "su01/node01/nic0:1--su01/leaf-r0:1", "fraction": 0.5}},
    )),
]  # fmt: skip


@pytest.mark.parametrize(("jobs", "base", "faults"), SEED_CASES, ids=[c[1] for c in SEED_CASES])
def test_seed_a800_sample_fast_equals_exact(jobs: str, base: str, faults: tuple[object]) -> None:
    """Every category, up to 12 cases each, spread over the fabric."""
    f = seed()
    cross = JobSpec(name="cross", nodes=("su01/node01", "su05/node0[1-4]", "su10/node20"))
    specs = (PER_SU,) if jobs == "per-su" else (cross,)
    ev = evaluator(f, specs, [Fault.parse(x) for x in faults])
    singles = single_failures(f, CATEGORIES)
    by_cat: dict[str, list[int]] = defaultdict(list)
    for k, x in enumerate(singles):
        by_cat[x.category(f)].append(k)
    chosen = [k for ks in by_cat.values() for k in ks[:: max(1, len(ks) // 12)]]
    assert len(by_cat) >= 10  # spine, leaf, nic, node, storage..., cables and optics per tier
    check_singles(ev, singles, chosen)


def test_base_already_split_agrees() -> None:
    """One spine, its only uplink from a leaf cut: the NICs sit in two classes (the cut
    leaf reaches only itself); the fast path judges each class on its own."""
    f = small("two-tier-1-spine")
    ev = evaluator(f, (PER_SU,), [Fault.parse({"cut": _uplink(f)})])
    assert ev._classes is not None
    assert len(ev._classes) == 2
    singles = single_failures(f, CATEGORIES)
    check_singles(ev, singles, range(len(singles)))
    assert not all(c.exact for c in ev.evaluate_singles(singles))


VALLEY = (
    {"cut": {"between": ["su01/leaf-r0", "spine-0[34]"]}},
    {"cut": {"between": ["su02/leaf-r0", "spine-0[12]"]}},
)


@pytest.mark.parametrize("jobs", ["per-su", "cross-su", "cross-su-port-failover"])
@pytest.mark.parametrize("bisection", [False, True])
def test_valley_base_fast_equals_exact(jobs: str, bisection: bool) -> None:
    """su01/leaf-r0 hangs on spines 1-2, su02/leaf-r0 on 3-4: no spine above both (a valley),
    so the NIC ports reach no classes; under up-down the fast path keeps which leaves
    reached which and goes exact only when a case breaks one of those routes."""
    f = two_tier(sus=2, nodes_per_su=2, spines=4, leaf_radix=16)
    ev = evaluator(f, JOB_SETS[jobs], [Fault.parse(x) for x in VALLEY], bisection=bisection)
    assert ev._classes is None
    singles = single_failures(f, CATEGORIES)
    check_singles(ev, singles, range(len(singles)))
    results = ev.evaluate_singles(singles)
    assert sum(not c.exact for c in results) > len(results) // 2
    switches, sampled = depth_two(f, 150, 3)
    check_pairs(ev, [*switches, *sampled])


@pytest.mark.parametrize("name", ["two-tier-2-spines", "three-tier"])
def test_bisection_fast_equals_exact(name: str) -> None:
    f = small(name)
    ev = evaluator(f, JOB_SETS["cross-su"], bisection=True)
    singles = single_failures(f, CATEGORIES)
    check_singles(ev, singles, range(len(singles)))
    assert all(c.bisection_ratio is not None for c in ev.evaluate_singles(singles))


def test_bulk_nic_case_carries_the_bisection_ratio() -> None:
    f = small("two-tier-2-spines")
    ev = evaluator(f, (PER_SU,), bisection=True)
    (case,) = ev.evaluate_singles([Failure.of(f, "su01/node01/nic0")])
    # SU 1 has 8 NIC ports of 200 Gb/s; without one, 7/8 of its side of the bisection
    assert case.bisection_ratio == pytest.approx(0.875)


# -- pairs --------------------------------------------------------------------------------


PAIR_CASES = [
    (name, jobs, base)
    for name in SMALL
    for jobs, base in [
        ("per-su", "healthy"),
        ("cross-su", "leaf-down"),
        ("per-su", "spine-drained"),
    ]
]


@pytest.mark.parametrize(("name", "jobs", "base"), PAIR_CASES)
def test_pairs_fast_equals_exact(name: str, jobs: str, base: str) -> None:
    """Every pair of switches and a seeded sample of other pairs, as depth 2 sweeps them."""
    f = small(name)
    ev = evaluator(f, JOB_SETS[jobs], BASES[base](f))
    switches, sampled = depth_two(f, 300, 7)
    assert check_pairs(ev, [*switches, *sampled]) > 100


OVERLAP_SAMPLE = 1400  # overlapping pairs checked per fabric, at most about this many
OVERLAP_CASES = [
    ("two-tier-2-spines", "per-su"),
    ("two-tier-2-spines", "cross-su"),
    ("two-tier-3-spines-2-cables", "cross-su"),
    pytest.param("three-tier", "per-su", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("name", "jobs"), OVERLAP_CASES)
def test_overlapping_pairs_fast_equals_exact(name: str, jobs: str) -> None:
    """Pairs of failures (all categories) that take down some of the same capacity: the fast
    path must count it once (leaf uplinks, storage shares, bus bandwidth).  Every such pair
    on the smallest fabric (1,302); on the larger ones (5,702 and 14,756 pairs) an even
    stride of them, about 1,400, in the order they are enumerated (each kind of pair
    comes in long runs, so every kind is still taken; each costs a full analysis)."""
    f = small(name)
    ev = evaluator(f, JOB_SETS[jobs])
    pairs = [p for p in itertools.combinations(single_failures(f, CATEGORIES), 2) if overlap(f, *p)]
    stride = max(1, len(pairs) // OVERLAP_SAMPLE)
    assert check_pairs(ev, pairs[::stride]) > 1000


def _failure(f: Fabric, label: str) -> Failure:
    return Failure.of(f, label.removeprefix("optic "))


@pytest.mark.parametrize(
    ("labels", "field", "value"),
    [
        (("spine-01", "su01/leaf-r0:3--spine-01:1"), "leaf_uplink_ratio", 0.5),
        (("spine-01", "su01/leaf-r0:3--spine-01:1"), "min_busbw_ratio", 1.0),
        (("spine-01", "optic su02/leaf-r2:3"), "leaf_uplink_ratio", 0.5),
        (("optic su01/leaf-r0:3", "optic spine-01:1"), "leaf_uplink_ratio", 0.5),
        (("su01/node01/stor0", "su01/storage-sw1"), "storage_ratio", 0.5),
        (("su01/node01/stor0:1--su01/storage-sw1:1", "su01/storage-sw1:3--storage:1"),
         "storage_ratio", 0.5),
    ],
)  # fmt: skip
def test_overlapping_pair_examples(labels: tuple[str, str], field: str, value: float) -> None:
    """Named cases on 2 spines: one leaf uplink of two left, one storage NIC of two left."""
    f = small("two-tier-2-spines")
    ev = evaluator(f, JOB_SETS["cross-su"])
    pair = tuple(_failure(f, x) for x in labels)
    assert " + ".join(x.label(f) for x in pair) == " + ".join(labels)
    assert getattr(ev.evaluate_exact(pair), field) == pytest.approx(value)
    assert getattr(ev.evaluate(pair), field) == pytest.approx(value)


def test_depth_2_sweep_rows_equal_the_full_analysis() -> None:
    """What ``harness sweep FABRIC --depth 2`` prints, row by row."""
    f = small("two-tier-2-spines")
    result = run_sweep(SweepSpec(f, (PER_SU,), depth=2))
    ev = evaluator(f, (PER_SU,))
    problems: list[str] = []
    for case in result.cases:
        problems += differences(f, case, ev.evaluate_exact(case.failures), "run_sweep")
    assert problems == []
    assert result.sampled_pairs == 1000


def test_two_spine_fabric_spine_pair_disconnects() -> None:
    f = small("two-tier-2-spines")
    result = sweep(f, depth=2)
    disconnecting = [c for c in result.cases if c.pairs_disconnected]
    assert [c.label(f) for c in disconnecting] == ["spine-01 + spine-02"]
    (case,) = disconnecting
    # both SUs cut apart: 16 GPUs x 16 GPUs, by the full analysis (the pair splits the graph)
    assert case.pairs_disconnected == 16 * 16
    assert case.exact
    assert result.disconnecting == 1
    assert result.by_category()["spine + spine"] == (1, 1, 0)
    ev = evaluator(f, (PER_SU,))
    assert not differences(f, case, ev.evaluate_exact(case.failures), "sweep")


def test_a_single_spine_is_an_articulation_point() -> None:
    f = small("two-tier-1-spine")
    ev = evaluator(f, (PER_SU,))
    case = ev.evaluate([Failure.of(f, "spine-01")])
    assert case.exact
    assert case.pairs_disconnected == 16 * 16
    assert case.jobs_lost == ()  # per-SU jobs stay under their own leaves


# -- enumeration --------------------------------------------------------------------------


def test_seed_a800_single_failures_per_category() -> None:
    f = seed()
    singles = single_failures(f, DEFAULT_CATEGORIES)
    counts: dict[str, int] = defaultdict(int)
    for x in singles:
        counts[x.category(f)] += 1
    assert dict(counts) == {
        "spine": 20, "leaf": 40, "cable (access)": 800, "cable (leaf-spine)": 800, "nic": 800,
    }  # fmt: skip
    assert len(singles) == 2460
    optics = single_failures(f, ["optics"])
    assert len(optics) == 2 * 1600
    assert len({x.port for x in optics}) == len(optics)


def test_sampled_pairs_are_seeded_distinct_and_not_both_switches() -> None:
    f = seed()
    switches, a = depth_two(f, 200, 3)
    assert a == depth_two(f, 200, 3)[1]
    assert a != depth_two(f, 200, 4)[1]
    assert len(a) == len(set(a)) == 200
    compute = {int(Kind.LEAF), int(Kind.SPINE), int(Kind.CORE)}

    def is_switch(x: Failure) -> bool:
        return x.kind == "element" and int(f.kind[x.index]) in compute

    assert not [p for p in a if is_switch(p[0]) and is_switch(p[1])]
    kinds = {tuple(sorted(x.category(f) for x in p)) for p in a}
    assert ("nic", "nic") in kinds  # two elements, but not two switches
    assert ("leaf", "nic") in kinds
    n = len(f.indices_of_kind(Kind.LEAF, Kind.SPINE, Kind.CORE))
    assert len(switches) == n * (n - 1) // 2
    assert all(is_switch(x) for p in switches for x in p)


def test_only_element_categories_still_sample_pairs() -> None:
    _, sampled = depth_two(seed(), 20, 1, ["nics"])
    assert len(sampled) == 20


def test_switch_pairs_include_cores() -> None:
    f = small("three-tier")
    switches, _ = depth_two(f, 0, 0)
    n = len(f.indices_of_kind(Kind.LEAF, Kind.SPINE, Kind.CORE))
    assert len(switches) == n * (n - 1) // 2
    assert any(f.ids[x.index].startswith("core-") for p in switches for x in p)


def test_parse_categories() -> None:
    assert parse_categories("switches, cables,switches") == ("switches", "cables")
    assert parse_categories(["nics"]) == ("nics",)
    with pytest.raises(ScenarioError, match=r"unknown category 'switchs'; did you mean 'switches'"):
        parse_categories("switchs,cables")
    with pytest.raises(ScenarioError, match=r"unknown category nothing \(known: switches"):
        parse_categories(" , ")


# -- runs ---------------------------------------------------------------------------------


@functools.cache
def seed_run() -> SweepResult:
    return run_sweep(SweepSpec("seed-a800", (PER_SU,)))


def test_seed_a800_per_su_known_counts() -> None:
    r = seed_run()
    assert (len(r.cases), r.disconnecting, r.job_losing) == (2460, 0, 1640)
    assert r.by_category() == {
        "spine": (20, 0, 0),
        "leaf": (40, 0, 40),
        "cable (access)": (800, 0, 800),
        "cable (leaf-spine)": (800, 0, 0),
        "nic": (800, 0, 800),
    }
    assert r.exact_cases == 0  # one component, no articulation point: all fast
    assert r.sampled_pairs == 0


def test_sweep_api_matches_its_docstring() -> None:
    r = sweep(seed(), elements=["switches"])
    assert (len(r.cases), r.job_losing, r.disconnecting) == (60, 40, 0)


def _rows(r: SweepResult) -> list[dict[str, object]]:
    return [row(r, c) for c in r.cases]


def test_two_workers_give_the_same_rows_as_one() -> None:
    spec = SweepSpec("seed-a800", (PER_SU,))
    assert _rows(run_sweep(spec, workers=2)) == _rows(seed_run())


def test_two_workers_depth_two_on_a_fabric_object() -> None:
    spec = SweepSpec(
        small("two-tier-2-spines"), (PER_SU,), (Fault.parse({"kill": "su01/leaf-r1"}),),
        depth=2, pair_sample=60, seed=5,
    )  # fmt: skip
    one, two = run_sweep(spec), run_sweep(spec, workers=2)
    assert _rows(two) == _rows(one)
    assert two.exact_cases == one.exact_cases
    assert one.sampled_pairs == 60


def test_progress_reaches_the_total() -> None:
    seen: list[tuple[int, int]] = []
    spec = SweepSpec(seed(), (PER_SU,), categories=("switches",))
    run_sweep(spec, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (60, 60)


def test_json_document() -> None:
    r = seed_run()
    doc = json.loads(json.dumps(to_json(r)))
    assert (doc["cases"], doc["disconnecting"], doc["job_losing"]) == (2460, 0, 1640)
    assert doc["fabric"] == "seed-a800"
    assert doc["elements"] == ["switches", "cables", "nics"]
    assert doc["depth"] == 1
    assert doc["pair_sample_seed"] is None
    assert doc["jobs"] == [f"su{i:02d}" for i in range(1, 11)]
    assert len(doc["rows"]) == 2460
    assert doc["by_category"]["leaf"] == {"cases": 40, "disconnecting": 0, "job_losing": 40}
    top = doc["rows"][0]  # ranked: a leaf loses its SU's job, and cuts the most NICs
    assert top["category"] == "leaf"
    assert top["jobs_lost"] == [f"su{top['case'][2:4]}"]
    assert top["min_busbw_ratio"] == 1.0  # of the jobs that survive: the other SUs'
    assert set(top) >= {"case", "gpu_pairs_disconnected", "leaf_uplink_ratio", "exact"}
    assert sum(1 for x in doc["rows"] if x["jobs_lost"]) == 1640


def test_csv_has_one_row_per_case(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    write_csv(seed_run(), path)
    with path.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2460
    assert rows[0]["category"] == "leaf"
    assert sum(1 for x in rows if x["jobs_lost"]) == 1640


def test_plot_writes_a_png(tmp_path: Path) -> None:
    path = tmp_path / "sweep.png"
    plot(seed_run(), path)
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 10_000


def test_results_name_what_failed_by_id() -> None:
    """The public result carries ids (as scenario files write them), not array indices."""
    f = preset("seed-a800")
    r = sweep(f, elements=["switches", "cables", "optics"])
    ids = {x.id for c in r.cases for x in c.failures}
    assert {"spine-05", "su01/leaf-r0", "su01/node01/nic0:1--su01/leaf-r0:1"} <= ids
    assert "su01/leaf-r0:1" in ids  # an optic, by its port id
    worst = r.ranked()[0]
    assert worst.ids == tuple(x.id for x in worst.failures)
    assert all(i in f.index or i in f.link_index or i in f.port_index for i in ids)
    assert "index" not in repr(worst.failures[0])
    doc = to_json(r)
    row = next(x for x in doc["rows"] if x["case"] == "spine-05")
    assert row["failures"] == [{"fault": "kill", "id": "spine-05"}]
    optic = next(x for x in doc["rows"] if x["case"] == "optic su01/leaf-r0:1")
    assert optic["failures"] == [{"fault": "optic", "id": "su01/leaf-r0:1"}]


def test_failure_of_an_id_round_trips() -> None:
    f = preset("seed-a800")
    for target in ("spine-05", "su01/node01/nic0:1--su01/leaf-r0:1", "su01/leaf-r0:1"):
        x = Failure.of(f, target)
        assert x.id == target
        assert x.to_fault(f).fault.target.ids == (target,)
    assert Failure.of(f, "su01/leaf-r0:1").fault == "optic"
    with pytest.raises(ScenarioError, match="'spine-99' is not an element, cable or port id"):
        Failure.of(f, "spine-99")


def test_cable_ids_match_the_fabric_link_ids() -> None:
    f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, node_overrides={"rails": 2})
    cables = f.links_of_kind(LinkKind.ACCESS, LinkKind.LEAF_SPINE).tolist()
    assert "link_ids" not in vars(f)
    computed = cable_ids(f, cables)  # formatted from the arrays
    assert computed == [f.link_ids[i] for i in cables] == cable_ids(f, cables)  # and cached
