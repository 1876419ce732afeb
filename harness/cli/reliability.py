"""``harness reliability``: expected job interruptions per month of a design, by Monte Carlo."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.cli.common import EXIT_OK
from harness.cli.common import FABRIC_RULE
from harness.cli.common import add_forwarding
from harness.cli.common import add_jobs
from harness.cli.common import add_reroute
from harness.cli.common import cli_routing
from harness.cli.common import jobs_of
from harness.cli.common import progress_bar
from harness.errors import ScenarioError
from harness.inputs import cli_args

#: The most runs one study takes (a year of a 100k-GPU fabric per run is seconds).
MAX_RUNS = 1_000_000
#: The longest horizon, in months.
MAX_MONTHS = 1200.0


def _runs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 2 <= value <= MAX_RUNS:
        msg = f"--runs takes a whole number of runs from 2 to {MAX_RUNS:,}, not {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _months(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= MAX_MONTHS:
        msg = f"--months takes a number of months above 0, at most {MAX_MONTHS:g}, not {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def configure_reliability(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness reliability``."""
    p.add_argument(
        "fabric", metavar="FABRIC", help="a preset name or a fabric file: " + FABRIC_RULE
    )
    p.add_argument(
        "--rates",
        required=True,
        type=Path,
        metavar="R.yaml",
        help="the rates file: failure classes with their rates, repairs and source, failure "
        "domains, the restart policy (docs/reliability.md; e.g. rates/llama3-2024.yaml)",
    )
    add_jobs(p)
    p.add_argument("--months", type=_months, default=12.0, help="the horizon (default 12)")
    p.add_argument("--runs", type=_runs, default=1000, help="Monte Carlo runs (default 1000)")
    p.add_argument(
        "--seed", type=cli_args.seed, default=0, help="run k draws from seed + k (default 0)"
    )
    p.add_argument(
        "--workers",
        type=cli_args.workers,
        default=1,
        metavar="N",
        help="local worker processes (the result is the same as serial)",
    )
    p.add_argument(
        "--compare",
        metavar="OTHER",
        help="a second design (preset or fabric file) under the same rates, jobs and seeds: "
        "its figures and the difference with its interval",
    )
    add_forwarding(p)
    add_reroute(p)
    p.add_argument("--json", action="store_true", help="print a JSON report")


def cmd_reliability(args: argparse.Namespace) -> int:
    """``harness reliability``: the study of FABRIC (and of OTHER with ``--compare``)."""
    from harness.fabric.jobs import resolve_jobs
    from harness.fabric.resolve import resolve_fabric
    from harness.planning.reliability.montecarlo import Study
    from harness.planning.reliability.montecarlo import compare
    from harness.planning.reliability.montecarlo import run_study
    from harness.planning.reliability.rates import load_rates
    from harness.planning.reliability.units import plan_units
    from harness.reporting.reliability import comparison_lines
    from harness.reporting.reliability import reliability_lines
    from harness.reporting.reliability import to_json

    rates = load_rates(args.rates)
    designs = [args.fabric] + ([args.compare] if args.compare else [])
    studies = []
    for name in designs:  # every input checked before any run
        fabric = resolve_fabric(name)
        jobs = tuple(resolve_jobs(jobs_of(args, fabric), fabric))
        if not jobs:
            msg = f"--jobs gives no job on {fabric.name}: nothing can be interrupted"
            raise ScenarioError(msg)
        plan_units(fabric, rates)
        # the routing of this design: its fabric file's routing:, then the options
        routing = cli_routing(argparse.Namespace(**{**vars(args), "fabric": name}))
        studies.append(Study(fabric, jobs, rates, args.months, args.runs, args.seed, routing))
    outcomes = []
    for study in studies:
        with progress_bar(f"reliability {study.fabric.name}", "run") as progress:
            outcomes.append(run_study(study, workers=args.workers, progress=progress))
    comparison = compare(outcomes[0], outcomes[1]) if len(outcomes) > 1 else None
    if args.json:
        sys.stdout.write(json.dumps(to_json(outcomes[0], comparison), indent=2) + "\n")
        return EXIT_OK
    lines = reliability_lines(outcomes[0])
    if comparison is not None:
        lines += ["", *comparison_lines(comparison)]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
