"""Safe, bounded YAML with a position for every key (inputs stage).

Every YAML input of the harness (scenario files, fabric files, ``--state`` and
``--jobs`` files, containerlab topologies) is read by :func:`read_yaml` /
:func:`read_yaml_file`, which keep one contract:

* **safe loading only**: plain scalars, lists and mappings.  A tag outside the
  YAML core schema (``!!python/object``, ``!custom``) is an error, and so is a
  value its tag cannot read (``!!int notanumber``);
* **duplicate keys** are an error everywhere (YAML would silently keep the last);
* **bounded**: at most :data:`MAX_DEPTH` levels of nesting, and aliases may
  expand the document by at most :data:`MAX_ALIAS_NODES` nodes (an "alias bomb"
  of a few lines would otherwise grow to gigabytes);
* every key path keeps its 1-based line and column (:class:`YamlDoc`), so a
  problem found later is still reported as ``file:line:column [key]``.

Syntax errors and problems found while reading are
:class:`~harness.errors.ScenarioError` (exit 2), each with its place.

>>> doc = read_yaml("- {kill: spine-05, kill: spine-06}\\n", "state.yaml")
>>> p = doc.problems[0]
>>> p.path, p.line, p.column, p.key, p.message.split(";")[0]
('state.yaml', 1, 20, '[0].kill', "duplicate key 'kill' (also on line 1)")
>>> read_yaml("a: !!python/object:os.system {}\\n", "x.yaml").problems[0].message
"unknown tag '!!python/object:os.system'; only plain YAML values, lists and mappings are read"
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import TypeVar

import yaml
import yaml.reader
from yaml.constructor import SafeConstructor

from harness.errors import Origin
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.inputs.files import MAX_YAML_BYTES
from harness.inputs.files import display_path
from harness.inputs.files import read_text

KeyPath = tuple[str | int, ...]
Position = tuple[int, int]  # 1-based line, column

MAX_DEPTH = 64
"""Deepest nesting of lists and mappings read."""

MAX_ALIAS_NODES = 100_000
"""Most nodes that aliases (``*anchor``) may add to a document when expanded."""

_CORE = "tag:yaml.org,2002:"
_MERGE_TAG = _CORE + "merge"
_SCALAR_TAGS = frozenset(
    _CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp", "binary")
)
_SEQ_TAGS = frozenset((_CORE + "seq",))
_MAP_TAGS = frozenset((_CORE + "map",))

_SYNTAX_HINTS = (
    ("found character '\\t'", "indent with spaces, not tabs"),
    ("mapping values are not allowed", "check the indentation, and quote values containing ': '"),
    ("undefined alias", "quote values that start with '*' or '&', e.g. nodes: \"*/node01\""),
    ("expected alphabetic or numeric character", "quote values that start with '*' or '&'"),
    ("another document", "a file holds one document: remove the '---'"),
    ("flow sequence", "close the '[' with ']' (or quote the value)"),
    ("flow mapping", "close the '{' with '}' (or quote the value)"),
    ("quoted scalar", "close the quote"),
    ("block end", "check the indentation: items of one list or mapping must line up"),
    ("could not find expected ':'", "write 'key: value', and check the indentation"),
)


def key_text(path: KeyPath) -> str:
    """``("steps", 2, "expect", "jobs_lost")`` -> ``steps[2].expect.jobs_lost``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _tag_text(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


def _syntax_problem(err: yaml.MarkedYAMLError, path: str) -> Problem:
    mark = err.problem_mark or err.context_mark
    what = err.problem or err.context or "cannot parse"
    text = f"{err.context} {what}" if err.context and err.problem else what
    hint = next((h for k, h in _SYNTAX_HINTS if k in text), "check indentation and quoting")
    message = f"YAML syntax error: {what}; {hint}"
    if mark is None:
        return Problem(message, path)
    return Problem(message, path, mark.line + 1, mark.column + 1)


class _TooDeep(Exception):
    def __init__(self, mark: yaml.Mark) -> None:
        self.mark = mark


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader's composer, counting nodes and refusing deep nesting."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0
        self.nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooDeep(self.peek_event().start_mark)  # type: ignore[no-untyped-call]
        try:
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        self.nodes += 1
        return node


class _TooBig(Exception):
    pass


class _Reader:
    """Turn a composed node graph into plain Python, remembering positions."""

    def __init__(self, path: str, budget: int) -> None:
        self.path = path
        self.marks: dict[KeyPath, Position] = {}
        self.key_marks: dict[KeyPath, Position] = {}
        self.problems: list[Problem] = []
        self._constructor = SafeConstructor()
        self._open: set[int] = set()
        self._count = 0
        self._budget = budget

    def _problem(self, message: str, mark: yaml.Mark, path: KeyPath) -> None:
        self.problems.append(
            Problem(message, self.path, mark.line + 1, mark.column + 1, key_text(path))
        )

    def _unknown_tag(self, node: yaml.Node, path: KeyPath) -> None:
        self._problem(
            f"unknown tag {_tag_text(node.tag)!r}; only plain YAML values, lists and mappings "
            "are read",
            node.start_mark,
            path,
        )

    def convert(self, node: yaml.Node, path: KeyPath, depth: int = 0) -> Any:
        self._count += 1
        if self._count > self._budget:
            raise _TooBig
        if depth > MAX_DEPTH:
            raise _TooDeep(node.start_mark)
        self.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.ScalarNode):
            if node.tag not in _SCALAR_TAGS:
                self._unknown_tag(node, path)
                return None
            try:
                return self._constructor.construct_object(node, deep=True)
            except (yaml.YAMLError, ValueError, TypeError) as err:
                self._problem(
                    f"cannot read this value as {_tag_text(node.tag)}: "
                    f"{getattr(err, 'problem', None) or err}",
                    node.start_mark,
                    path,
                )
                return None
        if id(node) in self._open:
            self._problem("an alias refers to itself; remove the '*' alias", node.start_mark, path)
            return None
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                if node.tag not in _SEQ_TAGS:
                    self._unknown_tag(node, path)
                    return None
                return [self.convert(v, (*path, i), depth + 1) for i, v in enumerate(node.value)]
            if isinstance(node, yaml.MappingNode):
                if node.tag not in _MAP_TAGS:
                    self._unknown_tag(node, path)
                    return None
                return self._mapping(node, path, depth)
        finally:
            self._open.discard(id(node))
        return None  # pragma: no cover - compose yields only the three node kinds

    def _mapping(self, node: yaml.MappingNode, path: KeyPath, depth: int) -> dict[str, Any]:
        seen: dict[str, int] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:
                key = str(key_node.value)
                if key in seen:
                    self._problem(
                        f"duplicate key {key!r} (also on line {seen[key]}); YAML keeps only "
                        "the last one, so remove or rename one of them",
                        key_node.start_mark,
                        (*path, key),
                    )
                else:
                    seen[key] = key_node.start_mark.line + 1
        if any(k.tag == _MERGE_TAG for k, _ in node.value):
            try:
                self._constructor.flatten_mapping(node)  # resolve '<<: *anchor' merges
            except yaml.YAMLError as err:
                self._problem(f"cannot merge: {err}", node.start_mark, path)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self._problem(
                    "a key must be a plain word, not a list or a mapping",
                    key_node.start_mark,
                    path,
                )
                continue
            key = str(key_node.value)
            sub = (*path, key)
            self.key_marks[sub] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = self.convert(value_node, sub, depth + 1)
        return out


@dataclass(frozen=True, slots=True)
class YamlDoc:
    """One YAML document as plain Python, plus where each key path came from."""

    path: str
    data: Any
    marks: Mapping[KeyPath, Position]
    key_marks: Mapping[KeyPath, Position]
    problems: tuple[Problem, ...] = ()  # found while reading (duplicate keys, bad tags)

    def position(self, path: KeyPath, *, key: bool = False) -> Position:
        """Where ``path`` is: its key (``key=True``) or its value; else its nearest parent."""
        while True:
            if key and path in self.key_marks:
                return self.key_marks[path]
            if path in self.marks:
                return self.marks[path]
            if not path:
                return (1, 1)
            path, key = path[:-1], True

    def problem(self, message: str, path: KeyPath, *, key: bool = False) -> Problem:
        """A :class:`Problem` placed at ``path`` of this document."""
        line, column = self.position(path, key=key)
        return Problem(message, self.path, line, column, key_text(path))


def read_yaml(text: str, path: str) -> YamlDoc:
    """Compose and convert one YAML document (see the module doc).

    A syntax error, excessive nesting or alias expansion raises
    :class:`ScenarioError`; problems of single values (duplicate keys, unknown
    tags) are collected in :attr:`YamlDoc.problems` for the caller to report
    with its own.
    """
    try:
        loader = _BoundedLoader(text)
    except yaml.reader.ReaderError as err:  # a character YAML does not allow
        line = text.count("\n", 0, err.position) + 1
        column = err.position - (text.rfind("\n", 0, err.position) + 1) + 1
        msg = f"YAML cannot hold the character U+{err.character:04X}; remove it"
        raise ScenarioError(Problem(msg, path, line, column)) from None
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as err:
        raise ScenarioError(_syntax_problem(err, path)) from None
    except yaml.YAMLError as err:
        msg = f"YAML error: {err}"
        raise ScenarioError(Problem(msg, path)) from None
    except _TooDeep as err:
        msg = f"the document is nested more than {MAX_DEPTH} levels deep; simplify it"
        raise ScenarioError(Problem(msg, path, err.mark.line + 1, err.mark.column + 1)) from None
    except RecursionError:  # pragma: no cover - MAX_DEPTH stops well before
        msg = "the document is nested too deeply; simplify it"
        raise ScenarioError(Problem(msg, path, 1, 1)) from None
    finally:
        loader.dispose()
    reader = _Reader(path, loader.nodes + MAX_ALIAS_NODES)
    try:
        data = None if node is None else reader.convert(node, ())
    except _TooBig:
        msg = (
            f"aliases ('*name') expand this document by more than {MAX_ALIAS_NODES:,} nodes "
            "(an alias bomb?); write the values out or use fewer aliases"
        )
        raise ScenarioError(Problem(msg, path, 1, 1)) from None
    except _TooDeep as err:
        msg = f"aliases nest the document more than {MAX_DEPTH} levels deep; simplify it"
        raise ScenarioError(Problem(msg, path, err.mark.line + 1, err.mark.column + 1)) from None
    return YamlDoc(path, data, reader.marks, reader.key_marks, tuple(reader.problems))


def read_yaml_file(path: str | Path, what: str = "YAML") -> YamlDoc:
    """:func:`read_yaml` on a file read with :func:`~harness.inputs.files.read_text`."""
    text = read_text(path, what, limit=MAX_YAML_BYTES)
    return read_yaml(text, display_path(path))


def read_yaml_list(path: str | Path, what: str, example: str) -> tuple[YamlDoc, list[Any]]:
    """A file holding one YAML list (``--state``, ``--jobs``): the document and its items.

    Problems found while reading (duplicate keys, tags) are raised at once: the
    items of such a file are parsed one by one and must be what was written.
    """
    doc = read_yaml_file(path, what)
    if doc.problems:
        raise ScenarioError(list(doc.problems))
    if not isinstance(doc.data, list):
        msg = f"a {what} file is a YAML list, e.g. '{example}'"
        raise ScenarioError(doc.problem(msg, ()))
    return doc, doc.data


T = TypeVar("T")


def parse_list_items(
    path: str | Path, what: str, example: str, parse: Callable[[Any], T]
) -> list[tuple[T, int]]:
    """Parse every item of a YAML list file, with its line; report every bad item at once.

    ``parse`` turns one item into a frozen dataclass with an ``origin`` field;
    every parsed item carries its :class:`~harness.errors.Origin` (file, line,
    column), so problems found later, when it is resolved against a fabric,
    still name the file and the line.
    """
    doc, items = read_yaml_list(path, what, example)
    out: list[tuple[T, int]] = []
    problems: list[Problem] = []
    for i, item in enumerate(items):
        line, column = doc.position((i,))
        origin = Origin(doc.path, line, column)
        try:
            parsed = parse(item)
        except ScenarioError as err:
            problems.extend(origin.locate(err).problems)
            continue
        out.append((dataclasses.replace(parsed, origin=origin), line))  # type: ignore[type-var]
    if problems:
        raise ScenarioError(problems)
    return out
