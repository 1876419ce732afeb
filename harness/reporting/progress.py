"""Progress of long work, for people and for logs (reporting stage).

The library reports progress through a plain callback, ``progress(done, total)``
(see :data:`ProgressFn`), and never prints.  The CLI passes a
:class:`ProgressReporter`: on a terminal it draws a rich progress bar on
stderr; anywhere else (CI logs, pipes, files) it writes a plain line to stderr
every ``interval`` seconds, and a last one when work that printed any is done,
so a log shows long work moving (and quick work stays quiet)::

    sweep: 4,000 of 12,345 cases (32%), 5.0 s
    sweep: 8,120 of 12,345 cases (66%), 10.0 s
    sweep: 12,345 of 12,345 cases (100%), 14.2 s

>>> import io
>>> out = io.StringIO()
>>> with ProgressReporter("sweep", "case", stream=out, interval=0) as progress:
...     for done in (0, 500, 1000):
...         progress(done, 1000)
>>> print(out.getvalue(), end="")  # doctest: +ELLIPSIS
sweep: 0 of 1,000 cases (0%), ... s
sweep: 500 of 1,000 cases (50%), ... s
sweep: 1,000 of 1,000 cases (100%), ... s
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn
from rich.progress import MofNCompleteColumn
from rich.progress import Progress
from rich.progress import TaskID
from rich.progress import TextColumn
from rich.progress import TimeElapsedColumn
from rich.progress import TimeRemainingColumn

from harness.words import noun

#: ``progress(done, total)``: how library functions report long work.
ProgressFn = Callable[[int, int], None]

#: Seconds between two plain progress lines off a terminal.
LOG_INTERVAL = 5.0


class ProgressReporter:
    """A :data:`ProgressFn` that renders itself; use as a context manager.

    ``enabled=False`` makes it silent (``--quiet``, or output meant for a machine
    on stderr).  ``terminal`` overrides the detection of a terminal on ``stream``.
    """

    def __init__(
        self,
        label: str,
        unit: str,
        *,
        stream: TextIO | None = None,
        interval: float = LOG_INTERVAL,
        enabled: bool = True,
        terminal: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.enabled = enabled
        self.clock = clock
        isatty = getattr(self.stream, "isatty", None)
        self.terminal = bool(isatty and isatty()) if terminal is None else terminal
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._start = 0.0
        self._last_line = 0.0
        self._last: tuple[int, int] | None = None
        self._printed: tuple[int, int] | None = None

    def __enter__(self) -> ProgressReporter:
        self._start = self._last_line = self.clock()
        if self.enabled and self.terminal:
            self._bar = Progress(
                TextColumn("[progress.description]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(noun(2, self.unit)),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=True,
            )
            self._task = self._bar.add_task(self.label, total=None)
            self._bar.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif exc_type is None and self._printed is not None and self._printed != self._last:
            assert self._last is not None
            self._line(*self._last)

    def __call__(self, done: int, total: int) -> None:
        """Report ``done`` of ``total``: move the bar, or print a line once ``interval`` passed."""
        if not self.enabled:
            return
        self._last = (done, total)
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total)
            return
        if self.clock() - self._last_line >= self.interval:
            self._line(done, total)

    def _line(self, done: int, total: int) -> None:
        now = self.clock()
        self._last_line = now
        self._printed = (done, total)
        share = f" ({done / total:.0%})" if total else ""
        seconds = now - self._start
        what = noun(total, self.unit)
        self.stream.write(f"{self.label}: {done:,} of {total:,} {what}{share}, {seconds:.1f} s\n")
        self.stream.flush()
