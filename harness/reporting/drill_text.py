"""What ``harness drill`` and ``harness journal`` print (reporting stage).

A drill prints its timeline as it runs (one line per action: planned and actual
time, what was done, the guard's verdict, the predicted job fates), then its
probes (baseline, samples, verdict), the rollback, the expectations and the
verdict.  ``harness journal show`` prints a saved journal the same way, and
``harness journal diff`` aligns two journals by event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console

from harness.run.drill.results import TIME_TOLERANCE
from harness.run.drill.results import DrillResult
from harness.run.drill.results import EventRecord

_STYLE = {"passed": "green", "failed": "red", "mismatch": "magenta", "aborted": "yellow",
          "error": "red", "incomplete": "yellow"}  # fmt: skip


def _hundredths(x: float) -> str:
    """Seconds to the hundredth, without trailing zeros: ``1``, ``0.27``, ``0``."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def event_line(e: EventRecord | dict[str, Any]) -> str:
    """One action in a line: ``t=15 s (planned 15) inject drained spine-02: applied``."""
    d = e.to_json() if isinstance(e, EventRecord) else e
    late = abs(d["planned_s"] - d["actual_s"]) >= 5e-4
    planned = f" (planned {d['planned_s']:g})" if late else ""
    line = (f"t={d['actual_s']:.4g} s{planned} {d['action']} {d['fault']} [{d['label']}]: "
            f"{d['status']}")  # fmt: skip
    if d.get("settle_s"):
        line += f", settles in {_hundredths(d['settle_s'])} s"
    if d.get("guard", "").startswith("refused"):
        line += f" ({d['guard']})"
    if d.get("mismatch"):
        line += f"; MISMATCH {d['mismatch']}"
    return line


def print_event(console: Console, e: EventRecord) -> None:
    """An action as it happens, with the model's job fates under it."""
    console.print(f"  {event_line(e)}", highlight=False, markup=False)
    for fate in e.predicted:
        console.print(f"      predicted: {fate}", style="dim", highlight=False, markup=False)


def print_drill(console: Console, result: DrillResult, *, events: bool = False) -> None:
    """A drill's result; ``events``: its actions too (when they were not printed live)."""
    console.print(_head(result.status, result.name, result.backend, result.dry_run),
                  highlight=False)  # fmt: skip
    console.print(f"  routing: {result.routing}", style="dim", highlight=False, markup=False)
    if events:
        for e in result.events:
            print_event(console, e)
    _body(console, [p.to_json() for p in result.probes], [e.to_json() for e in result.rollback],
          result.reason, result.recovered_s, list(result.fates),
          [(e.observation, e.expected, e.observed, e.passed) for e in result.expectations],
          result.mismatches, result.journal)  # fmt: skip
    for text, bad in result.job_checks:
        console.print(f"  {'MISMATCH ' if bad else ''}{text}", highlight=False, markup=False)


def _head(status: str, name: str, backend: str, dry: bool) -> str:
    from rich.markup import escape

    dry_text = " (dry run: predicted, nothing touched)" if dry else ""
    style = _STYLE.get(status, "white")
    return f"[{style}]{status.upper()}[/{style}] {escape(name)} on {escape(backend)}{dry_text}"


def _body(  # noqa: PLR0917 -- one journal's parts, from a result or a saved document alike
    console: Console, probes: Sequence[dict[str, Any]], rollback: Sequence[dict[str, Any]],
    reason: str, recovered: float | None, fates: Sequence[str],
    expectations: Sequence[tuple[str, str, Any, bool]], mismatches: int, journal: str,
) -> None:  # fmt: skip
    for p in probes:
        vals = [s["value"] for s in p["samples"] if s["value"] is not None]
        low = f", lowest {min(vals):.4g}" if vals else ""
        base = f", baseline {p['baseline']:.4g}" if p.get("baseline") is not None else ""
        console.print(f"  probe {p['probe']}: {p['verdict']} ({len(p['samples'])} samples"
                      f"{base}{low}){': ' + p['why'] if p.get('why') else ''}",
                      highlight=False, markup=False)  # fmt: skip
    for r in rollback:
        console.print(f"  rollback: {event_line(r)}", highlight=False, markup=False)
    if recovered is not None:
        console.print(f"  recovered {_hundredths(recovered)} s after the last restore",
                      highlight=False, markup=False)  # fmt: skip
    for name, expected, observed, ok in expectations:
        mark = "ok" if ok else "FAILED"
        console.print(f"  expect {name} {expected}: {observed} {mark}", highlight=False,
                      markup=False)  # fmt: skip
    running = [f for f in fates if f.endswith(" running")]
    for fate in fates:
        if fate not in running:
            console.print(f"  job: {fate}", highlight=False, markup=False)
    if running:
        console.print(f"  {len(running)} of {len(fates)} jobs running at the end", style="dim",
                      highlight=False, markup=False)  # fmt: skip
    if mismatches:
        console.print(f"  {mismatches} measured otherwise than predicted", style="magenta")
    if reason:
        console.print(f"  {reason}", highlight=False, markup=False)
    if journal:
        console.print(f"  journal: {journal}", style="dim", highlight=False, markup=False)


def print_journal(console: Console, doc: dict[str, Any]) -> None:
    """A saved journal (``harness journal show``)."""
    console.print(_head(doc.get("status", "?"), doc.get("name", doc.get("drill", "?")),
                        doc.get("backend", "?"), bool(doc.get("dry_run"))),
                  highlight=False)  # fmt: skip
    console.print(f"  run {doc.get('run', '?')}, routing: {doc.get('routing', '?')}",
                  style="dim", highlight=False, markup=False)  # fmt: skip
    for e in doc.get("events", []):
        if e.get("action") != "rollback" and "actual_s" in e:
            console.print(f"  {event_line(e)}", highlight=False, markup=False)
            for fate in e.get("predicted", []):
                console.print(f"      predicted: {fate}", style="dim", highlight=False,
                              markup=False)  # fmt: skip
    ex = [(e["observation"], e["expected"], e["observed"], e["passed"])
          for e in doc.get("expectations", [])]  # fmt: skip
    _body(
        console,
        doc.get("probes", []),
        doc.get("rollback", []),
        doc.get("reason", ""),
        doc.get("recovered_s"),
        doc.get("fates", []),
        ex,
        doc.get("mismatches", 0),
        "",
    )


def diff_journals(a: dict[str, Any], b: dict[str, Any], tolerance: float = TIME_TOLERANCE
                  ) -> list[str]:  # fmt: skip
    """What differs between two journals, aligned by event (label and action): statuses,
    job fates and guard verdicts exactly, times and settles beyond ``tolerance``."""
    out = []
    if a.get("status") != b.get("status"):
        out.append(f"status: {a.get('status')} -> {b.get('status')}")
    key = ("label", "action")
    ea = {tuple(e.get(k) for k in key): e for e in a.get("events", [])}
    eb = {tuple(e.get(k) for k in key): e for e in b.get("events", [])}
    for k in [*ea, *[k for k in eb if k not in ea]]:
        name = f"{k[1]} {k[0]}"
        if k not in eb:
            out.append(f"{name}: only in the first")
            continue
        if k not in ea:
            out.append(f"{name}: only in the second")
            continue
        x, y = ea[k], eb[k]
        for field in ("status", "guard", "predicted", "observed"):
            if x.get(field) != y.get(field):
                out.append(f"{name}: {field} {x.get(field)!r} -> {y.get(field)!r}")
        for field in ("actual_s", "settle_s"):
            u, v = x.get(field), y.get(field)
            if u is None or v is None:
                continue
            if abs(u - v) > tolerance * max(abs(u), abs(v), 1e-9) and abs(u - v) > 1e-6:
                out.append(f"{name}: {field} {u:g} -> {v:g}")
    pa = {p["name"]: p for p in a.get("probes", [])}
    for p in b.get("probes", []):
        q = pa.get(p["name"])
        if q is not None and q.get("verdict") != p.get("verdict"):
            out.append(f"probe {p['name']}: {q.get('verdict')} -> {p.get('verdict')}")
    return out
