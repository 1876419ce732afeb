"""Shared helpers of the benchmarks: wall time, peak memory, plain-text tables.

Peak memory is measured two ways, because they answer different questions:

* ``tracemalloc`` peak: Python allocations, numpy arrays included (numpy
  reports its buffers to tracemalloc), C allocations of scipy/networkx
  internals excluded.  Tracing slows Python code down several times, so a
  traced run is never the run that is timed.
* peak RSS delta: the process's high-water mark (``VmHWM`` in
  ``/proc/self/status``, else ``ru_maxrss``) minus its resident size before
  the measurement.  Where the kernel allows it, the high-water mark is reset
  first (``echo 5 > /proc/self/clear_refs``), so one process can measure
  several phases; otherwise the drivers run each measurement in a fresh
  subprocess.
"""

from __future__ import annotations

import gc
import resource
import statistics
import time
import tracemalloc
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass

MIB = 1024 * 1024


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_bytes() -> int:
    """Current resident set size (0 when unknown)."""
    kib = _status_kib("VmRSS")
    return (kib or 0) * 1024


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far."""
    kib = _status_kib("VmHWM")
    if kib is None:  # not Linux: ru_maxrss is KiB on Linux, bytes on macOS
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib * 1024


def reset_peak_rss() -> bool:
    """Reset the kernel's high-water mark to the current RSS; False if not allowed."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


@dataclass
class Measured:
    """One measurement: wall seconds and memory (bytes; None when not measured)."""

    seconds: float = 0.0
    traced_peak: int | None = None  # tracemalloc peak
    rss_delta: int | None = None  # peak RSS minus RSS before
    peak_rss: int | None = None  # the process's peak RSS (absolute)
    hwm_reset: bool = False


@contextmanager
def measure(*, trace: bool = False) -> Iterator[Measured]:
    """Time a block and record its peak memory (tracemalloc only when ``trace``)."""
    out = Measured()
    gc.collect()
    out.hwm_reset = reset_peak_rss()
    before = rss_bytes()
    if trace:
        tracemalloc.start()
        tracemalloc.reset_peak()
    start = time.perf_counter()
    try:
        yield out
    finally:
        out.seconds = time.perf_counter() - start
        if trace:
            out.traced_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        out.peak_rss = peak_rss_bytes()
        out.rss_delta = max(0, out.peak_rss - before)


def repeat(fn: Callable[[], object], n: int) -> list[float]:
    """Wall seconds of ``n`` calls."""
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def mib(value: int | None) -> str:
    return "-" if value is None else f"{value / MIB:,.1f}"


def secs(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1.0:
        return f"{value * 1000:,.1f} ms"
    return f"{value:,.2f} s"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, left: Sequence[int] = (0,)
) -> str:
    """A plain-text table; the ``left`` columns are left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(r: Sequence[str]) -> str:
        parts = [c.ljust(w) if i in left else c.rjust(w)
                 for i, (c, w) in enumerate(zip(r, widths, strict=True))]  # fmt: skip
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])
