"""Budgets of a pre-change risk check (and of a drill's guard): rules such as
``jobs_lost=0,abs:bandwidth>=0.9``.

A rule is judged on what the change adds (relative, the default) or, written
``abs:RULE``, on the state after the change; :data:`BUDGET_METRICS` names what
each metric reads.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import ScenarioError
from harness.observations.expect import Expect

# budget names -> what they read (relative: what the change adds; abs: the state after it)
BUDGET_METRICS = {
    "jobs_lost": "jobs lost by the change (abs: jobs lost after it)",
    "bandwidth": "lowest bus bandwidth ratio over the jobs that survive, after to before "
    "(abs: to healthy)",
    "uplink": "lowest leaf uplink capacity ratio, after to before (abs: to the design)",
    "gpu_pairs_disconnected": "GPU pairs the change cuts off, PXN allowed (abs: after it)",
    "storage": "lowest storage bond bandwidth ratio, after to before (abs: to healthy)",
    "bisection": "bisection bandwidth ratio, after to before (abs: to healthy; not N+1)",
}
RATIO_METRICS = frozenset({"bandwidth", "uplink", "storage", "bisection"})
ABSOLUTE = "abs:"
_RULE = re.compile(r"^\s*(abs\s*:)?\s*([a-z_]+)\s*(>=|<=|==|!=|=|>|<)\s*([-+\d.eE]+)\s*$")
BUDGET_EXAMPLE = "jobs_lost=0,bandwidth>=0.9 (abs:RULE judges the state after the change)"
# the default gate: no running job lost, no connected GPU pair cut off, every surviving job
# keeps 90 % of its bus bandwidth
DEFAULT_BUDGET = "jobs_lost=0,gpu_pairs_disconnected=0,bandwidth>=0.9"
DEFAULT_BUDGET_RULE = (
    "loses no running job, cuts off no GPU pair that was connected, and leaves every "
    "surviving job at least 90% of the bus bandwidth it had before"
)


@dataclass(frozen=True, slots=True)
class BudgetRule:
    """One rule of a budget: on what the change adds, or (``absolute``) on the state after it."""

    metric: str
    expect: Expect
    absolute: bool = False

    def describe(self) -> str:
        """The rule as written (``abs:bandwidth >= 0.9``)."""
        return f"{ABSOLUTE if self.absolute else ''}{self.metric} {self.expect.describe()}"


def parse_budget(text: str) -> tuple[BudgetRule, ...]:
    """``"jobs_lost=0,abs:bandwidth>=0.5"`` -> rules; raises ScenarioError with the fix.

    >>> [r.describe() for r in parse_budget("jobs_lost=0, abs:bandwidth>=0.5")]
    ['jobs_lost 0', 'abs:bandwidth >= 0.5']
    """
    rules = []
    for part in [p for p in text.split(",") if p.strip()]:
        m = _RULE.match(part)
        if not m:
            msg = f"--budget: cannot read {part.strip()!r}; write e.g. {BUDGET_EXAMPLE}"
            raise ScenarioError(msg)
        absolute, name, op, value = m.groups()
        if name not in BUDGET_METRICS:
            near = difflib.get_close_matches(name, BUDGET_METRICS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"--budget: unknown metric {name!r}{hint} (known: {', '.join(BUDGET_METRICS)})"
            raise ScenarioError(msg)
        op = "==" if op == "=" else op
        rules.append(BudgetRule(name, Expect.parse(f"{op} {value}"), absolute is not None))
    if not rules:
        msg = f"--budget is empty; write e.g. {BUDGET_EXAMPLE}"
        raise ScenarioError(msg)
    return tuple(rules)


def breaks(rules: Sequence[BudgetRule], values: dict[tuple[str, bool], float]) -> list[str]:
    """The rules these values break; ``values`` maps (metric, absolute) to a number."""
    return [
        r.describe()
        for r in rules
        if (r.metric, r.absolute) in values and not r.expect.check(values[(r.metric, r.absolute)])
    ]


ASSUMED_JOBS_NOTE = (
    "jobs assumed: one per SU (no --jobs given); traffic between SUs is not represented"
)


def describe_budget(rules: Sequence[BudgetRule], subject: str = "the change") -> str:
    """The budget in words: the default one as its rule, any other as written.

    >>> describe_budget(parse_budget(DEFAULT_BUDGET))  # doctest: +NORMALIZE_WHITESPACE
    'default: the change passes only if it loses no running job, cuts off no GPU pair that
    was connected, and leaves every surviving job at least 90% of the bus bandwidth it had
    before (jobs_lost 0, gpu_pairs_disconnected 0, bandwidth >= 0.9)'
    """
    relative = [x.describe() for x in rules if not x.absolute]
    absolute = [x.describe() for x in rules if x.absolute]
    if [x.describe() for x in rules] == [x.describe() for x in parse_budget(DEFAULT_BUDGET)]:
        return f"default: {subject} passes only if it {DEFAULT_BUDGET_RULE} ({', '.join(relative)})"
    parts = []
    if relative:
        parts.append(", ".join(relative) + f" (on what {subject} adds)")
    if absolute:
        parts.append(", ".join(absolute) + f" (on the state after {subject})")
    return "; ".join(parts)
