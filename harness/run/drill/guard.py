"""A drill's guard: the risk budget predicted before every inject (run stage).

Before the drill injects a fault, the model predicts the state after it as
``harness risk`` does for a change on top of the faults already there (the
same summaries and budget rules, :mod:`harness.observations.state_summary`):
an inject whose prediction breaks the guard is refused, recorded as refused in
the journal, and its restore is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.faults.fault import AppliedFault
from harness.invariants.analysis import Analysis
from harness.invariants.state import Observation
from harness.invariants.timeline import crashed_by_change
from harness.observations.budget import BudgetRule
from harness.observations.budget import breaks
from harness.observations.state_summary import budget_values
from harness.observations.state_summary import summarize
from harness.observations.state_summary import summarize_added
from harness.run.session import RunSession


def guard_breaks(
    session: RunSession, applied: AppliedFault, rules: Sequence[BudgetRule]
) -> list[str]:
    """The rules of ``rules`` that injecting ``applied`` now is predicted to break."""
    before_a = session.analysis()
    after_state = session.state.inject(applied)
    after_a = Analysis(session.fabric, Observation.from_state(after_state), session.jobs,
                       healthy=session.healthy, routing=session.routing)  # fmt: skip
    before = summarize(before_a)
    crashed = crashed_by_change(before_a, after_a, [applied], session.routing)
    after = summarize(after_a, crashed)
    added = summarize_added(after_a, before_a, after, before)
    return breaks(rules, budget_values(added, after))
