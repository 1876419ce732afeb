"""A drill's probes over time, drawn with matplotlib's Agg backend (reporting edge: writes
a PNG): one panel per probe, the value judged as a line and the model's prediction dashed,
each fault's interval shaded, the baseline and the recovery window marked, and the
predicted and observed crash times as vertical lines."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.reporting.html.figures import DPI
from harness.reporting.html.figures import _pyplot
from harness.reporting.html.figures import _save

FAULT = "#ff7f0e"
PREDICTED = "#1f77b4"
OBSERVED = "#d62728"


def fault_intervals(doc: Mapping[str, Any]) -> list[tuple[str, float, float]]:
    """(label, start, end) of every fault the drill applied (to its restore or rollback)."""
    start: dict[str, float] = {}
    out = []
    for e in (*doc.get("events", []), *doc.get("rollback", [])):
        if e["action"] == "inject" and e["status"] == "applied":
            start[e["label"]] = e["actual_s"]
        elif e["action"] in ("restore", "rollback") and e["label"] in start:
            out.append((e["label"], start.pop(e["label"]), e["actual_s"]))
    end = max((s["t"] for p in doc.get("probes", []) for s in p["samples"]), default=0.0)
    out += [(label, t, end) for label, t in start.items()]
    return out


def drill_timeline(doc: Mapping[str, Any], path: Path) -> Path:
    """Draw ``doc`` (a drill journal's document) into ``path``."""
    plt = _pyplot()
    probes = [p for p in doc.get("probes", []) if p["samples"]] or [
        {"name": "(no probe)", "samples": []}
    ]
    fig, axes = plt.subplots(len(probes), 1, sharex=True, squeeze=False,
                             figsize=(9.6, 1.2 + 1.6 * len(probes)), dpi=DPI)  # fmt: skip
    drill = doc.get("drill", {})
    base = float(drill.get("baseline_s") or 0.0)
    restores = [e["actual_s"] for e in doc.get("events", []) if e["action"] == "restore"]
    recovered = doc.get("recovered_s")
    for ax, p in zip(axes[:, 0], probes, strict=True):
        ts = [s["t"] for s in p["samples"]]
        if ts:
            ax.step(ts, [s["value"] for s in p["samples"]], where="post", color="black",
                    linewidth=1.2, label="judged (measured, else predicted)")  # fmt: skip
            pred = [s["predicted"] for s in p["samples"]]
            if any(x is not None for x in pred):
                ax.step(ts, pred, where="post", color=PREDICTED, linestyle="--", linewidth=1,
                        label="predicted")  # fmt: skip
            bad = [(s["t"], s["value"]) for s in p["samples"] if s.get("mismatch")]
            if bad:
                ax.plot(*zip(*bad, strict=True), "x", color=OBSERVED, label="mismatch")
        for label, a, b in fault_intervals(doc):
            ax.axvspan(a, b, color=FAULT, alpha=0.18, linewidth=0)
            ax.text(a, 1.0, f" {label}", transform=ax.get_xaxis_transform(), fontsize=7,
                    va="top", color=FAULT)  # fmt: skip
        if base:
            ax.axvspan(-base, 0.0, color="#999999", alpha=0.15, linewidth=0)
        if restores and recovered is not None:
            ax.axvline(max(restores) + recovered, color="green", linewidth=1, linestyle=":")
        for c in doc.get("crashes", []):
            if c.get("predicted_s") is not None:
                ax.axvline(c["predicted_s"], color=PREDICTED, linewidth=1.2)
            if c.get("observed_s") is not None:
                ax.axvline(c["observed_s"], color=OBSERVED, linewidth=1.2, linestyle="-.")
        ax.set_ylabel(p["name"], fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7, loc="lower left")
    axes[-1, 0].set_xlabel(
        "drill time (s); grey: baseline, shaded: faults, vertical: crashes "
        "(blue predicted, red observed), dotted: recovered",
        fontsize=8,
    )
    fig.suptitle(f"{doc.get('name', '')} on {doc.get('backend', '')}", fontsize=10)
    fig.tight_layout()
    return _save(fig, path)
