"""A package's re-exported names imported on first use (PEP 562), for every package
``__init__`` that re-exports (inputs stage, pure).

>>> import types, sys
>>> pkg = types.ModuleType("demo_pkg")
>>> sys.modules["demo_pkg"] = pkg
>>> pkg.__getattr__, pkg.__dir__ = lazy_exports("demo_pkg", {"dedent": "textwrap"})
>>> pkg.dedent("  x")  # imported now, then kept in the package
'x'
>>> "dedent" in vars(pkg), "dedent" in dir(pkg)
(True, True)
>>> pkg.nothing
Traceback (most recent call last):
...
AttributeError: module 'demo_pkg' has no attribute 'nothing'
>>> del sys.modules["demo_pkg"]
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A ``__getattr__`` and a ``__dir__`` for ``package``: each name of ``exports`` is
    imported from the module it names on first use and kept in the package, so
    importing one module of the package does not import the others."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*vars(sys.modules[package]), *exports])

    return __getattr__, __dir__
