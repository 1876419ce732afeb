"""Scheduler node names to the fabric's servers: the stated rule and ``--node-map`` files.

A scheduler names a node as its host knows itself (``su01-node01``,
``GPU-017.cluster.local``); a fabric names it by its place (``su01/node01``).
:class:`ServerNames` maps one to the other, by this rule, first match wins:

1. the ``--node-map`` file, when one is given: a node it lists goes to the
   server it names (every server it names must be one of the fabric's);
2. the exact server id (``su01/node01``);
3. the normalised name: the short hostname (what comes before the first dot),
   compared case-insensitively with each server's id and with its Slurm name
   (the id with ``/`` written ``-``, as ``harness export --format slurm``
   writes it), so ``SU01-NODE01.cluster.local`` is ``su01/node01``.

A normalised name shared by two servers is not guessed at: it is bad input,
to be settled with a ``--node-map`` line.

A ``--node-map`` file is either YAML ``node: server`` lines or text of two
columns (``node server``), ``#`` starting a comment.

>>> from harness.fabric import preset
>>> names = ServerNames(preset("seed-a800"))
>>> names.server("su01/node01"), names.server("SU01-NODE02.cluster.local"), names.server("x")
('su01/node01', 'su01/node02', None)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.inputs.files import MAX_YAML_BYTES
from harness.inputs.files import display_path
from harness.inputs.files import read_text
from harness.inputs.suggest import closest
from harness.inputs.yaml import read_yaml

if TYPE_CHECKING:  # the model is numpy; a node map is read without it
    from harness.fabric.model import Fabric

NODE_MAP_EXAMPLE = "gpu-017: su01/node17"
_TWO_COLUMNS = re.compile(r"^\s*(\S+)\s+(\S+)\s*(?:#.*)?$")


def normal_name(node: str) -> str:
    """The normalised form of a node name: the short hostname, lower case.

    >>> normal_name("GPU-017.cluster.local"), normal_name("su01/node01")
    ('gpu-017', 'su01/node01')
    """
    return node.split(".", 1)[0].lower()


@dataclass(frozen=True, slots=True)
class NodeMap:
    """A ``--node-map`` file: node name -> (server id, line it is written on)."""

    path: str
    entries: Mapping[str, tuple[str, int]] = field(default_factory=dict)


def _map_lines(text: str, shown: str) -> list[tuple[str, str, int]]:
    """``(node, server, line)`` of a node-map file, YAML or two columns."""
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), 1) if ln.split("#", 1)[0].strip()]
    if lines and all(":" not in ln and _TWO_COLUMNS.match(ln) for _, ln in lines):
        out: list[tuple[str, str, int]] = []
        for i, ln in lines:
            m = _TWO_COLUMNS.match(ln)
            assert m is not None  # every line matched above
            out.append((m.group(1), m.group(2), i))
        return out
    doc = read_yaml(text, shown)
    if doc.problems:
        raise ScenarioError(list(doc.problems))
    if not isinstance(doc.data, dict):
        msg = (
            "a node map is YAML 'node: server' lines or two columns 'node server', "
            f"e.g. '{NODE_MAP_EXAMPLE}'"
        )
        raise ScenarioError(doc.problem(msg, ()))
    out = []
    problems: list[Problem] = []
    for node, server in doc.data.items():
        line, _ = doc.position((str(node),), key=True)
        if not isinstance(server, str) or not server:
            msg = f"node {node!s}: the server is a server id of the fabric, got {server!r}"
            problems.append(Problem(msg, shown, line))
            continue
        out.append((str(node), server, line))
    if problems:
        raise ScenarioError(problems)
    return out


def load_node_map(path: str | Path, fabric: Fabric) -> NodeMap:
    """Read a ``--node-map`` file; every server it names must be one of ``fabric``'s."""
    shown = display_path(path)
    text = read_text(path, "node map", limit=MAX_YAML_BYTES)
    servers = [fabric.ids[i] for i in fabric.servers.tolist()]
    known = set(servers)
    entries: dict[str, tuple[str, int]] = {}
    problems: list[Problem] = []
    for node, server, line in _map_lines(text, shown):
        if node in entries:
            msg = f"node {node!r} is mapped twice (first on line {entries[node][1]}); map it once"
            problems.append(Problem(msg, shown, line))
            continue
        if server not in known:
            near = closest(server, servers, n=3)
            hint = f"; closest: {', '.join(near)}" if near else ""
            msg = f"{server!r} is not a server of fabric {fabric.name}{hint}"
            problems.append(Problem(msg, shown, line))
            continue
        entries[node] = (server, line)
    if problems:
        raise ScenarioError(problems)
    return NodeMap(shown, entries)


class ServerNames:
    """The fabric's servers by every name a scheduler may give them (the rule above)."""

    def __init__(self, fabric: Fabric, node_map: NodeMap | None = None) -> None:
        self.fabric_name = fabric.name
        self.ids: list[str] = [fabric.ids[i] for i in fabric.servers.tolist()]
        self._exact = set(self.ids)
        self._map = node_map
        normal: dict[str, set[str]] = {}
        for sid in self.ids:
            for key in (sid.lower(), sid.replace("/", "-").lower()):
                normal.setdefault(key, set()).add(sid)
        self._normal = normal
        self._choices = [*self.ids, *(s.replace("/", "-") for s in self.ids)]

    def server(self, node: str) -> str | None:
        """The server id ``node`` names, or None; raises when the rule finds two."""
        if self._map is not None and node in self._map.entries:
            return self._map.entries[node][0]
        if node in self._exact:
            return node
        hits = self._normal.get(normal_name(node), set())
        if len(hits) > 1:
            msg = (
                f"node {node!r} could be any of the servers {', '.join(sorted(hits))}; "
                f"say which with a --node-map line ('{node}: {sorted(hits)[0]}')"
            )
            raise ScenarioError(msg)
        return next(iter(hits)) if hits else None

    def unknown(self, node: str) -> str:
        """The message for a node that names no server: the closest names and the fix."""
        near = closest(normal_name(node), self._choices, n=3)
        hint = f"; closest: {', '.join(near)}" if near else ""
        return (
            f"node {node!r} is not a server of fabric {self.fabric_name}{hint} "
            "(nodes are matched by exact id, then by short hostname, case-insensitive, "
            "against ids and their Slurm names such as su01-node01); map it with "
            f"--node-map FILE (lines '{NODE_MAP_EXAMPLE}')"
        )
