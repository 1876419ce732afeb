"""Backends: one module (or package) each, all behind :class:`~harness.backends.protocol.Backend`.

:data:`REGISTRY` lists every backend harness knows.  A backend's module
defines two functions:

* ``unavailable() -> str | None`` -- why it cannot run on this machine (not
  root, a missing binary or package), or ``None`` when it can;
* ``create() -> Backend`` -- a new instance.

Scenario files may name any known backend (:data:`BACKENDS`); the command line
offers only the available ones (:func:`available_backends`), and asking for
any other is bad input that lists them (:func:`make_backend`).

>>> "model" in available_backends()
True
>>> make_backend("modle")
Traceback (most recent call last):
...
harness.errors.ScenarioError: unknown backend 'modle'; did you mean 'model'? (available here: ...)

Modules:

``ledger``         The ledger: what a run created on the host, written down before it is
                   created.
``ledger_checks``  What a ledger must pass before anything is done with it: who owns its
                   files, what it names.
``measurement``    What a backend measured, and what it was asked to measure.
``model``          The model backend: the fabric as a pure in-memory graph (no side effects).
``model_measure``  What the model says a backend should measure.
``processes``      Processes a run starts: who they are in /proc, whether they live, how they
                   are ended.
``protocol``       The backend protocol: how a fabric is realized, broken and measured.
``run_claims``     Run ids unique on the whole host, not only under one ledger root.
``signals``        SIGINT, SIGTERM and SIGHUP turned into a clean exit, and cleanup that no
                   signal cuts short.
``ibsim/``         The ``ibsim`` backend: the fabric in ibsim, routed by a real OpenSM.
``netns/``         The netns backend: a fabric in Linux network namespaces, routed for real
                   (root).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING
from typing import cast

from harness.errors import ScenarioError
from harness.inputs.lazy import lazy_exports
from harness.inputs.suggest import did_you_mean

if TYPE_CHECKING:
    from harness.backends.model import ModelBackend
    from harness.backends.protocol import Backend
    from harness.backends.protocol import BackendName
    from harness.backends.protocol import Capabilities


@dataclass(frozen=True, slots=True)
class BackendInfo:
    """A known backend: its name, the module that implements it, one line about it."""

    name: str
    module: str
    summary: str
    #: Needs nothing but the base install, so it is not probed: importing the model backend
    #: imports the analysis (numpy, scipy), which ``harness run --help`` would pay for.
    always_available: bool = False


REGISTRY: tuple[BackendInfo, ...] = (
    BackendInfo(
        "model", "harness.backends.model", "the fabric as an in-memory graph", always_available=True
    ),
    BackendInfo(
        "netns", "harness.backends.netns", "Linux network namespaces: real routing and traffic"
    ),
    BackendInfo("ibsim", "harness.backends.ibsim", "an InfiniBand simulator routed by OpenSM"),
    BackendInfo("docker", "harness.backends.docker", "Docker containers as servers"),
)
#: The backends' names (``BackendName`` in :mod:`~harness.backends.protocol` spells the same
#: names as a type, and checks that it does when it is imported).
BACKENDS: tuple[str, ...] = tuple(b.name for b in REGISTRY)


def _info(name: str) -> BackendInfo | None:
    return next((b for b in REGISTRY if b.name == name), None)


@cache
def unavailable(name: str) -> str | None:
    """Why backend ``name`` cannot run here (``None``: it can).  Checked once per process."""
    info = _info(name)
    if info is None:
        return "unknown backend"
    if info.always_available:
        return None
    try:
        module = importlib.import_module(info.module)
    except ModuleNotFoundError as err:
        if err.name == info.module:
            return "not part of this version of harness"
        return f"needs the Python package {err.name!r} (pip install it)"
    check = getattr(module, "unavailable", None)
    if check is None or getattr(module, "create", None) is None:
        return f"{info.module} is not a complete backend yet (no unavailable() and create())"
    return cast("Callable[[], str | None]", check)()


def available_backends() -> tuple[str, ...]:
    """The backends that can run on this machine, in registry order."""
    return tuple(b.name for b in REGISTRY if unavailable(b.name) is None)


def describe_unavailable() -> list[str]:
    """One line per known backend that cannot run here, with the reason."""
    return [f"{b.name}: {why}" for b in REGISTRY if (why := unavailable(b.name)) is not None]


def check_backend(name: str) -> str:
    """``name`` if it is available here; else bad input listing the available ones."""
    available = ", ".join(available_backends())
    if _info(name) is None:
        msg = (
            f"unknown backend {name!r}{did_you_mean(name, BACKENDS)} (available here: {available})"
        )
        raise ScenarioError(msg)
    why = unavailable(name)
    if why is not None:
        msg = f"backend {name!r} is not available here: {why} (available here: {available})"
        raise ScenarioError(msg)
    return name


def make_backend(name: str) -> Backend:
    """A new instance of an available backend; bad input (exit 2) for any other name."""
    info = _info(check_backend(name))
    assert info is not None
    factory = cast("Callable[[], Backend]", importlib.import_module(info.module).create)
    return factory()


#: Re-exported names and their modules, imported on first use (PEP 562): the protocol
#: pulls in the fabric model (numpy) and the model backend the analysis (scipy), which
#: listing or checking backends, or the signal handling, does not need.
_EXPORTS: dict[str, str] = {
    "Backend": "harness.backends.protocol",
    "BackendName": "harness.backends.protocol",
    "Capabilities": "harness.backends.protocol",
    "ModelBackend": "harness.backends.model",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "BACKENDS",
    "REGISTRY",
    "Backend",
    "BackendInfo",
    "BackendName",
    "Capabilities",
    "ModelBackend",
    "available_backends",
    "check_backend",
    "describe_unavailable",
    "make_backend",
    "unavailable",
]
