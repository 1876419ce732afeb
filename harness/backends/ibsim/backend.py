"""The ``ibsim`` backend behind the protocol: measurements read from the real SM's tables.

``apply`` starts ibsim on the fabric and OpenSM on it (:class:`Simulation`),
``inject``/``revert`` go through ibsim's console (:mod:`.faults`), ``settle``
reports how long OpenSM took to route after the last change, and ``measure``
answers from every switch's LFT walked hop by hop:

* probes -- a NIC pair is reachable when the tables route both directions;
* paths -- the switches the tables send a packet through, leaf to leaf;
* links -- a cable is up when ``ibnetdiscover`` finds both its ends linked;
* jobs -- judged from the tables and the SM's measured routing time on the real
  clock (:mod:`.jobs`): no job runs, since ibsim carries no traffic.

Flows need traffic: they are not in the capabilities, so the runner never asks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from harness.backends.ibsim import faults
from harness.backends.ibsim.faults import HANG_REFUSED
from harness.backends.ibsim.faults import FaultEffect
from harness.backends.ibsim.jobs import TableJobs
from harness.backends.ibsim.net import cable_ends
from harness.backends.ibsim.sim import Simulation
from harness.backends.ibsim.walk import Routes
from harness.backends.measurement import JobRun
from harness.backends.measurement import LinkState
from harness.backends.measurement import Measurements
from harness.backends.measurement import MeasurePlan
from harness.backends.measurement import Probe
from harness.backends.measurement import TracedPath
from harness.backends.protocol import Capabilities
from harness.backends.signals import ClosesOnSignals
from harness.backends.signals import cleaning_up
from harness.errors import BackendError
from harness.fabric.jobs import Job
from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.words import plural


class IbsimBackend(ClosesOnSignals):
    """A fabric in ibsim, routed by OpenSM with the scenario's ``routing: {engine: ...}``.

    ``engine`` (ftree, updn, minhop or dor), when given, overrides the scenario's.
    """

    name = "ibsim"
    capabilities = Capabilities(
        frozenset({"kill", "drain", "cut", "optic"}),
        frozenset(k.label for k in (*COMPUTE_SWITCH_KINDS, Kind.NIC)),
        frozenset(k.label for k in COMPUTE_CABLE_KINDS),
        frozenset({"probes", "paths", "links", "jobs"}),
        why_not=(("hang", HANG_REFUSED),),
    )

    def __init__(self, engine: str | None = None, root: Path | None = None) -> None:
        self.engine = engine
        self._root = root
        self.sim: Simulation | None = None
        self._effects: list[FaultEffect] = []
        self._settle_s = 0.0
        self._routes: Routes | None = None
        self._routes_at = -1  # the simulation's generation they were read at
        self.jobs: TableJobs | None = None

    def apply(
        self, fabric: Fabric, jobs: Sequence[Job] = (), *, routing: Routing = DEFAULT_ROUTING
    ) -> None:
        """OpenSM routes the subnet with ``routing.engine`` (``control`` is ``sm``: the only
        one it runs), the master and every standby SM alike."""
        engine = self.engine or routing.engine
        if self.sim is None or self.sim.fabric is not fabric or self.sim.routing != engine:
            self.close()
            sim = Simulation(fabric, routing=engine, root=self._root)
            sim.start()
            self.sim = sim
            self._settle_s = sim.timings.phases["SUBNET UP"]
        assert self.sim is not None
        self.sim.watchers.clear()
        self.jobs = TableJobs(fabric, jobs, self.routes) if jobs else None
        if self.jobs is not None:
            self.sim.watchers.append(self.jobs)

    def _sim(self) -> Simulation:
        if self.sim is None:
            msg = "ibsim backend: apply(fabric) first"
            raise BackendError(msg)
        return self.sim

    def inject(self, fault: AppliedFault) -> None:
        """Take the fault's ports down on ibsim and wait until OpenSM has routed again.

        The effect is kept before the first console line: a fault whose inject was cut
        short (an error, a signal) is reverted like any other.
        """
        sim = self._sim()
        planned = faults.planned(sim, fault)
        at = len(self._effects)
        self._effects.append(planned)
        effect = faults.inject_planned(sim, planned)
        self._effects[at] = effect
        self._settle_s = effect.rerouted_s

    def revert(self, fault: AppliedFault) -> None:
        """Undo the latest injection of ``fault`` (raise BackendError if it was never injected)."""
        for k in range(len(self._effects) - 1, -1, -1):
            if self._effects[k].fault == fault:
                self._settle_s = faults.revert(self._sim(), self._effects.pop(k))
                return
        msg = f"ibsim backend: {fault.describe(self._sim().fabric)} was not injected"
        raise BackendError(msg)

    def wait(self, seconds: float) -> None:
        """Real time passes (the fabric and whatever runs on it carry on)."""
        time.sleep(seconds)

    def restart(self, jobs: Sequence[str]) -> None:
        """Crashed jobs start again where the tables route all their NICs now."""
        if self.jobs is not None:
            self.jobs.restart(jobs)

    def settle(self, timeout: float) -> float:
        """Seconds OpenSM took to route after the last change (waited for in inject)."""
        self._sim()
        return self._settle_s

    def routes(self) -> Routes:
        """The tables walked, read again only after a console line changed the subnet."""
        sim = self._sim()
        if self._routes is None or self._routes_at != sim.generation:
            self._routes, self._routes_at = sim.routes(), sim.generation
        return self._routes

    def measure(self, plan: MeasurePlan) -> Measurements:
        """Probe, trace and check links on the walked OpenSM tables; jobs as their table fates
        say."""
        unsupported = plan.kinds - self.capabilities.measurements
        if unsupported:
            msg = f"ibsim cannot measure {', '.join(sorted(unsupported))}"
            raise BackendError(msg)
        sim = self._sim()
        f = sim.fabric
        routes = self.routes()
        probes = tuple(
            Probe(
                a,
                b,
                routes.routed(f.index[a], f.index[b]) and routes.routed(f.index[b], f.index[a]),
            )
            for a, b in plan.probes
        )
        paths = []
        for a, b in plan.paths:
            hops = routes.path(f.index[a], f.index[b])
            paths.append(TracedPath(a, b, tuple(hops or ()), complete=hops is not None))
        links = []
        for link_id in plan.links:
            li = f.link_index[link_id]
            end, _ = cable_ends(f, li)
            desc = sim.names.desc_of[f.index[end.node]]
            up = routes.wiring.linked(desc, end.port)
            links.append(LinkState(link_id, up, float(f.link_capacity[li]) if up else 0.0))
        runs: tuple[JobRun, ...] = ()
        if plan.jobs:
            if self.jobs is None:
                msg = f"ibsim backend: no job {', '.join(plan.jobs)} was started"
                raise BackendError(msg)
            look = self.jobs.peek if plan.job_now else self.jobs.run
            runs = tuple(look(name) for name in plan.jobs)
        return Measurements(
            self.name,
            probes,
            tuple(paths),
            jobs=runs,
            links=tuple(links),
            settle_s=self._settle_s,
            notes=self.notes(routes),
        )

    def notes(self, routes: Routes) -> tuple[str, ...]:
        """The routing engines that made the tables, and the route balance they give."""
        sim = self._sim()
        f = sim.fabric
        used = sim.routing_engine_used()
        out = [f"routed by OpenSM {used} (master SM on {sim.sm_host}){_asked(sim.routing, used)}"]
        if sim.master_cut_off():
            out[0] = f"master SM on {sim.sm_host} cut off"
        if sim.island_engines:
            engines = sorted(set(sim.island_engines.values()))
            others = plural(len(sim.island_engines), "other island")
            asked = "".join(dict.fromkeys(_asked(sim.routing, e) for e in engines))
            out.append(f"{others} routed by a standby SM each ({', '.join(engines)}){asked}")
        leaves = [sim.names.desc_of[int(x)] for x in f.leaves.tolist()]
        balance = routes.balance_note(leaves)
        if balance is not None:
            out.append(balance)
        return tuple(out)

    def close(self) -> None:
        """Stop ibsim and OpenSM, forget the injected faults, the routes and the jobs (no
        SIGINT/SIGTERM/SIGHUP cuts it short, see :func:`cleaning_up`)."""
        with cleaning_up():
            if self.sim is not None:
                self.sim.close()
        self.sim = None
        self._effects.clear()
        self._routes = None
        self.jobs = None


def _asked(engine: str, used: str) -> str:
    """How the engine asked for and the one OpenSM used differ (nothing when they do not).

    >>> _asked("ftree", "updn")
    ': engine ftree asked for, OpenSM fell back to updn'
    """
    return "" if used == engine else f": engine {engine} asked for, OpenSM fell back to {used}"


def create() -> IbsimBackend:
    """A new ibsim backend (the registry's factory)."""
    return IbsimBackend()
