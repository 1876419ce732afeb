"""The ibsim backend: OpenSM bring-up, reroute after a spine kill, the full LFT read.

Needs ibsim, OpenSM and infiniband-diags (``apt-get install -y ibsim-utils opensm
infiniband-diags``).  For the largest preset that fits ibsim (b200-16su: 320
switches, 4,096 HCAs; clos-100k is past ibsim's LID space and is refused) and
for seed-a800, per OpenSM routing engine (ftree, updn, minhop):

* bring-up: ``ibsim`` ready, then OpenSM from start to its first ``SUBNET UP``;
* reroute: a spine killed on the console (every port unlinked) until OpenSM's
  next ``SUBNET UP`` ("master SM routed"), and until the change is verified
  with ``ibnetdiscover`` and every island routed ("fault done");
* the full reachability read: ``ibnetdiscover`` + ``dump_lfts`` + the walk of
  every switch's LFT for all HCA pairs;
* OpenSM's peak RSS (``VmHWM``).

The peer, in the same run: ``ibtracert`` (the IB tool that traces one pair's
route through the LFTs) on a seeded sample of HCA pairs, extrapolated to all
pairs, against the walk -- the ratio says what reading the tables once and
walking them buys over tracing pair by pair.  The ratio of each engine's times
to ftree's is printed too.

    python benchmarks/bench_ibsim.py                 # both fabrics, 3 engines
    python benchmarks/bench_ibsim.py --skip-big      # seed-a800 only
    python benchmarks/bench_ibsim.py --engines ftree --tracert 10
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchutil import secs
from benchutil import table

from harness.backends.ibsim import Simulation
from harness.backends.ibsim import check_fits
from harness.backends.ibsim import faults
from harness.backends.ibsim.backend import unavailable
from harness.backends.ibsim.walk import Routes
from harness.errors import FabricDesignError
from harness.fabric import PRESETS
from harness.fabric import preset
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.faults.text import resolve_faults

ENGINES = ("ftree", "updn", "minhop")


@dataclass
class Row:
    fabric: str
    engine: str
    ibsim_ready: float
    subnet_up: float
    engine_used: str
    sm_rss_mib: float
    sm_rerouted: float
    fault_done: float
    read_discover: float
    read_lfts: float
    read_walk: float
    pairs: tuple[int, int]
    tracert_s: float | None  # seconds per pair, sampled
    tracert_n: int

    @property
    def read_total(self) -> float:
        return self.read_discover + self.read_lfts + self.read_walk


def _vmhwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _first_spine(f: Fabric) -> str:
    return next(f.ids[i] for i in range(f.n_elements) if f.kind[i] == int(Kind.SPINE))


def _tracert(sim: Simulation, routes: Routes, n: int, seed: int) -> float | None:
    """Seconds per pair of ``ibtracert`` between LIDs of a seeded sample of HCA pairs."""
    if n <= 0:
        return None
    rng = random.Random(seed)
    lids = routes.lfts.lids
    descs = [sim.names.desc_of[h] for h in routes.hcas]
    pairs = [tuple(rng.sample(descs, 2)) for _ in range(n)]
    t0 = time.perf_counter()
    for a, b in pairs:
        sim.tool("ibtracert", str(lids[a]), str(lids[b]))
    return (time.perf_counter() - t0) / n


def one(f: Fabric, engine: str, tracert: int, root: Path) -> Row:
    with Simulation(f, routing=engine, root=root) as sim:
        assert sim.opensm is not None
        phases = dict(sim.timings.phases)
        used = sim.routing_engine_used()
        (kill,) = resolve_faults(f, f"kill {_first_spine(f)}", "bench")
        effect = faults.inject(sim, kill)
        sm = sim.timings.phases.get("master SM routed", float("nan"))
        rss = _vmhwm_mib(sim.opensm.pid)
        routes = sim.routes()
        read = dict(sim.timings.phases)
        pairs = routes.pairs(f, same_rail=False)
        per_pair = _tracert(sim, routes, tracert, seed=0)
    return Row(f.name, engine, phases["ibsim ready"], phases["SUBNET UP"], used, rss, sm,
               effect.rerouted_s, read["ibnetdiscover"], read["dump_lfts"], read["LFT walk"],
               pairs, per_pair, tracert)  # fmt: skip


def largest_fitting() -> tuple[str, list[str]]:
    """The preset with the most HCAs that ibsim takes, and the refused ones with why."""
    best, most, refused = "seed-a800", 0, []
    for name in PRESETS:
        f = preset(name)
        try:
            check_fits(f)
        except FabricDesignError as e:
            refused.append(f"{name}: {str(e).split(';')[0]}")
            continue
        if len(f.nics) > most:
            best, most = name, len(f.nics)
    return best, refused


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-big", action="store_true", help="seed-a800 only")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated engines")
    ap.add_argument("--tracert", type=int, default=20, help="ibtracert pairs sampled (0: none)")
    args = ap.parse_args(argv)
    why = unavailable()
    if why is not None:
        print(f"bench_ibsim: {why}", file=sys.stderr)
        return 3
    engines = [e for e in args.engines.split(",") if e]
    print(f"bench_ibsim  {time.strftime('%Y-%m-%d %H:%M:%S')}  python "
          f"{platform.python_version()}  engines {', '.join(engines)}")  # fmt: skip
    names = ["seed-a800"]
    if not args.skip_big:
        big, refused = largest_fitting()
        print(f"largest preset that fits ibsim: {big}")
        for r in refused:
            print(f"  refused: {r}")
        if big != "seed-a800":
            names.insert(0, big)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-ibsim-") as tmp:
        for name in names:
            f = preset(name)
            for engine in engines:
                print(f"  running {name} / {engine} ...", flush=True)
                rows.append(one(f, engine, args.tracert, Path(tmp)))
    print()
    print(table(
        ["fabric", "engine", "used", "ibsim ready", "SUBNET UP", "OpenSM RSS MiB",
         "kill spine: SM routed", "fault done", "read: discover", "dump_lfts", "walk",
         "read total", "pairs routed"],
        [[r.fabric, r.engine, r.engine_used, secs(r.ibsim_ready), secs(r.subnet_up),
          f"{r.sm_rss_mib:.1f}", secs(r.sm_rerouted), secs(r.fault_done),
          secs(r.read_discover), secs(r.read_lfts), secs(r.read_walk), secs(r.read_total),
          f"{r.pairs[0]:,}/{r.pairs[1]:,}"] for r in rows],
        left=(0, 1, 2),
    ))  # fmt: skip
    print("\n== ratios ==")
    ratio_rows = []
    for r in rows:
        base = next(x for x in rows if x.fabric == r.fabric and x.engine == rows[0].engine)
        ratio_rows.append([r.fabric, r.engine, f"{r.subnet_up / base.subnet_up:.2f}x",
                           f"{r.sm_rerouted / base.sm_rerouted:.2f}x",
                           f"{r.read_total / base.read_total:.2f}x"])  # fmt: skip
    print(f"(against {rows[0].engine} on the same fabric)")
    print(table(["fabric", "engine", "SUBNET UP", "reroute", "read"], ratio_rows, left=(0, 1)))
    print("\n== the LFT walk vs ibtracert pair by pair (the peer) ==")
    peer_rows = []
    for r in rows:
        if r.tracert_s is None:
            continue
        all_pairs = r.pairs[1] * r.tracert_s
        peer_rows.append([r.fabric, r.engine, f"{r.tracert_n}", secs(r.tracert_s),
                          f"{r.pairs[1]:,}", secs(all_pairs), secs(r.read_total),
                          f"{all_pairs / r.read_total:,.0f}x"])  # fmt: skip
    print(table(["fabric", "engine", "sampled", "ibtracert/pair", "all pairs",
                 "ibtracert all (EXTRAPOLATED)", "full read + walk", "ratio"],
                peer_rows, left=(0, 1)))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
