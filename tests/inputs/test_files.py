"""The input layer's file reading: regular files only, bounded, UTF-8, never blocking."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.inputs import files
from harness.inputs.files import line_column
from harness.inputs.files import read_text


def problem_of(path: Path | str, what: str = "jobs", **kw: int) -> str:
    with pytest.raises(ScenarioError) as info:
        read_text(path, what, **kw)
    (problem,) = info.value.problems
    return str(problem)


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("\ufeffname: café\n", encoding="utf-8")
    assert read_text(p, "scenario") == "name: café\n"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "jobs.fifo"
    os.mkfifo(fifo)
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(problem_of(fifo)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert result == [f"{fifo}: the jobs file is a FIFO (named pipe), not a regular file; "
                      "give the path of a file"]  # fmt: skip


def test_a_directory_is_said_as_such(tmp_path: Path) -> None:
    assert problem_of(tmp_path, "state") == (
        f"{tmp_path}: the state file is a directory, not a regular file; give the path of a file"
    )


def test_a_device_and_a_socket_are_said_as_such(tmp_path: Path) -> None:
    assert "is a character device, not a regular file" in problem_of("/dev/null", "dump")
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        assert "is a socket, not a regular file" in problem_of(sock_path)


def test_a_missing_file_and_a_bad_parent(tmp_path: Path) -> None:
    assert problem_of(tmp_path / "nope.yaml") == (
        f"{tmp_path / 'nope.yaml'}: cannot read the jobs file: file not found; check the path"
    )
    f = tmp_path / "f"
    f.write_text("x")
    assert "a part of the path is not a directory" in problem_of(f / "child")


def test_an_unreadable_file_names_the_reason(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert problem_of(loop) == (
        f"{loop}: cannot read the jobs file: Too many levels of symbolic links"
    )


def test_a_file_past_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    p = tmp_path / "big.txt"
    with p.open("wb") as fh:
        fh.truncate(3 * 1024 * 1024)  # sparse: no disk used
    assert problem_of(p, "dump", limit=1024 * 1024) == (
        f"{p}: the dump file is 3 MiB, larger than the limit of 1 MiB"
    )


def test_the_documented_limits() -> None:
    assert files.MAX_YAML_BYTES == 16 * 1024 * 1024
    assert files.MAX_DUMP_BYTES == 256 * 1024 * 1024
    doc = (Path(__file__).resolve().parents[2] / "docs" / "scenario-format.md").read_text()
    assert "16 MiB" in doc
    assert "256 MiB" in doc


def test_a_nul_byte_is_reported_with_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_bytes(b"- kill: spine-01\n- kill: sp\x00ine-02\n")
    assert problem_of(p, "state") == (
        f"{p}:2:11: the state file contains a NUL byte (binary content?); save it as UTF-8 text"
    )


def test_invalid_utf8_is_reported_with_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_bytes("- kill: é\n- kill: caf".encode() + b"\xe9\n")
    assert problem_of(p, "state") == (
        f"{p}:2:12: the state file is not UTF-8 text (byte 0xe9 cannot be decoded: "
        "invalid continuation byte); save it as UTF-8"
    )


def test_binary_garbage_after_text_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "dump.txt"
    p.write_bytes(b'Switch 36 "S-01"\n' + bytes(range(256)))
    assert problem_of(p, "dump").startswith(f"{p}:2:1: the dump file contains a NUL byte")


def test_line_column_counts_characters() -> None:
    assert line_column(b"", 0) == (1, 1)
    assert line_column("aé\nbé".encode(), 7) == (2, 3)
