"""A flow group whose flows did not run together is run once more, and only once."""

from __future__ import annotations

import pytest

from harness.backends.measurement import Flow
from harness.backends.measurement import FlowGroup
from harness.backends.netns import flows
from harness.backends.netns.flows import Flows
from harness.backends.netns.flows import NotTogether
from harness.backends.netns.flows import common_window
from harness.errors import BackendError

GROUP = FlowGroup("g", (("a", "b"),))
GOT = (Flow("g", "a", "b", 190.0, 4.0),)


def _flows(outcomes: list[BaseException | None], calls: list[float]) -> Flows:
    """Flows whose attempts end as ``outcomes`` say (an exception, or ``None``: measured)."""
    fl = Flows.__new__(Flows)  # no emulation: only the attempts are under test

    def once(group: FlowGroup, seconds: float, slack: float) -> tuple[Flow, ...]:
        calls.append(slack)
        outcome = outcomes[len(calls) - 1]
        if outcome is not None:
            raise outcome
        return GOT

    fl._run_once = once  # type: ignore[method-assign]
    return fl


def test_a_group_that_did_not_run_together_is_run_again() -> None:
    calls: list[float] = []
    fl = _flows([NotTogether("0.00 s in common"), None], calls)
    assert fl.run(GROUP, 4.0) == GOT
    assert len(calls) == flows.ATTEMPTS == 2
    assert calls == [flows.SLACK_S, flows.SLACK_S + flows.RETRY_SLACK_S]  # late SYNs fit


def test_twice_not_together_is_an_error() -> None:
    calls: list[float] = []
    fl = _flows([NotTogether("first"), NotTogether("second")], calls)
    with pytest.raises(NotTogether, match="second"):
        fl.run(GROUP, 4.0)
    assert len(calls) == 2
    assert issubclass(NotTogether, BackendError)  # the environment's fault: exit code 3


def test_other_failures_are_not_retried() -> None:
    calls: list[float] = []
    fl = _flows([BackendError("iperf3 server on port 20000 did not start"), None], calls)
    with pytest.raises(BackendError, match="did not start"):
        fl.run(GROUP, 4.0)
    assert len(calls) == 1


def test_a_measured_group_is_run_once() -> None:
    calls: list[float] = []
    assert _flows([None], calls).run(GROUP, 4.0) == GOT
    assert len(calls) == 1


def test_flows_that_did_not_overlap_are_not_together_so_they_are_run_again() -> None:
    """The error :meth:`Flows.run` retries is the one :func:`common_window` raises."""
    with pytest.raises(NotTogether, match=r"0\.00 s in common"):
        common_window([[(0.0, 2.0, 1.0)], [(1.5, 6.0, 1.0)]], 1.0)
