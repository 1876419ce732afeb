"""InfiniBand link rates: ``<width>x<speed>`` names and their nominal Gb/s, both ways.

A dump states a cable's rate as ``4xHDR``; a modelled link has a capacity in
Gb/s.  :func:`ib_rate` reads the first from text (the ibnetdiscover reader),
:func:`ib_rate_name` names the second (the ibsim net file writer).
"""

from __future__ import annotations

import re

from harness.errors import FabricDesignError

# Nominal per-lane rates (Gb/s) as InfiniBand speeds are marketed: 4xHDR = 200 Gb/s.
IB_LANE_GBPS: dict[str, float] = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
IB_WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 12)
_RATE_RE = re.compile(r"\b(1|2|4|8|12)x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\b")


def ib_rate(text: str) -> tuple[int, str, float] | None:
    """The last ``<width>x<speed>`` in ``text`` as (lanes, speed, Gb/s), or None."""
    found = _RATE_RE.findall(text)
    if not found:
        return None
    width, speed = found[-1]
    return int(width), speed, int(width) * IB_LANE_GBPS[speed]


def ib_rate_name(gbps: float) -> str:
    """The InfiniBand ``<width>x<speed>`` whose nominal rate is ``gbps`` (4x preferred)."""
    for width in (4, 1, 2, 8, 12):
        for speed, lane in IB_LANE_GBPS.items():
            if speed != "FDR10" and abs(width * lane - gbps) < 1e-6:
                return f"{width}x{speed}"
    known = ", ".join(f"4x{s}={4 * g:g}" for s, g in IB_LANE_GBPS.items() if s != "FDR10")
    msg = (
        f"{gbps:g} Gb/s is no InfiniBand width x speed ({known}, or 1x/2x/8x/12x of them); "
        "give the cable a capacity InfiniBand can run at"
    )
    raise FabricDesignError(msg)
