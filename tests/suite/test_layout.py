"""The package keeps its rooms: one package per pipeline stage, each listing its modules.

``docs/architecture.md`` describes the layout; these tests keep it true as modules are
added: only a handful of files stay flat in ``harness/``, every package's docstring names
every module and subpackage in it with a line of its own, every module says in its
docstring what it holds, and no module grows past the size at which it holds two concerns.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "harness"

#: The only modules that sit flat in ``harness/`` (docs/architecture.md says why).
FLAT = {"__init__.py", "__main__.py", "errors.py", "words.py", "pytest_plugin.py"}

#: Lines past which a module is split (DEVELOPERS.md: ~600 is a smell).
MAX_LINES = 600


def _packages() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


def _docstring(path: Path) -> str | None:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))


def _members(package: Path) -> list[str]:
    """The modules and subpackages directly inside a package."""
    modules = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    subpackages = [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(modules + subpackages)


def test_only_the_entry_points_and_the_shared_words_are_flat() -> None:
    flat = {p.name for p in PACKAGE.glob("*.py")}
    assert flat <= FLAT, f"put {sorted(flat - FLAT)} in the package of its stage"


@pytest.mark.parametrize("package", _packages(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_a_package_docstring_lists_every_module_in_it(package: Path) -> None:
    doc = _docstring(package / "__init__.py")
    assert doc, f"{package / '__init__.py'}: give the package a docstring listing its modules"
    missing = [m for m in _members(package) if not re.search(rf"(?<![\w]){re.escape(m)}\b", doc)]
    assert missing == [], (
        f"{package.relative_to(PACKAGE.parent)}/__init__.py: its docstring does not name "
        f"{missing}; add a line for each (what it holds)"
    )


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_every_module_says_what_it_holds(module: Path) -> None:
    doc = _docstring(module)
    assert doc, f"{module}: start it with a docstring saying what it holds"
    assert doc.strip(), f"{module}: its docstring is blank; say what it holds"


def test_no_module_has_grown_a_second_concern() -> None:
    sizes = {p: len(p.read_text(encoding="utf-8").splitlines()) for p in _modules()}
    big = {str(p.relative_to(PACKAGE.parent)): n for p, n in sizes.items() if n > MAX_LINES}
    assert big == {}, f"split these along their concerns (over {MAX_LINES} lines): {big}"
