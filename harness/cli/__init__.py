"""The ``harness`` command: its parser, its table of commands, and the exit codes.

The CLI is a thin shell over the library.  Subcommands are small functions
registered in one table, :data:`COMMANDS`; adding one is one ``configure``
function, one ``cmd`` function and one row.  The commands live one group to a
module: :mod:`~harness.cli.run` (run, validate), :mod:`~harness.cli.show`,
:mod:`~harness.cli.risk`, :mod:`~harness.cli.sweep`, :mod:`~harness.cli.audit`
(audit, export), :mod:`~harness.cli.emulate` (emulate, clean); what they share
(output, ``--report``, routing flags) is :mod:`~harness.cli.common`.  This
module is the only place in the package that turns exceptions into exit codes:

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
1xx  stopped by a signal, 128 + its number: 129 SIGHUP, 130 SIGINT (Ctrl-C),
     143 SIGTERM; whatever the command made was removed first
     (:mod:`harness.backends.signals`)
===  ===========================================================================

For example::

    harness run scenarios/ --junit-xml out/harness.xml -k "spine and not core"
    harness validate scenarios/
    harness show seed-a800 --json

Modules:

``audit``    The commands over topology dumps: ``harness audit`` (a live dump against the
             intended design, or against the regular design inferred from it) and ...
``common``   What every command of the ``harness`` command shares: exit codes, console and
             progress output, the ``--report`` argument, and routing from the ...
``drill``    The drill commands: ``harness drill`` (run drills, or predict them with
             ``--dry-run``), ``harness halt`` (the lever) and ``harness journal``.
``emulate``  The commands on this host's network namespaces: ``harness emulate`` (bring a fabric
             up, take it down, list) and ``harness clean`` (remove what ...
``imports``  Dumps on the command line: a FABRIC argument that is a topology dump, read as a
             fabric.
``reliability``  ``harness reliability``: expected job interruptions per month of a design, by
             Monte Carlo.
``risk``     ``harness risk``: the blast radius of a change on a fabric and its N+1 margin.
``run``      The commands over scenario files: ``harness run`` (run them, report what survived)
             and ``harness validate`` (check them as run would, without ...
``show``     ``harness show``: a fabric (a preset, a fabric file or a dump) in numbers, or the
             presets.
``sweep``    ``harness sweep``: every single (and paired) failure of a fabric, ranked.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from typing import cast

from harness.backends.signals import Stopped
from harness.backends.signals import cleanup_on_signals
from harness.backends.signals import exit_now
from harness.cli.common import EXIT_BAD_INPUT
from harness.cli.common import EXIT_ENVIRONMENT
from harness.cli.common import EXIT_INTERRUPTED
from harness.cli.common import check_extras
from harness.cli.common import missing_extra
from harness.cli.common import print_error
from harness.errors import BackendError
from harness.errors import ScenarioError


@dataclass(frozen=True, slots=True)
class Command:
    """One subcommand: its name, help line, and where its argument set-up and body live.

    ``module`` is imported only when the command is parsed for (its own ``--help``, a run,
    the completion script), so ``harness --version`` and every other command's start pay
    nothing for it (:func:`build_parser`).
    """

    name: str
    help: str
    module: str
    configure_name: str
    run_name: str

    @property
    def configure(self) -> Callable[[argparse.ArgumentParser], None]:
        """The function that adds the command's arguments to its parser."""
        return cast(
            "Callable[[argparse.ArgumentParser], None]",
            getattr(importlib.import_module(self.module), self.configure_name),
        )

    @property
    def run(self) -> Callable[[argparse.Namespace], int]:
        """The command's body: parsed arguments in, exit code out."""
        return cast(
            "Callable[[argparse.Namespace], int]",
            getattr(importlib.import_module(self.module), self.run_name),
        )


# -- the table ----------------------------------------------------------------------------
COMMANDS: tuple[Command, ...] = (
    Command(
        "run",
        "run scenarios and report what survived",
        "harness.cli.run",
        "configure_run",
        "cmd_run",
    ),
    Command(
        "validate",
        "check scenario files as run would (fabrics built, selectors resolved), without running",
        "harness.cli.run",
        "configure_validate",
        "cmd_validate",
    ),
    Command(
        "drill",
        "run chaos drills: timed faults under probes, aborted on a bad sign, rolled back",
        "harness.cli.drill",
        "configure_drill",
        "cmd_drill",
    ),
    Command(
        "halt",
        "stop a running drill, or every drill on this host",
        "harness.cli.drill",
        "configure_halt",
        "cmd_halt",
    ),
    Command(
        "journal",
        "show or compare saved drill journals",
        "harness.cli.drill",
        "configure_journal",
        "cmd_journal",
    ),
    Command(
        "show",
        "describe a fabric (a preset or a fabric file)",
        "harness.cli.show",
        "configure_show",
        "cmd_show",
    ),
    Command(
        "risk",
        "the blast radius of a change and its N+1 margin",
        "harness.cli.risk",
        "configure_risk",
        "cmd_risk",
    ),
    Command(
        "sweep",
        "every single (and paired) failure of a fabric, ranked",
        "harness.cli.sweep",
        "configure_sweep",
        "cmd_sweep",
    ),
    Command(
        "reliability",
        "expected job interruptions per month of a design, by Monte Carlo",
        "harness.cli.reliability",
        "configure_reliability",
        "cmd_reliability",
    ),
    Command(
        "audit",
        "a live topology dump against the intended design",
        "harness.cli.audit",
        "configure_audit",
        "cmd_audit",
    ),
    Command(
        "import",
        "write a topology dump as a fabric file",
        "harness.cli.imports",
        "configure_import",
        "cmd_import",
    ),
    Command(
        "export",
        "write a fabric for containerlab, ibsim or GraphML",
        "harness.cli.audit",
        "configure_export",
        "cmd_export",
    ),
    Command(
        "emulate",
        "bring a fabric up in network namespaces (root)",
        "harness.cli.emulate",
        "configure_emulate",
        "cmd_emulate",
    ),
    Command(
        "clean",
        "remove what crashed runs left on this host (ledger-driven)",
        "harness.cli.emulate",
        "configure_clean",
        "cmd_clean",
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
  129  stopped by SIGHUP (what the command made was removed first)
  130  interrupted (Ctrl-C, SIGINT; what the command made was removed first)
  143  stopped by SIGTERM (what the command made was removed first); a signal
       during that cleanup waits for it: only SIGKILL cuts it short, and then
       `harness clean` removes what is left
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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``harness`` argument parser: every subcommand, with shell completion.

    ``only``: set up that subcommand's arguments alone (the others keep their name and
    help line, all ``harness --help`` shows), so a command imports its own module and no
    other; ``""`` none (``--version``, ``--help``); ``None`` every one (the completion
    script names every option).
    """
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
        if only is None or only == cmd.name:
            cmd.configure(p)
            _complete_paths(p)
        p.set_defaults(command_row=cmd)
    return parser


def _command_named(argv: list[str]) -> str | None:
    """What :func:`build_parser` must set up for ``argv``: the subcommand it runs (``""``:
    none, ``harness --version`` or ``--help``), or ``None`` (every one: the completion script,
    or an argument line it cannot tell, which argparse then explains)."""
    for arg in argv:
        if arg in ("-h", "--help", "--version"):
            continue
        return arg if any(c.name == arg for c in COMMANDS) else None
    return ""


_PATH_METAVARS = ("PATH", "FABRIC", "FILE", "FILE|per-su", "DUMP", "FILE.png")


def _complete_paths(parser: argparse.ArgumentParser) -> None:
    """Shell completion offers files for every argument that takes a path or a fabric."""
    import shtab

    for action in parser._actions:
        if action.type is Path or action.metavar in _PATH_METAVARS:
            action.complete = shtab.FILE  # type: ignore[attr-defined]


def main(argv: list[str] | None = None, *, exiting: bool = False) -> int:
    """Run the ``harness`` command; return its exit code.

    ``exiting`` (the console script, ``python -m harness``): the process ends right after,
    so a signal that arrives once the command has cleaned up is ignored (the exit code
    stays the one returned) instead of the old handlers coming back.
    """
    arguments = sys.argv[1:] if argv is None else argv
    parser = build_parser(only=_command_named(arguments))
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2)
        return exit_.code if isinstance(exit_.code, int) else EXIT_BAD_INPUT
    command: Command = args.command_row
    handler = command.run
    # Every way out runs the cleanups: SIGTERM and SIGHUP raise Stopped, SIGINT
    # KeyboardInterrupt; a signal during a cleanup waits for it (harness.backends.signals).
    with cleanup_on_signals(then_ignore=exiting):
        return _handle(handler, args)


def _handle(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        check_extras(args)
        try:
            return handler(args)
        except ModuleNotFoundError as err:
            extra = missing_extra(err, args)
            if extra is None:
                raise
            raise extra from err
    except ScenarioError as err:
        print_error(str(err))
        return EXIT_BAD_INPUT
    except BackendError as err:
        print_error(f"environment: {err}")
        return EXIT_ENVIRONMENT
    except KeyboardInterrupt:
        print_error("interrupted (SIGINT)")
        return EXIT_INTERRUPTED
    except Stopped as stop:
        print_error(f"stopped ({stop.signame})")
        return 128 + stop.signum
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
    """The console script: exit with :func:`main`'s code (a late stop signal cannot change
    it, see :func:`~harness.backends.signals.exit_now`)."""
    exit_now(main(exiting=True))
