"""``harness sweep``: every single (and paired) failure of a fabric, ranked."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

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
from harness.errors import BackendError
from harness.inputs import cli_args
from harness.planning.sweep.categories import CATEGORIES
from harness.planning.sweep.categories import DEFAULT_CATEGORIES
from harness.planning.sweep.categories import parse_categories


def configure_sweep(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness sweep``."""

    p.add_argument(
        "fabric", metavar="FABRIC", help="a preset name or a fabric file: " + FABRIC_RULE
    )
    add_jobs(p)
    p.add_argument(
        "--elements",
        default=",".join(DEFAULT_CATEGORIES),
        metavar="LIST",
        help="what fails: " + ",".join(CATEGORIES) + " (default switches,cables,nics)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=1,
        choices=(1, 2),
        help="1: every single failure; 2: also every pair of switch failures and "
        "a seeded sample of other pairs",
    )
    p.add_argument(
        "--pairs",
        type=cli_args.pairs,
        default=1000,
        metavar="N",
        help="depth 2: size of the sample of non-switch pairs (default 1000)",
    )
    p.add_argument("--seed", type=cli_args.seed, default=0, help="depth 2: seed of the pair sample")
    p.add_argument("--state", metavar="FILE", help="faults already present (as for risk)")
    add_forwarding(p)
    add_reroute(p)
    p.add_argument(
        "--bisection",
        action="store_true",
        help="also compute the bisection ratio of every case (exact max-flow; slower)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--csv", type=Path, metavar="FILE", help="write every case to a CSV file")
    p.add_argument(
        "--plot",
        type=cli_args.plot_file,
        metavar="FILE.png",
        help="write a PNG of the impact of single failures by category (and of pairs at depth 2)",
    )
    p.add_argument(
        "--workers", type=cli_args.workers, default=1, metavar="N", help="local worker processes"
    )
    p.add_argument(
        "--scheduler",
        type=cli_args.scheduler_address,
        metavar="ADDRESS",
        help="run the shards on this Dask distributed scheduler",
    )
    p.add_argument(
        "--top",
        type=cli_args.top,
        default=20,
        metavar="N",
        help="rows in the ranked table: groups of cases alike by the fabric's symmetry "
        "(--json and --csv keep every case)",
    )
    add_report(p)


def cmd_sweep(args: argparse.Namespace) -> int:
    """``harness sweep``: every failure case of the chosen elements, and what each costs the
    jobs."""
    from harness.fabric.resolve import resolve_fabric
    from harness.planning.audit.state import live_state
    from harness.planning.sweep.run import SweepSpec
    from harness.planning.sweep.run import run_sweep
    from harness.reporting.changes import print_sweep
    from harness.reporting.sweep_files import plot
    from harness.reporting.sweep_files import to_json as sweep_json
    from harness.reporting.sweep_files import write_csv

    fabric = resolve_fabric(args.fabric)
    jobs = jobs_of(args, fabric)  # resolved: bad jobs are bad input, before any work
    live, state, notes = live_state(fabric, args.state)  # wrong-rail cables moved
    for note in notes:
        print_note(note)
    spec = SweepSpec(
        args.fabric if (args.workers > 1 or args.scheduler) and live is fabric else live,
        tuple(jobs),
        tuple(state),
        parse_categories(args.elements),
        args.depth,
        args.pairs,
        args.seed,
        args.bisection,
        routing=cli_routing(args),
    )
    try:
        with progress_bar("sweep", "case") as progress:
            result = run_sweep(
                spec, workers=args.workers, scheduler=args.scheduler, progress=progress
            )
    except OSError as err:
        msg = f"cannot reach the Dask scheduler {args.scheduler}"
        raise BackendError(msg, err) from err
    for option, target, write in (("--csv", args.csv, write_csv), ("--plot", args.plot, plot)):
        if target is None:
            continue
        try:
            write(result, target)
        except OSError as err:
            msg = f"cannot write the {option} file {target}"
            raise BackendError(msg, err) from err
    assumed = args.jobs == "per-su"  # one job per SU: no traffic between SUs
    if args.json:
        sys.stdout.write(json.dumps(sweep_json(result, jobs_assumed=assumed), indent=2) + "\n")
    else:
        print_sweep(stdout_console(), result, top=args.top, jobs_assumed=assumed)
    if args.report is not None:
        from harness.reporting.html import write_sweep_report

        wrote_report(write_sweep_report(result, args.report, jobs_assumed=assumed))
    return EXIT_OK
