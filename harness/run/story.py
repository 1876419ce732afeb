"""The story of a step: what survived and what was lost after it, in plain words (the jobs'
fates on the clock, connectivity, uplinks, bisection, the slowest job).
"""

from __future__ import annotations

from harness.fabric.model import Fabric
from harness.invariants.analysis import Analysis
from harness.invariants.figures import job_figures
from harness.invariants.figures import slowest
from harness.invariants.timeline import Timeline
from harness.words import plural


def _job_story(a: Analysis, timeline: Timeline) -> list[str]:
    """The jobs' fates on the clock: crashed, stalled, rerouted, or all running."""
    fates = timeline.fates
    lost = [f.name for f in fates if f.lost]
    stalled = [f.name for f in fates if f.state == "stalled"]
    lines = []
    for names, what in ((lost, "lost"), (stalled, "stalled")):
        if names:
            listed = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
            lines.append(f"{what} {len(names)} of {plural(len(fates), 'job')}: {listed}")
    if not lines:
        n = len(fates)
        lines.append(f"all {n} jobs survive" if n > 1 else "the job survives")
    notes = [f"  {f.describe()}" for f in fates if f.lost or f.state == "stalled" or f.rerouted_s]
    return lines + notes[:5]


def story(
    fabric: Fabric, a: Analysis, healthy: Analysis, timeline: Timeline | None = None
) -> tuple[str, ...]:
    """What survived and what was lost, in plain words."""
    lines = []
    lost = [v for v in a.verdicts if v.lost]
    if a.jobs and timeline is not None:
        lines.extend(_job_story(a, timeline))
    elif a.jobs:
        if lost:
            names = ", ".join(v.name for v in lost[:8]) + (" ..." if len(lost) > 8 else "")
            lines.append(f"lost {len(lost)} of {plural(len(a.jobs), 'job')}: {names}")
            lines.extend(f"  {v.name}: {v.reasons[0]}" for v in lost[:4])
        else:
            n = len(a.jobs)
            lines.append(f"all {n} jobs survive" if n > 1 else "the job survives")
    bad = a.gpu_pairs_disconnected()
    bad_pxn = a.gpu_pairs_disconnected(pxn=True)
    if bad == 0:
        lines.append("every GPU pair can still talk")
    else:
        isl = a.islands()
        lines.append(
            f"{plural(bad, 'GPU pair')} cannot talk ({bad_pxn:,} with PXN); "
            f"{plural(len(isl), 'NIC island')}, largest {plural(isl[0].nics if isl else 0, 'NIC')}"
        )
    iso = a.nics_isolated()
    if iso:
        lines.append(f"{plural(iso, 'NIC')} cut off from the fabric")
    ratio = a.leaf_uplink_ratio()
    if ratio < 1.0 - 1e-12:
        lines.append(f"worst leaf keeps {ratio:.1%} of its uplink capacity")
    if fabric.n_sus >= 2:
        base = healthy.bisection_gbps
        if base and a.bisection_gbps < base - 1e-9:
            lines.append(f"bisection bandwidth {a.bisection_gbps / base:.1%} of healthy")
    if a.jobs:
        gone = set(a.jobs_lost()) | set(timeline.lost() if timeline is not None else ())
        x = slowest([job_figures(a, j) for j in a.jobs if j.name not in gone])
        if x is not None and min(x.vs_healthy, x.vs_line_rate) < 1.0 - 1e-12:
            lines.append(f"slowest surviving job {x.job} at {x.vs_healthy:.1%} of its bus "
                         f"bandwidth: {x.describe()}")  # fmt: skip
    return tuple(lines)
