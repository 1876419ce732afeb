"""The forms dumps arrive in: gzip, CRLF, tabs turned into spaces, terminal captures.

Each form of the committed ``prod_hdr_broken`` dump (ibsim + OpenSM +
ibnetdiscover output) must read into the same fabric as the plain dump; a
terminal capture's banner and prompts are skipped with one warning naming
them; a dump that still cannot be read fails with one message per kind of
problem, naming the first bad line and what was expected there.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.importers import load_dump
from harness.importers import notes_of
from harness.importers import sniff_format
from harness.importers.text import gunzip
from tests.importers.conftest import DUMPS

PLAIN = DUMPS / "prod_hdr_broken.ibnetdiscover"
TEXT = PLAIN.read_text(encoding="utf-8")


def shape(fabric: Fabric) -> tuple[object, ...]:
    """What the fabric is, without its name and source: elements, cables, capacities."""
    links = sorted(
        (fabric.link_id(i), float(fabric.link_capacity[i])) for i in range(fabric.n_links)
    )
    return tuple(sorted(fabric.ids)), tuple(links)


@pytest.fixture(scope="module")
def plain() -> tuple[object, ...]:
    return shape(load_dump(PLAIN))


def warnings_of(fabric: Fabric) -> list[str]:
    return [n for n in notes_of(fabric) if n.startswith("warning:")]


def test_a_gzip_dump_reads_like_the_plain_one(tmp_path: Path, plain: tuple[object, ...]) -> None:
    # told by its magic bytes, not its name: .gz, and a .out that is compressed too
    for name in ("plane.ibnetdiscover.gz", "plane.out"):
        path = tmp_path / name
        path.write_bytes(gzip.compress(TEXT.encode()))
        assert sniff_format(path) == "ibnetdiscover"
        fabric = load_dump(path)
        assert shape(fabric) == plain
        assert fabric.name == "plane"  # the .gz suffix is no part of the name
        assert not warnings_of(fabric)
    ports = tmp_path / "plane.ports.gz"  # the -p report compressed as well
    ports.write_bytes(gzip.compress((DUMPS / "prod_hdr_broken.ports").read_bytes()))
    assert len(load_dump(ports).leaves) == len(load_dump(PLAIN).leaves) == 16


def test_crlf_and_tabs_turned_into_spaces_read_like_the_plain_dump(
    tmp_path: Path, plain: tuple[object, ...]
) -> None:
    crlf = tmp_path / "crlf.out"
    crlf.write_bytes(TEXT.replace("\n", "\r\n").encode())
    spaced = tmp_path / "spaces.out"
    spaced.write_text(TEXT.expandtabs(8).replace("\t", " "), encoding="utf-8")
    single = tmp_path / "single.out"  # every run of whitespace one space
    single.write_text(re.sub(r"[ \t]+", " ", TEXT), encoding="utf-8")
    for path in (crlf, spaced, single):
        fabric = load_dump(path)
        assert shape(fabric) == plain, path.name
        assert not warnings_of(fabric)


def test_a_terminal_capture_skips_banner_and_prompts_with_one_warning(
    tmp_path: Path, plain: tuple[object, ...]
) -> None:
    prompt = "\x1b]0;ops@login01: ~\x07\x1b[01;32mops@login01\x1b[00m:~$ "
    capture = "\r\n".join([
        "Script started on 2026-11-30 14:02:11+00:00 [TERM=\"xterm-256color\"]",
        f"{prompt}sudo ibnetdiscover\x1b[?2004l",
        *TEXT.expandtabs(8).splitlines(),
        f"{prompt}exit",
        "Script done on 2026-11-30 14:02:15+00:00 [COMMAND_EXIT_CODE=\"0\"]",
    ])  # fmt: skip
    path = tmp_path / "typescript"
    path.write_bytes(capture.encode())
    fabric = load_dump(path)
    assert shape(fabric) == plain
    (warning,) = warnings_of(fabric)
    assert warning.startswith("warning: skipped 4 line(s) that are not ibnetdiscover output")
    n = len(TEXT.splitlines())
    for lineno in (1, 2, n + 3, n + 4):
        assert f"line {lineno} " in warning
    assert "'ops@login01:~$ sudo ibnetdiscover'" in warning  # escapes gone from the text shown


def test_a_dump_that_cannot_be_read_fails_with_one_message(tmp_path: Path) -> None:
    # every quote lost (a bad copy): each of the ~900 port lines is unreadable
    path = tmp_path / "noquotes.out"
    path.write_text(TEXT.replace('"', ""), encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_dump(path, "ibnetdiscover")
    (problem,) = err.value.problems
    first = next(i for i, ln in enumerate(TEXT.splitlines(), 1) if ln.startswith("Switch"))
    assert problem.line == first
    assert 'expected \'Switch <ports> "<id>"' in problem.message
    assert re.search(r"and \d{3} more unreadable line\(s\) like it: line\(s\) \d+", problem.message)


def test_a_dump_cut_short_gives_one_message_per_kind_of_problem(tmp_path: Path) -> None:
    lines = TEXT.splitlines()
    path = tmp_path / "cut.out"  # scrollback lost the first records
    path.write_text("\n".join(lines[len(lines) // 2 :]), encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        load_dump(path, "ibnetdiscover")
    (problem,) = err.value.problems
    assert "points at unknown node" in problem.message
    assert "more problem(s) like it" in problem.message
    assert problem.line > 0
    assert problem.path == str(path)


def test_broken_gzip_is_refused_with_the_cause(tmp_path: Path) -> None:
    data = gzip.compress(TEXT.encode())
    path = tmp_path / "cut.out.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ScenarioError, match="gzip-compressed but truncated"):
        load_dump(path)
    with pytest.raises(ScenarioError, match="decompresses to more than the limit of 1 MiB"):
        gunzip(gzip.compress(b"\n" * (2 << 20)), "big.gz", limit=1 << 20)


def test_harness_show_reads_a_dump(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plane.ibnetdiscover.gz"
    path.write_bytes(gzip.compress(("$ ibnetdiscover\n" + TEXT).encode()))
    assert main(["show", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["leaves"] == 16
    assert err.count("warning: skipped 1 line(s)") == 1
