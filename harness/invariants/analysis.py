"""Invariants and measures of a fabric under faults: the cached facade (invariants stage, pure).

:class:`Analysis` takes a :class:`~harness.fabric.Fabric`, an
:class:`~harness.invariants.state.Observation` and the jobs, and answers every
question a scenario may ask: which GPU pairs can still talk, which jobs are
lost and why, what bandwidth is left.  It never mutates its inputs; results
are computed lazily and cached per instance.  The semantics live in one pure
module per concern under :mod:`harness.invariants` (the README says the same
in plain words):

* :mod:`~harness.invariants.topology`: masks, switch components, access ports;
* :mod:`~harness.invariants.servers`: per-server structure (damaged servers,
  GPU NICs, NVLink and intra-server groups);
* :mod:`~harness.invariants.connectivity`: GPU pairs, islands, rails;
* :mod:`~harness.invariants.paths`: routes and path classes;
* :mod:`~harness.invariants.verdicts`: job verdicts;
* :mod:`~harness.invariants.capacity`: NIC/NVLink rates, uplinks, bisection;
* :mod:`~harness.invariants.bandwidth`: ring flows and bus bandwidth;
* :mod:`~harness.invariants.storage`: storage bonds and checkpoints.

>>> from harness.fabric import preset
>>> from harness.faults.fault import FaultState
>>> f = preset("seed-a800")
>>> a = Analysis(f, Observation.from_state(FaultState.healthy(f)))
>>> a.gpu_pairs_disconnected(), a.path("su01/node01/gpu0", "su02/node01/gpu0")
(0, ('cross-su', 3))
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np
import numpy.typing as npt

from harness.errors import ScenarioError
from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Forwarding
from harness.fabric.routing import PathRule
from harness.fabric.routing import Routing
from harness.invariants import bandwidth
from harness.invariants import bond_hash
from harness.invariants import capacity
from harness.invariants import connectivity
from harness.invariants import paths
from harness.invariants import servers
from harness.invariants import storage
from harness.invariants import topology
from harness.invariants import verdicts
from harness.invariants.capacity import FloatArray
from harness.invariants.connectivity import Island
from harness.invariants.network import Network
from harness.invariants.paths import RouteGraph
from harness.invariants.reach import LeafReach
from harness.invariants.reach import Signature
from harness.invariants.reach import UpLinks
from harness.invariants.reach import leaf_reach
from harness.invariants.reach import up_links
from harness.invariants.state import Observation
from harness.invariants.topology import AccessPorts
from harness.invariants.topology import IntArray
from harness.invariants.traffic import JobTraffic
from harness.invariants.verdicts import JobVerdict

__all__ = ["Analysis", "Island", "JobVerdict"]


class Analysis:
    """Everything the invariants need, computed lazily from one observation.

    It implements :class:`~harness.invariants.servers.ServerView`, the look-ups
    the pure invariant functions share, and caches each answer.
    """

    def __init__(
        self,
        fabric: Fabric,
        observation: Observation,
        jobs: Sequence[Job] = (),
        *,
        healthy: Analysis | None = None,
        routing: Routing = DEFAULT_ROUTING,
    ) -> None:
        self.fabric = fabric
        self.obs = observation
        self.jobs = tuple(jobs)
        self.routing = routing  # as resolved once, carried unchanged
        self.paths: PathRule = routing.paths
        self.forwarding: Forwarding = routing.forwarding_model
        self._healthy = healthy
        self._groups_cache: dict[tuple[str, int], list[list[int]]] = {}
        self._busbw_cache: dict[tuple[str, Collective | None], float] = {}
        self._comps_cache: dict[int, frozenset[int]] = {}
        self._gpu_nics_cache: dict[int, list[int]] = {}

    # -- the healthy reference ------------------------------------------------
    @cached_property
    def healthy(self) -> Analysis:
        """The same fabric and jobs with nothing broken (this one, when it is healthy)."""
        if self._healthy is not None:
            return self._healthy
        if topology.is_healthy(self.fabric, self.obs):
            return self
        obs = topology.healthy_observation(self.fabric)
        return Analysis(self.fabric, obs, self.jobs, routing=self.routing)

    # -- topology ----------------------------------------------------------------
    @property
    def up(self) -> npt.NDArray[np.bool_]:
        """Per element: whether it is up."""
        return self.obs.element_up

    @property
    def cap(self) -> npt.NDArray[np.float64]:
        """Per link: its live capacity (0 when down)."""
        return self.obs.link_capacity

    def live(self, link: int) -> bool:
        """Whether a link has capacity left."""
        return bool(self.cap[link] > 0)

    def link_loss(self, link: int, sender: int) -> float:
        """The fraction of the packets ``sender`` (an end of ``link``) sends over it that are
        lost: 1 when the link is down, its flaky loss otherwise (a lossy link stays up and
        routed: no sweep and no BGP session reroutes around loss)."""
        if not self.live(link):
            return 1.0
        if self.obs.link_loss is None:
            return 0.0
        col = 0 if int(self.fabric.link_a[link]) == sender else 1
        return float(self.obs.link_loss[link, col])

    def lossy_links(self) -> list[int]:
        """The live links that lose packets in at least one direction (``flaky``)."""
        loss = self.obs.link_loss
        if loss is None:
            return []
        return [i for i in np.flatnonzero(loss.max(axis=1) > 0).tolist() if self.live(i)]

    @cached_property
    def switch_component(self) -> IntArray:
        """Per element: component id of a live compute switch, -1 otherwise."""
        return topology.switch_components(self.fabric, self.obs)

    @cached_property
    def access(self) -> AccessPorts:
        """Live access ports: NIC, port number, leaf, component, capacity Gb/s."""
        return topology.access_ports(self.fabric, self.obs, self.switch_component)

    @cached_property
    def reach(self) -> LeafReach:
        """Which live leaves reach which under :attr:`paths` (``up-down`` or ``shortest``)."""
        links = self.up_links if self.paths == "up-down" else None
        return leaf_reach(self.fabric, self.obs, self.paths, self.switch_component, links)

    @cached_property
    def up_links(self) -> UpLinks:
        """The live up-links of the switch graph (what up-down routes climb)."""
        return up_links(self.fabric, self.obs)

    @cached_property
    def nic_ports(self) -> dict[int, dict[int, Signature]]:
        """NIC -> {port: signature of its leaf} over live ports (two ports reach each other
        iff their signatures meet)."""
        sig = self.reach.signature
        return {
            nic: {p: sig[leaf] for p, leaf in ports.items()}
            for nic, ports in self.access.by_nic().items()
        }

    def nic_comps(self, nic: int) -> Signature:
        """What a NIC's live ports reach: two NICs can talk iff theirs meet."""
        got = self._comps_cache.get(nic)
        if got is None:
            got = self._comps_cache[nic] = frozenset().union(*self.nic_ports.get(nic, {}).values())
        return got

    def nic_leaves(self, nic: int) -> list[int]:
        """The live leaves a NIC's live access cables reach."""
        return topology.nic_leaves(self.fabric, self.obs, nic)

    # -- per-server structure --------------------------------------------------
    def parts(self, server: int, kind: Kind) -> list[int]:
        """Indices of a server's parts of one kind (cached)."""
        got = self._parts.get((server, kind))
        if got is None:
            got = self._parts[server, kind] = []
        return got

    @cached_property
    def _parts(self) -> dict[tuple[int, int], list[int]]:
        """(server, kind) -> the server's parts of that kind, in index order, as
        :meth:`Fabric.parts_of` gives them: all of them in one pass (an int kind key finds
        its :class:`Kind` alike)."""
        f = self.fabric
        parts = np.flatnonzero(f.parent >= 0)
        width = max(int(k) for k in Kind) + 1
        key = f.parent[parts].astype(np.int64) * width + f.kind[parts]
        order = np.argsort(key, kind="stable")  # by server, then kind, then index
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else key
        flat = parts[order].tolist()
        ends = [*starts[1:].tolist(), len(flat)]
        return {
            (k // width, k % width): flat[a:b]
            for k, a, b in zip(key[starts].tolist(), starts.tolist(), ends, strict=True)
        }

    @cached_property
    def damaged_servers(self) -> frozenset[int]:
        """Servers with a part down or an internal link below its healthy capacity."""
        return servers.damaged_servers(self.fabric, self.obs)

    @cached_property
    def gpu_nic(self) -> dict[int, int]:
        """GPU -> the rail NIC behind its PCIe switch (healthy wiring)."""
        return servers.gpu_nic_map(self.fabric)

    def gpu_nics(self, gpu: int) -> list[int]:
        """The GPU's own rail NIC, if it is up and reached over a live PCIe switch."""
        got = self._gpu_nics_cache.get(gpu)
        if got is None:
            got = self._gpu_nics_cache[gpu] = servers.gpu_nics(
                self.fabric, self.obs, self.damaged_servers, self.gpu_nic, gpu
            )
        return got

    def _groups(self, by: servers.GroupBy, server: int) -> list[list[int]]:
        if server not in self.damaged_servers:
            return [self.parts(server, Kind.GPU)]
        key = (by, server)
        got = self._groups_cache.get(key)
        if got is None:
            got = self._groups_cache[key] = servers.server_groups(self.fabric, self.obs, server, by)
        return got

    def nvlink_groups(self, server: int) -> list[list[int]]:
        """Live GPUs of a server grouped by NVLink connectivity (through NVSwitches)."""
        return self._groups("nvlink", server)

    def intra_groups(self, server: int) -> list[list[int]]:
        """Groups of a server's GPUs that can talk inside the server (NVLink or PCIe)."""
        return self._groups("intra", server)

    # -- GPU pair connectivity -------------------------------------------------
    @cached_property
    def gpu_reach(self) -> tuple[dict[int, frozenset[int]], dict[int, frozenset[int]]]:
        """Per GPU: components reachable (direct NIC), and with PXN."""
        return connectivity.gpu_reach(self.fabric, self)

    def gpu_comps(self, gpu: int, *, pxn: bool = False) -> frozenset[int]:
        """The NIC components a GPU reaches (through its own NIC, or with PXN)."""
        return self.gpu_reach[1 if pxn else 0][gpu]

    def gpu_pairs_disconnected(self, *, pxn: bool = False) -> int:
        """GPU pairs (dead GPUs included) that cannot talk."""
        return connectivity.gpu_pairs_disconnected(
            self.fabric, self, self.gpu_reach[1 if pxn else 0]
        )

    def gpus_isolated(self, *, pxn: bool = False) -> int:
        """GPUs that can reach no GPU on another server."""
        return connectivity.gpus_isolated(self.fabric, self.gpu_reach[1 if pxn else 0])

    def islands(self, *, pxn: bool = False) -> list[Island]:
        """NIC islands: groups of live NICs that can exchange traffic."""
        return connectivity.islands(self.fabric, self.obs, self, pxn=pxn)

    def rails_connected(self) -> list[int]:
        """Rails whose NICs (all of them, dead ones included) all reach each other."""
        return connectivity.rails_connected(self.fabric, self.obs, self)

    def nics_isolated(self) -> int:
        """Live NICs that reach no other NIC."""
        return connectivity.nics_isolated(self.fabric, self.obs, self)

    def nic_reaches(self, a: int, b: int) -> bool:
        """Whether rail NICs ``a`` and ``b`` (element indices) can exchange packets."""
        return connectivity.nic_reaches(self.obs, self, a, b)

    # -- paths -----------------------------------------------------------------
    @cached_property
    def switch_graph(self) -> RouteGraph:
        """The graph routes under :attr:`paths` are searched in."""
        return paths.switch_graph(self.fabric, self.obs, self.paths)

    def nic_route(self, a: int, b: int) -> tuple[int, ...] | None:
        """The switches of one shortest route from NIC ``a`` to NIC ``b`` (None: none).

        Routes follow :attr:`paths`; every shortest route is as good (ECMP):
        compare lengths and tiers, not ids.
        """
        return paths.nic_route(self.fabric, self.obs, self.switch_graph, a, b)

    def path(self, gpu_a: str, gpu_b: str, *, pxn: bool = False) -> tuple[str, int]:
        """(path class, switches traversed) of the best live path between two GPUs."""
        a, b = (paths.lookup_gpu(self.fabric, x) for x in (gpu_a, gpu_b))
        return paths.gpu_path(self.fabric, self.obs, self, self.switch_graph, (a, b), pxn=pxn)

    # -- jobs ------------------------------------------------------------------
    @cached_property
    def verdicts(self) -> tuple[JobVerdict, ...]:
        """The verdict on every job, in job order (cached)."""
        return tuple(self.judge(job) for job in self.jobs)

    def judge(self, job: Job) -> JobVerdict:
        """The verdict on one job (uncached; :attr:`verdicts` caches the jobs')."""
        return verdicts.judge(self.fabric, self.obs, self, self.nic_ports, job, paths=self.paths)

    def tolerant(self, job: Job, nic: int) -> bool:
        """Whether ``nic`` survives the loss of one of its ports for ``job``."""
        return verdicts.tolerant(self.fabric, job, nic)

    def explain_nic(self, nic: int) -> str:
        """Why a NIC is cut off, naming the element or cable at fault."""
        return verdicts.explain_nic(self.fabric, self.obs, nic, paths=self.paths)

    def jobs_lost(self) -> list[str]:
        """The names of the jobs lost."""
        return [v.name for v in self.verdicts if v.lost]

    def job(self, name: str | None) -> Job:
        """The job called ``name`` (a :class:`ScenarioError` naming the closest if none)."""
        if name is None:
            msg = "this observation needs a job: name one with `job: NAME`"
            raise ScenarioError(msg)
        for job in self.jobs:
            if job.name == name:
                return job
        from harness.inputs.suggest import closest

        near = closest(name, [j.name for j in self.jobs], n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = (
            f"no job named {name!r}{hint} (jobs: {', '.join(j.name for j in self.jobs) or 'none'})"
        )
        raise ScenarioError(msg)

    # -- capacity ----------------------------------------------------------------
    @cached_property
    def leaf_uplinks(self) -> tuple[FloatArray, FloatArray]:
        """Per element: live and healthy uplink capacity (Gb/s) of leaves."""
        return capacity.leaf_uplinks(self.fabric, self.obs)

    @cached_property
    def pod_uplinks(self) -> tuple[dict[int, float], dict[int, float]]:
        """Per pod: live and healthy spine-core uplink capacity (Gb/s)."""
        return capacity.pod_uplinks(self.fabric, self.obs)

    def uplink_gbps(self) -> tuple[FloatArray, dict[int, float]]:
        """Live uplink Gb/s: per element (of leaves), and per pod (spine-core, three tiers)."""
        return self.leaf_uplinks[0], self.pod_uplinks[0]

    def leaf_uplink_ratio(self, leaf: str | None = None) -> float:
        """Live / healthy uplinks of ``leaf``, or the minimum over the live leaves."""
        return capacity.leaf_uplink_ratio(self.fabric, self.obs, self.leaf_uplinks, leaf)

    @cached_property
    def nic_rates(self) -> FloatArray:
        """Per element: usable rate of a rail NIC in GB/s (live ports, PCIe path); 0 else."""
        return capacity.nic_rates(self.fabric, self.obs, self.switch_component)

    @cached_property
    def nvlink_rates(self) -> FloatArray:
        """Per element: bidirectional NVLink GB/s of a GPU through live NVSwitches."""
        return capacity.nvlink_rates(self.fabric, self.obs)

    def nvlink_gbs(self, gpu: int) -> float:
        """Bidirectional NVLink bandwidth of one GPU (GB/s) through live NVSwitches."""
        return float(self.nvlink_rates[gpu])

    def intra_gbs(self, gpu: int) -> float:
        """One-way bandwidth a GPU has to the other GPUs of its server (GB/s)."""
        return capacity.intra_gbs(self.fabric, self.obs, self, self.nvlink_rates, gpu)

    def node_nic_gbs(self, server: int) -> float:
        """A server's live NIC bandwidth, its NICs' rates summed (0 when the server is down)."""
        if not self.up[server]:
            return 0.0
        return sum(float(self.nic_rates[n]) for n in self.parts(server, Kind.NIC))

    @cached_property
    def bisection_gbps(self) -> float:
        """Exact max-flow between the NICs of the two halves of the SUs (Gb/s)."""
        return capacity.bisection_gbps(self.fabric, self.obs)

    # -- bandwidth -------------------------------------------------------------
    @cached_property
    def network(self) -> Network:
        """The live fabric as the flow engine reads it (:mod:`~.traffic`)."""
        return bandwidth.network(self.fabric, self.obs, self.nic_rates)

    @cached_property
    def traffic(self) -> tuple[JobTraffic, ...]:
        """Per job: its collectives' bus bandwidth and what paces them (lost jobs too)."""
        return bandwidth.traffic(self.network, self.jobs, self.forwarding)

    def pod_pair(self, pods: tuple[int, int] | None = None) -> tuple[float, float, str]:
        """(Gb/s, ratio to what a pod can send, which pair): a named pod pair, or the worst."""
        return bandwidth.pod_pair(self.network, pods)

    def job_traffic(self, job: Job) -> JobTraffic:
        """What ``job``'s collectives get from the live fabric (:mod:`~.traffic`)."""
        return self.traffic[self.jobs.index(job)]

    def job_busbw_gbs(self, job: Job, collective: Collective | None = None) -> float:
        """Bus bandwidth of a job's worst collective, or of one (GB/s); 0 when lost."""
        key = (job.name, collective)
        got = self._busbw_cache.get(key)
        if got is None:
            lost = self.verdicts[self.jobs.index(job)].lost
            got = self._busbw_cache[key] = 0.0 if lost else bandwidth.job_busbw_gbs(
                self, job, self.job_traffic(job), intra=self.intra_gbs, collective=collective
            )  # fmt: skip
        return got

    def job_uplink_ratio(self, job: Job) -> float:
        """Live / healthy uplinks of the least served leaf the job's NICs reach (1: none)."""
        return capacity.leaf_set_uplink_ratio(
            self.leaf_uplinks, {x for s in job.servers for n in self.parts(s, Kind.NIC)
                                for x in self.nic_leaves(n)},
        )  # fmt: skip

    def job_busbw_ratio(self, job: Job, collective: Collective | None = None) -> float:
        """A job's bus bandwidth over the healthy fabric's (0 when the healthy one is 0)."""
        base = self.healthy.job_busbw_gbs(job, collective)
        return self.job_busbw_gbs(job, collective) / base if base else 0.0

    # -- storage and checkpoints ---------------------------------------------------
    @cached_property
    def storage_bonds(self) -> tuple[dict[int, float], dict[int, float]]:
        """Per server: live bond Gb/s to storage; per storage switch: live uplink Gb/s."""
        return storage.storage_bonds(self.fabric, self.obs)

    def storage_gbps(self, server: int) -> float:
        """A server's live storage bond Gb/s (0 when the server is down)."""
        return storage.storage_gbps(self.obs, self.storage_bonds[0], server)

    @cached_property
    def storage_members(self) -> dict[int, list[float]]:
        """Per server: the usable Gb/s of each live storage bond member."""
        return storage.storage_members(self.fabric, self.obs)

    def bond_members(self, server: int) -> list[float]:
        """A live server's live storage bond members (Gb/s each; none when it is down)."""
        return self.storage_members.get(server, []) if self.up[server] else []

    def host_copy_gbs(self, server: int) -> float:
        """GPU -> host memory copy bandwidth of a server (GB/s), phase 1 of a 2-phase save."""
        return storage.host_copy_gbs(self.fabric, self.obs, self, server)

    def checkpoint(
        self,
        job: Job,
        size_gb: float,
        *,
        sharded: bool = True,
        shards_per_server: int | None = None,
    ) -> tuple[float, float, float]:
        """(sync stall, async phase-1 stall, background write) in seconds.

        A sharded checkpoint writes ``shards_per_server`` streams per server
        (default: one per GPU, i.e. per rank); an unsharded one, one stream.
        """
        f = self.fabric

        def shards(server: int) -> int:
            return shards_per_server or max(f.node_spec(server).gpus, 1)

        return storage.checkpoint(
            job, size_gb, self.write_s, self.host_copy_gbs, sharded=sharded,
            shards_per_server=shards,
        )  # fmt: skip

    @cached_property
    def bond_ranks(self) -> dict[int, int]:
        """Each bonded server's rank (sets its bond addresses, as netns numbers them)."""
        return storage.bond_ranks(self.fabric)

    def bond_streams(self, server: int, streams: int) -> dict[int, int]:
        """How many of a server's ``streams`` its bond's hash puts on each live storage NIC."""
        nics = storage.live_member_nics(self.fabric, self.obs).get(server, [])
        if not self.up[server] or not nics:
            return {}
        policy = self.fabric.node_spec(server).bond_hash
        placed = bond_hash.placement(policy, self.bond_ranks.get(server, 0), streams, len(nics))
        return {nic: placed.count(k) for k, nic in enumerate(nics)}

    def write_s(self, server: int, size_gb: float, streams: int) -> float:
        """Seconds a server takes to write ``size_gb`` as ``streams`` streams over its bond,
        each on the member its bond's transmit hash picks (inf when nothing is live)."""
        members = self.bond_members(server)
        if not members:
            return float("inf") if size_gb > 0 else 0.0
        return storage.server_write_s(
            self.fabric.node_spec(server).bond_hash, self.bond_ranks.get(server, 0), size_gb,
            streams, members,
        )  # fmt: skip
