"""Faults written on one line: the ``--change`` syntax (faults stage, pure but for ``@FILE``).

A change is one or more parts separated by ``;``.  Each part is written in the
fault syntax of scenario steps and state files, in one of three ways:

* **YAML**, a flow or block mapping (or a list of them), exactly as a state
  file item: ``drain: {tier: spine, all-but: 1}``,
  ``degrade: {target: su01/leaf-r0:21--spine-01:1, fraction: 0.25}``;
* the **short form** ``KIND TARGETS``: TARGETS is a comma-separated list of ids
  or globs (``drain spine-05,spine-06``) or a YAML selector
  (``drain {tier: spine, all-but: 1}``); ``degrade TARGETS 0.25`` (the fraction
  of the speed left, also ``25%`` or ``fraction=0.25``) or ``degrade TARGETS
  lanes=2`` (the lanes left); ``flaky TARGETS 5%`` (the fraction of the packets
  lost both ways, also ``0.05``) or ``flaky TARGETS 5% from=END`` (only what
  END sends);
* ``@FILE``: a YAML list of faults, the format of a ``--state`` file.

Every fault goes through :meth:`harness.faults.fault.Fault.parse`, the parser of
scenario steps and state files, and carries its :class:`~harness.errors.Origin`,
so every problem, also one found when the fault is resolved against a fabric,
names the input: ``--change`` (with line and column for YAML, and the part in
brackets when there are several) or ``FILE:LINE``.

>>> from harness.fabric import preset
>>> [f.describe() for f in parse_faults("drain spine-05,spine-06; kill su02/leaf-r1")]
['drain spine-05 + spine-06', 'kill su02/leaf-r1']
>>> short, yaml = "drain {tier: spine, all-but: 1}", "drain: {tier: spine, all-but: 1}"
>>> parse_faults(short) == parse_faults(yaml)
True
>>> parse_faults("degrade su01/leaf-r0:21--spine-01:1 0.25")[0].fraction
0.25
>>> parse_faults("flaky su01/leaf-r0:21--spine-01:1 5% from=spine-01")[0].describe()
'flaky su01/leaf-r0:21--spine-01:1 losing 5% of the packets sent by spine-01'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import Origin
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.faults.fault import FAULT_KINDS
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.state_file import load_fault_file
from harness.inputs.yaml import read_yaml

EXAMPLE = "'drain spine-05,spine-06'"
_YAML_START = re.compile(r"^\s*(?:[{\[]|-(?:\s|$)|[A-Za-z][\w-]*\s*:(?:\s|$))")
_SHORT = re.compile(r"^\s*(?P<kind>[A-Za-z][\w-]*)(?:\s+(?P<rest>.*?))?\s*$", re.DOTALL)
_AMOUNT = re.compile(
    r"^(?P<target>.+?)\s+(?:(?P<pct>[-+\d.eE]+)%|fraction=(?P<fraction>\S+)|lanes=(?P<lanes>\S+)"
    r"|(?P<nlanes>\S+)\s+lanes?|(?P<bare>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))$",
    re.DOTALL,
)


_LOSS = re.compile(r"^(?P<target>.+?)\s+(?P<loss>\S+?)(?:\s+from=(?P<sender>\S+))?$", re.DOTALL)


def split_parts(text: str) -> list[str]:
    """Split at ``;`` outside brackets and quotes.

    >>> split_parts("drain {tier: spine}; kill 'a;b' ;")
    ['drain {tier: spine}', "kill 'a;b'"]
    """
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth = max(depth - 1, 0)
        elif ch == ";" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _number(text: str) -> Any:
    """``"0.25"`` -> 0.25, ``"2"`` -> 2; anything else stays text (Fault.parse says why)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _targets(text: str, where: str, column: int) -> Any:
    """A YAML selector (``{...}``, ``[...]``) or ids and globs separated by commas or spaces.

    ``column``: where ``text`` starts in its part (1-based), to place YAML errors.
    """
    if text[:1] in "{[":
        doc = read_yaml(" " * (column - 1) + text, where)
        if doc.problems:
            raise ScenarioError(list(doc.problems))
        return doc.data
    targets = [t for t in re.split(r"[,\s]+", text) if t]
    return targets[0] if len(targets) == 1 else targets


def _short_form(part: str, where: str) -> dict[str, Any]:
    """``KIND TARGETS [AMOUNT]`` -> the mapping a state file would hold."""
    m = _SHORT.match(part)
    if m is None:
        msg = (
            f"cannot read {part!r}: write KIND TARGETS (e.g. {EXAMPLE}), a YAML fault such as "
            f"'drain: {{tier: spine, all-but: 1}}', or @FILE (kinds: {', '.join(FAULT_KINDS)})"
        )
        raise ScenarioError(msg)
    rest = (m.group("rest") or "").strip()
    if not rest.strip(", "):
        if m.group("kind") not in FAULT_KINDS:
            return {m.group("kind"): None}  # Fault.parse names the unknown kind
        msg = f"{part!r} names no target; write e.g. {EXAMPLE}"
        raise ScenarioError(msg)
    kind = m.group("kind")
    column = part.index(rest) + 1
    if kind == "flaky":
        return {kind: _flaky_short(part, rest, where, column)}
    if kind != "degrade":
        return {kind: _targets(rest, where, column)}
    amount = _AMOUNT.match(rest)
    if amount is None:
        msg = (
            f"{part!r}: degrade needs how much is left: write 'degrade TARGETS 0.25' (the "
            "fraction of the speed left, or 25%) or 'degrade TARGETS lanes=2' (the lanes left)"
        )
        raise ScenarioError(msg)
    body: dict[str, Any] = {"target": _targets(amount.group("target").strip(), where, column)}
    if amount.group("pct") is not None:
        pct = _number(amount.group("pct"))
        body["fraction"] = pct / 100 if isinstance(pct, int | float) else pct
    elif amount.group("fraction") is not None:
        body["fraction"] = _number(amount.group("fraction"))
    elif amount.group("lanes") is not None or amount.group("nlanes") is not None:
        body["lanes"] = _number(amount.group("lanes") or amount.group("nlanes"))
    else:
        body["fraction"] = _number(amount.group("bare"))
    return {kind: body}


def _flaky_short(part: str, rest: str, where: str, column: int) -> dict[str, Any]:
    """``TARGETS LOSS [from=END]`` -> the body of a flaky fault."""
    m = _LOSS.match(rest)
    if m is None:
        msg = (
            f"{part!r}: flaky needs how much is lost: write 'flaky TARGETS 5%' (both ways) or "
            "'flaky TARGETS 5% from=END' (only what END sends)"
        )
        raise ScenarioError(msg)
    loss: Any = m.group("loss")
    if not loss.endswith("%"):
        loss = _number(loss)
    body: dict[str, Any] = {"target": _targets(m.group("target").strip(), where, column),
                            "loss": loss}  # fmt: skip
    if m.group("sender") is not None:
        body["from"] = m.group("sender")
    return body


def _parse(raw: Any, origin: Origin) -> Fault:
    try:
        return dataclasses.replace(Fault.parse(raw), origin=origin)
    except ScenarioError as err:
        raise origin.locate(err) from None


def _yaml_part(part: str, source: str, label: str) -> list[Fault]:
    doc = read_yaml(part, source)
    if doc.problems:
        raise ScenarioError(list(doc.problems))
    data = doc.data
    items: list[tuple[Any, tuple[int, ...]]]
    if isinstance(data, list):
        items = [(item, (i,)) for i, item in enumerate(data)]
    else:
        items = [(data, ())]
    out: list[Fault] = []
    problems: list[Problem] = []
    for item, path in items:
        line, column = doc.position(path)
        try:
            out.append(_parse(item, Origin(source, line, column, label)))
        except ScenarioError as err:
            problems.extend(err.problems)
    if problems:
        raise ScenarioError(problems)
    return out


def parse_faults(text: str, what: str = "--change") -> tuple[Fault, ...]:
    """Parse fault text (see the module docstring); every problem names ``what``."""
    parts = split_parts(text)
    out: list[Fault] = []
    problems: list[Problem] = []
    for part in parts:
        label = part if len(parts) > 1 else ""
        try:
            if part.startswith("@"):
                name = part[1:].strip()
                if not name:
                    msg = f"{part!r}: give a file after '@', e.g. @change.yaml"
                    raise ScenarioError(Problem(msg, what))
                items = load_fault_file(Path(name), "fault list")
                if not items:
                    msg = "the file lists no fault; write e.g. '- drain: spine-05'"
                    raise ScenarioError(Problem(msg, name, 1, 1))
                out.extend(f for f, _ in items)
            elif _YAML_START.match(part):
                out.extend(_yaml_part(part, what, label))
            else:
                out.append(_parse(_short_form(part, what), Origin(what, key=label)))
        except ScenarioError as err:
            problems.extend(Origin(what).locate(err).problems)
    if problems:
        raise ScenarioError(problems)
    if not out:
        msg = f"{what} is empty; write e.g. {EXAMPLE}"
        raise ScenarioError(msg)
    return tuple(out)


def resolve_faults(
    fabric: Fabric, faults: str | Sequence[Fault | AppliedFault], what: str
) -> tuple[AppliedFault, ...]:
    """Resolve faults (text or parsed) against ``fabric``; every problem, located, at once.

    A parsed fault with no origin of its own is placed at ``what``, with its
    description (``--change: [drain spine-99] selector ...``).
    """
    items = parse_faults(faults, what) if isinstance(faults, str) else tuple(faults)
    out: list[AppliedFault] = []
    problems: list[Problem] = []
    for item in items:
        if isinstance(item, AppliedFault):
            out.append(item)
            continue
        try:
            out.append(item.resolve(fabric))
        except ScenarioError as err:
            problems.extend(Origin(what, key=item.describe()).locate(err).problems)
    if problems:
        raise ScenarioError(problems)
    return tuple(out)


__all__ = ["parse_faults", "resolve_faults", "split_parts"]
