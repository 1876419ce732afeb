"""``harness run --backend ibsim`` stopped by SIGHUP, SIGTERM and SIGINT cleans up by itself.

A real ``python -m harness run`` subprocess on a two-switch-leaf fabric is
signalled at a point read off its ledger and OpenSM's log -- during the apply
(ibsim recorded, OpenSM not up yet) and during an inject (OpenSM has routed
around the cut, the harness is still verifying it) -- and then twice more during
its cleanup, which lasts (the cut is relinked and OpenSM routes again before ibsim
and OpenSM are ended): each later signal says "cleaning up, please wait" and none
cuts it short.  The host is compared with its state before, without ``harness
clean``: no process of the run, no ledger, no traceback.
"""

from __future__ import annotations

import signal
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ibsim.ibsim_helpers import needs_ib
from tests.support.exit_paths import HostState
from tests.support.exit_paths import Run
from tests.support.exit_paths import assert_restored
from tests.support.exit_paths import clean_up_after
from tests.support.exit_paths import run_on_two_leaves

pytestmark = [needs_ib, pytest.mark.slow]

SCENARIO = textwrap.dedent(
    """\
    name: ibsim-exit-paths
    description: cut one uplink in ibsim, wait, check the NICs
    backends: [model, ibsim]
    fabric:
      file: two-leaves.yaml
    steps:
      - inject: {cut: "leaf-a:5--spine1:1"}
      - wait: 60s
      - expect:
          nics_isolated: 0
    """
)


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    """The scenario running on ibsim (a ledger root of its own); cleaned after, whatever."""
    r = run_on_two_leaves(tmp_path, SCENARIO, "ibsim")
    try:
        yield r
    finally:
        clean_up_after(r)


def _subnet_ups(run: Run) -> int:
    """How many times OpenSM has routed the subnet (``SUBNET UP`` in its log) so far."""
    try:
        log = (run.state / run.run_id / "ibsim" / "opensm.log").read_text(errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return 0
    return log.count("SUBNET UP")


def test_sighup_during_the_apply_ends_ibsim_and_exits_129(run: Run) -> None:
    before = HostState.now()
    run.wait_entry("process")  # ibsim is recorded: it is starting
    run.signal(signal.SIGHUP)
    assert run.finish() == 129, run.err()
    assert "stopped (SIGHUP)" in run.err()
    assert "Traceback" not in run.err()
    assert_restored(before, run)


def test_sigterm_during_an_inject_then_two_more_during_cleanup(run: Run) -> None:
    before = HostState.now()
    # the second SUBNET UP: OpenSM routed around the cut, the inject is verifying it
    run.wait_for("OpenSM routing around the cut", lambda: _subnet_ups(run) >= 2)
    run.signal(signal.SIGTERM)
    run.wait_stderr("stopping on SIGTERM")
    run.signal(signal.SIGINT)  # the cleanup relinks the cable and waits for OpenSM
    run.wait_stderr("cleaning up, please wait", 2)
    run.signal(signal.SIGHUP)
    run.wait_stderr("cleaning up, please wait", 3)
    assert run.finish() == 143, run.err()
    assert run.waits() == 3, run.err()
    assert "Traceback" not in run.err()  # the interrupted inject's fault is reverted
    assert "revert of" not in run.err()
    assert_restored(before, run)
