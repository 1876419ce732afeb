"""A NIC cut that loses a job speeds up the jobs whose flows shared a full link with it.

The sweep's bulk NIC kernels (:mod:`harness.planning.sweep.kernels_nics`) used to give
the surviving jobs the base's bandwidth whenever a NIC cut lost a job.  That is exact
only while the cut NIC's flows shared no full link: under a degraded uplink (or an
ECMP collision) the lost job's flows leave the link, and the others' shares there grow.
Hypothesis found it (an ECMP collision after a killed server); this pins it with a
degraded uplink under every forwarding model, and checks that the case really is one
where the base's figure would have been wrong.
"""

from __future__ import annotations

import pytest

from harness.fabric import two_tier
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.routing import FORWARDINGS
from harness.fabric.routing import Forwarding
from harness.fabric.routing import Routing
from harness.faults.fault import FaultState
from harness.faults.text import resolve_faults
from harness.planning.sweep import CaseEvaluator
from harness.planning.sweep.cases import single_failures

JOBS = (
    JobSpec(name="a", nodes=("su01/node01", "su02/node01")),
    JobSpec(name="b", nodes=("su01/node02", "su02/node02")),
    JobSpec(name="c", nodes=("su01/node03", "su02/node03", "su02/node04")),
)


@pytest.mark.parametrize("forwarding", FORWARDINGS)
def test_nic_cuts_under_a_degraded_uplink_equal_the_full_analysis(forwarding: Forwarding) -> None:
    f = two_tier(sus=2, nodes_per_su=4, spines=2, leaf_radix=16, storage=False)
    degraded = resolve_faults(f, "degrade su01/leaf-r0:5--spine-01:1 0.25", "--state")
    ev = CaseEvaluator(f, resolve_jobs(JOBS, f), FaultState(f, tuple(degraded)),
                       routing=Routing.stating(forwarding=forwarding))  # fmt: skip
    tight = ev._tight_nics
    assert tight.any()  # the degraded uplink is full: the NICs whose flows cross it
    # each NIC whose flows cross it (the bulk kernels take a NIC, its optic and its cable alike)
    cases = [x for x in single_failures(f, ("nics",)) if x.kind == "element" and tight[x.index]]
    assert cases
    changed = 0
    for x, fast in zip(cases, ev.evaluate_singles(cases), strict=True):
        exact = ev.evaluate_exact([x])
        assert (fast.min_busbw_ratio, fast.busbw_job, fast.jobs_lost) == (
            exact.min_busbw_ratio, exact.busbw_job, exact.jobs_lost), x.id  # fmt: skip
        # the base's figure without the lost jobs (what the kernels used to say) is wrong here
        changed += bool(fast.jobs_lost) and (
            (fast.min_busbw_ratio, fast.busbw_job) != ev._busbw_without(fast.jobs_lost)
        )
    assert changed > 0
