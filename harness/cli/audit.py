"""The commands over topology dumps: ``harness audit`` (a live dump against the
intended design, or against the regular design inferred from it) and ``harness
export`` (a fabric or a dump written for containerlab, GraphML, ibsim or Slurm)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.cli.common import EXIT_FAILED
from harness.cli.common import EXIT_OK
from harness.cli.common import add_jobs
from harness.cli.common import add_report
from harness.cli.common import file_override
from harness.cli.common import jobs_of
from harness.cli.common import progress_bar
from harness.cli.common import stdout_console
from harness.cli.common import wrote_report
from harness.cli.imports import add_names
from harness.cli.imports import fabric_or_dump
from harness.cli.imports import print_warnings
from harness.cli.imports import rules_of
from harness.errors import BackendError


# -- harness audit --------------------------------------------------------------------
def configure_audit(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness audit``."""

    p.add_argument(
        "dump",
        type=Path,
        metavar="DUMP",
        help="a live topology dump (ibnetdiscover, SimAI, containerlab)",
    )
    p.add_argument(
        "--design",
        default=None,
        metavar="FABRIC",
        help="the intended design: a preset name or a fabric file (default: infer the "
        "regular design from the dump by majority and report the departures)",
    )
    p.add_argument("--format", dest="fmt", default=None, help="the dump's format (default: sniff)")
    add_names(p)
    add_jobs(p, "jobs whose exposure to report (default per-su); as for harness risk --jobs")
    p.add_argument(
        "--budget",
        default="jobs_lost=0",
        metavar="RULES",
        help="budget for the risk of the live state (default jobs_lost=0)",
    )
    p.add_argument("--no-ports", action="store_true", help="compare cables without port numbers")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_report(p)


def cmd_audit(args: argparse.Namespace) -> int:
    """``harness audit``: compare a live dump with its design, then the N+1 margin of what
    differs."""
    from harness.fabric.jobs import resolve_jobs
    from harness.fabric.resolve import resolve_fabric
    from harness.fabric.routing import resolve
    from harness.importers import load_dump
    from harness.observations.budget import parse_budget
    from harness.planning.audit.diff import diff_fabrics
    from harness.planning.audit.faults import faults_from_audit
    from harness.planning.audit.rewire import rewired
    from harness.planning.audit.rewire import wrong_rail_effects
    from harness.planning.risk import assess
    from harness.reporting.changes import AUDIT
    from harness.reporting.changes import print_risk
    from harness.reporting.risk_json import to_json as risk_json
    from harness.words import plural

    if args.design is None:
        return _audit_regular(args)
    # a big dump takes a while to read and compare: say which stage the audit is at
    with progress_bar("audit (design, dump, comparison)", "stage") as stage:
        stage(0, 3)
        design = resolve_fabric(args.design)
        stage(1, 3)
        live = load_dump(args.dump, args.fmt, rules=rules_of(args))
        stage(2, 3)
        audit = diff_fabrics(live, design, ports=not args.no_ports)
        stage(3, 3)
    faults, notes = faults_from_audit(design, audit)
    jobs = resolve_jobs(jobs_of(args, design), design)
    # NCCL uses a wrong-rail NIC for its own rail, over the spines: the live state is the
    # design with those cables moved, and what that alone costs each job is said first
    live_design = rewired(design, audit.wrong_rail)
    routing = resolve(file_override(args.design))  # the design file's routing: judges both
    effects = wrong_rail_effects(design, live_design, jobs, audit.wrong_rail, routing)
    with progress_bar("N+1 margin of the live state", "case") as progress:
        report = assess(live_design, jobs, faults, parse_budget(args.budget), progress=progress,
                        routing=routing)  # fmt: skip
    if args.json:
        doc = {
            "dump": str(args.dump),
            "design": design.name,
            "differences": audit.lines(),
            "ok": audit.ok,
            "not_modelled": notes,
            "wrong_rail": [
                {
                    "nic": e.finding.nic,
                    "leaf": e.finding.leaf,
                    "job": e.job,
                    "lost": e.lost,
                    "busbw_ratio": e.ratio,
                    "line": e.line(),
                }
                for e in effects
            ],
            "risk": risk_json(report),
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        console = stdout_console()
        if audit.ok:
            console.print(f"[green]{args.dump} matches the design {design.name}[/]")
        else:
            console.print(
                f"[bold red]{plural(len(audit.lines()), 'difference')}[/] between {args.dump} "
                f"and the design {design.name}:"
            )
            for line in audit.lines():
                console.print(f"  {line}", highlight=False)
        for note in notes:
            console.print(f"  [dim]{note}[/]", highlight=False)
        for e in effects:
            console.print(f"  [{'red' if e.lost else 'yellow'}]{e.line()}[/]", highlight=False)
        console.print("[bold]risk of the live state[/] (the differences applied to the design):")
        if effects:
            console.print(
                "  [dim]its wrong-rail cables are moved on the design: the table's "
                "design column is the design as cabled live (their cost is above)[/]"
            )
        print_risk(console, report, words=AUDIT)
    if args.report is not None:
        from harness.reporting.html import AuditInput
        from harness.reporting.html import write_audit_report

        found = AuditInput(args.dump, notes)
        page = write_audit_report(audit, design, report, args.report, jobs=jobs, found=found)
        wrote_report(page)
    return EXIT_OK if audit.ok and report.ok else EXIT_FAILED


def _audit_regular(args: argparse.Namespace) -> int:
    from harness.importers import load_dump
    from harness.importers.build import notes_of
    from harness.planning.audit.regular import audit_regular

    live = load_dump(args.dump, args.fmt, rules=rules_of(args))
    audit = audit_regular(live)
    if args.report is not None:
        from harness.reporting.html import AuditInput
        from harness.reporting.html import write_regular_audit_report

        found = AuditInput(args.dump, tuple(notes_of(live)))
        wrote_report(write_regular_audit_report(audit, live, found, args.report))
    if args.json:
        doc = {"dump": str(args.dump), **audit.to_json(), "notes": list(notes_of(live))}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return EXIT_OK if audit.ok else EXIT_FAILED
    console = stdout_console()
    console.print(
        f"[bold]{args.dump}[/]: inferred design (no --design given):",
        highlight=False,
        soft_wrap=True,
    )
    for line in audit.design.lines():
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    print_warnings(live)
    if audit.ok:
        console.print("[green]no departures from the inferred design[/]")
    else:
        console.print(f"[bold red]{len(audit.departures)} departure(s)[/]:")
        for line in audit.lines():
            console.print(f"  {line}", highlight=False, soft_wrap=True)
    return EXIT_OK if audit.ok else EXIT_FAILED


# -- harness export -------------------------------------------------------------------
EXPORT_FORMATS = ("containerlab", "graphml", "ibsim", "slurm")


def configure_export(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness export``."""

    p.add_argument(
        "fabric",
        metavar="FABRIC",
        help="a preset name, a fabric file, or a topology dump (ibnetdiscover, NetQ JSON, ...)",
    )
    p.add_argument(
        "--format",
        dest="fmt",
        required=True,
        choices=EXPORT_FORMATS,
        help="containerlab (*.clab.yml), graphml, ibsim (a net file for ibsim -s), or slurm "
        "(topology.conf for topology/tree)",
    )
    p.add_argument(
        "-o", "--output", type=Path, required=True, metavar="FILE", help="where to write"
    )
    p.add_argument(
        "--switch-kind",
        default="linux",
        help="containerlab: the node kind of switches (default linux; e.g. nokia_srlinux)",
    )


def cmd_export(args: argparse.Namespace) -> int:
    """``harness export``: write a fabric (a preset, a file or a dump) in another tool's format."""
    from harness.exporters.containerlab import to_containerlab
    from harness.exporters.graphml import to_graphml
    from harness.exporters.ibsim import to_ibsim_net
    from harness.exporters.slurm import to_slurm_topology

    fabric = fabric_or_dump(args.fabric)  # FABRIC's rule first: a bare name is a preset
    try:
        if args.fmt == "slurm":
            args.output.write_text(to_slurm_topology(fabric) + "\n", encoding="utf-8")
        elif args.fmt == "graphml":
            to_graphml(fabric, args.output)
        elif args.fmt == "containerlab":
            text = to_containerlab(fabric, switch_kind=args.switch_kind)
            args.output.write_text(text, encoding="utf-8")
        else:
            args.output.write_text(to_ibsim_net(fabric) + "\n", encoding="utf-8")
    except OSError as err:
        msg = f"cannot write {args.output}"
        raise BackendError(msg, err) from err
    print(f"wrote {fabric.name} as {args.fmt} to {args.output}")
    return EXIT_OK
