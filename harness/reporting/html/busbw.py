"""The jobs' bus bandwidth figures as template rows: expected, against line rate and healthy.

Each row is one job in one state (:class:`~harness.invariants.figures.BusbwFigures`),
rendered by ``templates/busbw.html.j2`` on the risk and sweep pages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from harness.invariants.figures import BusbwFigures
from harness.invariants.figures import slowest
from harness.reporting.html.page import pct


def _gbs(x: float) -> str:
    return f"{x:,.4g}" if math.isfinite(x) else "-"


def figure_rows(states: Sequence[tuple[str, Sequence[BusbwFigures]]]) -> list[dict[str, Any]]:
    """Per state (a label: ``before``, ``after``, ``base state``) and job: its expected bus
    bandwidth, worst hash draw, line rate, healthy figure and both fractions, the slowest
    surviving job of each state marked."""
    rows = []
    for label, figures in states:
        worst = slowest(figures)
        for x in figures:
            rows.append({
                "state": label, "job": x.job, "lost": x.lost,
                "slowest": worst is not None and x.job == worst.job,
                "expected": "lost" if x.lost else _gbs(x.expected_gbs),
                "worst_draw": "-" if x.lost else _gbs(x.worst_draw_gbs),
                "line": _gbs(x.line_rate_gbs), "healthy": _gbs(x.healthy_gbs),
                "vs_line": "-" if x.lost else pct(x.vs_line_rate),
                "vs_healthy": "-" if x.lost else pct(x.vs_healthy),
                "forwarding": x.forwarding, "draws": x.draws,
            })  # fmt: skip
    return rows
