"""Dumps on the command line: a FABRIC argument that is a topology dump, read as a fabric.

:func:`fabric_or_dump` is what ``harness show`` and ``harness export`` build
from their FABRIC argument: a preset or a fabric file as
:func:`~harness.fabric.resolve.resolve_fabric` reads them, or a topology dump
(``ibnetdiscover``, also gzip-compressed or a terminal capture; NetQ JSON, ...)
read by :func:`~harness.importers.load_dump`.  The importer's warnings (lines
it skipped) go to stderr, so a command's output stays what it was.
"""

from __future__ import annotations

import sys

from harness.fabric.model import Fabric
from harness.fabric.resolve import fabric_ref_for
from harness.fabric.resolve import resolve_fabric


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
    from harness.importers import load_dump
    from harness.importers import sniff_format

    path = fabric_ref_for(name).file
    if path is not None and path.is_file() and sniff_format(path) is not None:
        fabric = load_dump(path)
        print_warnings(fabric)
        return fabric
    return resolve_fabric(name)
