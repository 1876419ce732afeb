"""The netns backend: bring-up and teardown against Mininet, seed-a800, probes, re-sweep.

Needs root.  Mininet (Debian ``mininet`` + ``bridge-utils``: ``apt-get install
--no-install-recommends mininet bridge-utils``) builds the same 4-spine /
8-leaf / 64-server fabric with Linux-bridge switches and no controller, in the
same run, with Debian's ``/usr/bin/python3``.  Prints a table, the ratios and
the issue's targets (PASS/MISS).

    sudo python benchmarks/bench_netns.py            # Mininet peer + seed-a800, ~2 min
    sudo python benchmarks/bench_netns.py --skip-seed
    sudo python benchmarks/bench_netns.py --rails 4  # the 64 servers with 4 rail NICs each
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.backends.netns.emulation import Emulation
from harness.backends.netns.faults import FaultEngine
from harness.backends.netns.probe import probe
from harness.backends.netns.probe import sample_pairs
from harness.fabric import preset
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric
from harness.faults import Fault

PEER = Path(__file__).with_name("mininet_peer.py")


def _meminfo_kib(field: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def small_fabric(rails: int) -> tuple[Fabric, tuple[int, int, int, int]]:
    """4 spines, 8 leaves, 64 servers: 8 SUs x 8 servers on 1 rail, or 2 SUs x 32 on 4 rails."""
    sus, nodes = (8, 8) if rails == 1 else (2, 32)
    f = two_tier(sus=sus, nodes_per_su=nodes, spines=4, leaf_radix=40, storage=False,
                 node_overrides={"rails": rails}, name=f"bench-64-{rails}r")  # fmt: skip
    return f, (sus, nodes, rails, 4)


def netns_cycle(f: Fabric) -> tuple[float, float, float]:
    """(bring-up incl. routes, teardown, end to end) seconds."""
    emu = Emulation(f)
    t = time.perf_counter()
    emu.up()
    up = time.perf_counter() - t
    t = time.perf_counter()
    emu.down()
    down = time.perf_counter() - t
    return up, down, up + down


def mininet_cycle(shape: tuple[int, int, int, int]) -> tuple[float, float, float] | None:
    python = "/usr/bin/python3"
    if not Path(python).exists() or shutil.which("brctl") is None:
        return None
    out = subprocess.run([python, str(PEER), *map(str, shape)], capture_output=True, text=True,
                         timeout=1800, check=False)  # fmt: skip
    if out.returncode != 0:
        print(f"mininet failed: {out.stderr[-500:]}", file=sys.stderr)
        return None
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["up"], got["down"], got["up"] + got["down"]


def seed(rows: list[tuple[str, str]]) -> dict[str, float]:
    f = preset("seed-a800")
    avail = _meminfo_kib("MemAvailable")
    emu = Emulation(f)
    t = time.perf_counter()
    emu.up()
    up = time.perf_counter() - t
    mem = (avail - _meminfo_kib("MemAvailable")) / 1024
    try:
        rows.append(("seed-a800 bring-up (build + routes)", f"{up:.2f} s ({emu.timings.text()})"))
        assert emu.router is not None
        r, h = emu.router.counts()
        rows.append(("  routes / next hops per family", f"{r:,} / {h:,}"))
        rows.append(("  memory (MemAvailable drop)", f"{mem:.0f} MiB"))
        pairs = sample_pairs(emu, None)
        t = time.perf_counter()
        got = probe(emu, pairs)
        matrix = time.perf_counter() - t
        bad = sum(not p.ok for p in got)
        rows.append((f"  full matrix, {len(pairs):,} probes", f"{matrix:.2f} s ({bad} failed)"))
        eng = FaultEngine(emu)
        spine = Fault.parse({"kill": "spine-07"}).resolve(f)
        eng.inject(spine)
        sweep = eng.settle(120)
        rows.append(("  sm re-sweep after a spine kill", f"{sweep:.2f} s"))
        eng.revert(spine)
        eng.settle(120)
    finally:
        t = time.perf_counter()
        emu.down()
        down = time.perf_counter() - t
    rows.append(("  teardown", f"{down:.2f} s"))
    return {"up": up, "matrix": matrix, "sweep": sweep}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rails", type=int, choices=(1, 4), default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-seed", action="store_true")
    args = ap.parse_args()
    f, shape = small_fabric(args.rails)
    rows: list[tuple[str, str]] = []
    runs = [netns_cycle(f) for _ in range(args.repeat)]
    ours = [statistics.median(x) for x in zip(*runs, strict=True)]
    rows.append((f"netns {f.name}: up / down / total (median of {args.repeat})",
                 f"{ours[0]:.2f} / {ours[1]:.2f} / {ours[2]:.2f} s"))  # fmt: skip
    peer = mininet_cycle(shape)
    ratio = None
    if peer is None:
        rows.append(("mininet", "not installed (apt-get install mininet bridge-utils)"))
    else:
        rows.append(("mininet same topology: up / down / total",
                     f"{peer[0]:.2f} / {peer[1]:.2f} / {peer[2]:.2f} s"))  # fmt: skip
        ratio = peer[2] / ours[2]
        rows.append(("ratio mininet / netns (end to end)", f"{ratio:.1f}x"))
        rows.append(("ratio mininet / netns (bring-up only)", f"{peer[0] / ours[0]:.1f}x"))
    s = None if args.skip_seed else seed(rows)
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print("\ntargets (rates shaped at 1/1000: 200 Gb/s -> 200 Mb/s)")
    if ratio is not None:
        print(f"  64-server fabric >= 4x faster than Mininet: {ratio:.1f}x "
              f"{'PASS' if ratio >= 4 else 'MISS'}")  # fmt: skip
    if s is not None:
        print(f"  seed-a800 up in < 10 s (aim 4 s): {s['up']:.2f} s "
              f"{'PASS' if s['up'] < 10 else 'MISS'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
