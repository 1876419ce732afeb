"""The netns backend: bring-up and teardown against Mininet, seed-a800, probes, re-sweep, BGP.

Needs root.  Mininet (Debian ``mininet`` + ``bridge-utils``: ``apt-get install
--no-install-recommends mininet bridge-utils``) builds the same 4-spine /
8-leaf / 64-server fabric with Linux-bridge switches and no controller, in the
same run, with Debian's ``/usr/bin/python3``.  Prints a table, the ratios and
the issue's targets (PASS/MISS).

    sudo python benchmarks/bench_netns.py            # Mininet peer + seed-a800, ~2 min
    sudo python benchmarks/bench_netns.py --skip-seed
    sudo python benchmarks/bench_netns.py --rails 4  # the 64 servers with 4 rail NICs each
    sudo python benchmarks/bench_netns.py --skip-seed --bgp-seed  # + routing: bgp on seed-a800

``routing: bgp`` rows (FRR on every switch; ``--skip-bgp`` leaves them out): on
the 64-server fabric with BFD (``bfd: on``: timers by size, 300 ms x 3) and without,
bring-up, convergence (every switch's FIB holds every prefix with every next
hop), the daemons' PSS, and failover after a spine kill (links down, daemons
stopped) and after a hung spine (daemons stopped, links up: only BFD or the
hold timer can tell), next to ``routing: sm``'s re-sweep after the same kill.
``--bgp-seed`` does the same on the full seed-a800 (60 switches, 120 daemons,
about 3 GB; BFD on at the size-picked timers, and off).
    sudo python benchmarks/bench_netns.py --skip-seed --skip-job

The job rows (needs the ``torch`` extra) run the real gloo job of the netns
scenarios (8 servers, 4 rails, 5 s timeout): start-up, its all-reduce rate
against its compute-bound ceiling (1 / the 50 ms "compute" per iteration),
and how long a leaf kill takes to fail it.
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

from harness.backends.netns.bgp import bfd_up
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.faults import FaultEngine
from harness.backends.netns.probe import probe
from harness.backends.netns.probe import sample_pairs
from harness.fabric import preset
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric
from harness.fabric.routing import Routing
from harness.faults.fault import Fault

PEER = Path(__file__).with_name("mininet_peer.py")
STEADY_S = 30.0  # BFD: how long a converged fabric is watched for session flaps


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


def bgp_rows(f: Fabric, rows: list[tuple[str, str]], label: str, bfds: tuple[str, ...]) -> None:
    """routing: bgp on ``f``: bring-up, convergence, daemon memory, failover after a spine kill
    and after a hung spine, per BFD setting; and the same spine kill under sm."""
    spine = Fault.parse({"kill": "spine-01"}).resolve(f)
    emu = Emulation(f)
    emu.up()
    try:
        eng = FaultEngine(emu)
        eng.inject(spine)
        sm_kill = eng.settle(180)
    finally:
        emu.down()
    rows.append((f"{label} sm: spine kill re-sweep", f"{sm_kill:.2f} s"))
    for bfd in bfds:
        emu = Emulation(f, routing=Routing.stating(control="bgp", bfd=bfd))
        t = time.perf_counter()
        emu.up()
        up = time.perf_counter() - t
        try:
            bgp = emu.bgp
            assert bgp is not None
            eng = FaultEngine(emu)
            converge = eng.settle(600)
            pss = bgp.memory_kb() / 1024
            pairs = sample_pairs(emu, None)
            bad = sum(not p.ok for p in probe(emu, pairs))
            timers = bgp.bfd.describe() if bgp.bfd else "off"
            head = f"{label} bgp, BFD {timers}"
            rows.append(
                (f"{head}: bring-up (build + FRR start)", f"{up:.2f} s ({emu.timings.text()})")
            )
            daemons = sum(len(d) for d in bgp.daemons.values())
            rows.append((f"{head}: converged (every FIB, every next hop)",
                         f"{converge:.2f} s from the daemons' start; "
                         f"{bad} of {len(pairs):,} probes failed"))  # fmt: skip
            rows.append((f"{head}: daemons' PSS", f"{pss:.0f} MiB for {daemons} daemons "
                         f"({pss / len(bgp.daemons):.1f} MiB per switch)"))  # fmt: skip
            if bgp.bfd is not None:
                up = sum(len(bfd_up(bgp.bfd_peers(ns))) for ns in bgp.dirs)
                downs = bgp.bfd_downs()
                time.sleep(STEADY_S)
                flaps = bgp.bfd_downs() - downs
                what = f"{head}: BFD sessions up; flaps in {STEADY_S:g} s steady"
                rows.append((what, f"{up:,} of {bgp.sessions:,}; {flaps} session-down events"))
            eng.inject(spine)
            kill = eng.settle(600)
            eng.revert(spine)
            back = eng.settle(600)
            rows.append((f"{head}: spine kill (links down, daemons stopped) -> routed around",
                         f"{kill:.2f} s; back after reboot {back:.2f} s"))  # fmt: skip
            hang, rebooted = bgp.hang_failover(emu.built.ns_of[f.index["spine-02"]], 600)
            rows.append((f"{head}: hung spine (daemons stopped, links up) -> routed around",
                         f"{hang:.2f} s; back after reboot {rebooted:.2f} s"))  # fmt: skip
        finally:
            emu.down()


def job(rows: list[tuple[str, str]]) -> None:
    """The real gloo job on the netns scenarios' fabric: start-up, rate, time to fail."""
    from harness.backends.measurement import MeasurePlan
    from harness.backends.netns.backend import NetnsBackend
    from harness.backends.netns.job_worker import COMPUTE_S
    from harness.fabric.jobs import JobSpec
    from harness.fabric.jobs import resolve_jobs

    f = two_tier(sus=2, nodes_per_su=4, spines=4, leaf_radix=8, name="bench-job")
    jobs = resolve_jobs([JobSpec(name="train", nodes=("*",), timeout=5.0)], f)
    plan = MeasurePlan(jobs=("train",), job_seconds=3.0)
    with NetnsBackend() as be:
        t = time.perf_counter()
        be.apply(f, jobs)
        be.settle(60)
        first = be.measure(MeasurePlan(jobs=("train",))).jobs[0]
        start = time.perf_counter() - t
        (run,) = be.measure(plan).jobs
        rate = run.iterations_per_s or 0.0
        leaf = Fault.parse({"kill": "su01/leaf-r2"}).resolve(f)
        t = time.perf_counter()
        be.inject(leaf)
        be.settle(60)
        (lost,) = be.measure(plan).jobs
        fail = time.perf_counter() - t
    rows.append(
        ("gloo job, 8 ranks x 4 rails: up to running", f"{start:.2f} s (alive {first.alive})")
    )
    rows.append(("  all-reduce rate (256 KB over 4 rails)", f"{rate:.1f} it/s"))
    ceiling = 1 / COMPUTE_S
    rows.append(
        ("  ratio to the compute-bound ceiling", f"{rate / ceiling:.2f} of {ceiling:g} it/s")
    )
    rows.append(("  leaf kill -> job failed (timeout 5 s)", f"{fail:.2f} s ({lost.ended}, "
                 f"{lost.seconds:.2f} s after its last iteration)"))  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rails", type=int, choices=(1, 4), default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-seed", action="store_true")
    ap.add_argument("--skip-bgp", action="store_true", help="no routing: bgp rows")
    ap.add_argument("--bgp-seed", action="store_true", help="routing: bgp on seed-a800 (~3 GB)")
    ap.add_argument("--skip-job", action="store_true", help="no gloo job rows (needs torch)")
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
    if not args.skip_bgp:
        bgp_rows(f, rows, f.name, ("on", "off"))
    if args.bgp_seed:
        bgp_rows(preset("seed-a800"), rows, "seed-a800", ("on", "off"))
    if not args.skip_job:
        job(rows)
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
