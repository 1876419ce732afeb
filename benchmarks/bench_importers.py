"""Benchmark: reading production dumps, the design-free audit, the Slurm export.

Run from the repository root::

    python benchmarks/bench_importers.py              # everything (about 1 min)
    python benchmarks/bench_importers.py --skip-big   # without clos-100k

For each input it times (median of ``--repeat`` runs, one process):

* ``import``: ``load_dump`` of the file (ibnetdiscover parse, Aggregation Nodes
  out, servers grouped by description and wiring, the fabric built);
* ``audit (no design)``: :func:`harness.planning.audit.regular.audit_regular`;
* ``audit (design)``: :func:`harness.planning.audit.diff.diff_fabrics` of the
  fabric against itself -- the peer: what the audit with ``--design`` costs on
  the same fabric;
* ``slurm``: :func:`harness.exporters.slurm.to_slurm_topology`.

The ratio column is the design-free audit's time over the design audit's.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchutil import median
from benchutil import secs
from benchutil import table

from harness.exporters.slurm import to_slurm_topology
from harness.fabric import Fabric
from harness.fabric import preset
from harness.importers import load_dump
from harness.planning.audit.diff import diff_fabrics
from harness.planning.audit.regular import audit_regular

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
INPUTS: list[tuple[str, str]] = [
    ("prod_hdr_broken (ibsim)", str(DATA / "importers" / "prod_hdr_broken.ibnetdiscover")),
    ("prod_hdr_broken -p", str(DATA / "importers" / "prod_hdr_broken.ports")),
    ("NDR plane (real)", str(DATA / "third_party" / "topograph_ibnetdiscover_ndr_plane.out")),
    ("NetQ spectrumx_rail", str(DATA / "importers" / "netq" / "spectrumx_rail.json")),
    ("preset seed-a800", "preset:seed-a800"),
    ("preset clos-100k", "preset:clos-100k"),
]


def timed(fn: Callable[[], object], n: int) -> float:
    runs = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return median(runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-big", action="store_true", help="leave out clos-100k")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    args = ap.parse_args(argv)
    rows = []
    for label, src in INPUTS:
        if args.skip_big and "clos-100k" in src:
            continue
        n = 1 if "clos-100k" in src else args.repeat
        if src.startswith("preset:"):
            fabric: Fabric = preset(src.split(":", 1)[1])
            t_import = None
        else:
            t_import = timed(lambda src=src: load_dump(src), n)
            fabric = load_dump(src)
        t_free = timed(lambda f=fabric: audit_regular(f), n)
        t_design = timed(lambda f=fabric: diff_fabrics(f, f), n)
        t_slurm = timed(lambda f=fabric: to_slurm_topology(f), n)
        s = fabric.summary()
        rows.append([
            label, s["nodes"], s["cables"], secs(t_import), secs(t_free), secs(t_design),
            f"{t_free / t_design:.2f}x", secs(t_slurm),
        ])  # fmt: skip
    print(table(["input", "servers", "cables", "import", "audit (no design)", "audit (design)",
                 "ratio", "slurm"], rows))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
