"""Dump text: a dump file read as text, safely, for every importer.

One place where the readers (ibnetdiscover, SimAI, containerlab, NetQ,
nvidia-smi, NCCL) and :func:`~harness.importers.sniff_format` get a dump's
text, through the input layer's bounded reader.
"""

from __future__ import annotations

from pathlib import Path

from harness.inputs.files import read_text as read_dump_text


def read_text(path: str | Path, what: str) -> str:
    """Read a dump as text through the input layer (:func:`harness.inputs.files.read_text`).

    Only a regular file of at most :data:`~harness.inputs.files.MAX_DUMP_BYTES`
    is read; a FIFO, a directory or a device is refused as such, never blocks;
    NUL bytes and invalid UTF-8 are refused with their line and column.
    """
    return read_dump_text(path, f"{what} dump" if what and "dump" not in what else what)
