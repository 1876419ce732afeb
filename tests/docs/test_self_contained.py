"""The repository needs nothing outside its checkout, and its third-party data is accounted for."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
THIRD_PARTY = REPO / "tests" / "data" / "third_party"

pytest_plugins = ["pytester"]

# Built from pieces so that this file does not match itself.
OUTSIDE = re.compile(r"\.\./" + "shared" + r"|\b" + "shared" + r"/(data|DOMAIN|seeds|STYLE)\b")


def tracked_files() -> list[Path]:
    """The files git tracks (a checkout without .git: every file but the venv)."""
    if (REPO / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout.decode()
        return [REPO / p for p in out.split("\0") if p]
    skip = {".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis"}
    return [p for p in REPO.rglob("*") if p.is_file() and not skip & set(p.relative_to(REPO).parts)]


def test_no_file_refers_to_a_folder_beside_the_checkout() -> None:
    hits = []
    for path in tracked_files():
        if not path.is_file():
            continue  # deleted in the work tree, not yet committed
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary (the gzip trace)
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not hits, "copy what is needed into the repository instead:\n" + "\n".join(hits)


def _table() -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    lines = (THIRD_PARTY / "README.md").read_text(encoding="utf-8").splitlines()
    header: list[str] = []
    for line in lines:
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not header:
            header = cells
            continue
        row = dict(zip(header, cells, strict=True))
        rows[row["file"].strip("`")] = row
    return rows


def test_every_third_party_file_has_provenance_licence_and_checksum() -> None:
    table = _table()
    files = sorted(p.name for p in THIRD_PARTY.iterdir() if p.name != "README.md")
    assert sorted(table) == files
    for name, row in table.items():
        data = (THIRD_PARTY / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == row["SHA-256"], name
        assert row["licence"], name
        assert re.search(r"github\.com/[\w.-]+/[\w.-]+", row["upstream repository : path"]), name
        # "commit / blob": the blob is git's id of the upstream bytes (uncompressed).
        commit, _, blob = row["commit / blob"].partition(" / ")
        assert re.fullmatch(r"[0-9a-f]{40}", commit), name
        raw = gzip.decompress(data) if name.endswith(".gz") else data
        git_blob = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
        assert git_blob in blob, f"{name}: git blob {git_blob} not in {blob!r}"


def test_needs_tools_skips_with_the_fix_and_fails_in_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest((REPO / "tests" / "support" / "tools.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    needs_tools: needs programs on PATH\n")
    pytester.makepyfile(
        textwrap.dedent(
            """
            import pytest

            @pytest.mark.needs_tools("harness-no-such-tool", install="apt-get install -y x")
            def test_it():
                pass

            @pytest.mark.needs_tools("sh")
            def test_present():
                pass
            """
        )
    )
    monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*needs harness-no-such-tool on PATH; install with: apt-get install -y x (runs in CI)*"]
    )
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)  # fails in setup: an error, never a pass
    result.stdout.fnmatch_lines(["*CI=true: CI must provide it, the test may not skip*"])


def test_privileged_tests_skip_without_root_and_fail_in_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest((REPO / "tests" / "support" / "tools.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    privileged: needs root\n")
    pytester.makepyfile(
        textwrap.dedent(
            """
            import pytest

            @pytest.mark.privileged
            def test_root_only():
                pass

            def test_anyone():
                pass
            """
        )
    )
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # as an ordinary user
    monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*needs root (network namespaces)*(runs in CI)*"])
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*needs root*CI=true: CI must provide it*"])
