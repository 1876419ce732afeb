"""Mininet building the same leaf/spine fabric (run by bench_netns.py with Debian's python3).

Linux-bridge switches, no controller, as the issue measured it; hosts get one
interface per rail NIC.  Prints one JSON line: build+start and stop seconds.
Switch names carry a random tag so two runs never share a bridge name; only
``net.stop()`` cleans up (never ``mn -c``, which kills by name), and it runs
even when the build fails or is interrupted.  The bridges run STP: a leaf/spine
mesh of Linux bridges without it is a loop, and the first broadcast (IPv6
neighbour discovery) storms the host (seen here: load 25, a 265 s stop).

Mininet's ``fixLimits()`` (run by ``Mininet.init`` on the first ``Mininet()``)
raises host-wide sysctls and never lowers them again: the neighbour-table
limits of the root namespace, socket buffer limits, the PTY count (found left
at 4096/8192/16384 here after a benchmark run).  The peer keeps its tuning while
it runs (it is Mininet as shipped), and every sysctl it touches is put back to
the value read before it started, even when the build fails.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from pathlib import Path

from mininet.link import Link
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.nodelib import LinuxBridge
from mininet.topo import Topo


class Fabric(Topo):
    def build(self, sus=2, nodes=32, rails=4, spines=4, tag="x"):
        spine = [self.addSwitch(f"{tag}p{j}", cls=LinuxBridge, stp=True) for j in range(spines)]
        for s in range(sus):
            leaves = [
                self.addSwitch(f"{tag}l{s}{r}", cls=LinuxBridge, stp=True) for r in range(rails)
            ]
            for leaf in leaves:
                for sp in spine:
                    self.addLink(leaf, sp)
            for n in range(nodes):
                h = self.addHost(f"h{s}x{n}", ip=None)
                for r, leaf in enumerate(leaves):
                    self.addLink(h, leaf, params1={"ip": f"10.{r}.{s}.{2 * n + 1}/16"})


# what mininet.util.fixLimits() raises (Debian mininet 2.3)
FIX_LIMITS_SYSCTLS = (
    "fs.file-max",
    "net.core.wmem_max",
    "net.core.rmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.core.netdev_max_backlog",
    "net.ipv4.neigh.default.gc_thresh1",
    "net.ipv4.neigh.default.gc_thresh2",
    "net.ipv4.neigh.default.gc_thresh3",
    "net.ipv4.route.max_size",
    "kernel.pty.max",
)


def _sysctl_file(key):
    return Path("/proc/sys", *key.split("."))


def read_sysctls():
    return {k: _sysctl_file(k).read_text() for k in FIX_LIMITS_SYSCTLS if _sysctl_file(k).exists()}


def restore_sysctls(saved):
    for key, value in saved.items():
        if _sysctl_file(key).read_text() != value:
            _sysctl_file(key).write_text(value)


def main():
    setLogLevel("error")
    sus, nodes, rails, spines = (int(x) for x in sys.argv[1:5])
    tag = "m" + secrets.token_hex(2)
    topo = Fabric(sus=sus, nodes=nodes, rails=rails, spines=spines, tag=tag)
    saved = read_sysctls()
    try:
        up, down, net = run(topo)
    finally:
        restore_sysctls(saved)
    print(json.dumps({"up": up, "down": down, "hosts": len(net.hosts),
                      "switches": len(net.switches), "links": len(net.links)}))  # fmt: skip


def run(topo):
    t = time.perf_counter()
    net = Mininet(topo=topo, controller=None, link=Link, autoSetMacs=False, build=False)
    try:
        net.build()
        net.start()
        up = time.perf_counter() - t
    finally:
        t = time.perf_counter()
        net.stop()
        down = time.perf_counter() - t
    return up, down, net


if __name__ == "__main__":
    main()
