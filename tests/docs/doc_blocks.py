"""Fenced code blocks of README.md and docs/*.md, and how the suite runs them.

The conventions are documented in ``tests/docs/test_doc_examples.py`` (and in the
README's "Development" section); this module only finds the blocks and their
directives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Fence languages that are executed, by how they are run.
PYTHON = frozenset({"python", "py", "python3"})
SHELL = frozenset({"bash", "sh", "shell"})
CONSOLE = frozenset({"console"})
YAML = frozenset({"yaml", "yml"})
EXECUTED = PYTHON | SHELL | CONSOLE | YAML

# ``<!-- key: value -->`` lines directly above a fence.
DIRECTIVE = re.compile(r"^<!--\s*(?P<key>[a-z-]+)\s*:\s*(?P<value>.*?)\s*-->$")
KNOWN_DIRECTIVES = frozenset({"not-run", "exit"})
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<lang>[^\s`]*)")

# The environment set-up a quick start begins with.  The suite already runs inside such
# a virtual environment with the repository installed, so this prefix is dropped and the
# rest of the line is run (``.ci/run`` runs the set-up itself on a clean clone).
SETUP_PREFIX = re.compile(
    r"^python3 -m venv \.venv && \. \.venv/bin/activate && pip install (-q )?-e \S+( && |$)"
)

# At most this many executable blocks may carry ``not-run``; each needs a reason.
MAX_NOT_RUN = 3


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: where it is, its language, its text and its directives."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    directives: tuple[tuple[str, str], ...]

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def executed(self) -> bool:
        return self.lang in EXECUTED and self.not_run is None

    @property
    def not_run(self) -> str | None:
        return self.directive("not-run")

    def directive(self, key: str) -> str | None:
        for k, v in self.directives:
            if k == key:
                return v
        return None

    @property
    def expected_exit(self) -> int:
        value = self.directive("exit")
        return 0 if value is None else int(value)


def doc_files() -> list[Path]:
    """README.md and every docs/*.md, in a stable order."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file (CommonMark fences, ``` or ~~~)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, lang, start = m["fence"], m["lang"].lower(), i
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(
            rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[i]
        ):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", _directives(lines, start)))
    return out


def _directives(lines: list[str], fence: int) -> tuple[tuple[str, str], ...]:
    found: list[tuple[str, str]] = []
    j = fence - 1
    while j >= 0 and (m := DIRECTIVE.match(lines[j].strip())):
        found.append((m["key"], m["value"]))
        j -= 1
    return tuple(reversed(found))


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks_of(path)]


# What is left of a quick-start line that runs this very test suite: not run again
# from inside it (that would recurse); ``.ci/run`` runs it on a clean clone.
THIS_SUITE = "pytest -n 2"


def shell_script(block: Block) -> str:
    """The script a shell block runs: its lines, with the set-up prefix dropped.

    A set-up line whose command is the test suite itself (``... && pytest``) becomes a
    no-op, since the suite is what is running it.
    """
    lines = []
    for line in block.text.splitlines():
        command = SETUP_PREFIX.sub("", line)
        if command != line and command.strip() == THIS_SUITE:
            command = f": {THIS_SUITE}  # this test suite itself, not run again"
        lines.append(command)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class ConsoleStep:
    command: str
    output: tuple[str, ...]


def console_steps(block: Block) -> list[ConsoleStep]:
    """``$ command`` lines, each with the output lines shown after it."""
    steps: list[ConsoleStep] = []
    command: str | None = None
    output: list[str] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            if command is not None:
                steps.append(ConsoleStep(command, tuple(output)))
            command, output = line[2:], []
        elif command is not None:
            output.append(line)
    if command is not None:
        steps.append(ConsoleStep(command, tuple(output)))
    return steps


def output_mismatch(shown: tuple[str, ...], actual: str) -> str | None:
    """None if every shown line appears in ``actual``, in order; ``...`` skips lines.

    Lines are compared with runs of whitespace collapsed (tables may be re-padded).
    Without ``...``, the shown lines must be consecutive lines of the output.
    """

    def norm(s: str) -> str:
        return " ".join(s.split())

    got = [norm(s) for s in actual.splitlines()]
    want = [norm(s) for s in shown if s.strip()]
    pos, gap = 0, False
    for w in want:
        if w == "...":
            gap = True
            continue
        if gap:
            try:
                pos = got.index(w, pos) + 1
            except ValueError:
                return f"line {w!r} not found in the output (after line {pos})"
            gap = False
        else:
            if pos >= len(got) or got[pos] != w:
                seen = got[pos] if pos < len(got) else "<end of output>"
                return f"expected {w!r} at output line {pos + 1}, got {seen!r}"
            pos += 1
    return None
