"""Fabric files: a fabric described in YAML (fabric stage, reads one file, builds a Fabric).

Two forms (``docs/scenario-format.md``, "Fabric files"):

* **generator form**: ``generator:`` (or ``preset:``) plus ``params:``; the
  scenario's ``fabric.params`` are merged over the file's.
* **explicit form**: ``nodes:`` (servers from a template), ``switches:`` and
  ``links:`` (cables), checked and built by :mod:`harness.fabric.explicit_file`.

Input mistakes (unknown keys, unknown ids, wrong types) are collected and raised
together as one :class:`~harness.errors.ScenarioError`, each at file:line:column
with a fix.  Designs that cannot be built (a port beyond a switch's radix, one
port used by two cables) raise :class:`~harness.errors.FabricDesignError`.

>>> from pathlib import Path
>>> f = load_fabric_file(Path("fabrics/tiny-explicit.yaml"))
>>> f.summary()["nodes"], f.summary()["leaves"], f.summary()["spines"]
(2, 2, 1)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import FabricDesignError
from harness.errors import Problem
from harness.fabric.explicit_file import EXPLICIT_FORM_KEYS
from harness.fabric.explicit_file import FILE_KEYS
from harness.fabric.explicit_file import GENERATOR_FORM_KEYS
from harness.fabric.explicit_file import build_explicit
from harness.fabric.generators import GENERATORS
from harness.fabric.model import Fabric
from harness.fabric.params import check_params
from harness.fabric.params import generator_function
from harness.fabric.params import generator_params
from harness.fabric.params import param_problem
from harness.fabric.presets import PRESETS
from harness.fabric.routing import RoutingOverride
from harness.fabric.routing import check_override
from harness.inputs.checker import Checker
from harness.inputs.checker import did_you_mean
from harness.inputs.checker import slug
from harness.inputs.yaml import KeyPath
from harness.inputs.yaml import read_yaml_file


def load_fabric_file(path: Path, overrides: dict[str, Any] | None = None) -> Fabric:
    """Build the fabric a YAML fabric file describes.

    ``overrides`` (a scenario's ``fabric.params``) are merged over the file's
    generator parameters; an explicit fabric file takes none.  Raises
    :class:`ScenarioError` listing every problem of the file, or
    :class:`FabricDesignError` for a design that cannot be built.
    """
    doc = read_yaml_file(path, "fabric")
    c = Checker(doc)
    data = doc.data
    if data is None:
        c.fail("empty fabric file: give generator: + params:, or nodes:, switches: and links:", ())
    if not isinstance(data, dict):
        c.fail(f"a fabric file must be a mapping (key: value lines), not {type(data).__name__}", ())
    default_name = slug(path.stem)
    check_override(c, data.get("routing"), ("routing",))
    description = data.get("description", "x")
    if not isinstance(description, str) or not description.strip():
        c.add("description must be plain words (a non-empty string)", ("description",))
    if "generator" in data or "preset" in data:
        return _from_generator(c, data, default_name, dict(overrides or {}))
    if not any(k in data for k in ("nodes", "switches", "links")):
        c.check_keys(data, (), FILE_KEYS, "a fabric file")
        c.add(
            "a fabric file needs generator: (or preset:) with params:, or explicit "
            "nodes:, switches: and links:",
            (),
        )
        c.raise_if_any()
    return build_explicit(c, data, default_name, dict(overrides or {}))


def fabric_file_routing(path: Path) -> RoutingOverride:
    """What a fabric file's ``routing:`` states (nothing when it has none).

    Read once per version of the file: the cache is keyed on its absolute path,
    modification time and size, so an edited file (or another directory's file of
    the same relative name) is read anew.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d, "lab.yaml")
    ...     _ = p.write_text("routing: bgp\\npreset: seed-a800\\n")
    ...     fabric_file_routing(p).settings
    (('control', 'bgp'),)
    """
    try:
        st = path.stat()
    except OSError:
        return _file_routing(str(path.absolute()), -1, -1)  # read_yaml_file says why
    return _file_routing(str(path.resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _file_routing(path: str, _mtime_ns: int, _size: int) -> RoutingOverride:
    doc = read_yaml_file(path, "fabric")
    c = Checker(doc)
    data = doc.data
    routing = (
        check_override(c, data.get("routing"), ("routing",)) if isinstance(data, dict) else None
    )
    c.raise_if_any()
    return routing or RoutingOverride()


# -- generator / preset form ------------------------------------------------------


def _from_generator(
    c: Checker, data: Mapping[str, Any], default_name: str, overrides: dict[str, Any]
) -> Fabric:
    for k in data:
        if k in EXPLICIT_FORM_KEYS and k not in GENERATOR_FORM_KEYS:
            c.add(
                f"{k!r} belongs to explicit fabric files; with generator:/preset: give only "
                f"{', '.join(GENERATOR_FORM_KEYS)}",
                (k,),
                key=True,
            )
        elif k not in GENERATOR_FORM_KEYS:
            c.add(f"unknown key {k!r} in a fabric file{did_you_mean(k, FILE_KEYS)}", (k,), key=True)
    name = c.name(data["name"], ("name",), "fabric name") if "name" in data else default_name
    params = data.get("params", {})
    if not isinstance(params, dict):
        c.add(
            "params must be a mapping of generator parameters, e.g. params: {sus: 2}", ("params",)
        )
        params = {}
    gen: Callable[..., Fabric] | None = None
    what = ""
    base: Mapping[str, Any] = {}
    source: KeyPath = ("generator",) if "generator" in data else ("preset",)
    if "generator" in data and "preset" in data:
        c.add("give either generator: or preset:, not both", ("preset",), key=True)
    elif "generator" in data:
        g = data["generator"]
        if not isinstance(g, str) or g not in GENERATORS:
            c.add(f"unknown generator {g!r}{did_you_mean(g, GENERATORS)}", ("generator",))
        else:
            gen = generator_function(g)
            what = f"generator {g}"
    else:
        p = data["preset"]
        if not isinstance(p, str) or p not in PRESETS:
            c.add(f"unknown fabric preset {p!r}{did_you_mean(p, PRESETS)}", ("preset",))
        else:
            gen, base = PRESETS[p]
            what = f"preset {p}"
    if gen is not None:
        check_params(
            c, params, ("params",), gen, what, exclude=("name",), require=not base, given=overrides
        )
        _check_overrides(c, overrides, gen, what)
    c.raise_if_any()
    assert gen is not None  # no problems: the generator or preset is known
    line, column = c.doc.position(source)
    try:
        return gen(**{**base, **params, **overrides, "name": name})
    except FabricDesignError as err:
        problems = [Problem(p.message, c.doc.path, line, column, "params") for p in err.problems]
        raise FabricDesignError(problems) from None
    except (ArithmeticError, TypeError, ValueError) as err:  # a design the generator cannot take
        msg = f"{what} cannot build these params ({err}); check the params"
        raise FabricDesignError(Problem(msg, c.doc.path, line, column, "params")) from err


def _check_overrides(
    c: Checker, overrides: Mapping[str, Any], gen: Callable[..., Fabric], what: str
) -> None:
    """The scenario's params: no line in this file, so they are reported by key."""
    info = generator_params(gen, exclude=("name",))
    for key, value in overrides.items():
        if key not in info:
            message: str | None = (
                f"the scenario's fabric params give {key!r}, which {what} (in this file) "
                f"does not take{did_you_mean(key, info)}"
            )
        else:
            message = param_problem(key, value, info[key][0], f"{what} (from the scenario)")
        if message:
            c.problems.append(Problem(message, c.doc.path, key=f"params.{key}"))


__all__ = ["fabric_file_routing", "load_fabric_file"]
