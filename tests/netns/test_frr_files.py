"""Root never writes, reads or chowns through a path the frr user could have planted in
a daemon's directory (which that user can write): symlinks, hard links and FIFOs are
refused, and a daemon whose output file is one does not start."""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.ledger import Ledger
from harness.backends.netns import frr
from harness.errors import BackendError

pytestmark = [
    pytest.mark.privileged,
    pytest.mark.needs_tools("vtysh", install="apt-get install frr"),
]


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """A root-only file an attacker would like root to write to (or give away)."""
    path = tmp_path / "precious"
    path.write_text("root's own\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    led = Ledger.create("test", root=tmp_path / "state")
    yield led
    led.release()


def _unchanged(target: Path) -> None:
    assert target.read_text() == "root's own\n"
    st = target.stat()
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o600)


def test_open_output_refuses_what_is_not_a_plain_file_of_its_own(
    tmp_path: Path, target: Path
) -> None:
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError, match="is a symlink: refusing"):
        frr.open_output(tmp_path / "link")
    os.link(target, tmp_path / "hard")
    with pytest.raises(OSError, match="not a plain file of its own"):
        frr.open_output(tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="fifo"):
        frr.open_output(tmp_path / "fifo")  # no reader: ENXIO, never blocks
    (tmp_path / "old.conf").write_text("x")
    with pytest.raises(FileExistsError):
        frr.open_output(tmp_path / "old.conf", new=True)
    _unchanged(target)
    fd = frr.open_output(tmp_path / "fresh.out")
    os.close(fd)
    assert (tmp_path / "fresh.out").is_file()


def test_a_daemon_whose_output_file_is_a_planted_symlink_does_not_start(
    tmp_path: Path, target: Path, ledger: Ledger
) -> None:
    switch = frr.SwitchDir(ledger.dir / "frr", f"{ledger.run_id}-s1")
    switch.make({"zebra": "hostname s1\n"})
    conf = switch.path / "zebra.conf"
    assert conf.stat().st_uid == pwd.getpwnam(frr.FRR_USER).pw_uid
    # what a (compromised) daemon running as frr could leave before a restart
    (switch.path / "zebra.out").symlink_to(target)
    (switch.path / "zebra.log").symlink_to(target)
    fd = os.open("/proc/self/ns/net", os.O_RDONLY)  # never entered: the child stops first
    try:
        daemon = frr.spawn(ledger, switch, "zebra", fd)
        with pytest.raises(BackendError, match="exited at start") as err:
            frr.wait_started(switch, [daemon], 10)
    finally:
        os.close(fd)
    _unchanged(target)
    assert "root's own" not in str(err.value)  # its tail was not read through the symlink


def test_make_refuses_a_directory_that_already_exists(
    tmp_path: Path, target: Path, ledger: Ledger
) -> None:
    switch = frr.SwitchDir(ledger.dir / "frr", f"{ledger.run_id}-s1")
    switch.path.parent.mkdir(mode=0o700, parents=True)
    switch.path.symlink_to(tmp_path)
    with pytest.raises(FileExistsError):
        switch.make({"zebra": "hostname s1\n"})
    assert tmp_path.stat().st_uid == 0
    _unchanged(target)
