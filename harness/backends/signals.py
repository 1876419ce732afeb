"""SIGTERM and SIGHUP turned into a clean exit, so every ``finally`` (and ``close``) runs.

Shared by the emulated backends (netns, ibsim): whatever they started is ended
on the way out, also when the harness is told to stop.  SIGINT already raises
KeyboardInterrupt; SIGKILL cannot be caught -- that is what the ledger and
``harness clean`` are for.

>>> class Thing(ClosesOnSignals):
...     closed = 0
...     def close(self) -> None:
...         self.closed += 1
>>> with Thing() as t:
...     pass
>>> t.closed
1
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from types import TracebackType
from typing import Self


@contextlib.contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP end the process through ``finally`` blocks (cleanup runs)."""

    def _raise(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, _raise) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


class Closes:
    """A context manager that calls ``close()`` on the way out (what every backend is)."""

    def close(self) -> None:
        """Release everything the object holds (each subclass says what)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class ClosesOnSignals(Closes):
    """A context manager that calls ``close()`` on the way out, signals included.

    ``__enter__`` installs :func:`cleanup_on_signals` and then runs ``opened()``
    (a subclass's start-up, nothing by default); if that fails the handlers are
    restored before the error propagates.  ``__exit__`` calls ``close()`` and
    restores them.
    """

    _signals: contextlib.AbstractContextManager[None] | None = None

    def opened(self) -> None:
        """Run inside the signal guard when the ``with`` block is entered."""

    def __enter__(self) -> Self:
        guard = cleanup_on_signals()
        guard.__enter__()
        try:
            self.opened()
        except BaseException:
            guard.__exit__(None, None, None)
            raise
        self._signals = guard
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        guard, self._signals = self._signals, None
        try:
            self.close()
        finally:
            if guard is not None:
                guard.__exit__(exc_type, exc, tb)
