"""Fabrics from references: the fabric a scenario names, and the one a FABRIC argument names.

* :func:`build_fabric` builds a :class:`FabricRef` (a scenario's ``fabric:``,
  which says preset, file or generator); cached, since fabrics are immutable;
* :func:`resolve_fabric` builds what a FABRIC argument of the command line (or
  a sweep's fabric name) names; :func:`fabric_ref_for` is its rule: a bare name
  is a preset, a name with a ``/`` or a suffix is a file.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import FabricDesignError
from harness.errors import ScenarioError
from harness.fabric.generators import GENERATORS
from harness.fabric.model import Fabric
from harness.fabric.presets import PRESETS
from harness.fabric.presets import preset
from harness.fabric.presets import preset_params
from harness.inputs.location import Location


@dataclass(frozen=True, slots=True)
class FabricRef:
    """Which fabric: a preset, a fabric file or an inline generator, plus parameters."""

    preset: str | None = None
    file: Path | None = None
    generator: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    where: Location = Location()

    def describe(self) -> str:
        """The fabric in words: the preset, file or generator, and the parameters."""
        base = self.preset or (str(self.file) if self.file else f"generator {self.generator}")
        if self.params:
            base += " (" + ", ".join(f"{k}={v}" for k, v in self.params) + ")"
        return base


def fabric_ref_for(name: str, params: tuple[tuple[str, Any], ...] = ()) -> FabricRef:
    """What a FABRIC argument names, by this rule:

    * a bare name (no ``/``, no suffix) is a preset, e.g. ``seed-a800``;
    * a name with a ``/`` or a suffix (``.yaml``, ``.yml``, a dump's ``.json``
      or ``.txt``) is a file, e.g. ``fabrics/lab.yaml`` or ``./seed-a800``;
    * a bare name that is no preset but an existing file or directory is that
      file;
    * a bare name that is a preset *and* a file in the current directory is a
      bad-input error (:class:`~harness.errors.ScenarioError`) that names both;
    * a bare name that is neither is an unknown preset (with a did-you-mean).

    >>> fabric_ref_for("seed-a800").preset
    'seed-a800'
    >>> fabric_ref_for("fabrics/lab.yaml").file
    PosixPath('fabrics/lab.yaml')
    >>> fabric_ref_for("seed-a80")
    Traceback (most recent call last):
    ...
    harness.errors.FabricDesignError: unknown fabric preset 'seed-a80'; did you mean 'seed-a800'?...
    """
    path = Path(name)
    if "/" in name or path.suffix:
        return FabricRef(file=path, params=params)
    if name in PRESETS:
        if path.is_file():
            msg = (
                f"fabric {name!r} is both a preset and the file ./{name} in the current "
                f"directory; write ./{name} for the file or rename it"
            )
            raise ScenarioError(msg)
        return FabricRef(preset=name, params=params)
    if path.exists():
        return FabricRef(file=path, params=params)
    preset_params(name)  # an unknown preset: its error has the did-you-mean
    return FabricRef(preset=name, params=params)


def resolve_fabric(name: str, params: tuple[tuple[str, Any], ...] = ()) -> Fabric:
    """The fabric a FABRIC argument names (:func:`fabric_ref_for` says how), built anew.

    A file that is missing, or not a regular file, is a bad-input error.

    >>> resolve_fabric("seed-a800").name
    'seed-a800'
    >>> resolve_fabric("no/such.yaml")
    Traceback (most recent call last):
    ...
    harness.errors.ScenarioError: fabric file no/such.yaml does not exist
    """
    ref = checked_ref(name, params)
    return _make(ref.preset, str(ref.file) if ref.file else None, None, dict(params))


def checked_ref(name: str, params: tuple[tuple[str, Any], ...] = ()) -> FabricRef:
    """:func:`fabric_ref_for`, and a bad-input error for a file that is missing."""
    ref = fabric_ref_for(name, params)
    if ref.file is not None and not ref.file.is_file():
        msg = f"fabric file {name} does not exist"
        raise ScenarioError(msg)
    return ref


def build_fabric(ref: FabricRef) -> Fabric:
    """The fabric for a reference; equal references share one immutable fabric.

    The cache is keyed on what the reference means *now*: a file by its absolute
    path, size and modification time, so a change of directory or an edited file
    never returns a stale fabric.
    """
    key = json.dumps(dict(ref.params), sort_keys=True, default=str)
    return _build(ref.preset, _file_key(ref.file), ref.generator, key)


def _file_key(file: Path | None) -> tuple[str, int, int] | None:
    if file is None:
        return None
    try:
        st = file.stat()
    except OSError:
        return (str(file.absolute()), -1, -1)  # _make reports it
    return (str(file.resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _build(
    preset_name: str | None, file: tuple[str, int, int] | None, generator: str | None, key: str
) -> Fabric:
    return _make(preset_name, file[0] if file else None, generator, json.loads(key))


def _make(
    preset_name: str | None, file: str | None, generator: str | None, params: dict[str, Any]
) -> Fabric:
    if preset_name is not None:
        return preset(preset_name, **params)
    if file is not None:
        from harness.fabric.fabric_file import load_fabric_file

        return load_fabric_file(Path(file), overrides=params)
    if generator is not None:
        gen = GENERATORS.get(generator)
        if gen is None:
            msg = f"unknown generator {generator!r} (known: {', '.join(GENERATORS)})"
            raise FabricDesignError(msg)
        try:
            fabric: Fabric = gen(**params)  # type: ignore[operator]
            return fabric
        except TypeError as err:
            msg = f"bad parameter for generator {generator!r}: {err}"
            raise FabricDesignError(msg) from None
    msg = "a fabric needs one of preset, file or generator"
    raise FabricDesignError(msg)
