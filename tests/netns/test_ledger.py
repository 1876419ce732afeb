"""The ledger: ownership, dead-run detection, cleanup after SIGKILL, host sysctls."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.backends import ledger as ledger_mod
from harness.backends.ledger import Ledger
from harness.backends.ledger import clean
from harness.backends.ledger import read_sysctl
from harness.backends.ledger import run_ids
from harness.backends.ledger import run_is_live
from harness.backends.netns import nsutil
from harness.cli import main
from harness.errors import BackendError
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like
from tests.netns.conftest import start_runner


def test_entries_are_written_before_and_read_back(state_dir: Path) -> None:
    led = Ledger.create("test")
    assert led.run_id.startswith("h")
    assert len(led.run_id) == 6
    led.record("netns", f"{led.run_id}-a")
    led.record("process", "123", start_ticks=1)
    assert led.names("netns") == {f"{led.run_id}-a"}
    assert led.owns("process", "123")
    assert run_is_live(led)  # this process owns it
    led.release()
    assert not led.dir.exists()


def test_refuses_what_it_did_not_create(state_dir: Path) -> None:
    led = Ledger.create("test")
    for name in ("lo", "eth0", "default"):
        with pytest.raises(BackendError, match="did not create"):
            led.refuse_unowned("netns", name)
    led.release()


def test_two_runs_get_different_ids(state_dir: Path) -> None:
    runs = [Ledger.create("test") for _ in range(50)]
    assert len({r.run_id for r in runs}) == 50
    for r in runs:
        r.release()


def test_dead_owner_is_detected_and_cleaned_live_one_left_alone(state_dir: Path) -> None:
    live = Ledger.create("test")
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from harness.backends.ledger import Ledger; print(Ledger.create('x').run_id)",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    dead_id = child.stdout.strip()
    assert not run_is_live(Ledger(dead_id, state_dir))
    report = clean()
    assert dead_id in report.removed
    assert live.run_id in report.live
    assert run_ids() == [live.run_id]
    live.release()


@pytest.mark.privileged
def test_raised_sysctl_is_restored_by_the_last_run(
    state_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a per-namespace key inside a private namespace, and a private host table: the
    # host's values are not touched.  The two runs use different ledger roots, as
    # two test sessions do, and still share the host-wide record.
    monkeypatch.setattr(ledger_mod, "HOST_STATE", tmp_path / "host")
    monkeypatch.setattr(ledger_mod, "RAISABLE_SYSCTLS", frozenset({"net.ipv4.tcp_fin_timeout"}))
    ns = nsutil.Namespaces()
    guard = Ledger.create("test")
    name = f"{guard.run_id}-sysctl"
    guard.record("netns", name)
    fd = ns.create(name)
    try:
        with ns.entered(fd):
            key = "net.ipv4.tcp_fin_timeout"
            original = read_sysctl(key)
            a = Ledger.create("a", root=tmp_path / "root-a")
            b = Ledger.create("b", root=tmp_path / "root-b")
            a.raise_sysctl(key, int(original) + 30)
            b.raise_sysctl(key, int(original) + 10)
            assert read_sysctl(key) == str(int(original) + 30)
            a.release()
            assert read_sysctl(key) == str(int(original) + 30)  # b still needs it raised
            b.release()
            assert read_sysctl(key) == original
    finally:
        os.close(fd)
        nsutil.delete_netns(name)
        guard.release()
        ns.close()


_RUNNER = textwrap.dedent(
    """
    import sys, time
    from harness.fabric.generators import two_tier
    from harness.backends.netns.emulation import Emulation
    from harness.backends.signals import cleanup_on_signals
    f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8)
    e = Emulation(f)
    with cleanup_on_signals():
        try:
            e.up()
            print(e.ledger.run_id, flush=True)
            if sys.argv[1] == "raise":
                raise RuntimeError("boom")
            time.sleep(60)
        finally:
            e.down()
    """
)


def _start(mode: str, tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    return start_runner(_RUNNER, tmp_path, mode)


@pytest.mark.privileged
def test_sigkill_then_harness_clean_leaves_the_host_as_it_was(
    state_dir: Path, host: Host, tmp_path: Path
) -> None:
    proc, rid = _start("sleep", tmp_path)
    assert any(n.startswith(f"{rid}-") for n in nsutil.list_netns())
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    assert any(n.startswith(f"{rid}-") for n in nsutil.list_netns())  # left behind...
    assert main(["clean"]) == 0  # ...until harness clean
    assert_host_like(host, [rid])
    assert run_ids() == []


@pytest.mark.privileged
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "exception"])
def test_signals_and_exceptions_clean_up(
    state_dir: Path, host: Host, tmp_path: Path, how: str
) -> None:
    proc, rid = _start("raise" if how == "exception" else "sleep", tmp_path)
    if how != "exception":
        proc.send_signal(getattr(signal, how))
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(n.startswith(rid) for n in nsutil.list_netns()):
        time.sleep(0.05)
    assert_host_like(host, [rid])
    assert run_ids() == []
