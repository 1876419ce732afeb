"""The drill commands: ``harness drill`` (run drills, or predict them with ``--dry-run``),
``harness halt`` (the lever) and ``harness journal`` (show and diff saved journals)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from xml.etree import ElementTree as ET

from harness.cli.common import EXIT_BAD_INPUT
from harness.cli.common import EXIT_FAILED
from harness.cli.common import EXIT_OK
from harness.cli.common import print_note
from harness.cli.common import stdout_console
from harness.errors import BackendError
from harness.errors import ScenarioError

if TYPE_CHECKING:  # the drill machinery is imported when a drill command runs, not to parse
    from harness.run.drill.results import DrillResult
    from harness.scenario.drill_prepare import PreparedDrill
    from harness.scenario.model import Scenario

#: Times within this fraction count as agreeing (harness.run.drill.results.TIME_TOLERANCE; a
#: test checks the two agree).
TIME_TOLERANCE = 0.10


def configure_drill(p: argparse.ArgumentParser) -> None:
    """``harness drill FILE... [--backend B] [--dry-run] [--journal DIR] [--json] ...``."""
    p.add_argument("paths", nargs="*", type=Path, metavar="FILE",
                   help="drill files (scenarios with a drill: section) or directories")  # fmt: skip
    p.add_argument("--backend", "-b", default="model",
                   help="model (default: model time, instant), netns or ibsim")  # fmt: skip
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="resolve every event and print the model's prediction; touch nothing "
        "on the host (no namespace, ledger entry, process or file outside --journal)",
    )
    p.add_argument("--journal", type=Path, metavar="DIR",
                   help="write DIR/journal.jsonl (per event) and DIR/journal.json (at the end); "
                   "with several drills, DIR/NAME/ each")  # fmt: skip
    p.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="also write an HTML page: DIR/index.html (the probes over time, faults "
        "shaded, predicted against observed crash times, every action)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--junit-xml", type=Path, metavar="FILE", help="also write a JUnit XML file")
    p.add_argument("--replay", type=Path, metavar="JOURNAL",
                   help="run a journal's drill again on the model and check that its predicted "
                   "half (events, job fates, probe predictions) is identical")  # fmt: skip


def _drills(paths: list[Path]) -> tuple[list[Scenario], list[str]]:
    """The drill scenarios under ``paths``; the load problems, one string each."""
    from harness.cli.run import load_all

    _, scenarios, errors = load_all(paths)
    problems = [str(err) for _, err in errors]
    drills = [s for s in scenarios if s.drill is not None]
    if not drills and not problems:
        shown = ", ".join(str(p) for p in paths)
        problems.append(f"no drill (a scenario with a drill: section) in {shown}")
    return drills, problems


def _journal_dir(root: Path | None, name: str, many: bool) -> Path | None:
    if root is None:
        return None
    return root / name if many else root


def cmd_drill(args: argparse.Namespace) -> int:
    """``harness drill``: each drill in turn; exit 0 when all pass, 1 when one failed,
    aborted or measured otherwise than predicted, 2 on bad input."""
    from harness.backends import check_backend
    from harness.backends import make_backend
    from harness.run.drill.halt import HaltLever
    from harness.run.drill.runner import drill_unsupported
    from harness.run.drill.runner import run_drill
    from harness.scenario.drill_prepare import prepare_drill

    if args.replay is not None:
        return _replay(args)
    if not args.paths:
        msg = "harness drill needs drill files (or --replay JOURNAL)"
        raise ScenarioError(msg)
    backend_name = "model" if args.dry_run else check_backend(args.backend)
    drills, problems = _drills(args.paths)
    if problems:
        raise ScenarioError("\n".join(problems))
    console = stdout_console()
    lever = None if args.dry_run else HaltLever()
    results: list[DrillResult] = []
    documents: list[tuple[DrillResult, dict[str, Any]]] = []
    for scenario in [s for s in drills if not args.dry_run and args.backend not in s.backends]:
        print_note(f"skipped {scenario.name}: runs on {', '.join(scenario.backends)}, "
                   f"not on backend {args.backend}")  # fmt: skip
    drills = [s for s in drills if args.dry_run or args.backend in s.backends]
    for scenario in drills:
        pd = prepare_drill(scenario)
        backend = make_backend(backend_name)
        why = drill_unsupported(pd, backend)
        if why is not None:
            print_note(f"skipped {scenario.name}: {why}")
            continue
        text = scenario.where.path and Path(scenario.where.path).read_text()
        if not args.json:
            console.print(f"drill {scenario.name} on {backend_name}"
                          f"{' (dry run)' if args.dry_run else ''}:", highlight=False)  # fmt: skip
        from harness.reporting.drill_text import print_drill
        from harness.reporting.drill_text import print_event

        result = run_drill(
            pd, backend, routing=pd.prepared.routing,
            journal_dir=_journal_dir(args.journal, scenario.name, len(drills) > 1),
            lever=lever, dry_run=args.dry_run, source_text=text or "",
            on_event=None if args.json else lambda e: print_event(console, e),
        )  # fmt: skip
        results.append(result)
        documents.append((result, _document(result, pd, text or "")))
        if not args.json:
            print_drill(console, result)
    if args.json:
        json.dump({"drills": [_summary(r) for r in results]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    if args.junit_xml is not None:
        _write_junit(results, args.junit_xml)
    if args.report is not None and results:
        from harness.cli.common import wrote_report
        from harness.reporting.html import write_drill_report

        wrote_report(write_drill_report([d for _, d in documents], args.report))
    if not results:
        msg = f"nothing ran: no drill runs on backend {backend_name}"
        raise ScenarioError(msg)
    if any(r.status == "error" for r in results):
        return EXIT_BAD_INPUT if all(r.status == "error" for r in results) else EXIT_FAILED
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILED


def _document(r: DrillResult, pd: PreparedDrill, source: str) -> dict[str, Any]:
    """The result as its journal document (what --report draws), in JSON types."""
    from harness.run.drill.document import journal_document

    doc = journal_document(r, pd, "", {}, source)
    loaded: dict[str, Any] = json.loads(json.dumps(doc, default=str))
    return loaded


def _summary(r: DrillResult) -> dict[str, Any]:
    return {"name": r.name, "path": r.path, "backend": r.backend, "status": r.status,
            "reason": r.reason, "dry_run": r.dry_run, "mismatches": r.mismatches,
            "recovered_s": r.recovered_s, "journal": r.journal,
            "events": [e.to_json() for e in r.events],
            "rollback": [e.to_json() for e in r.rollback],
            "probes": [{k: v for k, v in p.to_json().items() if k != "samples"} | {
                "samples": len(p.samples)} for p in r.probes],
            "fates": list(r.fates)}  # fmt: skip


def _write_junit(results: list[DrillResult], path: Path) -> None:
    suite = ET.Element("testsuite", name="harness drills", tests=str(len(results)),
                       failures=str(sum(r.status in ("failed", "mismatch", "aborted")
                                        for r in results)),
                       errors=str(sum(r.status == "error" for r in results)))  # fmt: skip
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=r.path or "drill", name=r.name,
                             time=f"{r.duration_s:.3f}")  # fmt: skip
        if r.status in ("failed", "mismatch", "aborted"):
            ET.SubElement(case, "failure", message=f"{r.status}: {r.reason}")
        elif r.status == "error":
            ET.SubElement(case, "error", message=r.reason)
    try:
        ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as err:
        msg = f"cannot write the JUnit report to {path}"
        raise BackendError(msg, err) from err


def _replay(args: argparse.Namespace) -> int:
    """``harness drill --replay JOURNAL``: the journal's drill again, on the model."""
    from harness.backends import make_backend
    from harness.run.drill.document import predicted_half
    from harness.run.drill.runner import run_drill
    from harness.scenario.drill_prepare import prepare_drill
    from harness.scenario.load import load_text

    if args.backend != "model":
        msg = "--replay runs on the model only (--backend model)"
        raise ScenarioError(msg)
    doc = _read(args.replay)
    source = doc.get("source") or ""
    if not source:
        msg = f"{args.replay}: the journal holds no drill source to replay"
        raise ScenarioError(msg)
    scenarios = [s for s in load_text(source, Path(doc.get("path") or "journal"))
                 if s.name == doc.get("name")]  # fmt: skip
    if not scenarios:
        msg = f"{args.replay}: its source has no drill named {doc.get('name')!r}"
        raise ScenarioError(msg)
    pd = prepare_drill(scenarios[0])
    emulated = doc.get("backend") != "model"
    # an emulated run's actions happened when its backend had settled: replayed at those times
    at = {(e["label"], e["action"]): float(e["actual_s"]) for e in doc.get("events", [])
          if e.get("action") in ("inject", "restore")} if emulated else None  # fmt: skip
    stop = doc.get("abort") if emulated else None
    abort_at = (float(stop["t"]), str(stop["reason"])) if stop else None
    result = run_drill(pd, make_backend("model"), routing=pd.prepared.routing,
                       journal_dir=args.journal, source_text=source, at=at,
                       abort_at=abort_at)  # fmt: skip
    from harness.run.drill.document import journal_document

    again = journal_document(result, pd, "replay", {}, source)
    old = predicted_half(doc, probes=not emulated)
    new = predicted_half(json.loads(json.dumps(again, default=str)), probes=not emulated)
    console = stdout_console()
    if old == new:
        probes = (
            f"{sum(len(p['predicted']) for p in new['probes'])} probe predictions"
            if not emulated
            else f"at the {doc.get('backend')} run's own action and "
            "abort times; its probes, sampled on the wall clock, are not compared"
        )
        console.print(f"replay of {doc.get('name')}: the predicted half is identical "
                      f"({len(new['events'])} events, {probes})", highlight=False)  # fmt: skip
        return EXIT_OK
    for key in old:
        if old[key] != new[key]:
            console.print(f"replay differs in {key}", highlight=False)
    return EXIT_FAILED


def _read(path: Path) -> dict[str, Any]:
    from harness.run.drill.journal import read_journal

    try:
        return read_journal(path)
    except (OSError, ValueError, KeyError) as err:
        msg = f"{path}: not a readable drill journal ({err}); give DIR or DIR/journal.json"
        raise ScenarioError(msg) from err


def configure_halt(p: argparse.ArgumentParser) -> None:
    """``harness halt RUN | --all | --release``."""
    p.add_argument("run", nargs="?", metavar="RUN", help="a running drill's run id or name")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--all",
        action="store_true",
        help="stop every drill on this host and refuse new ones until --release",
    )
    g.add_argument("--release", action="store_true", help="let drills run again")
    g.add_argument("--list", action="store_true", help="list the drills running here")


def cmd_halt(args: argparse.Namespace) -> int:
    """``harness halt``: pull the lever (idempotent)."""
    from harness.run.drill.halt import HaltLever

    lever = HaltLever()
    console = stdout_console()
    if args.release:
        lever.release()
        console.print("drills may run again", highlight=False)
        return EXIT_OK
    if args.all:
        lever.halt_all()
        running = lever.running()
        console.print(f"halted every drill on this host ({len(running)} running); new drills "
                      "are refused until harness halt --release", highlight=False)  # fmt: skip
        return EXIT_OK
    if args.list or args.run is None:
        for d in lever.running():
            console.print(f"{d['run']}  {d['name']}  pid {d['pid']}", highlight=False)
        if args.run is None and not args.list:
            print_note("give a run id or name, or --all")
        return EXIT_OK
    hit = lever.halt(args.run)
    if not hit:
        msg = f"no running drill is called {args.run!r} (harness halt --list)"
        raise ScenarioError(msg)
    console.print(f"asked {', '.join(hit)} to stop", highlight=False)
    return EXIT_OK


def configure_journal(p: argparse.ArgumentParser) -> None:
    """``harness journal show FILE`` and ``harness journal diff A B``."""
    sub = p.add_subparsers(dest="journal_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="print a saved drill journal")
    show.add_argument("file", type=Path, metavar="FILE", help="a journal directory or file")
    diff = sub.add_parser("diff", help="two journals aligned by event: changed verdicts and "
                          "latencies beyond a tolerance (exit 1 when they differ)")  # fmt: skip
    diff.add_argument("a", type=Path, metavar="FILE")
    diff.add_argument("b", type=Path, metavar="FILE")
    diff.add_argument("--tolerance", type=float, default=TIME_TOLERANCE,
                      help=f"relative time tolerance (default {TIME_TOLERANCE:g})")  # fmt: skip


def cmd_journal(args: argparse.Namespace) -> int:
    """``harness journal``: show or diff saved journals."""
    from harness.reporting.drill_text import diff_journals
    from harness.reporting.drill_text import print_journal

    console = stdout_console()
    if args.journal_command == "show":
        print_journal(console, _read(args.file))
        return EXIT_OK
    changes = diff_journals(_read(args.a), _read(args.b), args.tolerance)
    for line in changes:
        console.print(line, highlight=False)
    if not changes:
        console.print("the journals agree (statuses, fates, guard verdicts; times within "
                      f"{args.tolerance:.0%})", highlight=False)  # fmt: skip
    return EXIT_FAILED if changes else EXIT_OK
