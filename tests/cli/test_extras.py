"""A command that needs an optional package the install left out (``pip install -e .``
has no Jinja2, matplotlib, pyroute2 or distributed) says so in one line naming the extra
and exits 2, before any work and never with a traceback.  The packages are hidden from a
subprocess (``sys.modules[name] = None``: importing it fails as when it is not installed)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from harness.cli.common import missing_extra

HIDE = ("jinja2", "matplotlib", "pyroute2", "distributed")


def _harness_without_extras(*args: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        f"for name in {HIDE!r}:\n"
        "    sys.modules[name] = None\n"
        "from harness.cli import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["risk", "seed-a800", "--change", "drain spine-03", "--report", "out"],
            "error: harness risk --report needs 'jinja2' (optional, not in the base install): "
            "pip install 'harness[report]'",
        ),
        (
            ["sweep", "seed-a800", "--plot", "out.png"],
            "error: harness sweep --plot needs 'matplotlib' (optional, not in the base "
            "install): pip install 'harness[report]'",
        ),
        (
            ["sweep", "seed-a800", "--scheduler", "tcp://127.0.0.1:1"],
            "error: harness sweep --scheduler needs 'distributed' (optional, not in the base "
            "install): pip install 'harness[sweep]'",
        ),
        (
            ["emulate", "status"],
            "error: harness emulate needs 'pyroute2' (optional, not in the base install): "
            "pip install 'harness[netns]'",
        ),
    ],
    ids=["report", "plot", "scheduler", "emulate"],
)
def test_a_missing_optional_package_is_one_line_and_exit_2(args: list[str], line: str) -> None:
    done = _harness_without_extras(*args)
    assert (done.returncode, done.stderr.splitlines(), done.stdout) == (2, [line], "")


def test_a_missing_module_that_is_no_extra_stays_a_bug() -> None:
    args = argparse.Namespace(command="run")
    assert missing_extra(ModuleNotFoundError("x", name="harness.nope"), args) is None
    got = missing_extra(ModuleNotFoundError("x", name="matplotlib.pyplot"), args)
    assert got is not None
    assert str(got) == (
        "harness run needs 'matplotlib' (optional, not in the base install): "
        "pip install 'harness[report]'"
    )
