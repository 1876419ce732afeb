"""Running jobs on ibsim, judged from OpenSM's tables and its measured routing time.

No job runs on ibsim (it carries no traffic); what decides a job's fate is
measured: whether the tables route every pair of its NICs, whether a change
took down a cable they sent its traffic over, and how long OpenSM took to
write new tables.
"""

from __future__ import annotations

import time
from pathlib import Path

from harness.backends.ibsim.backend import IbsimBackend
from harness.backends.measurement import MeasurePlan
from harness.fabric.generators import two_tier
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.faults.text import resolve_faults
from harness.invariants.timeline import Timeline
from tests.ibsim.ibsim_helpers import needs_ib

pytestmark = [needs_ib]


def _fabric() -> Fabric:
    return two_tier(sus=2, nodes_per_su=4, node="a800", spines=4, leaf_radix=8)


def _jobs(f: Fabric) -> list[Job]:
    def servers(*names: str) -> tuple[int, ...]:
        return tuple(f.index[n] for n in names)

    return [
        Job("patient", servers("su01/node01", "su02/node01")),
        Job("impatient", servers("su01/node02", "su02/node02"), timeout=0.01),
        Job("one-su", servers("su01/node03", "su01/node04"), timeout=0.01),
    ]


def _alive(backend: IbsimBackend) -> dict[str, bool]:
    runs = backend.measure(MeasurePlan(jobs=("patient", "impatient", "one-su"))).jobs
    return {r.name: r.alive for r in runs}


def test_a_kill_crashes_the_job_whose_timeout_is_shorter_than_the_sms_reroute(
    state_root: Path,
) -> None:
    f = _fabric()
    with IbsimBackend(root=state_root) as backend:
        backend.apply(f, _jobs(f))
        assert _alive(backend) == {"patient": True, "impatient": True, "one-su": True}
        (kill,) = resolve_faults(f, "kill spine-01 spine-02 spine-03", "test")
        backend.inject(kill)
        assert _alive(backend) == {"patient": True, "impatient": False, "one-su": True}
        assert backend.jobs is not None
        run = backend.jobs.run("impatient")
        assert run.ended == "timeout"
        assert "not shorter than its timeout 0.01 s" in run.detail
        assert 0.01 <= run.seconds < 34.0  # the SM's measured routing time
        assert "judged from OpenSM's tables" in run.detail
        backend.revert(kill)
        assert not _alive(backend)["impatient"]  # a repair does not revive it
        backend.restart(["impatient"])
        assert all(_alive(backend).values())


def test_a_flap_shorter_than_the_timeout_is_survived_a_longer_outage_is_not(
    state_root: Path,
) -> None:
    f = _fabric()
    jobs = [Job("patient", (f.index["su01/node01"], f.index["su02/node01"]), timeout=2.0)]
    with IbsimBackend(root=state_root) as backend:
        backend.apply(f, jobs)
        (cut,) = resolve_faults(f, "cut su01/node01/nic0:1--su01/leaf-r0:1", "test")
        backend.inject(cut)
        assert backend.sim is not None
        assert backend.jobs is not None
        since = backend.jobs.fates["patient"].stalled_since  # the Unlink's console line
        assert since is not None
        up_at = time.monotonic()
        backend.revert(cut)  # back within the timeout: survived
        took = time.monotonic() - up_at
        link_up = backend.sim.timings.phases["master SM routed"]  # ReLink -> SUBNET UP
        stalled = backend.jobs.fates["patient"].last_stall
        # the repair counts until OpenSM has routed over the link again (its link_up), as the
        # model's timeline does: the stall is the outage plus link_up, both measured here
        model = Timeline.start(jobs).changed({"patient"}).after(up_at - since, {"patient"})
        model = model.changed((), resume_after_s=link_up)
        predicted = model.fate("patient").rerouted_s
        assert 0 < link_up < took
        assert predicted <= stalled <= predicted + took
        assert model.fate("patient").state == "running"
        assert backend.measure(MeasurePlan(jobs=("patient",))).jobs[0].alive
        backend.inject(cut)
        backend.wait(2.5)
        backend.revert(cut)  # down longer than its 2 s timeout: crashed, and stays so
        (run,) = backend.measure(MeasurePlan(jobs=("patient",))).jobs
        assert not run.alive
        assert "no route in the LFTs from su01/node01/nic0" in run.detail
        assert run.seconds >= 2.5


def test_a_drain_on_ibsim_stalls_the_traffic_of_each_cable_it_unlinks(state_root: Path) -> None:
    # ibsim has no administrative port disable: a drain unlinks one cable at a time, each
    # black-holing the destinations routed over it until OpenSM routes around it.  A job
    # with NCCL's default timeout rides that out; one of 10 ms does not (the model's drain
    # stalls nothing, which is why no shipped scenario drains under such a job).  A job on
    # every server has traffic on every spine (ftree spreads each leaf's destinations).
    f = _fabric()
    everyone = tuple(int(s) for s in f.servers.tolist())
    jobs = [Job("default", everyone), Job("impatient", everyone, timeout=0.01)]
    with IbsimBackend(root=state_root) as backend:
        backend.apply(f, jobs)
        (drain,) = resolve_faults(f, "drain spine-03", "test")
        backend.inject(drain)
        default, impatient = backend.measure(MeasurePlan(jobs=("default", "impatient"))).jobs
        assert default.alive
        assert "stalled" in default.detail  # it lived through a drain step's stall
        assert not impatient.alive
        assert "routing around spine-03[" in impatient.detail  # one drain step's cable
