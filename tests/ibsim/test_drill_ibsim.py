"""The leaf-loss drill on ibsim: OpenSM's real tables decide when the job has no route,
the real clock its crash; the drill aborts on it and rolls back, with 0 mismatches.

No job runs on ibsim (it carries no traffic): the job's fate is judged from the tables
as :mod:`harness.backends.ibsim.jobs` says, looked at without a watch window at every
probe sample (``peek``), so a drill sees the crash when the clock says it happened.
"""

from __future__ import annotations

from pathlib import Path

from harness.backends.ibsim.backend import IbsimBackend
from harness.run.drill.runner import run_drill
from harness.scenario.drill_prepare import prepare_drill
from harness.scenario.load import load_file

REPO = Path(__file__).resolve().parents[2]


def test_the_leaf_loss_drill_on_ibsim(state_root: Path) -> None:
    (s,) = load_file(REPO / "scenarios" / "drill-leaf-loss.yaml")
    pd = prepare_drill(s)
    r = run_drill(pd, IbsimBackend(root=state_root), routing=pd.prepared.routing)
    assert r.status == "passed", r.reason  # it declares outcome: aborted
    assert "abort (train lost): observed: train crashed at t=6" in r.reason
    assert r.mismatches == 0, r.job_checks
    reach = next(p for p in r.probes if p.name == "reach")  # read off OpenSM's tables
    assert all(s.measured == s.predicted for s in reach.samples), reach.to_json()
    assert {s.measured for s in reach.samples} == {1.0, 19 / 24}
    ((job, predicted, observed),) = r.crashes
    assert job == "train"
    assert predicted is not None
    assert observed is not None
    assert abs(observed - predicted) <= 0.5
    assert [e.status for e in r.rollback] == ["rolled back"]
