"""Pre-change risk: budgets and changes as text, the blast radius of a change, its N+1 margin."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Sequence

import pytest

from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import LinkKind
from harness.fabric import preset
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.fabric.jobs import Job
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.fault import FaultState
from harness.faults.selectors import Selector
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.observations.budget import BUDGET_METRICS
from harness.observations.budget import DEFAULT_BUDGET
from harness.observations.budget import BudgetRule
from harness.observations.budget import parse_budget
from harness.planning.margin import MarginRow
from harness.planning.risk import RiskReport
from harness.planning.risk import assess
from harness.planning.risk import parse_change
from harness.planning.sweep.cases import single_failures
from harness.planning.sweep.categories import DEFAULT_MARGIN_CATEGORIES
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import CaseResult
from harness.reporting.risk_json import to_json

PER_SU = JobSpec(per_su=True)
BUDGET = "jobs_lost=0,bandwidth>=0.9"


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


@functools.cache
def seed_jobs() -> tuple[Job, ...]:
    return resolve_jobs([PER_SU], seed())


@functools.cache
def drain_two_spines(require_margin: int = 0) -> RiskReport:
    return assess(
        seed(), seed_jobs(), parse_change("drain spine-05,spine-06"), parse_budget(BUDGET),
        require_margin=require_margin,
    )  # fmt: skip


# -- parse_budget -----------------------------------------------------------------------


def test_parse_budget_rules() -> None:
    rules = parse_budget("jobs_lost=0, bandwidth >= 0.9,uplink>0.5,gpu_pairs_disconnected<=10")
    assert [r.metric for r in rules] == [
        "jobs_lost",
        "bandwidth",
        "uplink",
        "gpu_pairs_disconnected",
    ]
    assert [r.describe() for r in rules] == [
        "jobs_lost 0", "bandwidth >= 0.9", "uplink > 0.5", "gpu_pairs_disconnected <= 10",
    ]  # fmt: skip
    jobs_lost, bandwidth, uplink, pairs = rules
    assert jobs_lost.expect.check(0)
    assert not jobs_lost.expect.check(1)
    assert bandwidth.expect.check(0.9)
    assert not bandwidth.expect.check(0.89)
    assert not uplink.expect.check(0.5)
    assert pairs.expect.check(10)


def test_parse_budget_every_metric_and_operator() -> None:
    text = ",".join(f"{m}!=1e9" for m in BUDGET_METRICS)
    assert [r.metric for r in parse_budget(text)] == list(BUDGET_METRICS)
    (rule,) = parse_budget("storage==1")
    assert rule == BudgetRule("storage", parse_budget("storage=1")[0].expect)
    assert parse_budget("bisection<1.0")[0].expect.check(0.5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "jobs_lost",
            r"--budget: cannot read 'jobs_lost'; write e\.g\. jobs_lost=0,bandwidth>=0\.9",
        ),
        ("bandwidth>=lots", r"cannot read 'bandwidth>=lots'; write e\.g\."),
        ("jobs_lost=0,,Bandwidth>=0.9", r"cannot read 'Bandwidth>=0\.9'"),
        (
            "job_lost=0",
            r"unknown metric 'job_lost'; did you mean 'jobs_lost'\? \(known: jobs_lost,",
        ),
        ("bandwith>=0.9", r"unknown metric 'bandwith'; did you mean 'bandwidth'\?"),
        ("zebra=1", r"unknown metric 'zebra' \(known: jobs_lost, bandwidth, uplink,"),
        ("", r"--budget is empty; write e\.g\. jobs_lost=0,bandwidth>=0\.9"),
        (" , ", r"--budget is empty"),
    ],
)
def test_parse_budget_errors_say_how_to_fix(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_budget(text)


# -- parse_change -----------------------------------------------------------------------


def test_parse_change_one_verb_many_targets() -> None:
    (fault,) = parse_change("drain spine-05,spine-06")
    assert fault.kind is FaultKind.DRAIN
    assert fault == Fault.parse({"drain": ["spine-05", "spine-06"]})
    applied = fault.resolve(seed())
    assert [seed().ids[i] for i in applied.elements] == ["spine-05", "spine-06"]


def test_parse_change_several_parts() -> None:
    faults = parse_change(" kill su02/leaf-r1 ; cut su01/leaf-r0:21--spine-01:1;optic spine-03:7 ;")
    assert faults == (
        Fault(FaultKind.KILL, Selector(ids=("su02/leaf-r1",))),
        Fault(FaultKind.CUT, Selector(ids=("su01/leaf-r0:21--spine-01:1",))),
        Fault(FaultKind.OPTIC, Selector(ids=("spine-03:7",))),
    )
    assert [f.resolve(seed()).describe(seed()) for f in faults][:2] == [
        "killed su02/leaf-r1", "cut su01/leaf-r0:21--spine-01:1",
    ]  # fmt: skip


def test_parse_change_globs() -> None:
    (fault,) = parse_change("drain spine-1*")
    ids = [seed().ids[i] for i in fault.resolve(seed()).elements]
    assert ids == [f"spine-{i}" for i in range(10, 20)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("drain", r"--change: 'drain' names no target; write e\.g\. 'drain spine-05,spine-06'"),
        ("drain  , ", r"'drain  ,' names no target"),
        ("degrade spine-05", r"--change: 'degrade spine-05': degrade needs how much is left"),
        ("", r"--change is empty; write e\.g\. 'drain spine-05,spine-06'"),
        (" ; ;", r"--change is empty"),
        ("dran spine-05", r"unknown fault kind 'dran'; did you mean 'drain'\?"),
        ("reboot spine-05", r"unknown fault kind 'reboot' \(known: kill, drain, cut"),
    ],
)
def test_parse_change_errors_say_how_to_fix(text: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_change(text)


# -- assess: seed-a800 ------------------------------------------------------------------


def test_draining_two_spines_is_within_budget() -> None:
    r = drain_two_spines()
    assert r.ok
    assert r.broken_after == ()
    assert r.after.jobs_lost == ()
    assert r.after.uplink == pytest.approx(0.9)  # 18 of 20 uplinks per leaf
    assert r.after.bandwidth == pytest.approx(1.0)  # per-SU jobs never leave their leaves
    assert r.after.bisection == pytest.approx(0.9)
    assert (r.after.nics_cut, r.after.gpus_cut, r.after.gpu_pairs_disconnected) == (0, 0, 0)
    assert r.before.uplink == pytest.approx(1.0)
    assert r.state == ()
    assert [a.describe(r.fabric) for a in r.change] == ["drained spine-05, spine-06"]


def test_requiring_n_plus_1_on_what_the_change_adds() -> None:
    """Access failures lose a job before the drain as after it: the drain adds no fragility."""
    r = drain_two_spines(1)
    assert r.ok
    assert r.margin_after is not None
    assert r.margin_after.breaking  # they do break the budget ...
    assert r.margin_added == ()  # ... but not because of the change
    assert r.margin_blocking == ()


def test_requiring_n_plus_1_absolute_fails_on_access_failures() -> None:
    r = assess(seed(), seed_jobs(), "drain spine-05,spine-06", "abs:jobs_lost=0,bandwidth>=0.9",
               require_margin=1)  # fmt: skip
    assert not r.ok
    assert r.broken_after == ()  # the change itself is fine; its margin is not
    assert r.margin_after is not None
    top, rules = r.margin_blocking[0]
    assert rules == ("abs:jobs_lost 0",)  # bandwidth is of the jobs that survive
    assert top.category(r.fabric) == "leaf"  # ranked: a leaf takes a whole SU job's rail


def test_margin_counts_per_category_on_seed_a800() -> None:
    """Counted from the fabric: every access-side failure loses its SU's job, nothing else does."""
    f = seed()
    r = drain_two_spines(1)
    assert r.margin_after is not None
    assert r.margin_before is not None
    access = len(f.links_of_kind(LinkKind.ACCESS))
    uplinks = len(f.links_of_kind(LinkKind.LEAF_SPINE))
    drained = 2 * len(f.leaves)  # every leaf has one cable to each drained spine
    expected_after = {
        "cable (access)": (access, access),
        "optic (access)": (2 * access, 2 * access),
        "nic": (len(f.nics), len(f.nics)),
        "leaf": (len(f.leaves), len(f.leaves)),
        "cable (leaf-spine)": (0, uplinks - drained),
        "optic (leaf-spine)": (0, 2 * (uplinks - drained)),
        "spine": (0, len(f.spines) - 2),
    }
    assert {k: (n, t) for k, n, t in r.margin_after.by_category} == expected_after
    assert r.margin_after.cases == sum(t for _, t in expected_after.values())
    assert len(r.margin_after.breaking) == sum(n for n, _ in expected_after.values())
    before = {k: (n, t) for k, n, t in r.margin_before.by_category}
    assert before["spine"] == (0, 20)
    assert before["cable (leaf-spine)"] == (0, uplinks)
    assert before["leaf"] == expected_after["leaf"]


def test_a_state_that_already_loses_a_job() -> None:
    r = assess(
        seed(), seed_jobs(), parse_change("drain spine-05,spine-06"), parse_budget(BUDGET),
        state=[Fault.parse({"kill": "su02/leaf-r1"})], margin=False,
    )  # fmt: skip
    assert r.before.jobs_lost == ("su02",)
    assert r.before.nics_cut == 20
    assert r.before.reasons
    assert all(x.startswith("su02: ") and "su02/leaf-r1 is down" in x for x in r.before.reasons)
    assert dict(r.before.job_bandwidth)["su02"] == 0.0
    assert dict(r.before.job_bandwidth)["su01"] == pytest.approx(1.0)
    # the budget is about the change: su02 was lost before it and stays lost
    assert r.after.jobs_lost == ("su02",)
    assert r.added.jobs_lost == ()
    assert r.already_lost == (("su02", r.before.reasons_of("su02")),)
    assert "leaf su02/leaf-r1 is down" in r.already_lost[0][1][0]
    assert r.broken_after == ()
    assert r.ok
    # bandwidth: of the jobs that survive (su02 is lost, not slow); the others keep theirs
    assert r.after.bandwidth == pytest.approx(1.0)
    assert r.after.jobs_unplaceable == ("su02",)
    assert r.added.bandwidth == pytest.approx(1.0)
    assert "su02" not in dict(r.added.job_bandwidth)
    assert r.added.uplink == pytest.approx(0.9)  # 18 of the 20 uplinks a leaf had
    assert [a.describe(r.fabric) for a in r.state] == ["killed su02/leaf-r1"]
    assert r.margin_after is None
    assert r.margin_rows() == ()


def test_an_absolute_budget_counts_the_state_s_own_losses() -> None:
    r = assess(seed(), seed_jobs(), "drain spine-05,spine-06", "abs:jobs_lost=0,abs:bandwidth>=0.9",
               state="kill su02/leaf-r1", margin=False)  # fmt: skip
    assert r.broken_after == ("abs:jobs_lost 0",)  # su02 is lost: no bandwidth to judge
    assert not r.ok


def test_a_change_that_kills_a_leaf_breaks_jobs_lost_and_names_the_leaf() -> None:
    r = assess(
        seed(), seed_jobs(), parse_change("kill su03/leaf-r2"), parse_budget("jobs_lost=0"),
        margin=False,
    )  # fmt: skip
    assert not r.ok
    assert r.broken_after == ("jobs_lost 0",)
    assert r.after.jobs_lost == ("su03",)
    assert r.after.nics_cut == 20
    assert r.after.reasons
    assert all("leaf su03/leaf-r2 is down" in x for x in r.after.reasons)
    assert r.before.jobs_lost == ()


def test_margin_rows_before_after_added() -> None:
    rows = {row.category: row for row in drain_two_spines().margin_rows()}
    assert len(rows) == 7
    assert rows["spine"] == MarginRow("spine", 0, 20, 0, 18, 0)
    assert rows["cable (access)"] == MarginRow("cable (access)", 800, 800, 800, 800, 0)


def test_require_margin_other_than_0_or_1_is_bad_input() -> None:
    with pytest.raises(ScenarioError, match=r"--require-margin 2: only 0 \(the change\) or 1"):
        assess(seed(), seed_jobs(), parse_change("drain spine-05"), parse_budget(BUDGET),
               require_margin=2)  # fmt: skip


def test_to_json_document() -> None:
    doc = json.loads(json.dumps(to_json(drain_two_spines(1))))
    assert doc["ok"] is True
    assert doc["fabric"] == "seed-a800"
    assert doc["budget"] == ["jobs_lost 0", "bandwidth >= 0.9"]
    assert doc["require_margin"] == 1
    assert doc["change"] == ["drained spine-05, spine-06"]
    assert doc["state"] == []
    assert doc["budget_broken_by_change"] == []
    assert doc["after"]["leaf_uplink_ratio"] == pytest.approx(0.9)
    assert doc["after"]["jobs_lost"] == []
    assert doc["before"]["job_busbw_ratio"]["su01"] == 1.0
    margin = doc["margin_after"]
    assert margin["by_category"]["spine"] == {"breaking": 0, "of": 18}
    assert margin["breaking"] == 800 + 1600 + 800 + 40
    assert len(margin["top"]) == 50
    assert margin["top"][0]["breaks"] == ["jobs_lost 0"]  # a lost job is not a slow one
    assert doc["margin_before"]["by_category"]["spine"] == {"breaking": 0, "of": 20}
    assert doc["margin"]["by_category"]["spine"] == {
        "before": {"breaking": 0, "of": 20}, "after": {"breaking": 0, "of": 18}, "added": 0,
    }  # fmt: skip
    assert (doc["margin"]["added"], doc["margin"]["blocking"], doc["margin"]["top_added"]) == (
        0, 0, [],
    )  # fmt: skip
    assert doc["added"]["jobs_lost"] == []
    assert doc["added"]["leaf_uplink_ratio"] == pytest.approx(0.9)
    assert doc["already_lost"] == []


# -- the N+1 margin against an independent count ------------------------------------------


@functools.cache
def pods() -> Fabric:
    return three_tier(sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=4,
                      radix=16)  # fmt: skip


@functools.cache
def lab() -> Fabric:
    return two_tier(sus=2, nodes_per_su=2, spines=3, cables_per_pair=2, leaf_radix=16)


def independent_margin(
    fabric: Fabric,
    jobs: Sequence[Job],
    change: Sequence[Fault],
    rules: Sequence[BudgetRule],
    state: Sequence[Fault] = (),
) -> tuple[tuple[str, int, int], ...]:
    """Each further failure on top of ``state`` + ``change`` as a fault from its id, analysed
    in full and judged against ``state`` alone: (category, breaking, of)."""
    healthy = Analysis(fabric, Observation.from_state(FaultState.healthy(fabric)), jobs)
    now = FaultState.healthy(fabric)
    for fault in state:
        now = now.inject(fault)
    ref = Analysis(fabric, Observation.from_state(now), jobs, healthy=healthy)
    after = now
    for fault in change:
        after = after.inject(fault)
    ref_leaf = ref.leaf_uplinks[0]
    totals: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for x in single_failures(fabric, DEFAULT_MARGIN_CATEGORIES):
        if x.kind == "element":
            if not after.element_up[x.index]:
                continue
            fault = Fault.parse({"kill": fabric.ids[x.index]})
        elif after.link_capacity[x.index] <= 0:
            continue
        elif x.kind == "optic":
            fault = Fault.parse({"optic": x.port})
        else:
            fault = Fault.parse({"cut": fabric.link_ids[x.index]})
        a = Analysis(fabric, Observation.from_state(after.inject(fault)), jobs, healthy=healthy)
        leaves = [int(i) for i in fabric.leaves if a.up[i] and ref_leaf[i] > 0]
        servers = [int(s) for s in fabric.servers if a.up[s] and ref.storage_gbps(int(s)) > 0]
        healthy_servers = [int(s) for s in fabric.servers
                           if a.up[s] and healthy.storage_gbps(int(s)) > 0]  # fmt: skip
        values = {
            ("jobs_lost", True): len(a.jobs_lost()),
            ("jobs_lost", False): len(set(a.jobs_lost()) - set(ref.jobs_lost())),
            ("uplink", True): a.leaf_uplink_ratio(),
            ("uplink", False): min(
                (a.leaf_uplinks[0][i] / ref_leaf[i] for i in leaves), default=1.0
            ),
            # bandwidth: of the jobs that survive (a lost one counts in jobs_lost)
            ("bandwidth", True): min(
                (a.job_busbw_ratio(j) for j in jobs if j.name not in a.jobs_lost()), default=1.0
            ),
            ("bandwidth", False): min(
                (
                    a.job_busbw_gbs(j) / ref.job_busbw_gbs(j)
                    for j in jobs
                    if ref.job_busbw_gbs(j) > 0 and j.name not in a.jobs_lost()
                ),
                default=1.0,
            ),
            ("storage", True): min(
                (a.storage_gbps(s) / healthy.storage_gbps(s) for s in healthy_servers),
                default=1.0,
            ),
            ("storage", False): min(
                (a.storage_gbps(s) / ref.storage_gbps(s) for s in servers), default=1.0
            ),
            ("gpu_pairs_disconnected", True): a.gpu_pairs_disconnected(pxn=True),
            ("gpu_pairs_disconnected", False): a.gpu_pairs_disconnected(pxn=True)
            - ref.gpu_pairs_disconnected(pxn=True),
        }
        totals[x.category(fabric)] += 1
        hits[x.category(fabric)] += any(
            not r.expect.check(values[(r.metric, r.absolute)]) for r in rules
        )
    return tuple((k, hits[k], totals[k]) for k in sorted(totals))


MARGIN_CASES = [
    ("lab", "per-su", "drain spine-01", "", "jobs_lost=0,uplink>=0.6"),
    ("lab", "cross-su", "drain spine-01", "", "jobs_lost=0,bandwidth>=0.9"),
    ("pods", "per-su", "drain pod01/spine-01", "", "jobs_lost=0,uplink>=0.6,bandwidth>=0.9"),
    ("pods", "cross-su", "kill core-g01-01; drain pod02/spine-03", "", DEFAULT_BUDGET),
    # with faults already present: relative rules judge against them, abs: rules do not
    ("lab", "cross-su", "drain spine-02", "cut su01/leaf-r0:3--spine-01:1",
     "jobs_lost=0,bandwidth>=0.9,uplink>=0.7"),
    ("lab", "cross-su", "drain spine-02", "cut su01/leaf-r0:3--spine-01:1",
     "abs:jobs_lost=0,abs:bandwidth>=0.6,uplink>=0.7"),
    ("pods", "cross-su", "drain pod01/spine-01", "kill pod01/spine-02; kill su03/leaf-r0",
     "jobs_lost=0,bandwidth>=0.9,abs:uplink>=0.6,gpu_pairs_disconnected=0"),
    ("pods", "per-su", "drain pod02/spine-01", "kill su01/node01",
     "jobs_lost=0,abs:gpu_pairs_disconnected<=100,storage>=1"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "jobs", "change", "state", "budget"), MARGIN_CASES)
def test_margin_counts_equal_an_independent_full_analysis(
    name: str, jobs: str, change: str, state: str, budget: str
) -> None:
    f = lab() if name == "lab" else pods()
    specs = [PER_SU] if jobs == "per-su" else [JobSpec("cross", ("su01/node01", "su02/node02"))]
    js = resolve_jobs(specs, f)
    faults, rules = parse_change(change), parse_budget(budget)
    present = parse_change(state) if state else ()
    r = assess(f, js, faults, rules, state=present)
    assert r.margin_after is not None
    assert r.margin_after.by_category == independent_margin(f, js, faults, rules, present)
    assert r.margin_before is not None
    assert r.margin_before.by_category == independent_margin(f, js, (), rules, present)
    assert any(n for _, n, _ in r.margin_after.by_category)  # the budget does bite somewhere


# -- the evaluator against a reference state ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "jobs", "state", "change"),
    [
        ("lab", "cross-su", "cut su01/leaf-r0:3--spine-01:1", "drain spine-02"),
        ("pods", "per-su", "kill su01/node01; kill pod01/spine-02", "drain pod02/spine-01"),
        ("pods", "cross-su", "kill su03/leaf-r0", "drain pod01/spine-01"),
    ],
)
def test_reference_ratios_fast_bulk_and_exact_agree(
    name: str, jobs: str, state: str, change: str
) -> None:
    """Against a reference, the fast path, the bulk path and the full analysis agree."""
    f = lab() if name == "lab" else pods()
    specs = [PER_SU] if jobs == "per-su" else [JobSpec("cross", ("su01/node01", "su02/node02"))]
    js = resolve_jobs(specs, f)
    now = FaultState.healthy(f)
    for fault in parse_change(state):
        now = now.inject(fault)
    after = now
    for fault in parse_change(change):
        after = after.inject(fault)
    reference = Analysis(f, Observation.from_state(now), js)
    ev = CaseEvaluator(f, js, after, reference=reference)
    singles = [
        x for x in single_failures(f, DEFAULT_MARGIN_CATEGORIES)
        if (after.element_up[x.index] if x.kind == "element" else after.link_capacity[x.index] > 0)
    ]  # fmt: skip
    fast = [ev.evaluate([x]) for x in singles]
    bulk = ev.evaluate_singles(singles)
    exact = [ev.evaluate_exact([x]) for x in singles]

    def key(c: CaseResult) -> tuple[object, ...]:
        return (c.jobs_lost, c.pairs_disconnected, round(c.leaf_uplink_ratio, 9),
                round(c.min_busbw_ratio, 9), round(c.storage_ratio, 9))  # fmt: skip

    assert [key(c) for c in fast] == [key(c) for c in exact]
    assert [key(c) for c in bulk] == [key(c) for c in exact]
    assert any(c.leaf_uplink_ratio < 1 for c in exact)  # the reference ratios do move


def test_progress_callback_counts_the_n_plus_1_cases(capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[tuple[int, int]] = []
    r = assess(lab(), resolve_jobs([PER_SU], lab()), "drain spine-01", "jobs_lost=0",
               progress=lambda done, total: calls.append((done, total)))  # fmt: skip
    total = 2 * len(single_failures(lab(), DEFAULT_MARGIN_CATEGORIES))
    assert r.margin_after is not None
    assert calls[0] == (0, total)
    assert calls[-1] == (total, total)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert {t for _, t in calls} == {total}
    assert len(calls) > 10
    assert capsys.readouterr() == ("", "")  # the library prints nothing
