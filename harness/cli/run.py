"""The commands over scenario files: ``harness run`` (run them, report what survived)
and ``harness validate`` (check them as run would, without running)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import TypeAlias

from harness.cli.common import EXIT_BAD_INPUT
from harness.cli.common import EXIT_FAILED
from harness.cli.common import EXIT_OK
from harness.cli.common import add_report
from harness.cli.common import print_error
from harness.cli.common import print_note
from harness.cli.common import routing_arg
from harness.cli.common import stdout_console
from harness.cli.common import wrote_report
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.routing import CONTROLS
from harness.fabric.routing import ENGINES
from harness.fabric.routing import Engine
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import engine_of

if TYPE_CHECKING:  # the run stage imports the analysis (numpy, scipy): only when a command runs
    from harness.observations.plans import MeasureOptions
    from harness.reporting.console import ConsoleReporter
    from harness.run.observers import RunObserver
    from harness.run.results import ScenarioResult
    from harness.scenario.model import Scenario

Loaded: TypeAlias = "tuple[list[Path], list[Scenario], list[tuple[Path, ScenarioError]]]"


def load_all(paths: Sequence[Path]) -> Loaded:
    """Discover and load every file; collect every file's problems instead of stopping."""
    from harness.scenario.discover import discover
    from harness.scenario.load import load_file

    files = discover(paths)
    if not files:
        shown = ", ".join(str(p) for p in paths)
        msg = f"no scenario files (*.yaml, *.yml) under {shown}"
        raise ScenarioError(msg)
    scenarios: list[Scenario] = []
    errors: list[tuple[Path, ScenarioError]] = []
    for path in files:
        try:
            scenarios.extend(load_file(path))
        except ScenarioError as err:
            errors.append((path, err))
    return files, scenarios, errors


#: ``--sample``'s default: MeasureOptions().per_rail, restated so that building the parser
#: does not import the measurement plans (the analysis); tests/cli/test_startup.py checks it.
SAMPLE_PER_RAIL = 16


# -- harness run ----------------------------------------------------------------------
def configure_run(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness run``."""
    from harness.backends import available_backends
    from harness.backends import describe_unavailable

    p.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="scenario files or directories (searched for *.yaml, *.yml)")  # fmt: skip
    available = available_backends()
    not_here = "; ".join(describe_unavailable())
    p.add_argument("--backend", type=_backend_arg, default="model",
                   metavar="{" + ",".join(available) + "}",
                   help="where to realize the fabric (default: model)"
                   + (f"; not available here: {not_here}" if not_here else ""))  # fmt: skip
    p.add_argument("--routing", type=routing_arg, default=None,
                   metavar="{" + ",".join(CONTROLS) + "}",
                   help="the control plane an emulated backend runs, over the scenario's "
                   "routing: (sm: harness-computed tables; bgp: FRR on switches)")  # fmt: skip
    p.add_argument("--engine", type=_engine_arg, default=None,
                   metavar="{" + ",".join(ENGINES) + "}",
                   help="the OpenSM routing engine (ibsim runs it), over the scenario's "
                   "routing: {engine: ...}; implies paths: ftree/updn up-down, "
                   "minhop/dor shortest")  # fmt: skip
    p.add_argument("--allow-empty", action="store_true",
                   help="exit 0 even if no scenario ran (all filtered out or skipped)")  # fmt: skip
    p.add_argument("--sample", type=_sample_arg, default=SAMPLE_PER_RAIL,
                   metavar="N|all",
                   help="NIC pairs probed per rail at each step on a measuring backend "
                   "(default: %(default)s; 'all': every pair)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the sampled probe pairs (default: 0)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="print a JSON report to stdout instead of the console report")  # fmt: skip
    p.add_argument("--junit-xml", type=Path, metavar="FILE",
                   help="also write a JUnit XML report to FILE")  # fmt: skip
    p.add_argument("-k", dest="keyword", metavar="EXPR",
                   help="only scenarios whose name matches EXPR (words, and, or, not)")  # fmt: skip
    p.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="only scenarios with this tag (repeat: any of them)")  # fmt: skip
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print only failures and the totals; no progress bar")  # fmt: skip
    add_report(p)


def _backend_arg(value: str) -> str:
    from harness.backends import check_backend

    try:
        return check_backend(value)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _engine_arg(value: str) -> Engine:
    try:
        return engine_of(value)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _sample_arg(value: str) -> int | None:
    if value == "all":
        return None
    if value.isdigit() and int(value) > 0:
        return int(value)
    msg = f"--sample takes a positive number of pairs or 'all', not {value!r}"
    raise argparse.ArgumentTypeError(msg)


def _bad_input_result(path: Path, err: ScenarioError, backend: str) -> ScenarioResult:
    from harness.run.results import ScenarioResult

    return ScenarioResult(path.name, str(path), backend, "error", error=str(err))


def _run_one(
    scenario: Scenario,
    backend: str,
    reporter: ConsoleReporter,
    observers: list[RunObserver],
    options: MeasureOptions,
    *,
    routing: RoutingOverride | None,
) -> ScenarioResult:
    from harness.run.results import ScenarioResult
    from harness.run.scenario import run_scenario
    from harness.scenario.prepare import reported_routing

    try:
        return run_scenario(scenario, backend, observers, options, routing)
    except ScenarioError as err:
        # Bad input found only while running (a selector that matches nothing):
        # a result with status "error", so the other scenarios still run.
        result = ScenarioResult(
            scenario.name, scenario.where.path, backend, "error", error=str(err),
            description=scenario.description, tags=scenario.tags,
            fabric=scenario.fabric.describe(), routing=reported_routing(scenario, routing),
        )  # fmt: skip
        reporter.scenario_finished(result)
        return result


def cmd_run(args: argparse.Namespace) -> int:
    """``harness run``: run the selected scenarios on a backend; the exit code says how it went."""
    from rich.console import Console

    from harness.observations.plans import MeasureOptions
    from harness.reporting.console import ConsoleReporter
    from harness.reporting.json_report import write_json
    from harness.reporting.junit import write_junit
    from harness.reporting.outcome import RunReport
    from harness.reporting.outcome import Skipped
    from harness.scenario.select import select
    from harness.words import plural

    start = time.perf_counter()
    backend: str = args.backend
    files, scenarios, load_errors = load_all(args.paths)
    selected = select(scenarios, args.keyword, args.tag)
    if not selected and not load_errors and not args.allow_empty:
        raise ScenarioError(_nothing_matched(args, len(files)))
    options = MeasureOptions(per_rail=args.sample, seed=args.seed)
    routing = RoutingOverride.of_options(control=args.routing, engine=args.engine)
    report = RunReport(backend)
    # With --json, stdout carries the JSON document only.
    console = Console(quiet=True) if args.json else stdout_console()
    with ConsoleReporter(console, quiet=args.quiet) as reporter:
        observers: list[RunObserver] = [reporter]
        for path, err in load_errors:
            result = _bad_input_result(path, err, backend)
            report.results.append(result)
            reporter.scenario_finished(result)
        reporter.start(len(selected))
        for scenario in selected:
            why = ""
            if backend not in scenario.backends:
                why = f"runs on {', '.join(scenario.backends)}, not on backend {backend}"
            else:
                result = _run_one(scenario, backend, reporter, observers, options, routing=routing)
                if result.status != "skipped":
                    report.results.append(result)
                    continue
                why = result.error
            skip = Skipped(scenario.name, scenario.where.path, why)
            report.skipped.append(skip)
            if backend not in scenario.backends:  # the runner's skips were already reported
                reporter.scenario_skipped(skip)
            print_note(f"skipped {scenario.name}: {why}")
        report.seconds = time.perf_counter() - start
        if args.json:
            write_json(report, sys.stdout)
        else:
            reporter.finish(report)
    if args.junit_xml is not None:
        try:
            write_junit(report, args.junit_xml)
        except OSError as err:
            msg = f"cannot write the JUnit report to {args.junit_xml}"
            raise BackendError(msg, err) from err
    if args.report is not None:
        from harness.reporting.html import write_run_report

        wrote_report(write_run_report(report, selected, args.report))
    for r in report.results:
        if r.status == "error":
            print_error(r.error)
    if report.errors:
        return EXIT_BAD_INPUT
    if report.failed or report.mismatches:
        return EXIT_FAILED
    if not report.results and not args.allow_empty:
        print_error(
            f"nothing ran: {plural(len(report.skipped), 'scenario')} skipped for backend "
            f"{backend} (pass --allow-empty to accept that)"
        )
        return EXIT_BAD_INPUT
    return EXIT_OK


def _nothing_matched(args: argparse.Namespace, files: int) -> str:
    from harness.words import plural

    asked = [f"-k {args.keyword!r}"] if args.keyword is not None else []
    asked += [f"--tag {t}" for t in args.tag]
    return (
        f"nothing ran: no scenario in {plural(files, 'file')} matched {' '.join(asked)} "
        "(pass --allow-empty to accept that)"
    )


# -- harness validate -------------------------------------------------------------------
def configure_validate(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness validate``."""

    p.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="scenario files or directories (searched for *.yaml, *.yml)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="print a JSON document (valid, files, scenarios, problems)")  # fmt: skip


def cmd_validate(args: argparse.Namespace) -> int:
    """``harness validate``: load and prepare every scenario without running one."""
    from harness.scenario.validate import validate
    from harness.words import plural

    # Builds every fabric and resolves every selector, job, restore and expectation
    # argument (harness.scenario.prepare, the step `run` takes before injecting).
    result = validate(*load_all(args.paths))
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        return EXIT_OK if result.ok else EXIT_BAD_INPUT
    scenarios = plural(len(result.scenarios), "scenario")
    files = plural(len(result.files), "file")
    if result.ok:
        verb = "is" if len(result.scenarios) == 1 else "are"
        print(f"{scenarios} in {files} {verb} valid")
        return EXIT_OK
    print_error(f"{plural(result.problems, 'problem')} in {result.bad_files} of {files}")
    for bad in result.invalid:
        print_error(str(bad.error))
    return EXIT_BAD_INPUT
