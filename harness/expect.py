"""Expectations: compare an observed value with what a scenario expects (core, pure).

>>> Expect.parse(">= 0.9").check(0.95)
True
>>> Expect.parse("0.9..1.0").check(1.0)
True
>>> Expect.parse(0.05).check(200 / 4000)
True
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
_OP_RE = re.compile(r"^\s*(>=|<=|!=|==|>|<)\s*(.+?)\s*$")
_RANGE_RE = re.compile(r"^\s*(-?[\d.eE+-]+)\s*\.\.\s*(-?[\d.eE+-]+)\s*$")
REL_TOL = 1e-9


def _number(text: str) -> float | int:
    try:
        return int(text)
    except ValueError:
        return float(text)


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (a == b and type(a) is type(b))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    return bool(a == b)


@dataclass(frozen=True, slots=True)
class Expect:
    """One expectation: an operator and a value, or an inclusive range."""

    op: str
    value: Any
    high: Any = None

    @classmethod
    def parse(cls, raw: Any) -> Expect:
        if isinstance(raw, list):
            return cls("list", tuple(raw))
        if isinstance(raw, str):
            m = _RANGE_RE.match(raw)
            if m:
                lo, hi = _number(m.group(1)), _number(m.group(2))
                if lo > hi:
                    msg = f"range {raw!r} is empty: write LOW..HIGH"
                    raise ScenarioError(msg)
                return cls("range", lo, hi)
            m = _OP_RE.match(raw)
            if m:
                try:
                    return cls(m.group(1), _number(m.group(2)))
                except ValueError:
                    msg = f"{raw!r}: {m.group(1)} needs a number, e.g. '>= 0.9'"
                    raise ScenarioError(msg) from None
            return cls("==", raw)
        if isinstance(raw, bool | int | float) or raw is None:
            return cls("==", raw)
        msg = f"cannot read expectation {raw!r}: use a value, '>= N', '< N', 'LOW..HIGH' or a list"
        raise ScenarioError(msg)

    def check(self, observed: Any) -> bool:
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

    def describe(self) -> str:
        if self.op == "list":
            return f"[{', '.join(map(str, self.value))}]"
        if self.op == "range":
            return f"{self.value}..{self.high}"
        if self.op == "==":
            return repr(self.value) if isinstance(self.value, str) else str(self.value)
        return f"{self.op} {self.value}"
