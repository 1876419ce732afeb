"""Bounded XML with a line for every element (inputs stage).

For the XML inputs (NCCL topology files): no DTD and no entity declarations
(so no "billion laughs" expansion and no external entities), at most
:data:`MAX_XML_DEPTH` levels of nesting, and every element keeps the line it
starts on, so an importer can report a bad attribute as ``file:line``.

>>> doc = read_xml('<system>\\n  <cpu numaid="x"/>\\n</system>', "topo.xml")
>>> cpu = doc.root[0]
>>> doc.line(cpu), doc.int_attr(cpu, "numaid", -1, what="NUMA id")
Traceback (most recent call last):
...
harness.errors.ScenarioError: topo.xml:2:1: <cpu numaid='x'>: the NUMA id must be a whole number
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any
from xml.parsers import expat

from harness.errors import Problem
from harness.errors import ScenarioError

MAX_XML_DEPTH = 64
"""Deepest nesting of XML elements read."""


class _Refused(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        self.message, self.line, self.column = message, line, column


@dataclass(frozen=True, slots=True)
class XmlDoc:
    """An XML document as an :mod:`xml.etree` tree, plus the line of each element."""

    path: str
    root: ET.Element
    lines: dict[int, int]  # id(element) -> 1-based line

    def line(self, el: ET.Element) -> int:
        """The 1-based line an element starts on (0 when unknown)."""
        return self.lines.get(id(el), 0)

    def problem(self, el: ET.Element, message: str) -> ScenarioError:
        """A :class:`ScenarioError` placed at the line of ``el``."""
        return ScenarioError(Problem(message, self.path, self.line(el), 1))

    def int_attr(
        self, el: ET.Element, name: str, default: int, *, what: str, base: int = 10
    ) -> int:
        """An integer attribute (``base`` 16 accepts ``0x``); a bad one is a located error."""
        raw = el.get(name)
        if raw is None:
            return default
        try:
            return int(raw.strip(), base)
        except ValueError:
            kind = "a hexadecimal number" if base == 16 else "a whole number"
            msg = f"<{el.tag} {name}={raw!r}>: the {what} must be {kind}"
            raise self.problem(el, msg) from None


def read_xml(text: str, path: str, *, what: str = "XML") -> XmlDoc:
    """Parse ``text``; a syntax error, a DTD or too deep a nesting is a located error."""
    parser = expat.ParserCreate()
    stack: list[ET.Element] = []
    lines: dict[int, int] = {}
    roots: list[ET.Element] = []

    def here() -> tuple[int, int]:
        return parser.CurrentLineNumber, parser.CurrentColumnNumber + 1

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_XML_DEPTH:
            msg = f"the {what} nests elements more than {MAX_XML_DEPTH} deep"
            raise _Refused(msg, *here())
        el = ET.Element(tag, attrs)
        lines[id(el)] = parser.CurrentLineNumber
        (stack[-1].append(el) if stack else roots.append(el))
        stack.append(el)

    def end(_: str) -> None:
        stack.pop()

    def refuse(*_: Any) -> None:
        msg = f"the {what} declares a DTD or entities; they are not read"
        raise _Refused(msg, *here())

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    try:
        parser.Parse(text, True)
    except _Refused as err:
        raise ScenarioError(Problem(err.message, path, err.line, err.column)) from None
    except expat.ExpatError as err:
        msg = f"not well-formed {what} ({expat.ErrorString(err.code)}); fix the file"
        raise ScenarioError(Problem(msg, path, err.lineno, err.offset + 1)) from None
    if not roots:  # pragma: no cover - expat reports "no element found" first
        raise ScenarioError(Problem(f"the {what} has no element", path, 1, 1))
    return XmlDoc(path, roots[0], lines)
