"""Write the NetQ topology graph test file ``netq/spectrumx_rail.json``.

Written by us from the documented shape of the NetQ topology graph (the answer
of NetQ's ``topologygraph/fetch-topology`` API, as NVIDIA Topograph reads it and
as its test data ``tests/output/netq/topologyGraph.json`` shows it, layout fields
included); it is not a capture of a real NetQ server.

The fabric: a rail-optimized Spectrum-X style plane, 2 SUs x 4 hosts x 4 rails,
8 leaves (``sx-leaf-01`` .. ``-08``, SU 1 = leaves 1-4), 2 spines, 2 cables per
leaf-spine pair.  Hosts (tier -1, ``discovered_via_lldp``) name their NICs by PCI
slot (``enp27s0np0``, ``enp40s0np0``, ``enp154s0np0``, ``enp170s0np0``: all end
in ``0``, so the importer ranks them); leaves split 800G ports into 2x400G host
ports (``swp1s0``, ``swp1s1``, ...) and uplink on ``swp33`` .. ``swp36``.  One
departure is planted: ``sx-leaf-06`` has one cable to ``sx-spine-02`` instead of
two (its multi-link has ``size`` 1).

Usage: ``python tests/data/importers/make_netq.py OUTDIR``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SUS, HOSTS, RAILS, SPINES, PAIR = 2, 4, 4, 2, 2
HOST_IFACES = ("enp27s0np0", "enp40s0np0", "enp154s0np0", "enp170s0np0")
MISSING = ("sx-leaf-06", "sx-spine-02", 1)  # (leaf, spine, cable index) left out


def _node(nid: str, name: str, tier: int, kind: str, x: int) -> dict[str, Any]:
    y = {1: 1000, 2: 0, -1: 2000}[tier]
    return {
        "auto_tier": True,
        "default_tier": tier,
        "device_type": kind,
        "id": nid,
        "layout": {"tier": {"height": 150, "parent": {"x": 4500, "y": y + 45.5},
                            "width": 150, "x": x, "y": y}},
        "name": name,
        "node_type": "device",
        "parent": str(tier),
        "size": 1,
        "tier": tier,
    }  # fmt: skip


def topology() -> list[dict[str, Any]]:
    ids: dict[str, str] = {}
    tiers: dict[int, list[dict[str, Any]]] = {1: [], 2: [], -1: []}

    def add(name: str, tier: int, kind: str) -> str:
        nid = f"node{len(ids)}"
        ids[name] = nid
        tiers[tier].append(_node(nid, name, tier, kind, 1000 * (len(tiers[tier]) + 1)))
        return nid

    for k in range(1, SPINES + 1):
        add(f"sx-spine-{k:02d}", 2, "switch")
    for j in range(1, SUS * RAILS + 1):
        add(f"sx-leaf-{j:02d}", 1, "switch")
    for h in range(1, SUS * HOSTS + 1):
        add(f"dgx-{h:02d}", -1, "discovered_via_lldp")
    links: list[dict[str, Any]] = []

    def link(a: str, b: str, pairs: list[tuple[str, str]]) -> None:
        na, nb = ids[a], ids[b]
        links.append({
            "compounded_links": [
                {"id": f"{na}:{ia}-*-{nb}:{ib}",
                 "interfaces": [{"interface": ia, "node": na}, {"interface": ib, "node": nb}]}
                for ia, ib in pairs
            ],
            "id": f"{na}-*-{nb}",
            "interfaces": [{"node": na}, {"node": nb}],
            "size": len(pairs),
            "src": na,
            "target": nb,
        })  # fmt: skip

    for su in range(1, SUS + 1):
        for n in range(1, HOSTS + 1):
            host = f"dgx-{(su - 1) * HOSTS + n:02d}"
            for r in range(RAILS):
                leaf = f"sx-leaf-{(su - 1) * RAILS + r + 1:02d}"
                port = f"swp{(n + 1) // 2}s{(n + 1) % 2}"
                link(leaf, host, [(port, HOST_IFACES[r])])
    for j in range(1, SUS * RAILS + 1):
        leaf = f"sx-leaf-{j:02d}"
        for k in range(1, SPINES + 1):
            spine = f"sx-spine-{k:02d}"
            pairs = [
                (f"swp{32 + PAIR * (k - 1) + c + 1}", f"swp{PAIR * (j - 1) + c + 1}")
                for c in range(PAIR)
                if (leaf, spine, c) != MISSING
            ]
            link(leaf, spine, pairs)
    groups = [
        {"auto_tier": True, "compounded_nodes": members, "default_tier": tier,
         "id": f"tier-{tier}" if tier > 0 else "tier-unclassified",
         "layout": {"tier": {"height": 243, "width": 1395, "x": 4500, "y": 45.5}},
         "name": f"tier-{tier}" if tier > 0 else "tier-unclassified",
         "node_type": "tier", "size": len(members), "tier": tier}
        for tier, members in tiers.items()
    ]  # fmt: skip
    return [{"links": links, "nodes": groups}]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    path = out / "spectrumx_rail.json"
    path.write_text(json.dumps(topology(), indent=2) + "\n", encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
