"""Sweep output: JSON document, CSV rows and a PNG (reporting stage: writes files)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.observations.budget import ASSUMED_JOBS_NOTE
from harness.planning.sweep.ranking import gpus_lost
from harness.planning.sweep.ranking import job_gpus
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.run import SweepResult

COLUMNS = (
    "case", "group", "category", "gpus_lost", "gpu_pairs_disconnected",
    "gpu_pairs_disconnected_no_pxn", "jobs_lost", "jobs_unplaceable", "jobs_crashed",
    "leaf_uplink_ratio", "min_busbw_ratio", "min_busbw_job", "min_busbw_job_vs_line_rate",
    "storage_ratio", "bisection_ratio", "exact",
)  # fmt: skip


def _groups_of(result: SweepResult) -> dict[int, int]:
    """Case (by identity) -> the number of its group, in ranked order (0: the worst)."""
    return {id(c): k for k, g in enumerate(result.groups()) for c in g.cases}


def row(
    result: SweepResult, c: CaseResult, gpus: dict[str, int] | None = None, group: int = -1
) -> dict[str, Any]:
    """One case as a JSON- and CSV-ready row (``min_busbw_ratio``: the least expected bus
    bandwidth over the jobs that survive, against the same fabric healthy under the same
    forwarding, and ``min_busbw_job`` its job; ``min_busbw_job_vs_line_rate``: that job's
    against its line rate; ``group``: its group of alike cases)."""
    f = result.fabric
    gpus = job_gpus(f, result.jobs) if gpus is None else gpus
    return {
        "case": c.label(),
        "group": group,
        "failures": [{"fault": x.fault, "id": x.id} for x in c.failures],
        "category": c.category(f),
        "gpus_lost": gpus_lost(c, gpus),
        "gpu_pairs_disconnected": c.pairs_disconnected,
        "gpu_pairs_disconnected_no_pxn": c.pairs_disconnected_direct,
        "jobs_lost": list(c.jobs_lost),
        "jobs_unplaceable": list(c.unplaceable),
        "jobs_crashed": list(c.crashed),
        "leaf_uplink_ratio": round(c.leaf_uplink_ratio, 6),
        "min_busbw_ratio": round(c.min_busbw_ratio, 6),
        "min_busbw_job": c.busbw_job,
        "min_busbw_job_vs_line_rate": None
        if (v := result.vs_line_rate(c)) is None
        else round(v, 6),
        "storage_ratio": round(c.storage_ratio, 6),
        "bisection_ratio": None if c.bisection_ratio is None else round(c.bisection_ratio, 6),
        "exact": c.exact,
        "reasons": list(c.reasons),
    }


def to_json(result: SweepResult, *, jobs_assumed: bool = False) -> dict[str, Any]:
    """A sweep as a JSON document: the spec, the totals, the groups of alike cases (worst
    first) and every case."""
    spec = result.spec
    gpus = job_gpus(result.fabric, result.jobs)
    group = _groups_of(result)
    return {
        "fabric": result.fabric.name,
        "elements": list(spec.categories),
        "depth": spec.depth,
        "routing": {
            "paths": spec.paths,
            "forwarding": spec.forwarding,
            "reroute_s": spec.reroute_s,
        },
        "jobs": [j.name for j in result.jobs],
        "jobs_assumed": jobs_assumed,
        "jobs_note": ASSUMED_JOBS_NOTE if jobs_assumed else None,
        "ranking": "GPUs of the jobs lost, then GPU pairs cut, then surviving bandwidth",
        # the base state's jobs: expected bus bandwidth (ecmp: the mean over the hash draws)
        # against each job's line rate and against the same fabric healthy
        "job_busbw_figures": {x.job: x.to_json() for x in result.figures},
        "cases": len(result.cases),
        "disconnecting": result.disconnecting,
        "job_losing": result.job_losing,
        "sampled_pairs": result.sampled_pairs,
        "pair_sample_seed": spec.seed if spec.depth >= 2 else None,
        "exact_cases": result.exact_cases,
        "seconds": round(result.seconds, 4),
        "by_category": {
            k: {"cases": v[0], "disconnecting": v[1], "job_losing": v[2]}
            for k, v in result.by_category().items()
        },
        "groups": [
            {
                "label": g.label,
                "alike": g.count,
                "gpus_lost": g.gpus_lost,
                "cases": [c.label() for c in g.cases],
            }
            for g in result.groups()
        ],
        "rows": [row(result, c, gpus, group[id(c)]) for c in result.ranked()],
    }


def write_csv(result: SweepResult, path: Path) -> None:
    """Write the cases, worst first, as CSV."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=[*COLUMNS, "reasons"])
        w.writeheader()
        gpus = job_gpus(result.fabric, result.jobs)
        group = _groups_of(result)
        for c in result.ranked():
            r = row(result, c, gpus, group[id(c)])
            del r["failures"]  # the structured form of "case" (ids), for JSON
            for key in ("jobs_lost", "jobs_unplaceable", "jobs_crashed"):
                r[key] = " ".join(r[key])
            r["reasons"] = " | ".join(r["reasons"])
            w.writerow(r)


def plot(result: SweepResult, path: Path) -> None:
    """The impact of single failures by category (strip plots of bus bandwidth, leaf
    uplinks and jobs lost, worst cases named) and, at depth 2, the pair matrix by
    category; see :mod:`harness.reporting.html.figures`."""
    from harness.reporting.html.figures import sweep_figure
    from harness.reporting.html.sweep_page import base_lost
    from harness.reporting.html.sweep_page import base_state

    sweep_figure(result, path, base_lost=base_lost(result, base_state(result)))


def category_lines(result: SweepResult) -> list[tuple[str, int, int, int]]:
    """Per category: (category, cases, cases that disconnect, cases that lose a job), sorted."""
    grouped: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for k, (n, d, j) in result.by_category().items():
        grouped[k][0] += n
        grouped[k][1] += d
        grouped[k][2] += j
    return [(k, *v) for k, v in sorted(grouped.items())]  # type: ignore[misc]
