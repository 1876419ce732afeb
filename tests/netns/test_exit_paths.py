"""``harness run --backend netns`` stopped by SIGTERM, SIGHUP and SIGINT cleans up by itself.

A real ``python -m harness run`` subprocess on a five-namespace fabric is
signalled at a point read off the host -- during the bring-up (its first
namespace in the ledger), during flows (the preflight's iperf3 in its
namespaces), during a step (the cut after them, or its 60 s wait), and again
during its cleanup (a second and third signal once it said it was stopping) --
and the host is compared with its state before, without ``harness clean``: no
namespace, mount, link, nft table, process or ledger of the run is left, the
sysctls it raised are back, a foreign namespace is untouched.
"""

from __future__ import annotations

import signal
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.run_claims import NETNS_RUN_DIR
from tests.netns.conftest import Host
from tests.support.exit_paths import HostState
from tests.support.exit_paths import Run
from tests.support.exit_paths import assert_restored
from tests.support.exit_paths import clean_up_after
from tests.support.exit_paths import run_on_two_leaves

pytestmark = [
    pytest.mark.privileged,
    pytest.mark.needs_tools("iperf3", install="apt-get install -y iperf3"),
]

REPO = Path(__file__).resolve().parents[2]

# the preflight runs iperf3 flows (the expectation's baseline), then a cut and a long wait
SCENARIO = textwrap.dedent(
    """\
    name: exit-paths
    description: cut one uplink of a five-namespace fabric, wait, measure flows
    backends: [model, netns]
    fabric:
      file: two-leaves.yaml
    steps:
      - inject: {cut: "leaf-a:5--spine1:1"}
      - wait: 60s
      - expect:
          leaf_uplink_ratio: {leaf: leaf-a, is: "0.3..0.7"}
    """
)


@pytest.fixture
def run(tmp_path: Path, host: Host) -> Iterator[Run]:
    """The scenario running on netns (a ledger root of its own); cleaned after, whatever."""
    r = run_on_two_leaves(tmp_path, SCENARIO, "netns")
    try:
        yield r
    finally:
        clean_up_after(r)
    assert (NETNS_RUN_DIR / host.bystander).exists(), "a foreign namespace vanished"


def _stopped(run: Run, before: HostState, code: int) -> None:
    """The run exited with ``code`` (the first signal's), said so, and left nothing.

    A later signal says "cleaning up, please wait" while the cleanup lasts; a netns
    cleanup may be over before it lands (then it is ignored), so the count is not
    checked here (tests/ibsim/test_exit_paths.py checks it on a cleanup that lasts).
    """
    rc = run.finish()
    assert rc == code, run.err()
    assert run.waits() >= 1, run.err()
    assert "Traceback" not in run.err()
    assert_restored(before, run)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["TERM", "HUP"]
)
def test_a_signal_during_bring_up_removes_what_was_made(run: Run, signum: int, code: int) -> None:
    before = HostState.now()
    run.wait_entry("netns")  # the namespaces are being made
    run.signal(signum)
    _stopped(run, before, code)
    assert f"stopped ({signal.Signals(signum).name})" in run.err()


def test_two_ctrl_c_during_flows_clean_up_once_and_exit_130(run: Run) -> None:
    before = HostState.now()
    run.wait_for("iperf3 flows", lambda: run.in_namespaces("iperf3"))
    run.signal(signal.SIGINT)
    run.wait_stderr("stopping on SIGINT")
    run.signal(signal.SIGINT)  # during the cleanup (unless it is over already: it is fast)
    _stopped(run, before, 130)


def test_three_signals_during_a_step_and_its_cleanup_exit_143(run: Run) -> None:
    before = HostState.now()
    run.wait_for("iperf3 flows", lambda: run.in_namespaces("iperf3"))
    run.wait_for("the end of the flows", lambda: not run.in_namespaces("iperf3"))
    run.signal(signal.SIGTERM)  # during a step: the cut, or the wait after it
    run.wait_stderr("stopping on SIGTERM")
    run.signal(signal.SIGINT)
    run.signal(signal.SIGHUP)
    _stopped(run, before, 143)


def test_ctrl_c_during_emulate_up_ends_its_daemons_and_namespaces(
    tmp_path: Path, host: Host
) -> None:
    before = HostState.now()
    fabric = REPO / "fabrics" / "tiny-explicit.yaml"
    run = Run(tmp_path / "state", "emulate", "up", str(fabric), "--routing", "bgp")
    try:
        run.wait_entry("process")  # its first FRR daemon is recorded: BGP is starting
        run.signal(signal.SIGINT)
        _stopped(run, before, 130)
    finally:
        clean_up_after(run)
    assert (NETNS_RUN_DIR / host.bystander).exists(), "a foreign namespace vanished"
