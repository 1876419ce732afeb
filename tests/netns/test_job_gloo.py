"""The real job on netns (root, torch): gloo ranks in the server namespaces, measured.

One job over the four servers of a 2-SU fabric (its rings cross the spines),
with a 5 s NCCL-equivalent timeout: it runs at a measured rate, keeps running
when a spine dies, fails within the timeout (plus a margin) when a leaf dies,
runs again once the leaf is back and it is restarted, and leaves no process, file or namespace.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.backends.ledger import Ledger
from harness.backends.ledger import clean
from harness.backends.ledger import run_ids
from harness.backends.measurement import JobRun
from harness.backends.measurement import MeasurePlan
from harness.backends.netns import nsutil
from harness.backends.netns.backend import NetnsBackend
from harness.backends.processes import process_alive
from harness.errors import BackendError
from harness.fabric.generators import dual_tor
from harness.fabric.generators import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.faults.fault import Fault
from tests.netns.conftest import Host
from tests.netns.conftest import assert_host_like

pytestmark = pytest.mark.privileged

TIMEOUT = 5.0
FABRIC = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False, name="gloo")
JOBS = resolve_jobs([JobSpec(name="train", nodes=("*",), timeout=TIMEOUT)], FABRIC)


def _run(be: NetnsBackend, seconds: float = 1.5) -> JobRun:
    (run,) = be.measure(MeasurePlan(jobs=("train",), job_seconds=seconds)).jobs
    return run


def _processes(led: Ledger) -> list[tuple[int, int]]:
    return [(int(e.name), int(e.data["start_ticks"])) for e in led.entries("process")]


def test_netns_measures_jobs_and_flows_here() -> None:
    # torch (the `torch` extra, in `test`) and iperf3 (.ci/run) are installed: job and
    # bandwidth verdicts on netns come from the real job and real flows, never the model
    assert {"jobs", "flows"} <= NetnsBackend().capabilities.measurements


def test_the_job_runs_survives_a_spine_and_fails_on_a_leaf(state_dir: Path, host: Host) -> None:
    be = NetnsBackend()
    with be:
        be.apply(FABRIC, JOBS)
        be.settle(30)
        assert be.emu is not None
        led = be.emu.ledger
        assert led is not None
        healthy = _run(be)
        assert healthy.alive, healthy
        assert healthy.iterations_per_s is not None
        assert 1.0 < healthy.iterations_per_s < 1000.0  # a real rate, measured
        ranks = [e for e in led.entries("process") if "gloo rank" in e.data["what"]]
        assert len(ranks) == 4  # one per server, each in the ledger

        spine = Fault.parse({"kill": "spine-01"}).resolve(FABRIC)
        be.inject(spine)
        be.settle(30)
        through = _run(be)
        assert through.alive, through  # the rings move to the other spine
        assert through.iterations_per_s is not None
        assert through.iterations_per_s > 0

        leaf = Fault.parse({"kill": "su01/leaf-r1"}).resolve(FABRIC)
        start = time.monotonic()
        be.inject(leaf)
        be.settle(30)
        lost = _run(be)
        took = time.monotonic() - start
        assert not lost.alive, lost
        assert lost.ended in ("timeout", "error")
        assert TIMEOUT - 0.5 <= lost.seconds <= TIMEOUT + 3.0, lost  # gloo's own timeout fired
        assert took <= TIMEOUT + 10.0
        assert "rank" in lost.detail

        be.revert(leaf)
        be.revert(spine)
        be.settle(30)
        assert not _run(be).alive  # a crashed job stays crashed when the fabric is repaired
        be.restart(["train"])  # new ranks, a new rendezvous
        again = _run(be)
        assert again.alive, again
        rid = led.run_id
        processes = _processes(led)
        run_dir = led.dir
    assert not any(process_alive(pid, ticks) for pid, ticks in processes)
    assert not run_dir.exists()  # progress files and logs went with the run directory
    assert_host_like(host, [rid])


def test_a_sigkilled_runner_leaves_nothing_after_clean(
    state_dir: Path, host: Host, tmp_path: Path
) -> None:
    script = tmp_path / "runner.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, time
            from harness.backends.netns.backend import NetnsBackend
            from harness.backends.measurement import MeasurePlan
            from tests.netns.test_job_gloo import FABRIC, JOBS
            be = NetnsBackend()
            be.apply(FABRIC, JOBS)
            be.settle(30)
            (run,) = be.measure(MeasurePlan(jobs=("train",))).jobs
            print(be.emu.ledger.run_id, run.alive, flush=True)
            time.sleep(600)
            """
        )
    )
    root = Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env=env, cwd=root)  # fmt: skip
    try:
        assert proc.stdout is not None
        rid, alive = proc.stdout.readline().split()
        assert alive == "True"
        led = Ledger(rid, state_dir)
        processes = _processes(led)
        assert len(processes) >= 5  # the fork server and four ranks
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    report = clean()
    assert rid in report.removed
    assert not any(process_alive(pid, ticks) for pid, ticks in processes)
    assert not any(n.startswith(f"{rid}-") for n in nsutil.list_netns())
    assert run_ids() == []
    assert_host_like(host, [rid])


def test_a_job_that_fails_over_between_nic_ports_is_refused(state_dir: Path) -> None:
    f = dual_tor(segments=1, hosts_per_segment=2, spines_per_plane=1, storage=False)  # 2 ports
    jobs = resolve_jobs([JobSpec(name="j", nodes=("*",), timeout=TIMEOUT)], f)  # bonded: h800
    be = NetnsBackend()
    with be, pytest.raises(BackendError, match="cannot, so its verdict would not be measured"):
        be.apply(f, jobs)
    assert run_ids() == []
