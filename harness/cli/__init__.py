"""The ``harness`` command (edge layer: a thin shell over the library).

Subcommands are small functions registered in one table, :data:`COMMANDS`;
adding one (``risk``, ``sweep``, ``audit``) is one ``configure`` function, one
``run`` function and one row.  This module is the only place in the package
that turns exceptions into exit codes:

===  ===========================================================================
0    everything ran and every expectation held
1    the fabric under test failed: an expectation, a budget, an audit (not the
     harness), or a backend measured otherwise than the model predicts (a mismatch)
2    bad input: a scenario or fabric file, a selector, an argument, a backend
     that is unknown or not available here, a run in which nothing ran (unless
     ``--allow-empty``) (:class:`~harness.errors.ScenarioError`); every problem
     is printed to stderr as ``error: FILE:LINE:COLUMN: ...``, one per line,
     never a traceback
3    the environment failed (:class:`~harness.errors.BackendError`, a healthy
     fabric that fails its preflight, an unwritable report file)
===  ===========================================================================

For example::

    harness run scenarios/ --junit-xml out/harness.xml -k "spine and not core"
    harness validate scenarios/
    harness show seed-a800 --json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from typing import cast

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.backends import available_backends
from harness.backends import check_backend
from harness.backends import describe_unavailable
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.fabric.presets import PRESETS
from harness.fabric.presets import preset
from harness.fabric.routing import CONTROLS
from harness.fabric.routing import DEFAULT
from harness.fabric.routing import DEFAULT_FORWARDING
from harness.fabric.routing import DEFAULT_REROUTE_S
from harness.fabric.routing import ENGINES
from harness.fabric.routing import FORWARDINGS
from harness.fabric.routing import Control
from harness.fabric.routing import Engine
from harness.fabric.routing import Forwarding
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import control_of
from harness.fabric.routing import engine_of
from harness.fabric.routing import parse_bfd
from harness.fabric.routing import resolve
from harness.faults.fault import Fault
from harness.faults.state_file import faults_from_audit
from harness.faults.state_file import load_jobs
from harness.faults.state_file import load_state_file
from harness.faults.text import parse_faults
from harness.inputs import cli_args
from harness.inputs.durations import parse_duration
from harness.observations.plans import MeasureOptions
from harness.planning.budget import BUDGET_METRICS
from harness.planning.budget import parse_budget
from harness.planning.margin import DEFAULT_MARGIN_CATEGORIES
from harness.planning.risk import assess
from harness.planning.sweep.cases import CATEGORIES
from harness.planning.sweep.cases import DEFAULT_CATEGORIES
from harness.planning.sweep.cases import parse_categories
from harness.planning.sweep.run import SweepSpec
from harness.planning.sweep.run import run_sweep
from harness.reporting.changes import AUDIT
from harness.reporting.changes import print_risk
from harness.reporting.changes import print_sweep
from harness.reporting.console import ConsoleReporter
from harness.reporting.console import make_console
from harness.reporting.fabric_view import fabric_document
from harness.reporting.fabric_view import print_fabric
from harness.reporting.json_report import write_json
from harness.reporting.junit import write_junit
from harness.reporting.outcome import RunReport
from harness.reporting.outcome import Skipped
from harness.reporting.progress import LOG_INTERVAL
from harness.reporting.progress import ProgressReporter
from harness.reporting.risk_json import to_json as risk_json
from harness.reporting.sweep_files import plot
from harness.reporting.sweep_files import to_json as sweep_json
from harness.reporting.sweep_files import write_csv
from harness.run.scenario import RunObserver
from harness.run.scenario import ScenarioResult
from harness.run.scenario import run_scenario
from harness.scenario.load import discover
from harness.scenario.load import load_file
from harness.scenario.model import Scenario
from harness.scenario.validate import validate
from harness.words import plural

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3
EXIT_INTERRUPTED = 130

FABRIC_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand: its name, help line, argument set-up and body."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# -- shared helpers ---------------------------------------------------------------
def _stdout() -> Console:
    # Made per call, so tests that capture sys.stdout see the output.
    return make_console(sys.stdout)


def _error(message: str) -> None:
    """Print ``error: ...`` to stderr, one line per line of ``message``."""
    for line in message.splitlines() or [""]:
        print(f"error: {line}", file=sys.stderr)


def _progress(label: str, unit: str) -> ProgressReporter:
    """The renderer for a library ``progress(done, total)`` callback: a bar on a
    terminal, a plain stderr line every HARNESS_PROGRESS_INTERVAL seconds elsewhere."""
    raw = os.environ.get("HARNESS_PROGRESS_INTERVAL", str(LOG_INTERVAL))
    try:
        interval = float(raw)
    except ValueError:
        interval = -1.0
    if not interval >= 0:
        msg = f"HARNESS_PROGRESS_INTERVAL={raw!r}: give the seconds between progress lines"
        raise ScenarioError(msg)
    return ProgressReporter(label, unit, stream=sys.stderr, interval=interval)


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def _add_report(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help="also write an HTML report (index.html, figures, drawings) to DIR",
    )


def _wrote_report(page: Path) -> None:
    _note(f"wrote the HTML report {page}")


Loaded = tuple[list[Path], list[Scenario], list[tuple[Path, ScenarioError]]]


def _load_all(paths: Sequence[Path]) -> Loaded:
    """Discover and load every file; collect every file's problems instead of stopping."""
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


# -- -k expressions -------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


class _NameFilter:
    """A ``-k`` expression over scenario names, as pytest's: words are
    case-insensitive substrings, combined with ``and``, ``or``, ``not`` and
    parentheses.  For example ``-k "spine and not core"``.
    """

    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.tokens = [m.group(1) for m in _TOKEN.finditer(expr)]
        self.pos = 0
        if not self.tokens:
            self._fail("is empty")
        # Parse once to report a malformed expression before anything runs.
        self.matches("")

    def _fail(self, why: str) -> NoReturn:
        msg = f"-k {self.expr!r} {why}; write words joined by and/or/not, e.g. 'spine and not core'"
        raise ScenarioError(msg)

    def matches(self, name: str) -> bool:
        self.pos = 0
        value = self._or(name.lower())
        if self.pos != len(self.tokens):
            self._fail(f"has an unexpected {self.tokens[self.pos]!r}")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _or(self, name: str) -> bool:
        value = self._and(name)
        while self._peek() == "or":
            self.pos += 1
            value = self._and(name) or value
        return value

    def _and(self, name: str) -> bool:
        value = self._not(name)
        while self._peek() == "and":
            self.pos += 1
            value = self._not(name) and value
        return value

    def _not(self, name: str) -> bool:
        if self._peek() == "not":
            self.pos += 1
            return not self._not(name)
        return self._atom(name)

    def _atom(self, name: str) -> bool:
        token = self._peek()
        if token is None:
            self._fail("ends too early")
        self.pos += 1
        if token == "(":
            value = self._or(name)
            if self._peek() != ")":
                self._fail("misses a ')'")
            self.pos += 1
            return value
        if token in (")", "and", "or"):
            self._fail(f"has an unexpected {token!r}")
        return token.lower() in name


def _select(scenarios: list[Scenario], args: argparse.Namespace) -> list[Scenario]:
    chosen = scenarios
    if args.keyword is not None:
        name_filter = _NameFilter(args.keyword)
        chosen = [s for s in chosen if name_filter.matches(s.name)]
    if args.tag:
        wanted = set(args.tag)
        chosen = [s for s in chosen if wanted & set(s.tags)]
    return chosen


# -- harness run ----------------------------------------------------------------------
def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="scenario files or directories (searched for *.yaml, *.yml)")  # fmt: skip
    available = available_backends()
    not_here = "; ".join(describe_unavailable())
    p.add_argument("--backend", type=_backend_arg, default="model",
                   metavar="{" + ",".join(available) + "}",
                   help="where to realize the fabric (default: model)"
                   + (f"; not available here: {not_here}" if not_here else ""))  # fmt: skip
    p.add_argument("--routing", type=_routing_arg, default=None,
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
    p.add_argument("--sample", type=_sample_arg, default=MeasureOptions().per_rail,
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
    _add_report(p)


def _backend_arg(value: str) -> str:
    try:
        return check_backend(value)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _routing_arg(value: str) -> Control:
    try:
        return control_of(value)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _engine_arg(value: str) -> Engine:
    try:
        return engine_of(value)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _bfd_arg(value: str) -> str:
    try:
        return parse_bfd(value)
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
    try:
        return run_scenario(scenario, backend, observers, options, routing)
    except ScenarioError as err:
        # Bad input found only while running (a selector that matches nothing):
        # a result with status "error", so the other scenarios still run.
        result = ScenarioResult(
            scenario.name, scenario.where.path, backend, "error", error=str(err),
            description=scenario.description, tags=scenario.tags,
            fabric=scenario.fabric.describe(), routing=resolve(scenario.routing, routing),
        )  # fmt: skip
        reporter.scenario_finished(result)
        return result


def _cmd_run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    backend: str = args.backend
    files, scenarios, load_errors = _load_all(args.paths)
    selected = _select(scenarios, args)
    if not selected and not load_errors and not args.allow_empty:
        raise ScenarioError(_nothing_matched(args, len(files)))
    options = MeasureOptions(per_rail=args.sample, seed=args.seed)
    routing = RoutingOverride.of_flags(args.routing, args.engine)
    report = RunReport(backend)
    # With --json, stdout carries the JSON document only.
    console = Console(quiet=True) if args.json else _stdout()
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
            _note(f"skipped {scenario.name}: {why}")
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

        _wrote_report(write_run_report(report, selected, args.report))
    for r in report.results:
        if r.status == "error":
            _error(r.error)
    if report.errors:
        return EXIT_BAD_INPUT
    if report.failed or report.mismatches:
        return EXIT_FAILED
    if not report.results and not args.allow_empty:
        _error(
            f"nothing ran: {plural(len(report.skipped), 'scenario')} skipped for backend "
            f"{backend} (pass --allow-empty to accept that)"
        )
        return EXIT_BAD_INPUT
    return EXIT_OK


def _nothing_matched(args: argparse.Namespace, files: int) -> str:
    asked = [f"-k {args.keyword!r}"] if args.keyword is not None else []
    asked += [f"--tag {t}" for t in args.tag]
    return (
        f"nothing ran: no scenario in {plural(files, 'file')} matched {' '.join(asked)} "
        "(pass --allow-empty to accept that)"
    )


# -- harness validate -------------------------------------------------------------------
def _configure_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="scenario files or directories (searched for *.yaml, *.yml)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="print a JSON document (valid, files, scenarios, problems)")  # fmt: skip


def _cmd_validate(args: argparse.Namespace) -> int:
    # Builds every fabric and resolves every selector, job, restore and expectation
    # argument (harness.scenario.prepare, the step `run` takes before injecting).
    result = validate(*_load_all(args.paths))
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        return EXIT_OK if result.ok else EXIT_BAD_INPUT
    scenarios = plural(len(result.scenarios), "scenario")
    files = plural(len(result.files), "file")
    if result.ok:
        verb = "is" if len(result.scenarios) == 1 else "are"
        print(f"{scenarios} in {files} {verb} valid")
        return EXIT_OK
    _error(f"{plural(result.problems, 'problem')} in {result.bad_files} of {files}")
    for bad in result.invalid:
        _error(str(bad.error))
    return EXIT_BAD_INPUT


# -- harness show ---------------------------------------------------------------------
def _configure_show(p: argparse.ArgumentParser) -> None:
    p.add_argument("fabric", nargs="?", metavar="FABRIC",
                   help="a preset name (see --list) or a fabric file")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--list", action="store_true", help="list the presets")


def preset_descriptions() -> dict[str, str]:
    """One line per preset: its row of the table in :mod:`harness.fabric.presets`'s docstring.

    Falls back to the generator and its parameters for a preset the table lacks.
    """
    from harness.fabric import presets

    rows: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (presets.__doc__ or "").splitlines():
        head, _, rest = line.partition(" ")
        if head in PRESETS:
            current = rows.setdefault(head, [rest.strip()])
        elif line.startswith(" ") and line.strip() and current is not None:
            current.append(line.strip())
        else:
            current = None
    out = {}
    for name, (gen, params) in PRESETS.items():
        if name in rows:
            out[name] = " ".join(rows[name])
        else:
            args = ", ".join(f"{k}={v}" for k, v in params.items())
            out[name] = f"{gen.__name__.replace('_', '-')}: {args}"
    return out


def _add_forwarding(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--forwarding",
        choices=FORWARDINGS,
        help="how switches spread flows over live uplinks, for job bandwidth: static "
        "(per-destination tables, OpenSM ftree), adaptive (every live uplink), ecmp (per-flow "
        "hash); default: the fabric file's routing:, else static",
    )


def _forwarding(args: argparse.Namespace) -> Forwarding:
    """``--forwarding``, else what the fabric file's ``routing:`` gives, else the default."""
    if args.forwarding is not None:
        return cast("Forwarding", args.forwarding)
    path = Path(args.fabric)
    if path.suffix in FABRIC_SUFFIXES and path.is_file():
        return _file_routing(path).forwarding_model
    return DEFAULT_FORWARDING


def _file_routing(path: Path) -> Routing:
    from harness.fabric.fabric_file import fabric_file_routing

    return resolve(fabric_file_routing(path))


def _add_reroute(p: argparse.ArgumentParser) -> None:
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


def _cli_routing(args: argparse.Namespace) -> Routing:
    """The fabric file's ``routing:`` (else the defaults) with ``--forwarding``/``--reroute``."""
    path = Path(args.fabric)
    routing = _file_routing(path) if path.suffix in FABRIC_SUFFIXES and path.is_file() else DEFAULT
    if args.forwarding is not None:
        routing = dataclasses.replace(routing, forwarding=args.forwarding)
    if getattr(args, "reroute", None) is not None:
        routing = dataclasses.replace(routing, reroute=args.reroute)
    return routing


def _load_fabric(name: str) -> Fabric:
    path = Path(name)
    if path.suffix in FABRIC_SUFFIXES or path.exists():
        if not path.is_file():
            msg = f"fabric file {name} does not exist"
            raise ScenarioError(msg)
        from harness.fabric.fabric_file import load_fabric_file

        return load_fabric_file(path)
    return preset(name)


def _cmd_show(args: argparse.Namespace) -> int:
    console = _stdout()
    if args.list:
        descriptions = preset_descriptions()
        if args.json:
            sys.stdout.write(json.dumps(descriptions, indent=2) + "\n")
            return EXIT_OK
        table = Table(title="fabric presets", title_justify="left")
        table.add_column("preset", style="bold")
        table.add_column("description")
        for name, text in descriptions.items():
            table.add_row(name, Text(text))
        console.print(table)
        return EXIT_OK
    if args.fabric is None:
        msg = "show needs a FABRIC (a preset name or a fabric file), or --list"
        raise ScenarioError(msg)
    fabric = _load_fabric(args.fabric)
    if args.json:
        sys.stdout.write(json.dumps(fabric_document(fabric), indent=2, default=str) + "\n")
    else:
        print_fabric(console, fabric)
    return EXIT_OK


# -- harness risk ---------------------------------------------------------------------
def _configure_risk(p: argparse.ArgumentParser) -> None:
    p.add_argument("fabric", metavar="FABRIC", help="a preset name or a fabric file")
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
    p.add_argument(
        "--jobs",
        default="per-su",
        metavar="FILE|per-su",
        help="the jobs: a YAML list of jobs, or per-su (default)",
    )
    _add_forwarding(p)
    _add_reroute(p)
    p.add_argument(
        "--budget",
        default="jobs_lost=0",
        metavar="RULES",
        help='what the change may add, e.g. "jobs_lost=0,bandwidth>=0.9" (default jobs_lost=0): '
        "jobs the change loses, pairs it cuts off, bandwidth after vs before; jobs already "
        "lost are not its loss. Prefix a rule with abs: to judge the state after the change "
        'instead ("abs:jobs_lost=0"). Metrics: ' + ", ".join(BUDGET_METRICS),
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
        "--elements",
        default=",".join(DEFAULT_MARGIN_CATEGORIES),
        metavar="LIST",
        help="what the N+1 margin fails (default switches,cables,optics,nics)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    _add_report(p)


def _state_faults(fabric: Fabric, value: str | None) -> tuple[list[Fault], list[str]]:
    if value is None:
        return [], []
    path = Path(value)
    if not path.exists():  # a FIFO or a directory: the reader says so
        if re.search(r"[\s:{\[;@]", value):  # not a file name: faults as for --change
            return list(parse_faults(value, "--state")), []
        msg = (
            f"--state {value}: no such file; give a state file, a topology dump or faults "
            "such as 'kill su02/leaf-r1'"
        )
        raise ScenarioError(msg)
    from harness.importers import sniff_format
    from harness.inputs.files import read_text

    if sniff_format(path, read_text(path, "state")) is None:
        return load_state_file(path), []
    from harness.importers import load_dump
    from harness.planning.audit.diff import diff_fabrics

    live = load_dump(path)
    return faults_from_audit(fabric, diff_fabrics(live, fabric))


def _cmd_risk(args: argparse.Namespace) -> int:
    fabric = _load_fabric(args.fabric)
    jobs = resolve_jobs(load_jobs(args.jobs), fabric)
    state, notes = _state_faults(fabric, args.state)
    for note in notes:
        _note(note)
    with _progress("N+1 margin", "case") as progress:
        report = assess(
            fabric,
            jobs,
            args.change,
            parse_budget(args.budget),
            state=state,
            margin_categories=parse_categories(args.elements),
            require_margin=args.require_margin,
            progress=progress,
            routing=_cli_routing(args),
        )
    if args.json:
        sys.stdout.write(json.dumps(risk_json(report), indent=2) + "\n")
    else:
        print_risk(_stdout(), report)
    if args.report is not None:
        from harness.reporting.html import write_risk_report

        _wrote_report(write_risk_report(report, jobs, args.report))
    return EXIT_OK if report.ok else EXIT_FAILED


# -- harness sweep --------------------------------------------------------------------
def _configure_sweep(p: argparse.ArgumentParser) -> None:
    p.add_argument("fabric", metavar="FABRIC", help="a preset name or a fabric file")
    p.add_argument(
        "--jobs",
        default="per-su",
        metavar="FILE|per-su",
        help="the jobs: a YAML list of jobs, or per-su (default)",
    )
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
    _add_forwarding(p)
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
        "--top", type=cli_args.top, default=20, metavar="N", help="rows in the ranked table"
    )
    _add_report(p)


def _cmd_sweep(args: argparse.Namespace) -> int:
    fabric = _load_fabric(args.fabric)
    jobs = load_jobs(args.jobs)
    resolve_jobs(jobs, fabric)  # bad job patterns are bad input, before any work
    state, notes = _state_faults(fabric, args.state)
    for note in notes:
        _note(note)
    spec = SweepSpec(
        args.fabric if args.workers > 1 or args.scheduler else fabric,
        tuple(jobs),
        tuple(state),
        parse_categories(args.elements),
        args.depth,
        args.pairs,
        args.seed,
        args.bisection,
        forwarding=_forwarding(args),
        paths=_cli_routing(args).paths,
    )
    try:
        with _progress("sweep", "case") as progress:
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
    if args.json:
        sys.stdout.write(json.dumps(sweep_json(result), indent=2) + "\n")
    else:
        print_sweep(_stdout(), result, top=args.top)
    if args.report is not None:
        from harness.reporting.html import write_sweep_report

        _wrote_report(write_sweep_report(result, args.report))
    return EXIT_OK


# -- harness audit --------------------------------------------------------------------
def _configure_audit(p: argparse.ArgumentParser) -> None:
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
    p.add_argument(
        "--jobs",
        default="per-su",
        metavar="FILE|per-su",
        help="jobs whose exposure to report (default per-su)",
    )
    p.add_argument(
        "--budget",
        default="jobs_lost=0",
        metavar="RULES",
        help="budget for the risk of the live state (default jobs_lost=0)",
    )
    p.add_argument("--no-ports", action="store_true", help="compare cables without port numbers")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    _add_report(p)


def _cmd_audit(args: argparse.Namespace) -> int:
    from harness.importers import load_dump
    from harness.planning.audit.diff import diff_fabrics

    if args.design is None:
        return _audit_regular(args)
    # a big dump takes a while to read and compare: say which stage the audit is at
    with _progress("audit (design, dump, comparison)", "stage") as stage:
        stage(0, 3)
        design = _load_fabric(args.design)
        stage(1, 3)
        live = load_dump(args.dump, args.fmt)
        stage(2, 3)
        audit = diff_fabrics(live, design, ports=not args.no_ports)
        stage(3, 3)
    faults, notes = faults_from_audit(design, audit)
    jobs = resolve_jobs(load_jobs(args.jobs), design)
    with _progress("N+1 margin of the live state", "case") as progress:
        report = assess(design, jobs, faults, parse_budget(args.budget), progress=progress)
    if args.json:
        doc = {
            "dump": str(args.dump),
            "design": design.name,
            "differences": audit.lines(),
            "ok": audit.ok,
            "not_modelled": notes,
            "risk": risk_json(report),
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        console = _stdout()
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
        console.print("[bold]risk of the live state[/] (the differences applied to the design):")
        print_risk(console, report, words=AUDIT)
    if args.report is not None:
        from harness.reporting.html import AuditInput
        from harness.reporting.html import write_audit_report

        found = AuditInput(args.dump, notes)
        page = write_audit_report(audit, design, report, args.report, jobs=jobs, found=found)
        _wrote_report(page)
    return EXIT_OK if audit.ok and report.ok else EXIT_FAILED


def _audit_regular(args: argparse.Namespace) -> int:
    from harness.importers import load_dump
    from harness.importers import notes_of
    from harness.planning.audit.regular import audit_regular

    live = load_dump(args.dump, args.fmt)
    audit = audit_regular(live)
    if args.report is not None:
        from harness.reporting.html import AuditInput
        from harness.reporting.html import write_regular_audit_report

        found = AuditInput(args.dump, tuple(notes_of(live)))
        _wrote_report(write_regular_audit_report(audit, live, found, args.report))
    if args.json:
        doc = {"dump": str(args.dump), **audit.to_json(), "notes": list(notes_of(live))}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return EXIT_OK if audit.ok else EXIT_FAILED
    console = _stdout()
    console.print(
        f"[bold]{args.dump}[/]: inferred design (no --design given):",
        highlight=False,
        soft_wrap=True,
    )
    for line in audit.design.lines():
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    if audit.ok:
        console.print("[green]no departures from the inferred design[/]")
    else:
        console.print(f"[bold red]{len(audit.departures)} departure(s)[/]:")
        for line in audit.lines():
            console.print(f"  {line}", highlight=False, soft_wrap=True)
    return EXIT_OK if audit.ok else EXIT_FAILED


# -- harness export -------------------------------------------------------------------
EXPORT_FORMATS = ("containerlab", "graphml", "ibsim", "slurm")


def _configure_export(p: argparse.ArgumentParser) -> None:
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


def _cmd_export(args: argparse.Namespace) -> int:
    from harness.importers import load_dump
    from harness.importers import sniff_format
    from harness.importers import to_containerlab
    from harness.importers import to_graphml
    from harness.importers import to_ibsim_net
    from harness.importers.slurm import to_slurm_topology

    dump = Path(args.fabric)
    is_dump = dump.is_file() and sniff_format(dump) is not None
    fabric = load_dump(dump) if is_dump else _load_fabric(args.fabric)
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


# -- emulate / clean (netns) ----------------------------------------------------------------
def _configure_emulate(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("up", "down", "status"), help="bring up, take down, list")
    p.add_argument("fabric", nargs="?", help="a preset name or fabric file (up, down)")
    p.add_argument(
        "--scale",
        type=float,
        default=1e-3,
        help="link rate scale factor (default 0.001: 200 Gb/s -> 200 Mb/s)",
    )
    p.add_argument("--routing", type=_routing_arg, default="sm", metavar="{sm,bgp}",
                   help="up: sm (tables computed by the harness, default) or bgp (FRR on "
                   "every switch)")  # fmt: skip
    p.add_argument("--bfd", type=_bfd_arg, default="off", metavar="{off,on,INTERVAL}",
                   help="up, with --routing bgp: BFD on every session: off (default), on "
                   "(timers by fabric size) or an interval such as 300ms")  # fmt: skip


def _cmd_emulate(args: argparse.Namespace) -> int:
    from harness.backends.netns import session

    if args.action == "status":
        runs = session.status()
        for r in runs:
            print(
                f"{r.run_id}  {r.fabric}  {r.purpose}  {r.state}  {r.namespaces} namespaces"
                f"  ({r.names_file})"
            )
        if not runs:
            print("no emulations (the ledger is empty)")
        return EXIT_OK
    if not args.fabric:
        msg = f"harness emulate {args.action} needs a FABRIC (a preset or a fabric file)"
        raise ScenarioError(msg)
    if args.action == "down":
        for rid in session.down(_load_fabric(args.fabric).name):
            print(f"took down run {rid}")
        return EXIT_OK
    emu = session.up(
        _load_fabric(args.fabric), scale=args.scale, control=args.routing, bfd=args.bfd
    )
    for line in session.entering_hint(emu):
        print(line)
    print(f"take it down with:  harness emulate down {args.fabric}")
    return EXIT_OK


def _configure_clean(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--include-emulations",
        action="store_true",
        help="also take down emulations left up by `harness emulate up`",
    )


def _cmd_clean(args: argparse.Namespace) -> int:
    from harness.backends.ledger import clean

    report = clean(include_detached=args.include_emulations)
    for rid, removed in report.removed.items():
        print(
            f"run {rid}: removed {len(removed)} objects"
            + (f" ({removed[0]}, ...)" if removed else "")
        )
    for rid in report.live:
        print(f"run {rid}: still running or up, left alone")
    if not report.removed and not report.live:
        print("nothing to clean")
    return EXIT_OK


# -- the table ----------------------------------------------------------------------------
COMMANDS: tuple[Command, ...] = (
    Command("run", "run scenarios and report what survived", _configure_run, _cmd_run),
    Command(
        "validate",
        "check scenario files as run would (fabrics built, selectors resolved), without running",
        _configure_validate,
        _cmd_validate,
    ),
    Command("show", "describe a fabric (a preset or a fabric file)", _configure_show, _cmd_show),
    Command("risk", "the blast radius of a change and its N+1 margin", _configure_risk, _cmd_risk),
    Command(
        "sweep",
        "every single (and paired) failure of a fabric, ranked",
        _configure_sweep,
        _cmd_sweep,
    ),
    Command(
        "audit", "a live topology dump against the intended design", _configure_audit, _cmd_audit
    ),
    Command(
        "export",
        "write a fabric for containerlab, ibsim or GraphML",
        _configure_export,
        _cmd_export,
    ),
    Command(
        "emulate",
        "bring a fabric up in network namespaces (root)",
        _configure_emulate,
        _cmd_emulate,
    ),
    Command(
        "clean",
        "remove what crashed runs left on this host (ledger-driven)",
        _configure_clean,
        _cmd_clean,
    ),
)


EXIT_CODES_HELP = """\
exit codes:
  0    everything ran and held: scenarios passed, the change is within budget,
       the dump matches its design
  1    the fabric under test failed: an expectation failed, a budget is broken,
       an audit found differences, a backend measured otherwise than the model
       predicts (a mismatch)
  2    bad input: a scenario or fabric file, a selector, an argument, a backend
       not available here; a run in which nothing ran (unless --allow-empty)
  3    the environment failed: a backend, a tool, a healthy fabric that fails
       its preflight, an unwritable report file
  130  interrupted (Ctrl-C)
"""

COMPLETION_HELP = "print the completion script for SHELL (see the README) and exit"


def package_version() -> str:
    """The installed distribution's version (the one ``pip show harness`` prints)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version

    try:
        return version("harness")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        from harness import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    import shtab

    parser = argparse.ArgumentParser(
        prog="harness",
        description="Break GPU-cluster networks on purpose, safely, and prove what survives.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"harness {package_version()}")
    shtab.add_argument_to(parser, "--print-completion", help=COMPLETION_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in COMMANDS:
        p = sub.add_parser(
            cmd.name,
            help=cmd.help,
            description=cmd.help,
            epilog=EXIT_CODES_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        cmd.configure(p)
        _complete_paths(p)
        p.set_defaults(handler=cmd.run)
    return parser


_PATH_METAVARS = ("PATH", "FABRIC", "FILE", "FILE|per-su", "DUMP", "FILE.png")


def _complete_paths(parser: argparse.ArgumentParser) -> None:
    """Shell completion offers files for every argument that takes a path or a fabric."""
    import shtab

    for action in parser._actions:
        if action.type is Path or action.metavar in _PATH_METAVARS:
            action.complete = shtab.FILE  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    """Run the ``harness`` command; return its exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2)
        return exit_.code if isinstance(exit_.code, int) else EXIT_BAD_INPUT
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except ScenarioError as err:
        _error(str(err))
        return EXIT_BAD_INPUT
    except BackendError as err:
        _error(f"environment: {err}")
        return EXIT_ENVIRONMENT
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``harness run --json | head``): no traceback, and
        # no second error when Python flushes stdout at exit.
        _silence_stdout()
        return EXIT_ENVIRONMENT


def _silence_stdout() -> None:
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def entrypoint() -> NoReturn:
    """The console script: exit with :func:`main`'s code."""
    raise SystemExit(main())
