"""Dumps on the command line: a FABRIC argument that is a topology dump, read as a fabric.

:func:`fabric_or_dump` is what ``harness show`` and ``harness export`` build
from their FABRIC argument: a preset or a fabric file as
:func:`~harness.fabric.resolve.resolve_fabric` reads them, or a topology dump
(``ibnetdiscover``, also gzip-compressed or a terminal capture; NetQ JSON, ...)
read by :func:`~harness.importers.load_dump`.  The importer's warnings (lines
it skipped) go to stderr, so a command's output stays what it was.
``harness import DUMP -o FILE`` (:func:`cmd_import`) writes a dump's fabric as
an explicit fabric file (:func:`harness.exporters.fabric_file.to_fabric_file`),
its notes as comments on top.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli.common import EXIT_OK
from harness.errors import BackendError

if TYPE_CHECKING:  # the fabric model (numpy) is imported when a command runs, not to parse
    from harness.fabric.model import Fabric
    from harness.importers.rules import InferenceRules


def print_warnings(fabric: Fabric) -> None:
    """The importer's notes that are warnings (``warning: ...``), on stderr."""
    from harness.importers import notes_of

    for note in notes_of(fabric):
        if note.startswith("warning: "):
            sys.stderr.write(f"{note}\n")


def fabric_or_dump(name: str) -> Fabric:
    """The fabric FABRIC names: a preset, a fabric file, or a dump whose format is sniffed.

    FABRIC's rule comes first (a bare name is a preset); a file is a dump when
    :func:`~harness.importers.sniff_format` tells its format.
    """
    from harness.fabric.resolve import fabric_ref_for
    from harness.fabric.resolve import resolve_fabric
    from harness.importers import load_dump
    from harness.importers import sniff_format

    path = fabric_ref_for(name).file
    if path is not None and path.is_file() and sniff_format(path) is not None:
        fabric = load_dump(path)
        print_warnings(fabric)
        return fabric
    return resolve_fabric(name)


# -- harness import ---------------------------------------------------------------------
def configure_import(p: argparse.ArgumentParser) -> None:
    """The arguments of ``harness import``."""
    p.add_argument("dump", type=Path, metavar="DUMP",
                   help="a topology dump (ibnetdiscover, also .gz or a terminal capture; NetQ "
                        "JSON, containerlab, SimAI)")  # fmt: skip
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                   help="the fabric file to write (explicit form, YAML)")  # fmt: skip
    p.add_argument("--format", dest="fmt", default=None, metavar="FORMAT",
                   help="the dump format when it is not sniffed (ibnetdiscover, ...)")  # fmt: skip
    add_names(p)


def add_names(p: argparse.ArgumentParser) -> None:
    """``--names FILE``: OpenSM's node-name-map, node GUID -> name, for ibnetdiscover dumps."""
    p.add_argument("--names", type=Path, default=None, metavar="FILE",
                   help="a node-name-map (OpenSM's format: 0x<guid> \"<name>\" a line) naming "
                        "the nodes by GUID (HCAs without hostnames group by host)")  # fmt: skip


def rules_of(args: argparse.Namespace) -> InferenceRules | None:
    """The inference rules ``--names`` asks for (None: the defaults)."""
    if getattr(args, "names", None) is None:
        return None
    from harness.importers.name_map import load_name_map
    from harness.importers.rules import InferenceRules

    return InferenceRules(node_names=load_name_map(args.names))


def cmd_import(args: argparse.Namespace) -> int:
    """``harness import``: a dump read into a fabric, written as a fabric file."""
    from harness.exporters.fabric_file import to_fabric_file
    from harness.importers import load_dump
    from harness.importers import notes_of

    fabric = load_dump(args.dump, args.fmt, rules=rules_of(args))
    print_warnings(fabric)
    notes = [n for n in notes_of(fabric) if not n.startswith("warning: ")]
    header = "".join(f"# {line}\n" for line in (
        f"imported from {args.dump} by harness import", *(f"note: {n}" for n in notes),
    ))  # fmt: skip
    try:
        args.output.write_text(header + to_fabric_file(fabric), encoding="utf-8")
    except OSError as err:
        msg = f"cannot write {args.output}"
        raise BackendError(msg, err) from err
    s = fabric.summary()
    print(f"wrote {fabric.name} to {args.output}: {s['nodes']} server(s), {s['leaves']} leaves, "
          f"{s['spines']} spines, {s['cores']} cores, {s['cables']} cables")  # fmt: skip
    return EXIT_OK
