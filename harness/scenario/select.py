"""Scenarios chosen by name and tag: the ``-k EXPR`` name filter (as pytest's) and ``--tag``.

Pure: :func:`select` keeps the scenarios that :class:`NameFilter` and the tags
admit, in their order; a malformed expression is a
:class:`~harness.errors.ScenarioError` before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NoReturn

from harness.errors import ScenarioError
from harness.scenario.model import Scenario

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


class NameFilter:
    """A ``-k`` expression over scenario names, as pytest's: words are
    case-insensitive substrings, combined with ``and``, ``or``, ``not`` and
    parentheses.  For example ``-k "spine and not core"``.

    >>> f = NameFilter("spine and not core")
    >>> f.matches("kill-one-SPINE"), f.matches("spine-and-core"), f.matches("leaf")
    (True, False, False)
    >>> NameFilter("(leaf or spine) and not drain").matches("leaf-kill")
    True
    >>> NameFilter("spine and")
    Traceback (most recent call last):
    ...
    harness.errors.ScenarioError: -k 'spine and' ends too early; write words joined by and/or/not...
    """

    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.tokens = [m.group(1) for m in _TOKEN.finditer(expr)]
        self.pos = 0
        if not self.tokens:
            self._fail("is empty")
        # Parse once to report a malformed expression before anything runs.
        self.matches("")

    def _fail(self, why: str) -> NoReturn:
        msg = f"-k {self.expr!r} {why}; write words joined by and/or/not, e.g. 'spine and not core'"
        raise ScenarioError(msg)

    def matches(self, name: str) -> bool:
        """Whether a scenario name matches the ``-k`` expression (words compared lower-case)."""
        self.pos = 0
        value = self._or(name.lower())
        if self.pos != len(self.tokens):
            self._fail(f"has an unexpected {self.tokens[self.pos]!r}")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _or(self, name: str) -> bool:
        value = self._and(name)
        while self._peek() == "or":
            self.pos += 1
            value = self._and(name) or value
        return value

    def _and(self, name: str) -> bool:
        value = self._not(name)
        while self._peek() == "and":
            self.pos += 1
            value = self._not(name) and value
        return value

    def _not(self, name: str) -> bool:
        if self._peek() == "not":
            self.pos += 1
            return not self._not(name)
        return self._atom(name)

    def _atom(self, name: str) -> bool:
        token = self._peek()
        if token is None:
            self._fail("ends too early")
        self.pos += 1
        if token == "(":
            value = self._or(name)
            if self._peek() != ")":
                self._fail("misses a ')'")
            self.pos += 1
            return value
        if token in (")", "and", "or"):
            self._fail(f"has an unexpected {token!r}")
        return token.lower() in name


def select(
    scenarios: Sequence[Scenario], keyword: str | None, tags: Sequence[str] = ()
) -> list[Scenario]:
    """The scenarios whose name matches ``keyword`` (a ``-k`` expression; None: all)
    and that carry one of ``tags`` (none given: all), in their order.

    >>> from harness.fabric.resolve import FabricRef
    >>> def s(name, *tags): return Scenario(name, "", FabricRef(preset="seed-a800"), (), tags=tags)
    >>> found = [s("kill-spine", "seed"), s("kill-core", "seed"), s("drain-leaf")]
    >>> [x.name for x in select(found, "kill and not core")]
    ['kill-spine']
    >>> [x.name for x in select(found, None, ["seed"])]
    ['kill-spine', 'kill-core']
    """
    chosen = list(scenarios)
    if keyword is not None:
        name_filter = NameFilter(keyword)
        chosen = [s for s in chosen if name_filter.matches(s.name)]
    if tags:
        wanted = set(tags)
        chosen = [s for s in chosen if wanted & set(s.tags)]
    return chosen
