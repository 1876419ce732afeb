"""Typed checks of single input values (inputs stage, pure).

The loaders (scenario, fabric, state and jobs files, importers) and the CLI use
these so that every reader rejects the same things the same way: a wrong type,
``true`` where a number belongs (YAML and Python both read a boolean as the
number 1), a negative, zero or non-finite (``.inf``, ``.nan``) number where it
makes no sense, and a value past a stated limit (with the limit's name).

Each ``*_problem`` function returns what is wrong in words (``None``: fine), for
a checker that places it at ``file:line:column``; :func:`cli_int` and
:func:`cli_float` make ``argparse`` types from the same rules.

>>> number_problem(True, "count", integer=True)
'count must be a whole number, not true/false'
>>> number_problem(float("nan"), "size_gb", above=0)
'size_gb must be a finite number, got nan'
>>> number_problem(10**30, "sus", integer=True, minimum=1, maximum=4096, limit="MAX_SUS")
'sus must be at most 4,096 (MAX_SUS), got 1000000000000000000000000000000'
>>> number_problem(-5, "--pairs", integer=True, minimum=0) is None
False
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

_TYPE_WORDS = {
    type(None): "nothing",
    bool: "true/false",
    str: "a string",
    list: "a list",
    dict: "a mapping",
    bytes: "binary data",
}


def type_word(value: object) -> str:
    """A short English name of a value's type (``'a mapping'``, ``'true/false'``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return _TYPE_WORDS.get(type(value), type(value).__name__)


def is_number(value: object) -> bool:
    """An int or a float, but not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_int(value: object) -> bool:
    """An int, but not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _show(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _limit_text(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def number_problem(
    value: object,
    what: str,
    *,
    integer: bool = False,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
    limit: str = "",
) -> str | None:
    """What is wrong with a number (None: fine).

    ``minimum``/``maximum`` are inclusive bounds, ``above``/``below``
    exclusive; ``limit`` names the constant a maximum comes from.  Non-finite
    numbers are always refused.
    """
    kind = "a whole number" if integer else "a number"
    if isinstance(value, bool):
        return f"{what} must be {kind}, not true/false"
    if not is_number(value):
        shown = f" {value!r}" if isinstance(value, str) else ""
        return f"{what} must be {kind}, not {type_word(value)}{shown}"
    assert isinstance(value, int | float)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{what} must be a finite number, got {value}"
    if integer and not isinstance(value, int):
        return f"{what} must be a whole number, got {value:g}"
    if minimum is not None and value < minimum:
        return f"{what} must be >= {_show(minimum)}, got {_show(value)}"
    if above is not None and not value > above:
        return f"{what} must be > {_show(above)}, got {_show(value)}"
    if below is not None and not value < below:
        return f"{what} must be < {_show(below)}, got {_show(value)}"
    if maximum is not None and value > maximum:
        named = f" ({limit})" if limit else ""
        return f"{what} must be at most {_limit_text(maximum)}{named}, got {_show(value)}"
    return None


def bool_problem(value: object, what: str) -> str | None:
    """What is wrong with a yes/no value (None: fine)."""
    if isinstance(value, bool):
        return None
    return f"{what} must be true or false, not {type_word(value)} {value!r}"


def text_problem(value: object, what: str, *, empty: bool = False) -> str | None:
    """What is wrong with a string value (None: fine)."""
    if not isinstance(value, str):
        return f"{what} must be a string, not {type_word(value)}"
    if not empty and not value.strip():
        return f"{what} must not be empty"
    return None


def _cli(
    convert: Callable[[str], float], integer: bool, **bounds: float | str | None
) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = convert(text.strip().replace("_", ""))
        except ValueError:
            kind = "a whole number" if integer else "a number"
            msg = f"{text!r} is not {kind}"
            raise argparse.ArgumentTypeError(msg) from None
        problem = number_problem(value, "the value", integer=integer, **bounds)  # type: ignore[arg-type]
        if problem is not None:
            raise argparse.ArgumentTypeError(problem.removeprefix("the value "))
        return value

    return parse


def cli_int(
    *, minimum: int | None = None, maximum: int | None = None, limit: str = ""
) -> Callable[[str], int]:
    """An ``argparse`` ``type=`` for a bounded whole number (``--pairs``, ``--top``)."""
    return _cli(int, True, minimum=minimum, maximum=maximum, limit=limit)  # type: ignore[return-value]


def cli_float(
    *, minimum: float | None = None, above: float | None = None, maximum: float | None = None
) -> Callable[[str], float]:
    """An ``argparse`` ``type=`` for a bounded finite number."""
    return _cli(float, False, minimum=minimum, above=above, maximum=maximum)
