"""What every command of the ``harness`` command shares: exit codes, console and
progress output, the ``--report`` argument, and routing from the command line
(``--routing``, ``--forwarding``, ``--reroute`` over a fabric file's ``routing:``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import EXTRAS
from harness.errors import MissingExtra
from harness.errors import ScenarioError
from harness.fabric.routing import DEFAULT_REROUTE_S
from harness.fabric.routing import FORWARDINGS
from harness.fabric.routing import Control
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import control_of
from harness.fabric.routing import resolve
from harness.inputs.durations import parse_duration

if TYPE_CHECKING:  # the fabric model is numpy, rich's console 50 ms: imported where used
    from rich.console import Console

    from harness.fabric.jobs import JobSpec
    from harness.fabric.model import Fabric
    from harness.reporting.progress import ProgressReporter

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERRUPTED = 130

# What a FABRIC argument means (harness.fabric.resolve.fabric_ref_for says the same).
FABRIC_RULE = (
    "a bare name is a preset, a name with a / or a suffix (.yaml) a file; a preset name "
    "that is also a file here is an error: write ./NAME for the file"
)


def stdout_console() -> Console:
    """A console on the current ``sys.stdout``."""
    from harness.reporting.console import make_console

    # Made per call, so tests that capture sys.stdout see the output.
    return make_console(sys.stdout)


def print_error(message: str) -> None:
    """Print ``error: ...`` to stderr, one line per line of ``message``."""
    for line in message.splitlines() or [""]:
        print(f"error: {line}", file=sys.stderr)


def progress_bar(label: str, unit: str) -> ProgressReporter:
    """The renderer for a library ``progress(done, total)`` callback: a bar on a
    terminal, a plain stderr line every HARNESS_PROGRESS_INTERVAL seconds elsewhere."""
    from harness.reporting.progress import LOG_INTERVAL
    from harness.reporting.progress import ProgressReporter

    raw = os.environ.get("HARNESS_PROGRESS_INTERVAL", str(LOG_INTERVAL))
    try:
        interval = float(raw)
    except ValueError:
        interval = -1.0
    if not interval >= 0:
        msg = f"HARNESS_PROGRESS_INTERVAL={raw!r}: give the seconds between progress lines"
        raise ScenarioError(msg)
    return ProgressReporter(label, unit, stream=sys.stderr, interval=interval)


#: What an option needs beyond the base install: (option's dest, its flag, the packages).
OPTION_EXTRAS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("report", "--report", ("jinja2", "matplotlib")),
    ("plot", "--plot", ("matplotlib",)),
    ("scheduler", "--scheduler", ("distributed",)),
)


def check_extras(args: argparse.Namespace) -> None:
    """Refuse, before any work, an option whose optional packages are not installed
    (:class:`~harness.errors.MissingExtra`: one line naming the extra, exit 2)."""
    import importlib.util

    for dest, flag, packages in OPTION_EXTRAS:
        if getattr(args, dest, None) in (None, False):
            continue
        for package in packages:
            if importlib.util.find_spec(package) is None:
                raise MissingExtra(package, f"harness {args.command} {flag}")


def missing_extra(err: ModuleNotFoundError, args: argparse.Namespace) -> MissingExtra | None:
    """The :class:`~harness.errors.MissingExtra` an import failure deep in a command means,
    when the missing module is one of the optional packages (else ``None``: a real bug)."""
    package = (err.name or "").partition(".")[0]
    if package not in EXTRAS:
        return None
    return MissingExtra(package, f"harness {args.command}")


def print_note(message: str) -> None:
    """Print ``note: ...`` to stderr."""
    print(f"note: {message}", file=sys.stderr)


def add_report(p: argparse.ArgumentParser) -> None:
    """Add ``--report DIR`` (the HTML report)."""
    p.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="also write an HTML report (index.html, figures, drawings) to DIR",
    )


def wrote_report(page: Path) -> None:
    """Say where the HTML report was written."""
    print_note(f"wrote the HTML report {page}")


def routing_arg(value: str) -> Control:
    """Parse ``--routing``: a control plane (argparse's error for an unknown one)."""
    try:
        return control_of(value)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_forwarding(p: argparse.ArgumentParser) -> None:
    """Add ``--forwarding`` (how switches spread flows over live uplinks)."""
    p.add_argument(
        "--forwarding",
        choices=FORWARDINGS,
        help="how switches spread flows over live uplinks, for job bandwidth: static "
        "(per-destination tables, OpenSM ftree), adaptive (the live uplinks whose spine still "
        "reaches the destination leaf), ecmp (per-flow hash); default: the fabric file's "
        "routing:, else static",
    )


def file_override(fabric: str) -> RoutingOverride | None:
    """What the ``routing:`` of the fabric file FABRIC names states; None for a preset."""
    from harness.fabric.fabric_file import fabric_file_routing
    from harness.fabric.resolve import fabric_ref_for

    path = fabric_ref_for(fabric).file
    if path is None or not path.is_file():
        return None
    return fabric_file_routing(path)


def file_routing(fabric: str) -> Routing | None:
    """The ``routing:`` of the fabric file FABRIC names; None when it names a preset."""
    over = file_override(fabric)
    return None if over is None else resolve(over)


def add_reroute(p: argparse.ArgumentParser) -> None:
    """Add ``--reroute`` (how long a failure stalls the running jobs)."""
    p.add_argument(
        "--reroute",
        type=_reroute_arg,
        metavar="DURATION",
        help="how long a kill, cut or optic stalls the running jobs while the fabric reroutes "
        "(5s, 500ms): a job whose timeout is no longer crashes; default: the fabric file's "
        f"routing:, else {DEFAULT_REROUTE_S:g}s",
    )


def _reroute_arg(value: str) -> float:
    try:
        return parse_duration(value, "--reroute", zero=True)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def cli_routing(args: argparse.Namespace) -> Routing:
    """The routing a command runs: the defaults < the fabric file's ``routing:`` < its options
    (``--forwarding``, and ``--reroute`` where it has it), resolved once by
    :func:`~harness.fabric.routing.resolve` and passed on unchanged."""
    cli = RoutingOverride.of_options(
        forwarding=getattr(args, "forwarding", None), reroute=getattr(args, "reroute", None)
    )
    return resolve(file_override(args.fabric), cli)


JOBS_HELP = (
    "the jobs: per-su (default: one job per SU, assumed; traffic between SUs is then not "
    "represented), a YAML list of jobs, a saved 'squeue --json', "
    "'squeue -h -t RUNNING -o \"%%i|%%j|%%N\"' text, or a saved 'kubectl get pods -o json' "
    "(told apart by content; only running jobs and pods count)"
)


def add_jobs(p: argparse.ArgumentParser, help_text: str = JOBS_HELP) -> None:
    """Add ``--jobs`` and the options of a scheduler's view: ``--job-label``, ``--node-map``."""
    from harness.importers.kube_pods import JOB_LABELS

    p.add_argument("--jobs", default="per-su", metavar="FILE|per-su", help=help_text)
    p.add_argument(
        "--job-label",
        metavar="LABEL",
        help="with a kubectl pod list: the pod label naming a pod's job (default: the first "
        "of " + ", ".join(JOB_LABELS) + " a pod carries)",
    )
    p.add_argument(
        "--node-map",
        metavar="FILE",
        help="with a scheduler's listing: node names to server ids, YAML 'node: server' lines "
        "or two columns (default rule: exact id, then the short hostname, case-insensitive, "
        "against ids and their Slurm names such as su01-node01)",
    )


def jobs_of(args: argparse.Namespace, fabric: Fabric) -> tuple[JobSpec, ...]:
    """The jobs of ``--jobs`` on ``fabric`` (notes of a scheduler's view go to stderr)."""
    from harness.importers.jobs import load_jobs

    given = load_jobs(args.jobs, fabric, job_label=args.job_label, node_map=args.node_map)
    for note in given.notes:
        print_note(note)
    return given.specs
