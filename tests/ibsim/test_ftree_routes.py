"""The model's static routes are OpenSM ftree's tables (issue 19: a kill's blast radius).

For every same-rail pair of HCAs on two leaves, the model's static path (its
flows from :func:`~harness.invariants.traffic._place` on
:func:`~harness.invariants.forwarding.flow_paths`: the leaf's uplink, the
spine, the spine's cable down) is compared with the LFTs OpenSM wrote, read
with ``dump_lfts`` and followed over the live wiring: on a healthy fabric and
after a spine kill they are the same, and so, for every spine, are the jobs
whose collective flows it carries (what its kill stalls) in the model's
routed cables and on the real tables.  (Where they differ -- a single uplink
cut, a dead HCA ahead of others on a leaf -- is stated in docs/ibsim.md.)
"""

from __future__ import annotations

from pathlib import Path

from harness.backends.ibsim.backend import IbsimBackend
from harness.backends.ibsim.jobs import TableJobs
from harness.backends.ibsim.walk import Routes
from harness.fabric import preset
from harness.fabric.generators import two_tier
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.faults.fault import FaultState
from harness.faults.text import resolve_faults
from harness.invariants.analysis import Analysis
from harness.invariants.forwarding import Resources
from harness.invariants.forwarding import flow_paths
from harness.invariants.state import Observation
from harness.invariants.timeline import routed_of
from harness.invariants.traffic import _place
from tests.ibsim.ibsim_helpers import needs_ib

pytestmark = [needs_ib]

Hop = tuple[int, str, int]  # the leaf's out port, the spine, the spine's out port


def _compare(f: Fabric, state: FaultState, routes: Routes) -> tuple[int, list[str]]:
    """(cross-leaf flows compared, those whose model path is not the tables')."""
    everyone = Job("all", tuple(int(s) for s in f.servers.tolist()), collectives=("all-to-all",))
    net = Analysis(f, Observation.from_state(state), [everyone]).network
    fl = _place(net, [everyone])
    paths = flow_paths(net, fl, Resources(net), "static", 0)
    table, _ = net.access
    desc = routes.names.desc_of
    lfts, peer = routes.lfts.tables, routes.wiring.peer
    seen, wrong = 0, []
    for k in range(fl.src.size):
        if fl.leaf_a[k] < 0 or fl.leaf_a[k] == fl.leaf_b[k]:
            continue
        up, down = int(paths[k, 0]) // 2, int(paths[k, 1]) // 2
        model: Hop = (int(f.link_a_port[up]), f.ids[f.link_b[up]], int(f.link_b_port[down]))
        leaf = desc[int(f.link_b[table[fl.src[k], 0]])]
        dest = desc[int(fl.dst[k])]
        out = lfts[leaf][dest]
        spine = peer[(leaf, out)][0]
        real: Hop = (out, spine, lfts[spine][dest])
        seen += 1
        if real != model:
            wrong.append(f"{f.ids[fl.src[k]]} -> {f.ids[fl.dst[k]]}: model {model}, ftree {real}")
    return seen, wrong


def _blast(f: Fabric, state: FaultState, jobs: list[Job], backend: IbsimBackend) -> None:
    """For every live spine: the jobs the tables send a collective flow over it are the jobs
    the model's routed cables put on it (the set a kill of it stalls, on both sides)."""
    a = Analysis(f, Observation.from_state(state), jobs)
    routed = routed_of(a)
    table_jobs = TableJobs(f, jobs, backend.routes)
    routes = backend.routes()
    for spine in f.spines.tolist():
        if not state.element_up[spine]:
            continue
        links = f.links_at(spine).tolist()
        gone = {frozenset((f.ids[f.link_a[x]], f.ids[f.link_b[x]])) for x in links}
        model = {j.name for j in jobs if routed[j.name].hits(links)}
        tables = {
            n for n, fate in table_jobs.fates.items() if table_jobs._crosses(routes, fate, gone)
        }
        assert model == tables, f.ids[spine]


def _jobs(f: Fabric, *groups: str) -> list[Job]:
    return [Job(f"j{k}", tuple(f.index[n] for n in g.split()), timeout=0.01)
            for k, g in enumerate(groups)]  # fmt: skip


def test_static_routes_are_ftrees_tables_healthy_and_after_a_spine_kill(state_root: Path) -> None:
    f = two_tier(sus=2, nodes_per_su=4, node="a800", spines=4, leaf_radix=8)
    jobs = _jobs(f, "su01/node01 su02/node01", "su01/node02 su02/node02 su01/node03",
                 "su01/node04 su02/node03 su02/node04",
                 " ".join(f.ids[s] for s in f.servers.tolist()))  # fmt: skip
    with IbsimBackend(root=state_root) as backend:
        backend.apply(f)
        assert _compare(f, FaultState.healthy(f), backend.routes()) == (128, [])
        _blast(f, FaultState.healthy(f), jobs, backend)
        (kill,) = resolve_faults(f, "kill spine-02", "test")
        backend.inject(kill)
        assert backend.sim is not None
        assert backend.sim.routing_engine_used() == "ftree"
        assert _compare(f, FaultState.healthy(f).inject(kill), backend.routes()) == (128, [])
        _blast(f, FaultState.healthy(f).inject(kill), jobs, backend)


def test_static_routes_are_ftrees_tables_on_seed_a800(state_root: Path) -> None:
    f = preset("seed-a800")
    with IbsimBackend(root=state_root) as backend:
        backend.apply(f)
        assert _compare(f, FaultState.healthy(f), backend.routes()) == (144_000, [])
