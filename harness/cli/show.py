"""``harness show``: a fabric (a preset, a fabric file or a dump) in numbers, or the presets."""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli.common import EXIT_OK
from harness.cli.common import FABRIC_RULE
from harness.cli.common import stdout_console
from harness.cli.imports import fabric_or_dump
from harness.errors import ScenarioError


def configure_show(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness show``."""
    p.add_argument("fabric", nargs="?", metavar="FABRIC",
                   help="a preset name (see --list), a fabric file or a topology dump "
                        "(ibnetdiscover, NetQ JSON, ...): " + FABRIC_RULE)  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--list", action="store_true", help="list the presets")


def preset_descriptions() -> dict[str, str]:
    """One line per preset: its row of the table in :mod:`harness.fabric.presets`'s docstring.

    Falls back to the generator and its parameters for a preset the table lacks.
    """
    from harness.fabric import presets
    from harness.fabric.presets import PRESETS

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


def cmd_show(args: argparse.Namespace) -> int:
    """``harness show``: a fabric's summary, or the list of presets."""
    from rich.table import Table
    from rich.text import Text

    from harness.reporting.fabric_view import fabric_document
    from harness.reporting.fabric_view import print_fabric

    console = stdout_console()
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
    fabric = fabric_or_dump(args.fabric)
    if args.json:
        sys.stdout.write(json.dumps(fabric_document(fabric), indent=2, default=str) + "\n")
    else:
        print_fabric(console, fabric)
    return EXIT_OK
