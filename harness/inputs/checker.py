"""Rules for checking any input file: located problems, names, did-you-mean, type hints.

:class:`Checker` collects the problems of one :class:`~harness.inputs.yaml.YamlDoc`
(each at ``file:line:column`` with its key path) and raises them all at once as
one :class:`~harness.errors.ScenarioError`.  The scenario loader
(:mod:`harness.scenario.load`), the fabric-file loader
(:mod:`harness.fabric.fabric_file`) and the generator parameter checks
(:mod:`harness.fabric.params`) build on it.

The helpers say what is wrong in the same words everywhere: a name that is not
a valid name (:data:`NAME_RE`, with a :func:`slug` to use instead), a key that
is close to a known one (:func:`did_you_mean`), a value that does not fit a
simple type hint (:func:`matches_type`, :func:`describe_type`).

>>> did_you_mean("presett", ["preset", "file"])
"; did you mean 'preset'?"
>>> slug("One Spine Left!")
'one-spine-left'
>>> matches_type([1, 2], list[int]), describe_type(int | None)
(True, 'a whole number or null')
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import NoReturn

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.inputs.suggest import closest
from harness.inputs.values import is_int
from harness.inputs.values import is_number
from harness.inputs.yaml import KeyPath
from harness.inputs.yaml import YamlDoc
from harness.inputs.yaml import key_text

NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")


# -- words for problems ----------------------------------------------------------


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` when a choice is close, else the list of choices."""
    options = list(choices)
    near = closest(str(word), options, n=1, cutoff=0.6)  # numbers compared as numbers
    if near:
        return f"; did you mean {near[0]!r}?"
    return f" (known: {', '.join(options)})" if options else ""


def slug(text: str) -> str:
    """A valid name close to ``text`` (for "use e.g. ..." hints)."""
    out = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return out or "my-scenario"


def type_word(value: object) -> str:
    """What a YAML value is, in words (``'a mapping'``, ``'nothing'``).

    Unlike :func:`harness.inputs.values.type_word`, ``!!binary`` data is
    ``'bytes'`` here (the loaders' messages say so).
    """
    if value is None:
        return "nothing"
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


# -- simple type hints (generator parameters, node fields) -------------------------


def _union_args(hint: Any) -> tuple[Any, ...] | None:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return typing.get_args(hint)
    return None


def matches_type(value: Any, hint: Any) -> bool:
    """Whether a YAML value fits a simple type hint (a generator parameter, a node field)."""
    members = _union_args(hint)
    if members is not None:
        return any(matches_type(value, m) for m in members)
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return is_int(value)
    if hint is float:
        return is_number(value)
    if hint is str:
        return isinstance(value, str)
    origin = typing.get_origin(hint)
    if origin in (list, Sequence, tuple) or hint in (list, tuple):
        args = typing.get_args(hint)
        return isinstance(value, list) and all(matches_type(v, args[0]) for v in value if args)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    return False  # classes (e.g. NodeTemplate) cannot come from YAML


_TYPE_WORDS: dict[object, str] = {
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    str: "a string",
    type(None): "null",
    dict: "a mapping",
}


def describe_type(hint: Any) -> str:
    """A simple type hint in words (``'a list of whole numbers'``); ``''`` for a class."""
    members = _union_args(hint)
    if members is not None:
        words = [describe_type(m) for m in members]
        return " or ".join(w for w in dict.fromkeys(words) if w)
    origin = typing.get_origin(hint)
    if origin in (list, Sequence, tuple):
        (arg, *_) = typing.get_args(hint) or (Any,)
        return f"a list of {describe_type(arg).removeprefix('a ')}s"
    if origin is dict:
        return "a mapping"
    return _TYPE_WORDS.get(hint, "")


# -- the problem collector -------------------------------------------------------


class Checker:
    """Collects located problems for one :class:`YamlDoc`; raises them all at once."""

    def __init__(self, doc: YamlDoc) -> None:
        self.doc = doc
        self.problems: list[Problem] = list(doc.problems)

    def add(self, message: str, path: KeyPath, *, key: bool = False) -> None:
        """Record a problem at ``path`` (at the key itself when ``key``)."""
        line, column = self.doc.position(path, key=key)
        self.problems.append(Problem(message, self.doc.path, line, column, key_text(path)))

    def wrap(self, err: ScenarioError, path: KeyPath, *, key: bool = False) -> None:
        """Locate the (location-less) problems of an error raised by a core parser."""
        for p in err.problems:
            self.add(p.message, path, key=key)

    def check_keys(
        self, raw: Mapping[str, Any], path: KeyPath, known: Sequence[str], what: str
    ) -> bool:
        """Report every unknown key of ``raw`` (with a did-you-mean); True when none."""
        ok = True
        for k in raw:
            if k not in known:
                self.add(
                    f"unknown key {k!r} in {what}{did_you_mean(k, known)}", (*path, k), key=True
                )
                ok = False
        return ok

    def mapping(self, raw: Any, path: KeyPath, what: str) -> dict[str, Any] | None:
        """``raw`` when it is a mapping, else record a problem and return None."""
        if isinstance(raw, dict):
            return raw
        self.add(f"{what} must be a mapping (key: value lines), not {type_word(raw)}", path)
        return None

    def name(self, raw: Any, path: KeyPath, what: str) -> str:
        """``raw`` as a name, with a problem recorded when it is not a valid one (``""`` if no
        string)."""
        if not isinstance(raw, str) or not raw:
            self.add(f"{what} must be a name such as 'one-spine-left', not {type_word(raw)}", path)
            return ""
        if not NAME_RE.fullmatch(raw):
            self.add(
                f"{what} {raw!r} is not a valid name: use lowercase letters, digits, '.', '_' "
                f"and '-', starting with a letter or digit, e.g. {slug(raw)!r}",
                path,
            )
        return raw

    def fail(self, message: str, path: KeyPath) -> NoReturn:
        """Add a last problem and raise them all (the input cannot be read further)."""
        self.add(message, path)
        self.raise_if_any()
        raise AssertionError(message)  # pragma: no cover - raise_if_any raised

    def raise_if_any(self, cls: type[ScenarioError] = ScenarioError) -> None:
        """Raise ``cls`` with every problem recorded, unique and in file order, if there is any."""
        if self.problems:
            unique = list(dict.fromkeys(self.problems))
            unique.sort(key=lambda p: (p.line, p.column))
            raise cls(unique)
