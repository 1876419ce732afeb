"""Sweep output: JSON document, CSV rows, a rich table and a PNG (edge layer: writes files)."""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.sweep.engine import CaseResult
from harness.sweep.run import SweepResult

COLUMNS = (
    "case", "category", "gpu_pairs_disconnected", "gpu_pairs_disconnected_no_pxn",
    "jobs_lost", "leaf_uplink_ratio", "min_busbw_ratio", "storage_ratio", "bisection_ratio",
    "exact",
)  # fmt: skip


def row(result: SweepResult, c: CaseResult) -> dict[str, Any]:
    f = result.fabric
    return {
        "case": c.label(),
        "failures": [{"fault": x.fault, "id": x.id} for x in c.failures],
        "category": c.category(f),
        "gpu_pairs_disconnected": c.pairs_disconnected,
        "gpu_pairs_disconnected_no_pxn": c.pairs_disconnected_direct,
        "jobs_lost": list(c.jobs_lost),
        "leaf_uplink_ratio": round(c.leaf_uplink_ratio, 6),
        "min_busbw_ratio": round(c.min_busbw_ratio, 6),
        "storage_ratio": round(c.storage_ratio, 6),
        "bisection_ratio": None if c.bisection_ratio is None else round(c.bisection_ratio, 6),
        "exact": c.exact,
        "reasons": list(c.reasons),
    }


def to_json(result: SweepResult) -> dict[str, Any]:
    spec = result.spec
    return {
        "fabric": result.fabric.name,
        "elements": list(spec.categories),
        "depth": spec.depth,
        "jobs": [j.name for j in result.jobs],
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
        "rows": [row(result, c) for c in result.ranked()],
    }


def write_csv(result: SweepResult, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=[*COLUMNS, "reasons"])
        w.writeheader()
        for c in result.ranked():
            r = row(result, c)
            del r["failures"]  # the structured form of "case" (ids), for JSON
            r["jobs_lost"] = " ".join(r["jobs_lost"])
            r["reasons"] = " | ".join(r["reasons"])
            w.writerow(r)


def su_rail_of(result: SweepResult, c: CaseResult) -> tuple[int, int] | None:
    """The (SU, rail) a single-failure case belongs to, if any (leaf, NIC, access cable)."""
    if len(c.failures) != 1:
        return None
    f = result.fabric
    x = c.failures[0]
    if x.kind == "element":
        i = x.index
        if int(f.kind[i]) in (int(Kind.LEAF), int(Kind.NIC)):
            return int(f.su[i]), int(f.rail[i])
        return None
    if int(f.link_kind[x.index]) == int(LinkKind.ACCESS):
        nic = int(f.link_a[x.index])
        return int(f.su[nic]), int(f.rail[nic])
    return None


def plot(result: SweepResult, path: Path) -> None:
    """An SU x rail heatmap of jobs lost and a histogram of bandwidth ratios."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f = result.fabric
    sus, rails = max(f.n_sus, 1), max(f.rails, 1)
    impact = np.zeros((sus, rails))
    count = np.zeros((sus, rails))
    for c in result.cases:
        at = su_rail_of(result, c)
        if at is None or at[0] < 1:
            continue
        impact[at[0] - 1, at[1]] += len(c.jobs_lost)
        count[at[0] - 1, at[1]] += 1
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, max(4.0, 0.32 * sus + 2)))
    im = ax1.imshow(
        impact, aspect="auto", cmap="Reds", interpolation="nearest", vmin=0,
        vmax=max(float(impact.max()), 1.0),
    )  # fmt: skip
    ax1.set_title("jobs lost by single failures\n(leaf, rail NIC, access cable) per SU x rail")
    ax1.set_xlabel("rail")
    ax1.set_ylabel("SU")
    ax1.set_xticks(range(rails))
    ax1.set_yticks(range(sus))
    ax1.set_yticklabels([str(s + 1) for s in range(sus)])
    fig.colorbar(im, ax=ax1, label="jobs lost (sum over the cell's cases)")
    bw = [c.min_busbw_ratio for c in result.cases if math.isfinite(c.min_busbw_ratio)]
    up = [c.leaf_uplink_ratio for c in result.cases]
    bins = np.linspace(0, 1, 21)
    ax2.hist([bw, up], bins=bins, label=["min job bus bandwidth ratio", "min leaf uplink ratio"])
    ax2.set_yscale("log")
    ax2.set_ylim(bottom=0.5)
    ax2.set_title(
        f"{len(result.cases):,} cases on {f.name}: "
        f"{result.job_losing:,} lose a job, {result.disconnecting:,} disconnect"
    )
    ax2.set_xlabel("ratio to the healthy fabric")
    ax2.set_ylabel("cases (log)")
    ax2.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def category_lines(result: SweepResult) -> list[tuple[str, int, int, int]]:
    grouped: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for k, (n, d, j) in result.by_category().items():
        grouped[k][0] += n
        grouped[k][1] += d
        grouped[k][2] += j
    return [(k, *v) for k, v in sorted(grouped.items())]  # type: ignore[misc]
