"""Build the fabric a scenario names (core layer; cached, since fabrics are immutable)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import FabricDesignError
from harness.fabric.generators import GENERATORS
from harness.fabric.model import Fabric
from harness.fabric.presets import preset
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
        base = self.preset or (str(self.file) if self.file else f"generator {self.generator}")
        if self.params:
            base += " (" + ", ".join(f"{k}={v}" for k, v in self.params) + ")"
        return base


def build_fabric(ref: FabricRef) -> Fabric:
    """The fabric for a reference; equal references share one immutable fabric."""
    key = json.dumps(dict(ref.params), sort_keys=True, default=str)
    return _build(ref.preset, str(ref.file) if ref.file else None, ref.generator, key)


@functools.lru_cache(maxsize=32)
def _build(preset_name: str | None, file: str | None, generator: str | None, key: str) -> Fabric:
    params: dict[str, Any] = json.loads(key)
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
