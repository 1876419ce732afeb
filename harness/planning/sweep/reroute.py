"""The jobs a reroute crashes, on top of a failure case (the sweep's and the N+1 margin's).

A failure case is unplanned (a kill, cut or optic): the fabric reroutes around
it, and every running job whose routed flows crossed a cable it took (the
routes of the base state, :mod:`harness.invariants.routed_links`) stalls for
the control plane's ``reroute`` time.  A job crashes when that stall reaches its
timeout -- the one crash rule, :func:`harness.invariants.timeline.stall_crashes`,
applied by :func:`harness.invariants.timeline.reroute_fragile`.  The sweep and
the risk check's N+1 margin both add these crashes here, so they agree on every
case.

Both judge failures, never repairs, so a repair's ``link_up`` does not enter
here; and the failures of one case happen at one instant, which a subnet
manager routes in one sweep (its heavy sweep reads the whole subnet), so a
case's stall is one ``reroute`` under either control plane, as the scenario
timeline makes it for faults injected at one clock reading
(:meth:`harness.invariants.timeline.Timeline.reroute_window`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from collections.abc import Sequence

from harness.fabric.model import Fabric
from harness.invariants.routed_links import RoutedLinks
from harness.invariants.routed_links import draw_note
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure


def taken_links(fabric: Fabric, failures: Sequence[Failure]) -> set[int]:
    """The links a case takes away: a cut cable (or optic), every link of a dead element."""
    links: set[int] = set()
    for x in failures:
        if x.kind == "element":
            links.update(fabric.links_at(x.index).tolist())
        else:
            links.add(x.index)
    return links


def with_reroute_crashes(
    fabric: Fabric,
    c: CaseResult,
    fragile: Mapping[str, RoutedLinks],
    ev: CaseEvaluator,
) -> CaseResult:
    """``c`` with the ``fragile`` jobs whose routed flows the case takes away crashed (lost,
    not surviving: when the slowest survivor crashed, the next one is found by ``ev``).

    Under ``ecmp`` a job is crashed when some hash draw routes a flow of it over
    what the case takes, and its reason says in how many draws."""
    if not fragile:
        return c
    links = taken_links(fabric, c.failures)
    hit = [name for name, uses in fragile.items()
           if name not in c.jobs_lost and not links.isdisjoint(uses.links)]  # fmt: skip
    if not hit:
        return c
    around = ", ".join(x.id for x in c.failures)
    why = tuple(f"{name}: crashed while the fabric rerouted around {around}"
                f"{draw_note(fragile[name], links)}" for name in hit)  # fmt: skip
    lost = (*c.jobs_lost, *hit)
    bw, slowest = c.min_busbw_ratio, c.busbw_job
    if slowest in hit:
        bw, slowest = ev.case_busbw_without(c.failures, lost)
    return dataclasses.replace(
        c, jobs_lost=lost, min_busbw_ratio=bw, busbw_job=slowest, crashed=(*c.crashed, *hit),
        reasons=(*c.reasons, *why),
    )  # fmt: skip
