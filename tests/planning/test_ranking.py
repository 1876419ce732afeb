"""Ranking and grouping of failure cases (issue 19 item 4), through the real sweep.

Cases rank by the GPUs whose jobs they lose, not by how many jobs: a leaf that
loses one 320-GPU job is worse than one that loses two jobs of 16 GPUs.  Cases
alike by the fabric's symmetry (same numbers, same role) are one group.
"""

from __future__ import annotations

import functools

from harness.fabric import preset
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.planning.risk import assess
from harness.planning.sweep.ranking import group_cases
from harness.planning.sweep.ranking import rank_key
from harness.planning.sweep.run import sweep

PER_SU = JobSpec(per_su=True)
# two small jobs on su01 (2 servers each), one big one over su02..03 (40 servers)
MIXED = (
    JobSpec("a", ("su01/node0[12]",)),
    JobSpec("b", ("su01/node0[34]",)),
    JobSpec("big", ("su0[23]/*",)),
)


@functools.cache
def seed() -> Fabric:
    return preset("seed-a800")


def test_gpus_lost_outrank_the_number_of_jobs_lost() -> None:
    r = sweep(seed(), MIXED, elements=["switches"])
    first = r.ranked()[0]
    assert first.jobs_lost == ("big",)  # 320 GPUs ...
    two = next(c for c in r.ranked() if len(c.jobs_lost) == 2)
    assert set(two.jobs_lost) == {"a", "b"}  # ... outrank 2 jobs of 16 GPUs each
    assert r.ranked().index(two) > r.ranked().index(first)
    groups = r.groups()
    assert groups[0].label == "su02..03/leaf-r0"
    assert groups[0].count == 2
    assert groups[0].gpus_lost == 320
    assert next(g for g in groups if g.gpus_lost == 32).label.startswith("su01/leaf-r")


def test_alike_cases_are_one_group_per_role() -> None:
    r = sweep(seed(), (PER_SU,), elements=["switches", "nics"])
    groups = r.groups()
    assert sum(g.count for g in groups) == len(r.cases) == 860
    labels = {g.describe() for g in groups}
    # a rail's leaf in any SU (the per-SU jobs are alike); one NIC index in one SU; any spine
    assert "su01..10/leaf-r2: 10 alike" in labels
    assert "su01/node01..20/nic0: 20 alike" in labels
    assert "su07/node01..20/nic3: 20 alike" in labels
    assert "spine-01..20: 20 alike" in labels
    assert len(groups) == 4 + 40 + 1
    # ranked worst first, and each group's cases share every number
    assert groups[0].first.category(r.fabric) == "leaf"
    for g in groups:
        numbers = {(c.pairs_disconnected, c.min_busbw_ratio, len(c.jobs_lost)) for c in g.cases}
        assert len(numbers) == 1


def test_cases_with_other_numbers_are_not_grouped() -> None:
    """su01's leaves lose a, b (32 GPUs); su04's lose nothing: one rail, two groups."""
    jobs = resolve_jobs(MIXED, seed())
    r = sweep(seed(), MIXED, elements=["switches"])
    leaf_r0 = [g for g in group_cases(seed(), jobs, r.ranked()) if g.label.endswith("leaf-r0")]
    assert [(g.label, g.gpus_lost) for g in leaf_r0] == [
        ("su02..03/leaf-r0", 320), ("su01/leaf-r0", 32), ("su04..10/leaf-r0", 0),
    ]  # fmt: skip


def test_the_n_plus_1_listing_is_ranked_as_the_sweep() -> None:
    jobs = resolve_jobs(MIXED, seed())
    r = assess(seed(), jobs, "drain spine-03", "abs:jobs_lost=0", require_margin=1,
               margin_categories=("switches",))  # fmt: skip
    key = rank_key(seed(), jobs)
    listed = [c for c, _ in r.margin_blocking]  # what risk lists under --require-margin 1
    assert len(listed) == 12  # the leaves of su01..03: big's 320 GPUs, then a and b's 32
    assert [key(c) for c in listed] == sorted(key(c) for c in listed)
    assert [c.jobs_lost for c in listed[:8]] == [("big",)] * 8
    assert set(listed[8].jobs_lost) == {"a", "b"}
