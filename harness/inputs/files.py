"""Read one input file as text, safely (inputs stage: the only place files are opened).

Every reader of the harness (scenario and fabric files, ``--state`` and
``--jobs`` files, every importer's dump) gets its text from :func:`read_text`,
which keeps one contract:

* only a **regular file** is read.  A directory, a FIFO (named pipe), a
  socket or a device is refused and said as such, and the file is opened with
  ``O_NONBLOCK`` after a ``stat``, so a FIFO can never block the harness;
* a file larger than the stated limit (:data:`MAX_YAML_BYTES` for YAML inputs,
  :data:`MAX_DUMP_BYTES` for topology dumps) is refused before it is read;
* the text must be UTF-8 without NUL bytes or other control characters (tab,
  newline, carriage return and escape are fine); a bad byte is
  reported with its 1-based line and column (a UTF-8 byte-order mark is
  accepted and dropped).

Every refusal is a :class:`~harness.errors.ScenarioError` (exit 2) naming the
file; a file that exists but cannot be read for another reason (permissions, an
I/O error) is also named, with the operating system's reason.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "bad.yaml")
>>> with open(p, "wb") as f:
...     _ = f.write(b"name: x\\nfabric: {preset: s\\x00}\\n")
>>> try:
...     read_text(p, "scenario")
... except Exception as err:
...     print(str(err).replace(d, "DIR"))
DIR/bad.yaml:2:19: the scenario file contains a NUL byte (binary content?); save it as UTF-8 text
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import NoReturn

from harness.errors import Problem
from harness.errors import ScenarioError

MAX_YAML_BYTES = 16 * 1024 * 1024
"""Largest scenario, fabric, state or jobs file read (16 MiB)."""

MAX_DUMP_BYTES = 256 * 1024 * 1024
"""Largest topology dump read (256 MiB: an ``ibnetdiscover`` of ~1 million ports)."""

_BOM = "\ufeff"
# C0 controls but tab, newline, carriage return and escape (terminal colours, as in
# ``nvidia-smi topo -m``), and DEL: the text inputs never hold them.
_CONTROL = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")


def display_path(path: Path | str) -> str:
    """The path as the user gave it; absolute paths below the cwd become relative."""
    p = Path(path)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return str(p)
    return str(path)


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"  # pragma: no cover - no other kinds on Linux


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} bytes"


def line_column(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of byte ``offset`` of ``data``.

    >>> line_column(b"ab\\ncd\\xc3\\xa9x", 7)
    (2, 4)
    """
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return line, column


def _refuse(message: str, shown: str, line: int = 0, column: int = 0) -> NoReturn:
    raise ScenarioError(Problem(message, shown, line, column))


def read_bytes(path: str | Path, what: str, *, limit: int = MAX_DUMP_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (see the module doc)."""
    shown = display_path(path)
    label = f"the {what} file" if what else "the file"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        _refuse(f"cannot read {label}: file not found; check the path", shown)
    except NotADirectoryError:
        msg = f"cannot read {label}: file not found (a part of the path is not a directory)"
        _refuse(msg, shown)
    except OSError as err:
        _refuse(f"cannot read {label}: {err.strerror or err}", shown)
    kind = _kind_of(st.st_mode)
    if kind is not None:
        _refuse(f"{label} is {kind}, not a regular file; give the path of a file", shown)
    if st.st_size > limit:
        _refuse(
            f"{label} is {_size_text(st.st_size)}, larger than the limit of {_size_text(limit)}",
            shown,
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        _refuse(f"cannot read {label}: {err.strerror or err}", shown)
    try:
        st = os.fstat(fd)  # the path may have been swapped since the stat
        kind = _kind_of(st.st_mode)
        if kind is not None:
            _refuse(f"{label} is {kind}, not a regular file; give the path of a file", shown)
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError as err:
                if err.errno in (errno.EAGAIN, errno.EINTR):  # pragma: no cover - regular files
                    continue
                _refuse(f"cannot read {label}: {err.strerror or err}", shown)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # the file grew while we read it
                msg = f"{label} is larger than the limit of {_size_text(limit)}"
                _refuse(msg, shown)
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def decode_text(data: bytes, shown: str, what: str) -> str:
    """UTF-8 text without NUL bytes; a bad byte is reported with its line and column."""
    label = f"the {what} file" if what else "the file"
    nul = data.find(b"\x00")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        if nul < 0 or err.start < nul:
            line, column = line_column(data, err.start)
            msg = (
                f"{label} is not UTF-8 text (byte 0x{data[err.start]:02x} cannot be decoded: "
                f"{err.reason}); save it as UTF-8"
            )
            _refuse(msg, shown, line, column)
    if nul >= 0:
        line, column = line_column(data, nul)
        msg = f"{label} contains a NUL byte (binary content?); save it as UTF-8 text"
        _refuse(msg, shown, line, column)
    bad = _CONTROL.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        msg = (
            f"{label} contains the control character 0x{ord(bad.group()):02x} "
            "(binary content?); save it as plain UTF-8 text"
        )
        _refuse(msg, shown, line, column)
    return text[1:] if text.startswith(_BOM) else text


def read_text(path: str | Path, what: str = "", *, limit: int = MAX_DUMP_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (see the module doc).

    ``what`` names the file in messages ("the jobs file is a FIFO ...").
    """
    return decode_text(read_bytes(path, what, limit=limit), display_path(path), what)
