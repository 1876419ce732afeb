"""Fixtures for the netns backend tests (most need root: marked ``privileged``, run in CI).

:func:`host_snapshot` records what the host has (namespaces, root-namespace
links, processes living in any harness namespace) so a test can check that a
run -- clean, interrupted or SIGKILLed and then cleaned -- left exactly that.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.backends.netns import nsutil
from harness.backends.netns.teardown import processes_in_netns
from harness.backends.run_claims import NETNS_RUN_DIR
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric


@dataclass(frozen=True)
class Host:
    namespaces: frozenset[str]
    root_links: frozenset[str]
    bystander: str = ""  # a namespace made outside the harness, which it must not touch

    @classmethod
    def now(cls, bystander: str = "") -> Host:
        return cls(
            frozenset(nsutil.list_netns()), frozenset(os.listdir("/sys/class/net")), bystander
        )


def assert_host_like(before: Host, run_ids: list[str]) -> None:
    """Nothing of these runs is left: no namespace, no root link, no process in them."""
    after = Host.now()
    ours = {n for n in after.namespaces for rid in run_ids if n.startswith(f"{rid}-")}
    assert not ours, f"namespaces left behind: {sorted(ours)[:5]}"
    # a namespace the harness did not create is untouched (other runs' may come and go)
    assert (NETNS_RUN_DIR / before.bystander).exists(), "a bystander namespace vanished"
    assert before.root_links <= after.root_links | _vanished_by_others(before), (
        "a root-namespace link disappeared"
    )
    new_links = after.root_links - before.root_links
    assert not {x for x in new_links if x.startswith(("r", "p", "st", "s"))}, new_links


def _vanished_by_others(before: Host) -> frozenset[str]:
    # other engineers' containers may take their own host veths (vethXXXX) away meanwhile
    return frozenset(x for x in before.root_links if x.startswith(("veth", "docker", "br-")))


@pytest.fixture
def host() -> Iterator[Host]:
    """The host now, with a bystander namespace made by `ip netns add` (not in any ledger)."""
    name = f"bystander-{secrets.token_hex(4)}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield Host.now(name)
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ledger root, so `clean` in a test sees only the test's runs."""
    root = tmp_path / "state"
    monkeypatch.setenv("HARNESS_STATE_DIR", str(root))
    return root


@pytest.fixture(scope="session")
def small() -> Fabric:
    """2 SUs x 4 servers, 4 rails, 8 leaves, 2 spines, storage: 19 namespaces."""
    return two_tier(sus=2, nodes_per_su=4, spines=2, leaf_radix=8, name="small")


def no_processes_in(inodes: set[int]) -> bool:
    return not processes_in_netns(inodes)


def start_runner(script: str, tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Run ``script`` (Python, with ``args``) in a child; the first line it prints (its run id)."""
    path = tmp_path / "runner.py"
    path.write_text(script)
    proc = subprocess.Popen(
        [sys.executable, str(path), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line, proc.stderr.read() if proc.stderr else ""
    return proc, line
