"""The commands on this host's network namespaces: ``harness emulate`` (bring a
fabric up, take it down, list) and ``harness clean`` (remove what crashed runs left)."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_ENVIRONMENT
from harness.cli.common import EXIT_OK
from harness.cli.common import file_override
from harness.cli.common import print_error
from harness.cli.common import routing_arg
from harness.errors import ScenarioError
from harness.fabric.routing import Routing
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import parse_bfd
from harness.fabric.routing import resolve


def _bfd_arg(value: str) -> str:
    try:
        return parse_bfd(value)
    except ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def configure_emulate(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness emulate``."""
    p.add_argument("action", choices=("up", "down", "status"), help="bring up, take down, list")
    p.add_argument("fabric", nargs="?", help="a preset name or fabric file (up, down)")
    p.add_argument(
        "--scale",
        type=float,
        default=1e-3,
        help="link rate scale factor (default 0.001: 200 Gb/s -> 200 Mb/s)",
    )
    p.add_argument("--routing", type=routing_arg, metavar="{sm,bgp}",
                   help="up: sm (tables computed by the harness) or bgp (FRR on every "
                   "switch); default: the fabric file's routing:, else sm")  # fmt: skip
    p.add_argument("--bfd", type=_bfd_arg, metavar="{off,on,INTERVAL}",
                   help="up, with bgp: BFD on every session: off, on (timers by fabric size) "
                   "or an interval such as 300ms; default: the fabric file's routing:, "
                   "else off")  # fmt: skip


def emulate_routing(fabric: str, control: str | None, bfd: str | None) -> Routing:
    """The routing ``emulate up`` runs: the defaults < the fabric file's ``routing:`` < flags.

    >>> emulate_routing("seed-a800", None, None).control
    'sm'
    >>> r = emulate_routing("seed-a800", "bgp", "300ms")
    >>> r.control, r.bfd
    ('bgp', '300ms')
    """
    return resolve(file_override(fabric), RoutingOverride.of_options(control=control, bfd=bfd))


def cmd_emulate(args: argparse.Namespace) -> int:
    """``harness emulate up|down|status``: leave a netns emulation up, take it down, list them."""
    from harness.backends.netns import session
    from harness.fabric.resolve import resolve_fabric

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
        for rid in session.down(resolve_fabric(args.fabric).name):
            print(f"took down run {rid}")
        return EXIT_OK
    routing = emulate_routing(args.fabric, args.routing, args.bfd)
    fabric = resolve_fabric(args.fabric)
    bfd = f", bfd {routing.bfd}" if routing.control == "bgp" else ""
    print(f"routing: control {routing.control}{bfd}")
    emu = session.up(fabric, scale=args.scale, routing=routing)
    for line in session.entering_hint(emu):
        print(line)
    print(f"take it down with:  harness emulate down {args.fabric}")
    return EXIT_OK


def configure_clean(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness clean``."""
    p.add_argument(
        "--include-emulations",
        action="store_true",
        help="also take down emulations left up by `harness emulate up`",
    )


def cmd_clean(args: argparse.Namespace) -> int:
    """``harness clean``: remove what dead runs left behind (``--include-emulations``: and the
    emulations left up).  Every object removed is listed; what was refused and the runs that
    could not be cleaned are reported, and then the exit code is 3 (environment)."""
    from harness.backends.ledger import clean

    report = clean(include_detached=args.include_emulations)
    for rid, removed in report.removed.items():
        print(f"run {rid}: removed {len(removed)} objects")
        for what in removed:
            print(f"  {what}")
    for rid in report.live:
        print(f"run {rid}: still running or up, left alone")
    for rid, refused in report.refused.items():
        for why in refused:
            print_error(f"run {rid}: {why}")
    for rid, why in report.failed.items():
        print_error(f"{rid if rid == 'state root' else 'run ' + rid}: not cleaned: {why}")
    if not report.removed and not report.live and not report.failed:
        print("nothing to clean")
    return EXIT_OK if report.ok else EXIT_ENVIRONMENT
