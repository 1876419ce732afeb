"""Generator parameters: what each generator (and preset) takes, and whether YAML values fit.

A generator's keyword-only parameters are its ``params:`` (in a scenario's
``fabric:`` and in a fabric file's generator form); their type hints say which
YAML values fit (:func:`~harness.inputs.checker.matches_type`), and every
number must be positive and finite.  The scenario loader, the fabric-file
loader and the JSON Schemas (:mod:`harness.fabric.schema`) read the same
signatures, so they cannot disagree.

>>> list(generator_params(generator_function("two-tier")))[:2]
['sus', 'nodes_per_su']
>>> param_problem("sus", 0, int, "generator two-tier")
"parameter 'sus' of generator two-tier must be a finite number > 0, got 0"
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from harness.fabric.generators import GENERATORS
from harness.fabric.model import Fabric
from harness.inputs.checker import Checker
from harness.inputs.checker import describe_type
from harness.inputs.checker import did_you_mean
from harness.inputs.checker import matches_type
from harness.inputs.values import is_number
from harness.inputs.yaml import KeyPath


def generator_function(name: str) -> Callable[..., Fabric]:
    """``GENERATORS[name]``, typed (the generators' signatures differ)."""
    return typing.cast("Callable[..., Fabric]", GENERATORS[name])


def generator_params(
    gen: Callable[..., Any], *, exclude: Iterable[str] = ()
) -> dict[str, tuple[Any, bool]]:
    """Keyword parameters of a generator: name -> (type hint, required)."""
    hints = typing.get_type_hints(gen)
    skip = set(exclude)
    return {
        name: (hints.get(name, Any), p.default is inspect.Parameter.empty)
        for name, p in inspect.signature(gen).parameters.items()
        if name not in skip and p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def param_problem(key: str, value: Any, hint: Any, what: str) -> str | None:
    """What is wrong with one generator parameter value (None: fine).

    Every number a generator takes (counts, radixes, speeds) must be positive.
    """
    if not matches_type(value, hint):
        return f"parameter {key!r} of {what} must be {describe_type(hint)}, got {value!r}"
    numbers = value if isinstance(value, list) else [value]
    if any(is_number(v) and not 0 < v < math.inf for v in numbers):
        return f"parameter {key!r} of {what} must be a finite number > 0, got {value!r}"
    return None


def check_params(
    c: Checker,
    raw: Mapping[str, Any],
    path: KeyPath,
    gen: Callable[..., Any],
    what: str,
    *,
    exclude: Iterable[str] = (),
    require: bool = False,
    given: Iterable[str] = (),
) -> None:
    """Add to ``c`` what is wrong with ``raw`` as ``gen``'s parameters.

    Unknown names, wrong types, numbers not > 0 and, with ``require``, missing
    ones (names in ``given`` are set elsewhere and count as present).
    """
    info = generator_params(gen, exclude=exclude)
    for key, value in raw.items():
        if key not in info:
            c.add(
                f"{what} has no parameter {key!r}{did_you_mean(key, info)}",
                (*path, key),
                key=True,
            )
            continue
        problem = param_problem(key, value, info[key][0], what)
        if problem:
            c.add(problem, (*path, key))
    if require:
        have = set(raw) | set(given)
        missing = [k for k, (_, req) in info.items() if req and k not in have]
        if missing:
            c.add(
                f"{what} needs parameter(s) {', '.join(missing)} under params:, "
                f"e.g. params: {{{missing[0]}: ...}}",
                path,
                key=True,
            )
