"""Expectations: compare an observed value with what a scenario expects (observations stage, pure).

An expectation can never be vacuous: numbers must be finite (``'!= nan'``
would always pass), a range is exactly ``LOW..HIGH`` of two numbers
(``1..2..3`` and ``e..e`` are errors), and :meth:`Expect.vacuity` says when a
bound lies where the observation cannot be (``node_nic_gbs: '< 0'``).

>>> Expect.parse(">= 0.9").check(0.95)
True
>>> Expect.parse("0.9..1.0").check(1.0)
True
>>> Expect.parse(0.05).check(200 / 4000)
True
>>> Expect.parse("< 0").vacuity(0, math.inf)
"'< 0' can never hold"
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.errors import ScenarioError

OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "!=": operator.ne,
    "==": operator.eq,
    ">": operator.gt,
    "<": operator.lt,
}
_OP_RE = re.compile(r"^\s*(>=|<=|!=|==|>|<)\s*(.*?)\s*$")
_NUMBER_RE = re.compile(r"[+-]?(\d[\d_]*)?(\.\d*)?([eE][+-]?\d+)?")
REL_TOL = 1e-9


def _number(text: str) -> float | int:
    """A finite number written as text; ``ValueError`` for anything else (nan, inf, words)."""
    text = text.strip()
    if not text or not _NUMBER_RE.fullmatch(text) or not any(c.isdigit() for c in text):
        raise ValueError(text)
    try:
        return int(text)
    except ValueError:
        value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _range(raw: str) -> tuple[float | int, float | int] | None:
    """``'LOW..HIGH'`` as two numbers; None when ``raw`` is no range; ScenarioError when bad."""
    if ".." not in raw:
        return None
    parts = raw.split("..")
    if len(parts) != 2:
        msg = f"range {raw!r} has {len(parts) - 1} '..'; a range is LOW..HIGH, e.g. '0.9..1.0'"
        raise ScenarioError(msg)
    try:
        lo, hi = _number(parts[0]), _number(parts[1])
    except ValueError:
        msg = (
            f"range {raw!r}: both ends must be finite numbers, e.g. '0.9..1.0' "
            "(not nan, inf or words)"
        )
        raise ScenarioError(msg) from None
    if lo > hi:
        msg = f"range {raw!r} is empty: write LOW..HIGH"
        raise ScenarioError(msg)
    return lo, hi


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (a == b and type(a) is type(b))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    return bool(a == b)


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Expect:
    """One expectation: an operator and a value, or an inclusive range."""

    op: str
    value: Any
    high: Any = None

    @classmethod
    def parse(cls, raw: Any) -> Expect:
        """Parse an expectation: a value, ``'>= N'`` (any operator), ``'LOW..HIGH'`` or a list."""
        if isinstance(raw, list):
            return cls("list", tuple(raw))
        if isinstance(raw, str):
            m = _OP_RE.match(raw)
            if m:
                try:
                    return cls(m.group(1), _number(m.group(2)))
                except ValueError:
                    word = m.group(2).strip().lower().lstrip("+-.")
                    why = (
                        "; a comparison with nan or inf checks nothing"
                        if word in ("nan", "inf", "infinity")
                        else ""
                    )
                    msg = f"{raw!r}: {m.group(1)} needs a number, e.g. '>= 0.9'{why}"
                    raise ScenarioError(msg) from None
            bounds = _range(raw)
            if bounds is not None:
                return cls("range", *bounds)
            return cls("==", raw)
        if isinstance(raw, float) and not math.isfinite(raw):
            msg = f"cannot expect {raw}: give a finite number (nan never equals anything)"
            raise ScenarioError(msg)
        if isinstance(raw, bool | int | float) or raw is None:
            return cls("==", raw)
        msg = f"cannot read expectation {raw!r}: use a value, '>= N', '< N', 'LOW..HIGH' or a list"
        raise ScenarioError(msg)

    def check(self, observed: Any) -> bool:
        """Whether ``observed`` meets the expectation (numbers within a relative tolerance).

        A list matches the same items in any order; a comparison or range fails on what is no
        number.
        """
        if self.op == "list":
            if not isinstance(observed, list | tuple):
                return False
            return sorted(map(str, observed)) == sorted(map(str, self.value))
        if self.op == "range":
            if not isinstance(observed, int | float) or isinstance(observed, bool):
                return False
            return bool(self.value <= observed <= self.high)
        if self.op == "==":
            return _eq(observed, self.value)
        if self.op == "!=":
            return not _eq(observed, self.value)
        if not isinstance(observed, int | float) or isinstance(observed, bool):
            return False
        if self.op in (">=", "<=") and _eq(observed, self.value):
            return True
        return OPS[self.op](observed, self.value)

    def vacuity(self, low: float, high: float) -> str | None:
        """Why this expectation cannot fail or cannot pass for values in ``low..high``.

        None when it can go either way.  Lists and words are not judged.
        """
        if self.op == "list" or not _is_num(self.value):
            return None
        v, shown = self.value, repr(self.describe())
        never = {
            "<": v <= low, "<=": v < low, ">": v >= high, ">=": v > high,
            "==": not low <= v <= high, "!=": False,
            "range": _is_num(self.high) and (self.high < low or v > high),
        }[self.op]  # fmt: skip
        if never:
            return f"{shown} can never hold"
        always = {
            "<": v > high, "<=": v >= high, ">": v < low, ">=": v <= low,
            "==": low == high == v, "!=": not low <= v <= high,
            "range": _is_num(self.high) and v <= low and self.high >= high,
        }[self.op]  # fmt: skip
        return f"{shown} always holds and checks nothing" if always else None

    def describe(self) -> str:
        """The expectation as written (``>= 0.9``, ``0.5..1``, ``[a, b]``)."""
        if self.op == "list":
            return f"[{', '.join(map(str, self.value))}]"
        if self.op == "range":
            return f"{self.value}..{self.high}"
        if self.op == "==":
            return repr(self.value) if isinstance(self.value, str) else str(self.value)
        return f"{self.op} {self.value}"
