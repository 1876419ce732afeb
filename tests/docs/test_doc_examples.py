"""Every code block of README.md and docs/*.md runs, as written.

One test per block, named ``FILE:LINE`` (``pytest -k README.md:123``).  If you add a
block, it is executed; write it so that it runs on a machine with the repository
installed.  The rules, by fence language:

``python``
    Executed in a fresh namespace (``__name__ == "__main__"``): every block stands on
    its own, because a reader copies one block, not a page.  Afterwards what pytest
    would collect from it runs and must pass: every function bound to a name
    starting with ``test`` (called without arguments, so a hypothesis ``@given``
    test runs its examples) and every ``unittest.TestCase`` subclass bound to a name
    starting with ``Test`` (for example ``TestX = SomeStateMachine.TestCase``).
``bash``, ``sh``, ``shell``
    Run as one script with ``bash -euo pipefail``; it must exit 0.  The
    quick-start set-up prefix ``python3 -m venv .venv && . .venv/bin/activate &&
    pip install -e ... &&`` is dropped, since the suite already runs in such a venv
    (``.ci/run`` runs the set-up itself on a clean clone); a set-up line whose
    command is then just ``pytest -n 2`` (the quick start's second line) is this very
    suite and is not run again from inside it.
``console``
    Lines ``$ COMMAND`` are run one by one (each must exit 0); the lines after a
    command are the output it prints and must appear in its real output (stdout and
    stderr together), consecutively and from the first line, whitespace runs
    collapsed; a line ``...`` stands for any number of lines.
``yaml``
    A mapping with ``drill`` is a drill file, run with ``harness drill``; one with
    ``steps`` is a scenario file: written to a file and run with ``harness run``, it
    must pass.  A mapping with ``generator``, or with ``nodes``
    and ``switches``, is a fabric file: ``harness show FILE`` must build it.  Any
    other block must be valid YAML.
anything else (``text``, ``json``, ``ini``, ``toml``, no language)
    Not executed.  Use ``text`` for output, pseudo-code and fragments.

Every block runs in a fresh scratch directory that holds a symbolic link to each
top-level entry of the repository (``scenarios/``, ``fabrics/``, ``tests/`` ...), so
paths relative to the repository root work and files a block writes land in the
scratch directory.  Do not write into the linked folders.  The venv's ``bin`` is first
on ``PATH`` (``harness``, ``pytest`` and ``python`` are the installed ones).

Directives: HTML comments on the lines directly above the fence.

``<!-- exit: N -->``
    The block (shell: the script; console: every command; yaml scenario: the run)
    must exit with status ``N`` instead of 0, e.g. a ``harness risk`` whose change
    breaks the budget.
``<!-- not-run: REASON -->``
    The block is not executed (a command that needs root, or that is this very test
    suite).  The reason is required; such blocks are listed at the end of every
    ``pytest`` run ("doc examples not run"), and there may be at most
    ``doc_blocks.MAX_NOT_RUN`` of them.  Prefer making a block runnable.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import unittest
from pathlib import Path

import pytest
import yaml

from tests.docs.doc_blocks import CONSOLE
from tests.docs.doc_blocks import KNOWN_DIRECTIVES
from tests.docs.doc_blocks import MAX_NOT_RUN
from tests.docs.doc_blocks import PYTHON
from tests.docs.doc_blocks import REPO
from tests.docs.doc_blocks import SHELL
from tests.docs.doc_blocks import YAML
from tests.docs.doc_blocks import Block
from tests.docs.doc_blocks import all_blocks
from tests.docs.doc_blocks import console_steps
from tests.docs.doc_blocks import output_mismatch
from tests.docs.doc_blocks import shell_script

BLOCKS = all_blocks()
EXECUTED = [b for b in BLOCKS if b.executed]
TIMEOUT_S = 600
# Set in the environment of every example this file runs: an example that runs the test
# suite (a bare `pytest`) would otherwise run these tests again, recursively.
GUARD = "HARNESS_RUNNING_DOC_EXAMPLE"


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A directory that looks like the repository root but is a fresh temp dir."""
    for entry in REPO.iterdir():
        if not entry.name.startswith("."):
            (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env[GUARD] = "1"
    # This suite's own settings must not leak into a `pytest` an example runs.
    for key in ("PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
        env.pop(key, None)
    return env


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _check_status(block: Block, what: str, proc: subprocess.CompletedProcess[str]) -> None:
    if proc.returncode != block.expected_exit:
        pytest.fail(
            f"{block.where}: {what} exited {proc.returncode}, expected {block.expected_exit}\n"
            f"--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}",
            pytrace=False,
        )


def run_python(block: Block, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(scratch)
    namespace: dict[str, object] = {"__name__": "__main__"}
    exec(compile(block.text, block.where, "exec"), namespace)
    for name, value in list(namespace.items()):
        if name.startswith("test") and inspect.isfunction(value):
            value()
        elif name.startswith("Test") and isinstance(value, type):
            if not issubclass(value, unittest.TestCase):
                continue
            result = unittest.TestResult()
            suite = unittest.defaultTestLoader.loadTestsFromTestCase(value)
            suite.run(result)
            problems = [text for _, text in (*result.errors, *result.failures)]
            assert result.testsRun > 0, f"{block.where}: {name} ran no test"
            assert not problems, f"{block.where}: {name} failed:\n" + "\n".join(problems)


def run_shell(block: Block, scratch: Path) -> None:
    script = scratch / "example.sh"
    script.write_text(shell_script(block), encoding="utf-8")
    _check_status(block, "the script", _run(["bash", "-euo", "pipefail", str(script)], scratch))


def run_console(block: Block, scratch: Path) -> None:
    steps = console_steps(block)
    assert steps, f"{block.where}: a console block needs `$ command` lines"
    for step in steps:
        proc = _run(["bash", "-euo", "pipefail", "-c", step.command], scratch)
        _check_status(block, f"`{step.command}`", proc)
        problem = output_mismatch(step.output, proc.stdout + proc.stderr)
        if problem is not None:
            pytest.fail(
                f"{block.where}: `{step.command}`: {problem}\n--- output\n{proc.stdout}"
                f"{proc.stderr}",
                pytrace=False,
            )


def run_yaml(block: Block, scratch: Path) -> None:
    data = yaml.safe_load(block.text)
    folder = scratch / "doc-example"  # one level down, so `../fabrics/x.yaml` resolves
    folder.mkdir()
    path = folder / "example.yaml"
    path.write_text(block.text, encoding="utf-8")
    if isinstance(data, dict) and "drill" in data:
        _check_status(block, "harness drill", _run(["harness", "drill", str(path)], scratch))
    elif isinstance(data, dict) and "steps" in data:
        _check_status(block, "harness run", _run(["harness", "run", str(path)], scratch))
    elif isinstance(data, dict) and ("generator" in data or {"nodes", "switches"} <= set(data)):
        _check_status(block, "harness show", _run(["harness", "show", str(path)], scratch))


@pytest.mark.parametrize("block", EXECUTED, ids=[b.where for b in EXECUTED])
def test_doc_example(block: Block, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get(GUARD):
        pytest.fail(
            f"a doc example ran the test suite again (seen at {block.where}); "
            "mark the block that runs `pytest` on this repository with <!-- not-run: ... -->",
            pytrace=False,
        )
    if block.lang in PYTHON:
        run_python(block, scratch, monkeypatch)
    elif block.lang in SHELL:
        run_shell(block, scratch)
    elif block.lang in CONSOLE:
        run_console(block, scratch)
    else:
        assert block.lang in YAML
        run_yaml(block, scratch)


def test_directives_are_known_and_exemptions_few() -> None:
    problems = [
        f"{b.where}: unknown directive <!-- {key}: ... --> (known: {sorted(KNOWN_DIRECTIVES)})"
        for b in BLOCKS
        for key, _ in b.directives
        if key not in KNOWN_DIRECTIVES
    ]
    not_run = [b for b in BLOCKS if b.not_run is not None]
    problems += [f"{b.where}: not-run needs a reason" for b in not_run if not b.not_run]
    problems += [
        f"{b.where}: exit must be an integer, not {b.directive('exit')!r}"
        for b in BLOCKS
        if b.directive("exit") is not None and not str(b.directive("exit")).lstrip("-").isdigit()
    ]
    assert not problems, "\n".join(problems)
    assert len(not_run) <= MAX_NOT_RUN, (
        f"{len(not_run)} blocks are not run (at most {MAX_NOT_RUN}): "
        + ", ".join(f"{b.where} ({b.not_run})" for b in not_run)
    )


def test_the_readme_has_executed_python_and_shell_blocks() -> None:
    # Guards the extraction itself: if the parser broke, every example would "pass".
    langs = {b.lang for b in EXECUTED if b.path.name == "README.md"}
    assert langs & PYTHON
    assert langs & SHELL
