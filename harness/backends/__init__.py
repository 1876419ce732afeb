"""Backends: one module each, all behind :class:`~harness.backends.protocol.Backend`."""

from __future__ import annotations

from typing import get_args

from harness.backends.model import ModelBackend
from harness.backends.protocol import Backend
from harness.backends.protocol import BackendName
from harness.errors import BackendError

BACKENDS: tuple[str, ...] = get_args(BackendName)


def make_backend(name: str) -> Backend:
    """A new backend instance by name."""
    if name == "model":
        return ModelBackend()
    if name in BACKENDS:
        msg = (
            f"backend {name!r} is not available in this build of harness; run with --backend model"
        )
        raise BackendError(msg)
    msg = f"unknown backend {name!r} (known: {', '.join(BACKENDS)})"
    raise BackendError(msg)


__all__ = ["BACKENDS", "Backend", "BackendName", "ModelBackend", "make_backend"]
