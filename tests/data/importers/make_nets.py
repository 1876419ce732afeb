"""Write the ibsim net files that ``make_dumps.sh`` feeds to ibsim.

The good net mirrors ``DESIGN`` (a two-tier, rail-optimized fabric made by the
harness generator), written with :func:`harness.importers.ibnetdiscover.to_ibsim_net`.
Each broken variant changes exactly one thing in that fabric before writing it.

Usage: ``python tests/data/importers/make_nets.py OUTDIR``
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from harness.fabric import Fabric
from harness.fabric import two_tier
from harness.importers.ibnetdiscover import to_ibsim_net


def design() -> Fabric:
    """2 SUs x 2 hosts x 2 rails (4 leaves), 2 spines, 200 Gb/s (4xHDR) everywhere."""
    return two_tier(
        sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False,
        node_overrides={"rails": 2}, name="rail2x2",
    )  # fmt: skip


def _edit(
    fabric: Fabric,
    *,
    drop: set[str] | None = None,
    rewire: dict[str, tuple[str, int]] | None = None,
    capacity: dict[str, float] | None = None,
) -> Fabric:
    """A copy with cables dropped, re-plugged (new b end and port) or re-rated."""
    drop, rewire, capacity = drop or set(), rewire or {}, capacity or {}
    unknown = [lid for lid in (*drop, *rewire, *capacity) if lid not in fabric.link_index]
    if unknown:
        msg = f"make_nets.py: no such cable {unknown}; fix the variant"
        raise SystemExit(msg)
    keep = np.array([lid not in drop for lid in fabric.link_ids], dtype=bool)
    b = fabric.link_b.copy()
    bp = fabric.link_b_port.copy()
    cap = fabric.link_capacity.copy()
    for lid, (eid, port) in rewire.items():
        i = fabric.link_index[lid]
        b[i], bp[i] = fabric.index[eid], port
    for lid, gbps in capacity.items():
        cap[fabric.link_index[lid]] = gbps
    return dataclasses.replace(
        fabric,
        link_a=fabric.link_a[keep].copy(),
        link_b=b[keep],
        link_a_port=fabric.link_a_port[keep].copy(),
        link_b_port=bp[keep],
        link_kind=fabric.link_kind[keep].copy(),
        link_capacity=cap[keep],
        link_lanes=fabric.link_lanes[keep].copy(),
    )


def variants() -> dict[str, Fabric]:
    d = design()
    spine2 = {d.link_ids[i] for i in d.links_at(d.index["spine-02"]).tolist()}
    return {
        "rail2x2": d,
        # one leaf-spine cable pulled: su01/leaf-r1 port 4 and spine-02 port 2 go down
        "rail2x2_unlinked": _edit(d, drop={"su01/leaf-r1:4--spine-02:2"}),
        # one access cable pulled: the HCA su02/node02 mlx5_1 drops out of the dump
        "rail2x2_nic_down": _edit(d, drop={"su02/node02/nic1:1--su02/leaf-r1:2"}),
        # su01/node02 mlx5_1 (rail 1) plugged into the rail-0 leaf's spare port 5
        "rail2x2_wrong_rail": _edit(
            d, rewire={"su01/node02/nic1:1--su01/leaf-r1:2": ("su01/leaf-r0", 5)}
        ),
        # one access link trained at 1x (width) and one at EDR (speed); both are set on
        # the HCA end, which OpenSM leaves alone (it re-enables switch ports)
        "rail2x2_degraded": _edit(
            d,
            capacity={
                "su02/node01/nic0:1--su02/leaf-r0:1": 50.0,  # 1xHDR
                "su01/node01/nic1:1--su01/leaf-r1:1": 100.0,  # 4xEDR
            },
        ),
        # spine-02 powered off: all its cables dark, so ibnetdiscover cannot reach it
        "rail2x2_spine_down": _edit(d, drop=spine2),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, fabric in variants().items():
        (out / f"{name}.net").write_text(to_ibsim_net(fabric) + "\n", encoding="utf-8")
        print(out / f"{name}.net")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
