"""The sweep's fast paths give the full analysis's answer on any small fabric, base and case.

:class:`~harness.planning.sweep.evaluator.CaseEvaluator` answers most cases without a full
:class:`~harness.invariants.analysis.Analysis` (bulk paths, one up-down index per class of
leaves, ports judged per plane, flows of the degraded NICs only); its
``evaluate_exact`` is that full analysis.  Hypothesis draws two-tier,
three-tier and dual-ToR fabrics, faults already present, jobs (per SU or one
job over drawn servers, with or without port failover), the path rule, the
forwarding model and the bisection, then compares every field of every drawn
single case and pair.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st

from harness.fabric import Fabric
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import LinkKind
from harness.fabric.routing import FORWARDINGS
from harness.fabric.routing import Routing
from harness.faults.fault import FaultState
from harness.invariants.reach import PATH_RULES
from harness.invariants.reach import up_down_signatures
from harness.invariants.reach import up_links
from harness.invariants.state import Observation
from harness.planning.sweep import CATEGORIES
from harness.planning.sweep import CaseEvaluator
from harness.planning.sweep import CaseResult
from harness.planning.sweep.cases import single_failures
from harness.search import strategies as hst

FIELDS = tuple(f.name for f in dataclasses.fields(CaseResult) if f.name not in ("exact", "reasons"))


def mismatches(fast: CaseResult, exact: CaseResult) -> list[str]:
    """The fields in which two results of one case differ (floats to 1e-9)."""
    out = []
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(exact, name)
        if isinstance(a, float) and isinstance(b, float):
            same = math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        else:
            same = a == b
        if not same:
            out.append(f"{' + '.join(fast.ids)}: {name} fast={a!r} exact={b!r}")
    return out


@st.composite
def jobs_of(draw: st.DrawFn, f: Fabric) -> tuple[JobSpec, ...]:
    if draw(st.booleans(), label="per-su"):
        return (JobSpec(per_su=True),)
    servers = [f.ids[i] for i in f.servers.tolist()]
    nodes = draw(st.lists(st.sampled_from(servers), min_size=1, max_size=6, unique=True))
    failover = draw(st.sampled_from(("none", "port")), label="failover")
    return (JobSpec(name="wide", nodes=tuple(nodes), failover=failover),)


@st.composite
def evaluators(draw: st.DrawFn) -> CaseEvaluator:
    f = draw(hst.fabrics(["two-tier", "three-tier", "dual-tor"], storage=True), label="fabric")
    kinds = ("kill", "drain", "cut", "optic", "degrade")
    base = draw(hst.fault_sets(f, kinds, min_size=0, max_size=3), label="base")
    state = FaultState.healthy(f)
    for fault in base:
        state = state.inject(fault)
    specs = draw(jobs_of(f), label="jobs")
    ev = CaseEvaluator(
        f, resolve_jobs(specs, f), state,
        bisection=f.n_sus >= 2 and draw(st.booleans(), label="bisection"),
        routing=Routing.stating(
            paths=draw(st.sampled_from(PATH_RULES), label="paths"),
            forwarding=draw(st.sampled_from(FORWARDINGS), label="forwarding"),
        ),
    )  # fmt: skip
    note(f"{f.name}: base {[x.describe() for x in base]}, jobs {specs}, paths {ev.paths}, "
         f"forwarding {ev.forwarding}, bisection {ev.bisection}")  # fmt: skip
    return ev


@settings(max_examples=300, deadline=None)
@given(ev=evaluators(), data=st.data())
def test_fast_cases_equal_the_full_analysis(ev: CaseEvaluator, data: st.DataObject) -> None:
    singles = single_failures(ev.fabric, CATEGORIES)
    picked = data.draw(
        st.lists(st.integers(0, len(singles) - 1), min_size=1, max_size=25, unique=True),
        label="singles",
    )
    chosen = [singles[k] for k in sorted(picked)]
    problems = []
    for fast, x in zip(ev.evaluate_singles(chosen), chosen, strict=True):
        problems += mismatches(fast, ev.evaluate_exact([x]))
    pairs = data.draw(
        st.lists(st.tuples(st.sampled_from(singles), st.sampled_from(singles)), max_size=6),
        label="pairs",
    )
    for a, b in pairs:
        if a != b:
            problems += mismatches(ev.evaluate([a, b]), ev.evaluate_exact([a, b]))
    assert problems == []


@settings(max_examples=300, deadline=None)
@given(ev=evaluators(), data=st.data())
def test_class_indexes_say_exactly_when_one_removal_splits_a_class(
    ev: CaseEvaluator, data: st.DataObject
) -> None:
    """One switch or one switch-to-switch cable gone: the sweep's per-class up-down indexes
    (with their memo and their shortcut for peaks reached another way) against the
    signatures recomputed on the reduced fabric."""
    if ev._classes is None or ev.paths != "up-down":
        return  # shortest: articulation points and bridges of the switch graph instead
    f = ev.fabric
    obs = ev.base.obs
    switches = np.concatenate([f.spines, f.cores, f.leaves]).tolist()
    cables = f.links_of_kind(LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).tolist()
    removals = data.draw(
        st.lists(st.one_of(st.tuples(st.just("kill"), st.sampled_from(switches)),
                           st.tuples(st.just("cut"), st.sampled_from(cables))),
                 min_size=1, max_size=12),
        label="removals",
    )  # fmt: skip
    for what, i in removals:
        dead, cut = ([i], []) if what == "kill" else ([], [i])
        up = obs.element_up.copy()
        up[dead] = False
        cap = obs.link_capacity.copy()
        cap[cut] = 0
        sigs, _ = up_down_signatures(up_links(f, Observation("model", up, cap)))
        broken = False
        for leaves in ev._classes.values():
            left = [sigs[x] for x in leaves if x in sigs]
            broken = broken or any(not (a & b) for k, a in enumerate(left) for b in left[k + 1 :])
        for ix in ev._updown:
            assert ix.complete
        assert ev._updown_breaks(dead, cut) == broken, (what, f.ids[i] if dead else i)
