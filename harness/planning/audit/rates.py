"""Links below their peers: cables slower or narrower than the others of their tier and kind.

(Core layer: pure.)  Part of the design-free audit
(:func:`~harness.planning.audit.regular.audit_regular`): a fabric's cables of
one kind (access, leaf-spine, spine-core) are meant to run at one rate; the
majority rate and width of each kind is the norm, and every cable below it --
slower per lane (a 4xEDR host on an HDR fabric, a DDR HCA among QDR ones) or
narrower (a 1xHDR link that trained on one lane of four) -- is a ``slow-link``
departure naming both ends and their ports.  A cable faster than the norm is
no departure.
"""

from __future__ import annotations

import numpy as np

from harness.fabric.ib_rates import IB_LANE_GBPS
from harness.fabric.ib_rates import IB_WIDTHS
from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind

KIND_WORDS: dict[LinkKind, str] = {
    LinkKind.ACCESS: "access",
    LinkKind.LEAF_SPINE: "leaf-spine",
    LinkKind.SPINE_CORE: "spine-core",
}


def rate_text(gbps: float, lanes: int) -> str:
    """A link rate in words: InfiniBand's name when one fits, and Gb/s.

    >>> rate_text(100.0, 4), rate_text(50.0, 1), rate_text(40.0, 4), rate_text(30.0, 3)
    ('4xEDR 100 Gb/s', '1xHDR 50 Gb/s', '4xQDR/4xFDR10 40 Gb/s', '30 Gb/s over 3 lane(s)')
    """
    lane = gbps / lanes if lanes else gbps
    names = [f"{lanes}x{n}" for n, g in IB_LANE_GBPS.items()
             if abs(g - lane) < 1e-6 and lanes in IB_WIDTHS]  # fmt: skip
    return f"{'/'.join(names)} {gbps:g} Gb/s" if names else f"{gbps:g} Gb/s over {lanes} lane(s)"


def slow_links(f: Fabric) -> list[tuple[str, str, str]]:
    """(link id, ``slower`` / ``narrower`` / both, one line for a person) per cable below its norm.

    The norm of a kind is its most common (capacity, lanes); a kind with
    fewer than three cables has no norm.  Listed in link order.
    """
    out: list[tuple[str, str, str]] = []
    for kind, word in KIND_WORDS.items():
        links = f.links_of_kind(kind)
        if links.size < 3:
            continue
        caps = f.link_capacity[links]
        widths = f.link_lanes[links]
        pairs, counts = np.unique(np.stack([caps, widths.astype(caps.dtype)]), axis=1,
                                  return_counts=True)  # fmt: skip
        best = max(range(counts.size), key=lambda k: (int(counts[k]), float(pairs[0, k])))
        count = int(counts[best])
        if count <= links.size / 2:
            continue  # no majority rate: no norm to fall below
        norm_gbps, norm_lanes = float(pairs[0, best]), int(pairs[1, best])
        norm_lane = norm_gbps / max(norm_lanes, 1)
        lane = caps / np.maximum(widths, 1)
        below = (caps < norm_gbps) & ((lane < norm_lane - 1e-9) | (widths < norm_lanes))
        for i in links[below].tolist():
            gbps, lanes = float(f.link_capacity[i]), int(f.link_lanes[i])
            why = [w for w, bad in (("slower", gbps / max(lanes, 1) < norm_lane - 1e-9),
                                    ("narrower", lanes < norm_lanes)) if bad]  # fmt: skip
            a, b = int(f.link_a[i]), int(f.link_b[i])
            norm = rate_text(norm_gbps, norm_lanes)
            text = (
                f"slow link: {f.ids[a]} port {int(f.link_a_port[i])} -- {f.ids[b]} port "
                f"{int(f.link_b_port[i])} runs at {rate_text(gbps, lanes)}, "
                f"{' and '.join(why)} than its {count} {word} peers' {norm}"
            )
            out.append((f.link_id(i), "/".join(why), text))
    return out
