"""The report figures, drawn with matplotlib's Agg backend (reporting edge: writes PNGs).

* :func:`sweep_impact`: impact by element category of every single failure of a
  sweep -- strip plots of the job bus bandwidth ratio, the leaf uplink ratio and
  the jobs lost, one row per category, with the worst cases named on the plot.
  On a symmetric design every case of one category lands on the same value, so
  the plot says exactly that ("every spine costs 5 % of the uplinks, every leaf
  one job") instead of painting one colour.
* :func:`pair_matrix`: depth-2 sweeps: category x category, each cell the pairs of
  that kind, coloured by mean jobs lost and annotated with the count, the worst
  jobs lost and the worst bandwidth.
* :func:`risk_margin`: the N+1 margin by category, before and after a change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import numpy as np

from harness.errors import BackendError
from harness.errors import MissingExtra

if TYPE_CHECKING:
    from harness.planning.risk import RiskReport
    from harness.planning.sweep.records import CaseResult
    from harness.planning.sweep.run import SweepResult

DPI = 100
WORST_NAMED = 3


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as err:
        package = "matplotlib"
        raise MissingExtra(package, "a figure") from err

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    plt = _pyplot()
    try:
        fig.savefig(path, dpi=DPI)
    except OSError as err:
        msg = f"cannot write the figure {path}"
        raise BackendError(msg, err) from err
    finally:
        plt.close(fig)
    return path


def _singles_by_category(result: SweepResult) -> dict[str, list[CaseResult]]:
    out: dict[str, list[CaseResult]] = defaultdict(list)
    for c in result.cases:
        if len(c.failures) == 1:
            out[c.category(result.fabric)].append(c)
    return dict(sorted(out.items()))


def _jitter(n: int, seed: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.28, 0.28, n)


def impact_height(result: SweepResult) -> float:
    """The height in inches of the impact figure (grows with the categories)."""
    return max(3.2, 0.42 * len(_singles_by_category(result)) + 1.9)


def sweep_impact(result: SweepResult, path: Path, *, base_lost: Sequence[str] = ()) -> Path:
    """Impact by category of the single failures of ``result`` (see the module docstring)."""
    plt = _pyplot()
    fig = plt.figure(figsize=(14, impact_height(result)), layout="constrained")
    draw_impact(fig, result, base_lost)
    return _save(fig, path)


def draw_impact(fig: Any, result: SweepResult, base_lost: Sequence[str] = ()) -> None:
    """Draw the impact strip plots into ``fig`` (a figure or a subfigure)."""
    f = result.fabric
    groups = _singles_by_category(result)
    cats = list(groups) or ["(no single failures)"]
    axes = fig.subplots(1, 3, sharey=True)
    metrics = (
        ("min_busbw_ratio", "min bus bandwidth of the surviving jobs, ratio to healthy", True),
        ("leaf_uplink_ratio", "min leaf uplink capacity (ratio to healthy)", True),
        ("jobs_lost", "jobs lost by the failure", False),
    )
    for ax, (attr, xlabel, is_ratio) in zip(axes, metrics, strict=True):
        for y, cat in enumerate(cats):
            cases = groups.get(cat, [])
            if not cases:
                continue
            if attr == "jobs_lost":
                xs = np.array([len(c.jobs_lost) for c in cases], dtype=float)
            else:
                xs = np.array([getattr(c, attr) for c in cases], dtype=float)
            ys = y + _jitter(len(cases), y)
            ax.scatter(xs, ys, s=9, alpha=0.45, color="#1f77b4", linewidths=0)
            lo, med, hi = np.min(xs), np.median(xs), np.max(xs)
            ax.plot([lo, hi], [y, y], color="#333", lw=0.8)
            ax.plot([med], [y], marker="|", color="#d62728", ms=14, mew=2)
            text = (
                (f"{med:.1%}" if is_ratio else f"{med:g}")
                if lo == hi
                else (f"{lo:.0%}..{hi:.0%}" if is_ratio else f"{lo:g}..{hi:g}")
            )
            ax.annotate(text, (hi, y), xytext=(6, 4), textcoords="offset points", fontsize=8,
                        color="#333")  # fmt: skip
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
        if is_ratio:
            ax.set_xlim(-0.02, 1.12)
        else:
            top = max((len(c.jobs_lost) for c in result.cases if len(c.failures) == 1), default=0)
            ax.set_xlim(-0.3, max(1.0, top) * 1.25 + 0.5)
    axes[0].set_yticks(range(len(cats)))
    axes[0].set_yticklabels([f"{c} ({len(groups.get(c, []))})" for c in cats], fontsize=9)
    axes[0].invert_yaxis()
    ranked = [c for c in result.ranked() if len(c.failures) == 1]
    losing = [c for c in ranked if c.jobs_lost]
    _name_worst(axes[2], cats, worst_classes(losing, WORST_NAMED, f), f, "jobs_lost")
    by_bw = sorted(ranked, key=lambda c: (c.min_busbw_ratio, -len(c.jobs_lost)))
    if by_bw and by_bw[0].min_busbw_ratio < 1.0 - 1e-9 and not base_lost:
        _name_worst(axes[0], cats, worst_classes(by_bw, 1, f), f, "min_busbw_ratio")
    by_up = sorted(ranked, key=lambda c: c.leaf_uplink_ratio)
    if by_up and by_up[0].leaf_uplink_ratio < 1.0 - 1e-9:
        _name_worst(axes[1], cats, worst_classes(by_up, 1, f), f, "leaf_uplink_ratio")
    axes[2].xaxis.get_major_locator().set_params(integer=True)
    if base_lost:
        shown = ", ".join(base_lost[:4]) + (" ..." if len(base_lost) > 4 else "")
        axes[0].text(
            0.5,
            0.98,
            f"pinned at 0: job(s) already lost in the base state ({shown})",
            transform=axes[0].transAxes,
            ha="center",
            va="top",
            fontsize=8,
            color="#b71c1c",
            bbox={"fc": "#fff3f3", "ec": "#b71c1c", "lw": 0.6},
        )
    fig.suptitle(
        f"{f.name}: {len(result.cases):,} cases, {result.job_losing:,} lose a job, "
        f"{result.disconnecting:,} disconnect a GPU pair -- impact of single failures by category",
        fontsize=11,
    )


def _impact(c: CaseResult, f: Any) -> tuple[str, int, int, float, float, float]:
    return (c.category(f), len(c.jobs_lost), c.pairs_disconnected, round(c.min_busbw_ratio, 9),
            round(c.leaf_uplink_ratio, 9), round(c.storage_ratio, 9))  # fmt: skip


def worst_classes(ranked: Sequence[CaseResult], limit: int, f: Any) -> list[tuple[CaseResult, int]]:
    """The first case of each of the ``limit`` worst distinct impacts, and how many cases of
    its category share it.

    On a symmetric design the 40 leaf failures tie; naming one of them with "+ 39
    alike" says more than three names of the same impact.
    """
    out: list[tuple[CaseResult, int]] = []
    seen: dict[tuple[str, int, int, float, float, float], int] = {}
    for c in ranked:
        key = _impact(c, f)
        if key in seen:
            k = seen[key]
            out[k] = (out[k][0], out[k][1] + 1)
        elif len(out) < limit:
            seen[key] = len(out)
            out.append((c, 1))
    return out


def _name_worst(
    ax: Any, cats: list[str], cases: Sequence[tuple[CaseResult, int]], f: Any, attr: str
) -> None:
    for k, (c, alike) in enumerate(cases):
        y = cats.index(c.category(f)) if c.category(f) in cats else 0
        x = float(len(c.jobs_lost)) if attr == "jobs_lost" else float(getattr(c, attr))
        ax.annotate(
            c.label(f) + (f" (+{alike - 1:,} alike)" if alike > 1 else ""), (x, y),
            xytext=(10, -14 - 11 * k), textcoords="offset points",
            fontsize=7.5, color="#b71c1c", arrowprops={"arrowstyle": "-", "color": "#b71c1c",
                                                       "lw": 0.6},
        )  # fmt: skip


def _pair_cells(result: SweepResult) -> dict[tuple[str, str], list[CaseResult]]:
    f = result.fabric
    cells: dict[tuple[str, str], list[CaseResult]] = defaultdict(list)
    for c in result.cases:
        if len(c.failures) == 2:
            a, b = sorted(x.category(f) for x in c.failures)
            cells[(a, b)].append(c)
    return dict(cells)


def pair_height(result: SweepResult) -> float:
    """The height in inches of the pair figure (grows with the categories in pairs)."""
    cats = {k for pair in _pair_cells(result) for k in pair}
    return max(5.0, 1.35 * len(cats) + 2.5)


def pair_matrix(result: SweepResult, path: Path, *, base_lost: Sequence[str] = ()) -> Path | None:
    """Depth 2: category x category impact of the pairs; ``None`` without pairs."""
    if not _pair_cells(result):
        return None
    plt = _pyplot()
    size = pair_height(result)
    fig = plt.figure(figsize=(size + 1.5, size), layout="constrained")
    draw_pairs(fig, result, base_lost)
    return _save(fig, path)


def draw_pairs(fig: Any, result: SweepResult, base_lost: Sequence[str] = ()) -> None:
    """Draw the pair matrix into ``fig`` (a figure or a subfigure)."""
    f = result.fabric
    cells = _pair_cells(result)
    cats = sorted({k for pair in cells for k in pair})
    n = len(cats)
    mean = np.full((n, n), np.nan)
    for (a, b), cases in cells.items():
        i, j = cats.index(a), cats.index(b)
        mean[i, j] = mean[j, i] = float(np.mean([len(c.jobs_lost) for c in cases]))
    ax = fig.subplots()
    vmax = max(1.0, float(np.nanmax(mean)))
    im = ax.imshow(np.ma.masked_invalid(mean), cmap="Reds", vmin=0, vmax=vmax)
    for (a, b), cases in cells.items():
        i, j = cats.index(a), cats.index(b)
        worst_lost = max(len(c.jobs_lost) for c in cases)
        worst_bw = min(c.min_busbw_ratio for c in cases)
        worst_up = min(c.leaf_uplink_ratio for c in cases)
        bw = f"\nbusbw >= {worst_bw:.0%}"
        text = (f"{len(cases):,} pairs\nmean {mean[i, j]:.2g} lost, max {worst_lost}{bw}"
                f"\nuplink >= {worst_up:.0%}")  # fmt: skip
        for r, col in {(i, j), (j, i)}:
            dark = mean[r, col] > 0.6 * vmax
            ax.text(col, r, text, ha="center", va="center", fontsize=7.5,
                    color="white" if dark else "#222")  # fmt: skip
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels(cats, rotation=30, ha="right", fontsize=9)
    ax.set_yticklabels(cats, fontsize=9)
    fig.colorbar(im, ax=ax, label="mean jobs lost per pair", shrink=0.8)
    pairs = sum(len(v) for v in cells.values())
    ax.set_title(f"{f.name}: {pairs:,} failure pairs by category (depth 2)", fontsize=11)


def risk_margin(report: RiskReport, path: Path) -> Path | None:
    """N+1 margin by category: the share of single further failures that break the
    budget before and after a change, and how many the change adds."""
    rows = report.margin_rows()
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, max(2.8, 0.55 * len(rows) + 1.6)), layout="constrained")
    ys = np.arange(len(rows))
    h = 0.38
    sides = (
        (-h / 2, "before", "#9aa7b8", [(m.before, m.before_of) for m in rows]),
        (h / 2, "after", "#d62728", [(m.after, m.after_of) for m in rows]),
    )
    for offset, label, color, counts in sides:
        shares = [n / t if t else 0.0 for n, t in counts]
        bars = ax.barh(ys + offset, shares, height=h, color=color, label=label)
        for bar, (n, t) in zip(bars, counts, strict=True):
            ax.annotate(
                f"{n:,} of {t:,}",
                (bar.get_width(), bar.get_y() + h / 2),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
    for y, m in zip(ys, rows, strict=True):
        ax.annotate(
            f"+{m.added:,}",
            (1.3, y),
            ha="right",
            va="center",
            fontsize=9,
            fontweight="bold",
            color="#b71c1c" if m.added else "#555",
        )
    ax.set_yticks(ys)
    ax.set_yticklabels([m.category for m in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 1.32)
    ax.set_xlabel("share of single further failures that break the budget (right: added)")
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:.0%}" if v <= 1 else ""))
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    budget = ", ".join(r.describe() for r in report.rules)
    ax.set_title(f"N+1 margin by category (budget {budget})", fontsize=11)
    return _save(fig, path)


def sweep_figure(result: SweepResult, path: Path, *, base_lost: Sequence[str] = ()) -> Path:
    """``harness sweep --plot``: the impact by category, and below it the pair matrix at
    depth 2, in one PNG."""
    if not _pair_cells(result):
        return sweep_impact(result, path, base_lost=base_lost)
    plt = _pyplot()
    top, bottom = impact_height(result), pair_height(result)
    fig = plt.figure(figsize=(14, top + bottom), layout="constrained")
    upper, lower = fig.subfigures(2, 1, height_ratios=[top, bottom])
    draw_impact(upper, result, base_lost)
    draw_pairs(lower, result, base_lost)
    return _save(fig, path)


def figure_size(path: Path) -> tuple[int, int]:
    """Pixel width and height of a PNG (read from its header)."""
    with path.open("rb") as fh:
        head = fh.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        msg = f"{path} is not a PNG"
        raise ValueError(msg)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


__all__ = ["figure_size", "pair_matrix", "risk_margin", "sweep_figure", "sweep_impact"]
