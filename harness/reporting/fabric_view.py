"""What ``harness show`` prints about a fabric (reporting stage, pure but for printing).

:func:`tier_usage` counts, per switch tier, the ports in use toward the tier
below (down) and above (up), the free ports and the oversubscription (down
capacity / up capacity; ``None`` for the top tier, which has no uplinks).  A
cable is written lower tier first (``A:PA--B:PB``), so a switch at the ``b``
end of a cable uses a down port and at the ``a`` end an up port.
"""

from __future__ import annotations

from dataclasses import asdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.fabric.model import CABLE_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind

TIER_KINDS: tuple[Kind, ...] = (Kind.LEAF, Kind.SPINE, Kind.CORE, Kind.STORAGE_SWITCH)


@dataclass(frozen=True, slots=True)
class TierUsage:
    """Port usage of one switch tier."""

    tier: str
    switches: int
    ports: int  # all ports of all switches of the tier
    down: int  # ports cabled toward the tier below
    up: int  # ports cabled toward the tier above
    free: int
    down_gbps: float
    up_gbps: float
    oversubscription: float | None  # down / up capacity; None without uplinks


def tier_usage(fabric: Fabric) -> list[TierUsage]:
    """Port usage and oversubscription of every switch tier present in ``fabric``."""
    cables = fabric.links_of_kind(*CABLE_KINDS)
    lower, upper = fabric.link_a[cables], fabric.link_b[cables]
    capacity = fabric.link_capacity[cables]
    out = []
    for kind in TIER_KINDS:
        idx = fabric.indices_of_kind(kind)
        if idx.size == 0:
            continue
        down_mask = np.isin(upper, idx)
        up_mask = np.isin(lower, idx)
        down, up = int(down_mask.sum()), int(up_mask.sum())
        ports = int(fabric.ports[idx].sum())
        down_gbps = float(capacity[down_mask].sum())
        up_gbps = float(capacity[up_mask].sum())
        ratio = down_gbps / up_gbps if up_gbps > 0 else None
        free = max(ports - down - up, 0)
        usage = TierUsage(
            kind.label, int(idx.size), ports, down, up, free, down_gbps, up_gbps, ratio
        )
        out.append(usage)
    return out


def fabric_document(fabric: Fabric) -> dict[str, Any]:
    """Everything ``harness show --json`` prints: the summary, parameters and tiers."""
    return {
        "name": fabric.name,
        **fabric.summary(),
        "params": {k: v for k, v in fabric.params},
        "node_models": [spec.model for spec in fabric.node_specs],
        "tier_usage": [asdict(t) for t in tier_usage(fabric)],
    }


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}:1"


def print_fabric(console: Console, fabric: Fabric) -> None:
    """A summary table and a per-tier port usage table."""
    summary = Table(title=f"fabric {fabric.name}", title_justify="left", show_header=False)
    summary.add_column("what", style="bold")
    summary.add_column("count", justify="right")
    for key, value in fabric.summary().items():
        summary.add_row(key.replace("_", " "), f"{value:,}")
    if fabric.node_specs:
        summary.add_row("node models", Text(", ".join(s.model for s in fabric.node_specs)))
    console.print(summary)
    tiers = Table(title="ports per tier", title_justify="left")
    for col in ("tier", "switches", "ports", "down", "up", "free", "down Gb/s", "up Gb/s"):
        tiers.add_column(col, justify="left" if col == "tier" else "right")
    tiers.add_column("oversubscription", justify="right")
    for t in tier_usage(fabric):
        tiers.add_row(
            t.tier, f"{t.switches:,}", f"{t.ports:,}", f"{t.down:,}", f"{t.up:,}",
            f"{t.free:,}", f"{t.down_gbps:,.0f}", f"{t.up_gbps:,.0f}", _ratio(t.oversubscription),
        )  # fmt: skip
    console.print(tiers)
