"""CLI conventions: --version, exit codes in --help and the README, shell completion."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from harness.cli import COMMANDS
from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
CODES = ("0", "1", "2", "3", "129", "130", "143")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"harness {version('harness')}\n"


def test_version_of_the_console_script() -> None:
    exe = shutil.which("harness", path=str(Path(sys.executable).parent))
    assert exe is not None
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, f"harness {version('harness')}\n")


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["validate", "--help"]])
def test_help_lists_the_exit_codes(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    listed = re.findall(r"^  (\d+)\s{2,}\S", out.split("exit codes:")[1], re.M)
    assert listed == list(CODES)
    assert "bad input" in out
    assert "the environment failed" in out


def test_readme_documents_exit_codes_and_completion() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \|", section, re.M)
    assert rows == list(CODES)
    assert 'eval "$(harness --print-completion bash)"' in text


def _bash_complete(script: str, words: list[str]) -> list[str]:
    """COMPREPLY of the generated bash function for the command line ``words``
    (the last word is the one being completed)."""
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (
        f"source {script}\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}\n'
        "_shtab_harness\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.fixture
def bash_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["--print-completion", "bash"]) == 0
    path = tmp_path / "harness.bash"
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    return str(path)


def test_bash_completion_completes_subcommands_and_options(bash_script: str) -> None:
    assert _bash_complete(bash_script, ["harness", ""]) == [c.name for c in COMMANDS]
    assert _bash_complete(bash_script, ["harness", "va"]) == ["validate"]
    assert "--backend" in _bash_complete(bash_script, ["harness", "run", "--b"])
    assert _bash_complete(bash_script, ["harness", "sweep", "--depth", ""]) == ["1", "2"]
    assert "--version" in _bash_complete(bash_script, ["harness", "--v"])


def test_bash_completion_offers_files_for_paths(bash_script: str, tmp_path: Path) -> None:
    (tmp_path / "spines.yaml").write_text("", encoding="utf-8")
    got = _bash_complete(bash_script, ["harness", "validate", str(tmp_path / "sp")])
    assert got == [str(tmp_path / "spines.yaml")]


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_other_shells_get_a_script_naming_every_subcommand(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--print-completion", shell]) == 0
    script = capsys.readouterr().out
    for cmd in COMMANDS:
        assert cmd.name in script
    assert "--junit-xml" in script


def test_unknown_completion_shell_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--print-completion", "cmd.exe"]) == 2
    assert "invalid choice" in capsys.readouterr().err
