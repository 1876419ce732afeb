"""Types for the command-line values of ``harness sweep`` and ``harness risk`` (inputs stage).

``argparse`` calls these on the text given; a bad value is a usage error (exit
2) naming the option and what it takes, before any work starts.  The bounds
are stated here: a depth-2 sample of at most :data:`MAX_PAIRS` pairs, at most
:data:`MAX_WORKERS` local workers, seeds that numpy takes.

>>> pairs("1000")
1000
>>> scheduler_address("tcp://10.0.0.5:8786")
'tcp://10.0.0.5:8786'
>>> try:
...     scheduler_address("::::")
... except argparse.ArgumentTypeError as err:
...     print(str(err).split(";")[0])
'::::' is not a scheduler address
"""

from __future__ import annotations

import argparse
import ipaddress
import re
from pathlib import Path

from harness.inputs.values import cli_int

MAX_PAIRS = 1_000_000
"""Largest depth-2 sample of non-switch failure pairs (``--pairs``)."""
MAX_WORKERS = 1_024
"""Most local worker processes (``--workers``)."""
MAX_TOP = 1_000_000
"""Most rows of a ranked table (``--top``)."""

pairs = cli_int(minimum=0, maximum=MAX_PAIRS, limit="MAX_PAIRS")
workers = cli_int(minimum=1, maximum=MAX_WORKERS, limit="MAX_WORKERS")
top = cli_int(minimum=1, maximum=MAX_TOP, limit="MAX_TOP")
seed = cli_int(minimum=0, maximum=2**32 - 1, limit="2**32 - 1, numpy's largest seed")

PLOT_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".eps", ".ps")

_HOST = re.compile(
    r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
)
_ADDRESS = re.compile(
    r"(?:(?P<scheme>[a-z][a-z0-9+.-]*)://)?(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:/\[\]]+))(?::(?P<port>\d{1,5}))?"
)
_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")


def scheduler_address(text: str) -> str:
    """A Dask scheduler address: ``[tcp://]HOST[:PORT]``, HOST a name, IPv4 or ``[IPv6]``."""
    m = _ADDRESS.fullmatch(text.strip())
    ok = m is not None
    if m is not None:
        scheme, v6, host, port = m.group("scheme", "v6", "host", "port")
        if scheme is not None and scheme not in _SCHEMES:
            ok = False
        if port is not None and not 1 <= int(port) <= 65535:
            ok = False
        if v6 is not None:
            try:
                ipaddress.IPv6Address(v6)
            except ValueError:
                ok = False
        elif host is not None and not _HOST.fullmatch(host):
            ok = False
    if not ok:
        msg = (
            f"{text!r} is not a scheduler address; give HOST:PORT, e.g. tcp://10.0.0.5:8786 "
            "(IPv6 in brackets: tcp://[::1]:8786)"
        )
        raise argparse.ArgumentTypeError(msg)
    return text.strip()


def plot_file(text: str) -> Path:
    """An image file name whose suffix says the format (``.png``, ``.svg``, ``.pdf``...)."""
    path = Path(text)
    if path.suffix.lower() not in PLOT_SUFFIXES:
        msg = (
            f"{text!r}: a plot is written as an image; end the name with "
            f"{', '.join(PLOT_SUFFIXES[:3])} (or {', '.join(PLOT_SUFFIXES[3:])})"
        )
        raise argparse.ArgumentTypeError(msg)
    return path
