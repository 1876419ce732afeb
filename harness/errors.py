"""Errors, grouped by whose fault they are (no side effects).

* :class:`ScenarioError` -- the user's input is wrong (a scenario file, a fabric
  file, a selector, a CLI argument).  Exit code 2.
* :class:`FabricDesignError` -- a fabric that cannot be built as described (port
  counts beyond the radix, a two-tier fabric past its limit).  Also the user's
  input, so a :class:`ScenarioError`.
* :class:`MissingExtra` -- a command needs an optional package the install left out
  (``pip install -e .`` has no Jinja2, matplotlib, pyroute2...).  The user's to fix with
  one ``pip install``, named in the one line printed: exit 2, as bad input.
* :class:`BackendError` -- the environment failed us (the kernel, a daemon, a
  missing tool).  Not the user's scenario, not the fabric under test.
* :class:`InvariantViolation` -- the system under test failed an expectation.
  That is a *result*, not a crash.
"""

from __future__ import annotations

from dataclasses import dataclass


class HarnessError(Exception):
    """Root of every error the harness raises on purpose."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with an input, located as precisely as we can."""

    message: str
    path: str = ""
    line: int = 0
    column: int = 0
    key: str = ""

    def __str__(self) -> str:
        where = self.path
        if self.line:  # a column only where it is known (a whole-line problem has none)
            at = f"{self.line}:{self.column}" if self.column else str(self.line)
            where = f"{where}:{at}" if where else at
        key = f" [{self.key}]" if self.key else ""
        return f"{where}:{key} {self.message}" if where else f"{key.strip()} {self.message}".strip()


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an input item was written (a ``--state`` fault, a ``--jobs`` job).

    Problems found later, when the item is resolved against a fabric, are
    placed here with :meth:`locate`.
    """

    path: str
    line: int = 0
    column: int = 0
    key: str = ""

    def __str__(self) -> str:
        if not self.line:
            return self.path
        at = f"{self.line}:{self.column}" if self.column else str(self.line)
        return f"{self.path}:{at}"

    def locate(self, err: ScenarioError) -> ScenarioError:
        """``err`` with every problem that has no place of its own placed here."""
        return type(err)(
            [
                p
                if p.path or p.line
                else Problem(p.message, self.path, self.line, self.column, p.key or self.key)
                for p in err.problems
            ]
        )


class ScenarioError(HarnessError, ValueError):
    """Bad user input: every problem found, each with file:line:column and a fix."""

    def __init__(self, problems: list[Problem] | Problem | str) -> None:
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class FabricDesignError(ScenarioError):
    """A fabric that cannot be built as described (with the fix in the message)."""


#: The optional packages and the extra (``pyproject.toml``) that installs each.
EXTRAS: dict[str, str] = {
    "jinja2": "report",
    "matplotlib": "report",
    "distributed": "sweep",
    "pyroute2": "netns",
    "torch": "torch",
}


class MissingExtra(ScenarioError):
    """An optional package a command needs is not installed; the message names the extra.

    >>> print(MissingExtra("jinja2", "--report"))
    --report needs 'jinja2' (optional, not in the base install): pip install 'harness[report]'
    """

    def __init__(self, package: str, what: str) -> None:
        self.package = package
        extra = EXTRAS.get(package)
        fix = f"pip install 'harness[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{what} needs {package!r} (optional, not in the base install): {fix}")


class BackendError(HarnessError):
    """The environment failed: kernel, daemon, tool. Wraps the lower-level cause."""

    def __init__(self, description: str, cause: BaseException | None = None) -> None:
        self.description = description
        self.cause = cause
        text = description if cause is None else f"{description}: {cause}"
        super().__init__(text)


class InvariantViolation(HarnessError, AssertionError):
    """An expectation about the fabric under test did not hold (a result)."""
