"""SIGINT, SIGTERM and SIGHUP turned into a clean exit, and cleanup that no signal cuts short.

One mechanism for the CLI and for a backend used from Python:

* :func:`cleanup_on_signals` (re-entrant; the ``harness`` command wraps every
  command in it, and every :class:`ClosesOnSignals` backend enters it too)
  turns the first SIGINT into ``KeyboardInterrupt`` and the first SIGTERM or
  SIGHUP into :class:`Stopped` (a ``SystemExit`` with code 128 + the signal
  number: 143, 129), so every ``finally`` and ``close()`` runs; it prints
  ``stopping on SIGTERM: cleaning up, please wait`` to stderr.  From then on
  the process is stopping: a later signal prints ``cleaning up, please wait``
  and changes nothing.
* :func:`cleaning_up` shields a cleanup (``close()``, a teardown): a signal
  that arrives inside it only prints the same line and is remembered; when the
  cleanup is over the first one is raised (it wins over an error already on its
  way out, so the exit code says the run was stopped).  :data:`deferring_signals`
  is the same shield around a start that must not be split (a process started,
  recorded and held by the object that stops it).

A stop raised where Python cannot raise -- an ``os.fork`` callback (the
``logging`` module's lock release), a ``__del__``, a weakref callback -- would
be printed as "Exception ignored in ..." and lost, and the run would go on as
if no signal had come.  While the guard is in place ``sys.unraisablehook``
catches that exception and a helper thread delivers the same stop again
(``_thread.interrupt_main``), so it is raised at the next line that can raise.

SIGKILL cannot be caught -- that is what the ledger and ``harness clean`` are for.
Handlers can only be set in the main thread; elsewhere both are no-ops.

>>> class Thing(ClosesOnSignals):
...     closed = 0
...     def close(self) -> None:
...         self.closed += 1
>>> with Thing() as t:
...     pass
>>> t.closed
1
>>> Stopped(signal.SIGTERM).code, Stopped(signal.SIGHUP).code
(143, 129)
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from types import FrameType
from types import TracebackType
from typing import Any
from typing import NoReturn
from typing import Self

#: The signals that stop a run cleanly (SIGKILL cannot be caught).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: What a signal during cleanup prints (stderr).
WAIT_MESSAGE = "cleaning up, please wait"

_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class Stopped(SystemExit):
    """The process was told to stop (SIGTERM, SIGHUP): exit code 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    @property
    def signame(self) -> str:
        """The signal's name (``SIGTERM``)."""
        return signal.Signals(self.signum).name


def stop_exception(signum: int) -> BaseException:
    """What a stop signal raises: ``KeyboardInterrupt`` for SIGINT, :class:`Stopped` else."""
    return KeyboardInterrupt() if signum == signal.SIGINT else Stopped(signum)


@dataclass(slots=True)
class _State:
    """The process's guard: nesting depth, saved handlers, shield depth, what arrived."""

    depth: int = 0
    saved: dict[int, _Handler] = field(default_factory=dict)
    shield: int = 0
    stopping: int | None = None  # the signal being acted on (its exception was raised)
    pending: int | None = None  # the first signal that arrived while shielded
    raised: BaseException | None = None  # the stop exception last raised by the handler
    requeued: int | None = None  # a stop that was swallowed, being delivered again
    hook: Callable[[Any], Any] | None = None  # the sys.unraisablehook the guard replaced


_state = _State()


def _say(line: str) -> None:
    # os.write: a handler may run in the middle of another write to sys.stderr
    with contextlib.suppress(OSError):
        os.write(2, f"{line}\n".encode())


def _say_wait() -> None:
    _say(WAIT_MESSAGE)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    requeued, _state.requeued = _state.requeued, None
    if requeued is not None:  # a stop that was swallowed: it acts as if it came now
        signum = requeued
    elif _state.stopping is not None:
        _say_wait()
        return
    if _state.shield:
        if _state.pending is None:
            _state.pending = signum
            if requeued is None:
                _say(f"{signal.Signals(signum).name} during a cleanup: {WAIT_MESSAGE}")
        elif requeued is None:
            _say_wait()
        return
    _state.stopping = signum
    if requeued is None:
        _say(f"stopping on {signal.Signals(signum).name}: {WAIT_MESSAGE}")
    _state.raised = stop_exception(signum)
    raise _state.raised


def _on_unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` under the guard: a swallowed stop is delivered again."""
    if _state.raised is not None and unraisable.exc_value is _state.raised:
        _state.raised = None
        signum = _state.stopping
        if signum is not None:
            # Not from here: the handler would raise inside this hook, and that is lost too.
            _thread.start_new_thread(_requeue, (signum,))
        return
    hook = _state.hook if _state.hook is not None else sys.__unraisablehook__
    hook(unraisable)


def _requeue(signum: int) -> None:
    # A helper thread: the main thread goes on (out of the place that swallowed the
    # stop) and runs the handler again at the next line it can raise from.
    if _state.depth and _state.saved:
        _state.requeued = signum
        _thread.interrupt_main(signal.Signals(signum))


def _late(_signum: int, _frame: FrameType | None) -> None:
    """A signal after the command cleaned up (``then_ignore``): nothing to do.

    A Python handler, not ``SIG_IGN``: a program started afterwards gets the default
    disposition on ``exec``, where an inherited ``SIG_IGN`` would make it deaf to
    SIGTERM (a test that ran the console script in-process once left every ibsim its
    pytest worker started unstoppable but by SIGKILL).
    """


def exit_now(code: int) -> NoReturn:
    """End the process with ``code``, a late stop signal unable to change it.

    For a process whose command has cleaned up and that exits right after (the console
    script, ``python -m harness``).  Its handlers are Python's until the interpreter
    finalizes, and finalization puts back the default action of every signal Python
    handled: a SIGTERM that lands there kills the process (status -15, not the
    command's code).  Blocking it in the main thread is not enough: a native thread
    (numpy's BLAS pool) takes it.  So the stop signals are ignored, process-wide, which
    finalization leaves alone.  Only for a process about to end: ``SIG_IGN`` is
    inherited across ``exec`` (an in-process caller, a test, must put its handlers back).
    """
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    raise SystemExit(code)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def stopping() -> int | None:
    """The signal the process is stopping on (``None``: none arrived, or it was handled)."""
    return _state.stopping if _state.stopping is not None else _state.pending


@contextlib.contextmanager
def cleanup_on_signals(*, then_ignore: bool = False) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP end the process through ``finally`` blocks (cleanup runs).

    Re-entrant: only the outermost one installs the handlers and restores the old ones
    -- or, with ``then_ignore`` (a process about to exit: everything is cleaned up), ignores
    those signals from then on (a handler that does nothing, which no child inherits), so a
    late one cannot change the exit code.
    """
    if not _main_thread():
        yield
        return
    if _state.depth == 0:
        _state.saved = {s: signal.signal(s, _on_signal) for s in STOP_SIGNALS}
        _state.hook, sys.unraisablehook = sys.unraisablehook, _on_unraisable
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        if _state.depth == 0:
            for s, handler in _state.saved.items():
                signal.signal(s, _late if then_ignore else handler)
            _state.saved = {}
            _state.stopping = _state.pending = _state.requeued = _state.raised = None
            if sys.unraisablehook is _on_unraisable and _state.hook is not None:
                sys.unraisablehook = _state.hook
            _state.hook = None


@contextlib.contextmanager
def cleaning_up() -> Iterator[None]:
    """Run a cleanup that no SIGINT/SIGTERM/SIGHUP cuts short; raise the first one after it."""
    if not _main_thread():
        yield
        return
    with cleanup_on_signals():
        _state.shield += 1
        try:
            yield
        except BaseException as err:
            late = _unshield()
            if late is not None:
                raise late from err
            raise
        late = _unshield()
        if late is not None:
            raise late


#: The same shield around a start that must be held whole (a process started and kept).
deferring_signals = cleaning_up


def _unshield() -> BaseException | None:
    """Leave one shield; the exception of a signal that waited for the outermost one."""
    _state.shield -= 1
    if _state.shield or _state.pending is None:
        return None
    signum, _state.pending = _state.pending, None
    _state.stopping = signum
    return stop_exception(signum)


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

    ``__enter__`` enters :func:`cleanup_on_signals` and then runs ``opened()``
    (a subclass's start-up, nothing by default); if that fails the guard is
    left before the error propagates.  ``__exit__`` calls ``close()`` inside
    :func:`cleaning_up` and leaves the guard.
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
            with cleaning_up():
                self.close()
        finally:
            if guard is not None:
                guard.__exit__(exc_type, exc, tb)
