"""Dump text: a dump file read as text, safely, for every importer.

One place where the readers (ibnetdiscover, SimAI, containerlab, NetQ,
nvidia-smi, NCCL) and :func:`~harness.importers.sniff_format` get a dump's
text, through the input layer's bounded reader.  Two forms operators hand
over are undone here, so every reader sees plain text:

* a gzip-compressed dump (``ibnetdiscover | gzip``; told by its magic bytes,
  not its name), decompressed up to the same size limit as a plain one;
* a terminal capture (``script``, a terminal's log): ANSI escape sequences
  (colours, window titles, bracketed paste) are removed and backspaces applied.
  CRLF line ends need nothing: every reader splits lines with
  :meth:`str.splitlines`.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.inputs.files import MAX_DUMP_BYTES
from harness.inputs.files import decode_text
from harness.inputs.files import display_path
from harness.inputs.files import read_bytes

GZIP_MAGIC = b"\x1f\x8b"
# CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL`` or ``ESC \``) and two-byte escapes
_ANSI = re.compile(
    rb"\x1b\[[0-9;?<=>]*[ -/]*[@-~]"  # CSI: colours, cursor moves, bracketed paste
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: window titles
    rb"|\x1b[()][0-9A-Za-z]|\x1b[=>78]"  # charset and keypad switches
)
_BACKSPACE = re.compile(rb"[^\x08\n]\x08")


def gunzip(data: bytes, shown: str, *, limit: int = MAX_DUMP_BYTES) -> bytes:
    """The content of gzip ``data`` (every member), refused past ``limit`` bytes.

    >>> import gzip
    >>> gunzip(gzip.compress(b"Switch 4 ") + gzip.compress(b"x"), "d.gz")
    b'Switch 4 x'
    """
    out: list[bytes] = []
    total = 0
    rest = data
    while rest:
        z = zlib.decompressobj(wbits=31)
        try:
            chunk = z.decompress(rest, limit - total + 1)
        except zlib.error as err:
            msg = f"the dump is gzip-compressed but cannot be decompressed ({err}); re-compress it"
            raise ScenarioError(Problem(msg, path=shown)) from None
        total += len(chunk)
        if total > limit or z.unconsumed_tail:
            msg = (
                f"the dump decompresses to more than the limit of {limit // (1024 * 1024)} MiB; "
                "split it or pass the part you need"
            )
            raise ScenarioError(Problem(msg, path=shown))
        if not z.eof:
            msg = "the dump is gzip-compressed but truncated (no gzip end); copy it again"
            raise ScenarioError(Problem(msg, path=shown))
        out.append(chunk)
        rest = z.unused_data.lstrip(b"\x00")  # padding after the last member is allowed
    return b"".join(out)


def terminal_clean(data: bytes) -> bytes:
    r"""``data`` without ANSI escape sequences, its backspaces applied.

    >>> terminal_clean(b"\x1b]0;user@login01\x07\x1b[01;32muser@login01\x1b[00m:~$ ls\x08s")
    b'user@login01:~$ ls'
    """
    if b"\x1b" in data:
        data = _ANSI.sub(b"", data)
    while b"\x08" in data:
        cleaned = _BACKSPACE.sub(b"", data)
        if cleaned == data:
            break
        data = cleaned
    return data


def read_text(path: str | Path, what: str) -> str:
    """Read a dump as text through the input layer (:func:`harness.inputs.files.read_bytes`).

    Only a regular file of at most :data:`~harness.inputs.files.MAX_DUMP_BYTES`
    is read (also once decompressed); a FIFO, a directory or a device is refused
    as such, never blocks; gzip is decompressed, terminal escapes removed; NUL
    bytes and invalid UTF-8 are refused with their line and column.
    """
    label = f"{what} dump" if what and "dump" not in what else what
    shown = display_path(path)
    data = read_bytes(path, label)
    if data.startswith(GZIP_MAGIC):
        data = gunzip(data, shown)
    return decode_text(terminal_clean(data), shown, label)


def dump_name(path: str | Path) -> str:
    """A dump's file name without a ``.gz`` suffix (what tells its format by name).

    >>> dump_name("/x/lab.clab.yml.gz"), dump_name("plane.out")
    ('lab.clab.yml', 'plane.out')
    """
    name = Path(path).name
    return name[:-3] if name.lower().endswith(".gz") else name
