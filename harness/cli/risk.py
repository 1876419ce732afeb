"""``harness risk``: the blast radius of a change on a fabric and its N+1 margin."""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli.common import EXIT_FAILED
from harness.cli.common import EXIT_OK
from harness.cli.common import FABRIC_RULE
from harness.cli.common import add_forwarding
from harness.cli.common import add_jobs
from harness.cli.common import add_report
from harness.cli.common import add_reroute
from harness.cli.common import cli_routing
from harness.cli.common import jobs_of
from harness.cli.common import print_note
from harness.cli.common import progress_bar
from harness.cli.common import stdout_console
from harness.cli.common import wrote_report
from harness.errors import ScenarioError
from harness.observations.budget import BUDGET_METRICS
from harness.observations.budget import DEFAULT_BUDGET
from harness.observations.budget import DEFAULT_BUDGET_RULE
from harness.observations.budget import parse_budget
from harness.planning.sweep.categories import DEFAULT_MARGIN_CATEGORIES


def configure_risk(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness risk``."""
    p.add_argument(
        "fabric", metavar="FABRIC", help="a preset name or a fabric file: " + FABRIC_RULE
    )
    p.add_argument(
        "--change",
        required=True,
        metavar="CHANGE",
        help='the change, in the fault syntax of state files: "drain spine-05,spine-06", '
        '"drain {tier: spine, all-but: 1}", "drain: {tier: spine, all-but: 1}", '
        '"degrade su01/leaf-r0:21--spine-01:1 0.25" (or lanes=2), "@faults.yaml" '
        "(a YAML list of faults); parts separated by ;",
    )
    p.add_argument(
        "--state",
        metavar="FILE|FAULTS",
        help="faults already present: a YAML list of faults, a live topology "
        "dump (ibnetdiscover, SimAI, containerlab) compared with FABRIC, or faults "
        'written as for --change ("kill su02/leaf-r1")',
    )
    add_jobs(p)
    add_forwarding(p)
    add_reroute(p)
    p.add_argument(
        "--budget",
        default=DEFAULT_BUDGET,
        metavar="RULES",
        help=f"what the change may add (default {DEFAULT_BUDGET}: a change passes only if it "
        f"{DEFAULT_BUDGET_RULE.replace('%', '%%')}): jobs the change loses, pairs it cuts "
        "off, the surviving jobs' bandwidth after vs before; jobs already lost are not its "
        "loss. Prefix a rule with abs: to judge the state after the change instead "
        '("abs:jobs_lost=0"). Metrics: ' + ", ".join(BUDGET_METRICS),
    )
    p.add_argument(
        "--require-margin",
        type=int,
        default=0,
        choices=(0, 1),
        help="1: the change may not make any single further failure break the budget "
        "(and with abs: rules, no single further failure may break them after it)",
    )
    p.add_argument(
        "--margin",
        default="1",
        choices=("none", "1"),
        help="1 (default): also judge every single further failure of --elements after and "
        "before the change (the N+1 margin); none: the change alone, without the N+1 table",
    )
    p.add_argument(
        "--elements",
        default=",".join(DEFAULT_MARGIN_CATEGORIES),
        metavar="LIST",
        help="what the N+1 margin fails (default switches,cables,optics,nics)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    add_report(p)


def cmd_risk(args: argparse.Namespace) -> int:
    """``harness risk``: the N+1 margin after a change; fails when the change is not safe."""
    from harness.fabric.jobs import resolve_jobs
    from harness.fabric.resolve import resolve_fabric
    from harness.planning.audit.state import live_state
    from harness.planning.risk import assess
    from harness.planning.sweep.cases import parse_categories
    from harness.reporting.changes import print_risk
    from harness.reporting.risk_json import to_json as risk_json

    fabric = resolve_fabric(args.fabric)
    jobs = resolve_jobs(jobs_of(args, fabric), fabric)
    fabric, state, notes = live_state(fabric, args.state)  # wrong-rail cables moved
    for note in notes:
        print_note(note)
    if args.margin == "none" and args.require_margin:
        msg = "--require-margin 1 judges the N+1 margin, which --margin none skips; drop one"
        raise ScenarioError(msg)
    if args.margin == "none":
        print_note("--margin none: the change alone is judged, no single further failure")
    with progress_bar("N+1 margin", "case") as progress:
        report = assess(
            fabric,
            jobs,
            args.change,
            parse_budget(args.budget),
            state=state,
            margin_categories=parse_categories(args.elements),
            require_margin=args.require_margin,
            margin=args.margin == "1",
            progress=progress,
            routing=cli_routing(args),
            jobs_assumed=args.jobs == "per-su",
        )
    if args.json:
        sys.stdout.write(json.dumps(risk_json(report), indent=2) + "\n")
    else:
        print_risk(stdout_console(), report)
    if args.report is not None:
        from harness.reporting.html import write_risk_report

        wrote_report(write_risk_report(report, jobs, args.report))
    return EXIT_OK if report.ok else EXIT_FAILED
