"""Mininet building the same leaf/spine fabric (run by bench_netns.py with Debian's python3).

Linux-bridge switches, no controller, as the issue measured it; hosts get one
interface per rail NIC.  Prints one JSON line: build+start and stop seconds.
Switch names carry a random tag so two runs never share a bridge name; only
``net.stop()`` cleans up (never ``mn -c``, which kills by name), and it runs
even when the build fails or is interrupted.  The bridges run STP: a leaf/spine
mesh of Linux bridges without it is a loop, and the first broadcast (IPv6
neighbour discovery) storms the host (seen here: load 25, a 265 s stop).
"""

from __future__ import annotations

import json
import secrets
import sys
import time

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


def main():
    setLogLevel("error")
    sus, nodes, rails, spines = (int(x) for x in sys.argv[1:5])
    tag = "m" + secrets.token_hex(2)
    topo = Fabric(sus=sus, nodes=nodes, rails=rails, spines=spines, tag=tag)
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
    print(json.dumps({"up": up, "down": down, "hosts": len(net.hosts),
                      "switches": len(net.switches), "links": len(net.links)}))  # fmt: skip


if __name__ == "__main__":
    main()
