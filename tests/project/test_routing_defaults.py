"""The routing defaults are stated once, in :mod:`harness.fabric.routing` (issue 19, item 5).

Every layer takes the one resolved :class:`~harness.fabric.routing.Routing` value and
passes it on; a function or field that gave a routing setting its own default
(``paths: PathRule = "up-down"``, ``reroute_s: float = 0.0``) would let two layers
disagree on the same failure, as the sweep and the risk check once did.
"""

from __future__ import annotations

import ast
from pathlib import Path

import harness

PACKAGE = Path(harness.__file__).parent
HOME = PACKAGE / "fabric" / "routing.py"  # where the defaults live
SETTING_TYPES = {"PathRule", "Forwarding", "ForwardingSetting", "Control", "Engine"}
SETTING_NAMES = {"paths", "forwarding", "reroute", "reroute_s", "control", "engine", "link_up",
                 "link_up_s", "bfd", "hold", "sweep", "hold_s"}  # fmt: skip


def _annotation_names(node: ast.expr | None) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if node else set()


def _restated(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every parameter or field of a routing setting given a literal default."""
    out: list[tuple[int, str]] = []

    def check(name: str, annotation: ast.expr | None, default: ast.expr | None, line: int) -> None:
        if not isinstance(default, ast.Constant) or default.value is None:
            return
        if name in SETTING_NAMES or _annotation_names(annotation) & SETTING_TYPES:
            out.append((line, name))

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            for arg, default in zip(positional[len(positional) - len(a.defaults) :], a.defaults,
                                    strict=True):  # fmt: skip
                check(arg.arg, arg.annotation, default, arg.lineno)
            for arg, kw in zip(a.kwonlyargs, a.kw_defaults, strict=True):
                check(arg.arg, arg.annotation, kw, arg.lineno)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    check(item.target.id, item.annotation, item.value, item.lineno)
    return out


def test_no_module_but_routing_gives_a_routing_setting_a_default() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME
        for line, name in _restated(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "routing defaults restated (take a Routing instead):\n" + "\n".join(found)


def test_the_check_finds_a_restated_default() -> None:
    sample = (
        "def f(x, *, paths: PathRule = 'up-down', n: int = 3): ...\n"
        "def g(reroute_s: float = 0.0): ...\n"
        "class S:\n    forwarding: Forwarding = 'static'\n    routing: Routing = DEFAULT\n"
    )
    assert _restated(ast.parse(sample)) == [(1, "paths"), (2, "reroute_s"), (4, "forwarding")]
    assert _restated(ast.parse((HOME).read_text(encoding="utf-8")))  # the home does state them
