"""Invariants and measures of a fabric under faults (core layer, pure).

:class:`Analysis` takes a :class:`~harness.fabric.Fabric`, an
:class:`~harness.observation.Observation` and the jobs, and answers every
question a scenario may ask: which GPU pairs can still talk, which jobs are
lost and why, what bandwidth is left.  It never mutates its inputs; results
are computed lazily and cached per instance.

Semantics (the README says the same in plain words):

* **Fabric reachability.** Switches form components over live switch-switch
  cables.  A NIC port reaches the component of the leaf its live access cable
  goes to.  Servers never forward between their NICs (NCCL does not), so two
  NICs can talk iff they reach a common component.
* **GPU pairs.** A GPU uses the rail NIC behind its own PCIe switch
  (GPUDirect RDMA).  With ``pxn`` it may also hand data over NVLink to a GPU
  of its NVLink group and use that GPU's NIC (NCCL PXN).  GPUs of one server
  talk over NVLink, or PCIe through the CPUs.
* **Jobs.** A job is lost when one of its servers, GPUs or PCIe switches is
  down, or when on some rail one of its NICs cannot reach another of its NICs
  (NCCL has no runtime cross-rail failover).  With ``failover: port`` (NCCL
  port failover) or NICs whose ports are bonded in hardware (``nic_lag``), a
  NIC survives as long as one port still reaches the others; otherwise every
  port must (port ``p`` of one NIC to port ``p`` of the other: the same plane).
* **Bandwidth.** Ring all-reduce bus bandwidth = rails x the slowest
  (server, rail) rate of the job, because NCCL splits each collective evenly
  over its channels; a rate is min(NIC ports, PCIe, fair share of the leaf
  uplinks).  Each rail carries one ring over the job's servers in id order;
  a ring edge between servers on different leaves is a flow through both
  leaves' uplinks, and a leaf's uplink capacity is shared equally by the flows
  of all placed jobs (lost ones too: it is the planning view).  Single-server
  jobs run over NVLink.
* **Bisection.** Exact max-flow (``scipy.sparse.csgraph.maximum_flow``,
  integers in units of 0.1 Gb/s) from the NICs of the first half of the SUs to
  those of the second half over live cables.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse import csr_array
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.sparse.csgraph import maximum_flow
from scipy.sparse.csgraph import shortest_path

from harness.errors import ScenarioError
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.jobs import Job
from harness.observation import Observation

IntArray = npt.NDArray[np.int32]
NONE = -1


@dataclass(frozen=True, slots=True)
class JobVerdict:
    """Whether a job survived, and if not, why."""

    name: str
    lost: bool
    reasons: tuple[str, ...] = ()
    culprits: tuple[str, ...] = ()  # element/link ids involved


@dataclass(frozen=True, slots=True)
class Island:
    nics: int
    label: str


def _mask(fabric: Fabric, kinds: Iterable[Kind]) -> npt.NDArray[np.bool_]:
    return np.isin(fabric.kind, np.array([int(k) for k in kinds], dtype=np.int8))


class Analysis:
    """Everything the invariants need, computed lazily from one observation."""

    def __init__(
        self,
        fabric: Fabric,
        observation: Observation,
        jobs: Sequence[Job] = (),
        *,
        healthy: Analysis | None = None,
    ) -> None:
        self.fabric = fabric
        self.obs = observation
        self.jobs = tuple(jobs)
        self._healthy = healthy
        self._parts_cache: dict[tuple[int, Kind], list[int]] = {}
        self._groups_cache: dict[tuple[str, int], list[list[int]]] = {}
        self._busbw_cache: dict[str, float] = {}
        self._comps_cache: dict[int, frozenset[int]] = {}

    # -- the healthy reference ------------------------------------------------
    @cached_property
    def healthy(self) -> Analysis:
        if self._healthy is not None:
            return self._healthy
        f = self.fabric
        obs = Observation("model", np.ones(f.n_elements, dtype=bool), f.link_capacity)
        if np.array_equal(self.obs.element_up, obs.element_up) and np.array_equal(
            self.obs.link_capacity, obs.link_capacity
        ):
            return self
        return Analysis(f, obs, self.jobs)

    # -- basic masks -----------------------------------------------------------
    @property
    def up(self) -> npt.NDArray[np.bool_]:
        return self.obs.element_up

    @property
    def cap(self) -> npt.NDArray[np.float64]:
        return self.obs.link_capacity

    def live(self, link: int) -> bool:
        return bool(self.cap[link] > 0)

    @cached_property
    def _links_by_kind(self) -> dict[LinkKind, IntArray]:
        return {k: self.fabric.links_of_kind(k) for k in LinkKind}

    # -- switch components -----------------------------------------------------
    @cached_property
    def switch_component(self) -> IntArray:
        """Per element: component id of a live compute switch, -1 otherwise."""
        f = self.fabric
        sw = _mask(f, COMPUTE_SWITCH_KINDS) & self.up
        links = np.concatenate(
            [self._links_by_kind[LinkKind.LEAF_SPINE], self._links_by_kind[LinkKind.SPINE_CORE]]
        )
        links = links[self.cap[links] > 0]
        n = f.n_elements
        g = coo_matrix(
            (np.ones(links.size, dtype=np.int8), (f.link_a[links], f.link_b[links])), shape=(n, n)
        )
        _, labels = connected_components(g, directed=False)
        return np.where(sw, labels, NONE).astype(np.int32)

    @cached_property
    def access(self) -> tuple[IntArray, IntArray, IntArray, npt.NDArray[np.float64]]:
        """Live access ports: (nic, port number, component, capacity Gb/s)."""
        f = self.fabric
        links = self._links_by_kind[LinkKind.ACCESS]
        nic = f.link_a[links]
        leaf = f.link_b[links]
        comp = self.switch_component[leaf]
        ok = (self.cap[links] > 0) & (comp >= 0)
        return (
            nic[ok].astype(np.int32),
            f.link_a_port[links][ok].astype(np.int32),
            comp[ok].astype(np.int32),
            self.cap[links][ok],
        )

    @cached_property
    def nic_ports(self) -> dict[int, dict[int, int]]:
        """NIC -> {port: component} over live ports."""
        nic, port, comp, _ = self.access
        out: dict[int, dict[int, int]] = defaultdict(dict)
        for n, p, c in zip(nic.tolist(), port.tolist(), comp.tolist(), strict=True):
            out[n][p] = c
        return out

    def nic_comps(self, nic: int) -> frozenset[int]:
        got = self._comps_cache.get(nic)
        if got is None:
            got = self._comps_cache[nic] = frozenset(self.nic_ports.get(nic, {}).values())
        return got

    # -- per-server structure --------------------------------------------------
    def parts(self, server: int, kind: Kind) -> list[int]:
        """Indices of a server's parts of one kind (cached)."""
        key = (server, kind)
        got = self._parts_cache.get(key)
        if got is None:
            got = self.fabric.parts_of(server, kind).tolist()
            self._parts_cache[key] = got
        return got

    @cached_property
    def _internal_kinds(self) -> frozenset[int]:
        return frozenset({int(LinkKind.NVLINK), int(LinkKind.PCIE), int(LinkKind.CPU_LINK)})

    def _adj(self, element: int) -> list[tuple[int, int]]:
        """[(other end, link)] over the internal (NVLink/PCIe/CPU) links of an element."""
        f = self.fabric
        out = []
        kinds = self._internal_kinds
        for link in f.links_at(element).tolist():
            if int(f.link_kind[link]) in kinds:
                a = int(f.link_a[link])
                out.append((int(f.link_b[link]) if a == element else a, link))
        return out

    @cached_property
    def damaged_servers(self) -> frozenset[int]:
        """Servers with a part down or an internal link below its healthy capacity."""
        f = self.fabric
        internal = np.flatnonzero(f.link_kind <= int(LinkKind.CPU_LINK))
        weak = internal[self.cap[internal] < f.link_capacity[internal]]
        hit = set(f.parent[f.link_a[weak]].tolist())
        down = np.flatnonzero(~self.up)
        hit |= set(f.parent[down][f.parent[down] >= 0].tolist())
        hit |= set(down[f.kind[down] == int(Kind.NODE)].tolist())
        hit.discard(-1)
        return frozenset(int(x) for x in hit)

    @cached_property
    def gpu_nic(self) -> dict[int, int]:
        """GPU -> the rail NIC behind its PCIe switch (healthy wiring)."""
        f = self.fabric
        nic_of = {(int(p), int(r)): int(n) for n, p, r in
                  zip(f.nics.tolist(), f.parent[f.nics].tolist(), f.rail[f.nics].tolist(),
                      strict=True)}  # fmt: skip
        out = {}
        for g, p, r in zip(f.gpus.tolist(), f.parent[f.gpus].tolist(), f.rail[f.gpus].tolist(),
                           strict=True):  # fmt: skip
            n = nic_of.get((int(p), int(r)))
            if n is not None:
                out[int(g)] = n
        return out

    def _gpu_nics(self, gpu: int) -> list[int]:
        """The GPU's own rail NIC, if it is up and reached over a live PCIe switch."""
        if not self.up[gpu]:
            return []
        if int(self.fabric.parent[gpu]) not in self.damaged_servers:
            n = self.gpu_nic.get(gpu)
            return [] if n is None else [n]
        out = []
        rail = self.fabric.rail[gpu]
        for sw, link in self._adj(gpu):
            if self.fabric.kind[sw] != int(Kind.PCIE_SWITCH) or not self.up[sw]:
                continue
            if self.cap[link] <= 0:
                continue
            for nic, l2 in self._adj(sw):
                # the same NIC as on a healthy server: with two NICs behind one PCIe switch
                # (H100, H800, B200) the other one belongs to the neighbouring GPU
                if self.fabric.kind[nic] != int(Kind.NIC) or self.fabric.rail[nic] != rail:
                    continue
                if self.up[nic] and self.cap[l2] > 0:
                    out.append(nic)
        return out

    def _server_groups(self, what: str, server: int) -> list[list[int]]:
        """A server's live GPUs grouped by ``what`` ("nvlink": through live
        NVSwitches; "intra": through anything inside the server), cached.
        An undamaged server is one group."""
        if server not in self.damaged_servers:
            return [self.parts(server, Kind.GPU)]
        key = (what, server)
        if key not in self._groups_cache:
            f = self.fabric
            gpus = [g for g in self.parts(server, Kind.GPU) if self.up[g]]
            uf = _UnionFind()
            if what == "nvlink":
                for g in gpus:
                    uf.add(g)
                    for sw, link in self._adj(g):
                        if f.kind[sw] == int(Kind.NVSWITCH) and self.up[sw] and self.cap[link] > 0:
                            uf.union(g, ("nvsw", sw))
            else:
                parts = f.children.get(server, np.empty(0, dtype=np.int32)).tolist()
                alive = {p for p in parts if self.up[p] and f.kind[p] != int(Kind.NIC)}
                for p in alive:
                    uf.add(p)
                    for q, link in self._adj(p):
                        if q in alive and self.cap[link] > 0:
                            uf.union(p, q)
            self._groups_cache[key] = uf.groups(gpus)
        return self._groups_cache[key]

    def _nvlink_groups(self, server: int) -> list[list[int]]:
        """Live GPUs of a server grouped by NVLink connectivity (through NVSwitches)."""
        return self._server_groups("nvlink", server)

    @cached_property
    def _gpu_info(self) -> tuple[dict[int, frozenset[int]], dict[int, frozenset[int]]]:
        """Per GPU: components reachable (direct NIC), and with PXN."""
        direct: dict[int, frozenset[int]] = {}
        pxn: dict[int, frozenset[int]] = {}
        for srv in self.fabric.servers.tolist():
            for g in self.parts(srv, Kind.GPU):
                comps: set[int] = set()
                for n in self._gpu_nics(g):
                    comps |= self.nic_comps(n)
                direct[g] = frozenset(comps)
            for group in self._nvlink_groups(srv):
                union = frozenset().union(*(direct[g] for g in group))
                for g in group:
                    pxn[g] = union
            for g in self.parts(srv, Kind.GPU):
                pxn.setdefault(g, frozenset())
        return direct, pxn

    def gpu_comps(self, gpu: int, *, pxn: bool = False) -> frozenset[int]:
        return self._gpu_info[1 if pxn else 0][gpu]

    def _intra_connected(self, server: int) -> list[list[int]]:
        """Groups of a server's GPUs that can talk inside the server (NVLink or PCIe)."""
        return self._server_groups("intra", server)

    # -- GPU pair connectivity -------------------------------------------------
    def gpu_pairs_disconnected(self, *, pxn: bool = False) -> int:
        """GPU pairs (dead GPUs included) that cannot talk."""
        f = self.fabric
        sigs = self._gpu_info[1 if pxn else 0]
        groups: dict[frozenset[int], int] = defaultdict(int)
        for g in f.gpus.tolist():
            groups[sigs[g]] += 1
        keys = list(groups)
        bad = 0
        for i, a in enumerate(keys):
            na = groups[a]
            if not a:
                bad += na * (na - 1) // 2
            for b in keys[i + 1 :]:
                if not (a & b):
                    bad += na * groups[b]
        # same-server pairs: judged by NVLink/PCIe, not by the fabric
        for srv in f.servers.tolist():
            gpus = self.parts(srv, Kind.GPU)
            n = len(gpus)
            if srv not in self.damaged_servers and all(
                sigs[g] and sigs[g] == sigs[gpus[0]] for g in gpus
            ):
                continue  # all talk over NVLink and all share fabric components
            fabric_bad = sum(
                1 for x in range(n) for y in range(x + 1, n) if not (sigs[gpus[x]] & sigs[gpus[y]])
            )
            intra_groups = self._intra_connected(srv)
            intra_ok = sum(len(gr) * (len(gr) - 1) // 2 for gr in intra_groups)
            bad += (n * (n - 1) // 2 - intra_ok) - fabric_bad
        return bad

    def gpus_isolated(self, *, pxn: bool = False) -> int:
        """GPUs that can reach no GPU on another server."""
        f = self.fabric
        sigs = self._gpu_info[1 if pxn else 0]
        servers_of: dict[int, set[int]] = defaultdict(set)
        for g in f.gpus.tolist():
            for c in sigs[g]:
                servers_of[c].add(int(f.parent[g]))
        # a GPU's own server is in servers_of[c] for each c it reaches, so it is
        # isolated iff each of its components touches no other server
        spread = {c: len(v) for c, v in servers_of.items()}
        return sum(1 for g in f.gpus.tolist() if all(spread[c] <= 1 for c in sigs[g]))

    def islands(self, *, pxn: bool = False) -> list[Island]:
        """NIC islands: groups of live NICs that can exchange traffic."""
        f = self.fabric
        nics = [n for n in f.nics.tolist() if self.up[n]]
        uf = _UnionFind()
        for n in nics:
            uf.add(n)
            for c in self.nic_comps(n):
                uf.union(n, ("c", c))
        if pxn:
            for srv in f.servers.tolist():
                for group in self._nvlink_groups(srv):
                    used = [nic for g in group for nic in self._gpu_nics(g)]
                    for nic in used[1:]:
                        uf.union(used[0], nic)
        out = []
        for group in sorted(uf.groups(nics), key=lambda g: (-len(g), g[0])):
            sus = sorted({int(f.su[n]) for n in group})
            rails = sorted({int(f.rail[n]) for n in group})
            label = f"{len(group)} NICs: SU {_ranges(sus)}, rail {_ranges(rails)}"
            if len(group) == 1:
                label = f"1 NIC: {f.ids[group[0]]}"
            out.append(Island(len(group), label))
        return out

    def rails_connected(self) -> list[int]:
        """Rails whose NICs (all of them, dead ones included) all reach each other."""
        f = self.fabric
        out = []
        for r in range(f.rails):
            nics = f.nics[f.rail[f.nics] == r].tolist()
            sigs: dict[frozenset[int], int] = defaultdict(int)
            for n in nics:
                sigs[self.nic_comps(n) if self.up[n] else frozenset()] += 1
            keys = list(sigs)
            ok = all(k for k in keys) and all(
                a & b for i, a in enumerate(keys) for b in keys[i + 1 :]
            )
            if ok:
                out.append(r)
        return out

    def nics_isolated(self) -> int:
        """Live NICs that reach no other NIC."""
        f = self.fabric
        per_comp: dict[int, int] = defaultdict(int)
        live = [n for n in f.nics.tolist() if self.up[n]]
        for n in live:
            for c in self.nic_comps(n):
                per_comp[c] += 1
        return sum(1 for n in live if not any(per_comp[c] > 1 for c in self.nic_comps(n)))

    # -- paths -----------------------------------------------------------------
    @cached_property
    def _switch_graph(self) -> csr_matrix:
        f = self.fabric
        links = np.concatenate(
            [self._links_by_kind[LinkKind.LEAF_SPINE], self._links_by_kind[LinkKind.SPINE_CORE]]
        )
        links = links[self.cap[links] > 0]
        n = f.n_elements
        return coo_matrix(
            (np.ones(links.size), (f.link_a[links], f.link_b[links])), shape=(n, n)
        ).tocsr()

    def _nic_leaves(self, nic: int) -> list[int]:
        f = self.fabric
        out = []
        for link in f.links_at(nic).tolist():
            if f.link_kind[link] == int(LinkKind.ACCESS) and self.cap[link] > 0:
                leaf = f.other_end(link, nic)
                if self.up[leaf]:
                    out.append(leaf)
        return out

    def nic_leaves(self, nic: int) -> list[int]:
        """The live leaves a NIC's live access cables reach."""
        return self._nic_leaves(nic)

    def uplink_gbps(self) -> tuple[npt.NDArray[np.float64], dict[int, float]]:
        """Live uplink Gb/s: per element (of leaves), and per pod (spine-core, three tiers)."""
        return self._leaf_uplinks[0], self._pod_uplinks[0]

    def nic_reaches(self, a: int, b: int) -> bool:
        """Whether rail NICs ``a`` and ``b`` (element indices) can exchange packets."""
        return bool(self.up[a] and self.up[b] and self.nic_comps(a) & self.nic_comps(b))

    def nic_route(self, a: int, b: int) -> tuple[int, ...] | None:
        """The switches of one shortest live path from NIC ``a`` to NIC ``b`` (None: none).

        Every shortest path is as good (ECMP): compare lengths and tiers, not ids.
        """
        if not (self.up[a] and self.up[b]):
            return None
        leaves_a, leaves_b = self._nic_leaves(a), self._nic_leaves(b)
        if not leaves_a or not leaves_b:
            return None
        dist, pred = shortest_path(
            self._switch_graph, directed=False, unweighted=True, indices=leaves_a,
            return_predecessors=True,
        )  # fmt: skip
        sub = dist[:, leaves_b]
        if not np.isfinite(sub.min()):
            return None
        i, j = np.unravel_index(int(np.argmin(sub)), sub.shape)
        node, hops = leaves_b[int(j)], []
        while node >= 0:
            hops.append(int(node))
            if node == leaves_a[int(i)]:
                break
            node = int(pred[int(i), node])
        return tuple(reversed(hops))

    def path(self, gpu_a: str, gpu_b: str, *, pxn: bool = False) -> tuple[str, int]:
        """(path class, switches traversed) of the best live path between two GPUs."""
        f = self.fabric
        a, b = (self._lookup_gpu(x) for x in (gpu_a, gpu_b))
        if not (self.up[a] and self.up[b]):
            return "disconnected", -1
        sa, sb = int(f.parent[a]), int(f.parent[b])
        if sa == sb:
            if any(a in gr and b in gr for gr in self._nvlink_groups(sa)):
                return "nvlink", 0
            if any(a in gr and b in gr for gr in self._intra_connected(sa)):
                return "pcie", 0
            return "disconnected", -1

        def sources(g: int, srv: int) -> list[int]:
            if not pxn:
                return self._gpu_nics(g)
            for group in self._nvlink_groups(srv):
                if g in group:
                    return [n for h in group for n in self._gpu_nics(h)]
            return []

        leaves_a = sorted({x for n in sources(a, sa) for x in self._nic_leaves(n)})
        leaves_b = sorted({x for n in sources(b, sb) for x in self._nic_leaves(n)})
        if not leaves_a or not leaves_b:
            return "disconnected", -1
        dist, pred = shortest_path(
            self._switch_graph,
            directed=False,
            unweighted=True,
            indices=leaves_a,
            return_predecessors=True,
        )
        sub = dist[:, leaves_b]
        best = float(sub.min())
        if not np.isfinite(best):
            return "disconnected", -1
        i, j = np.unravel_index(int(np.argmin(sub)), sub.shape)
        hops = int(best) + 1
        if hops == 1:
            return "rail-local", 1
        # walk the path back to see whether it climbs to a core
        node, src_row = leaves_b[int(j)], int(i)
        via_core = False
        while node != leaves_a[src_row] and node >= 0:
            if f.kind[node] == int(Kind.CORE):
                via_core = True
            node = int(pred[src_row, node])
        if via_core:
            return "cross-pod", hops
        if int(f.su[sa]) == int(f.su[sb]):
            return "cross-rail", hops
        return "cross-su", hops

    def _lookup_gpu(self, gid: str) -> int:
        f = self.fabric
        i = f.index.get(gid)
        if i is None or f.kind[i] != int(Kind.GPU):
            from harness.suggest import closest

            near = closest(gid, [f.ids[g] for g in f.gpus.tolist()], n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"{gid!r} is not a GPU of fabric {f.name!r}{hint}"
            raise ScenarioError(msg)
        return i

    # -- jobs ------------------------------------------------------------------
    @cached_property
    def verdicts(self) -> tuple[JobVerdict, ...]:
        return tuple(self._judge(job) for job in self.jobs)

    def _judge(self, job: Job) -> JobVerdict:
        f = self.fabric
        reasons: list[str] = []
        culprits: list[str] = []
        for srv in job.servers:
            if not self.up[srv]:
                reasons.append(f"server {f.ids[srv]} is down")
                culprits.append(f.ids[srv])
                continue
            for kind in (Kind.GPU, Kind.PCIE_SWITCH, Kind.CPU):
                for p in self.parts(srv, kind):
                    if not self.up[p]:
                        reasons.append(f"{kind.label} {f.ids[p]} is down")
                        culprits.append(f.ids[p])
            if srv not in self.damaged_servers:
                continue
            for g in self.parts(srv, Kind.GPU):
                for sw, link in self._adj(g):
                    if f.kind[sw] == int(Kind.PCIE_SWITCH) and self.cap[link] <= 0 and self.up[g]:
                        reasons.append(f"{f.ids[g]} lost its PCIe link")
                        culprits.append(f.link_ids[link])
        if len(job.servers) >= 2:
            for r in range(f.rails):
                self._judge_rail(job, r, reasons, culprits)
        return JobVerdict(job.name, bool(reasons), tuple(reasons), tuple(dict.fromkeys(culprits)))

    def _tolerant(self, job: Job, nic: int) -> bool:
        spec = self.fabric.node_spec(nic)
        return (job.failover == "port" and spec.nic_ports > 1) or spec.nic_lag

    def _judge_rail(self, job: Job, rail: int, reasons: list[str], culprits: list[str]) -> None:
        f = self.fabric
        nics = []
        for srv in job.servers:
            if not self.up[srv]:
                continue
            rail_nics = [n for n in self.parts(srv, Kind.NIC) if f.rail[n] == rail]
            nics.extend(rail_nics)
        if len(nics) < 2:
            return
        bad: list[int] = []
        for n in nics:
            ports = self.nic_ports.get(n, {})
            need = f.node_spec(n).nic_ports
            if not self.up[n] or not ports or (not self._tolerant(job, n) and len(ports) < need):
                bad.append(n)
        if not bad:
            # reachability: strict = same component per port; tolerant = any shared component
            strict = [n for n in nics if not self._tolerant(job, n)]
            keys: dict[Any, list[int]] = defaultdict(list)
            for n in strict:
                keys[tuple(sorted(self.nic_ports[n].items()))].append(n)
            if len(keys) > 1:
                groups = sorted(keys.values(), key=len)
                bad.extend(n for g in groups[:-1] for n in g)
            sigs: dict[frozenset[int], list[int]] = defaultdict(list)
            for n in nics:
                sigs[self.nic_comps(n)].append(n)
            sk = list(sigs)
            for i, a in enumerate(sk):
                for b in sk[i + 1 :]:
                    if not a & b:
                        smaller = a if len(sigs[a]) <= len(sigs[b]) else b
                        bad.extend(sigs[smaller])
        for n in sorted(set(bad))[:8]:
            why = self.explain_nic(n)
            reasons.append(f"{f.ids[n]} (rail {rail}) cannot reach the job's other NICs: {why}")
            culprits.append(f.ids[n])
        if len(set(bad)) > 8:
            reasons.append(f"... and {len(set(bad)) - 8} more NICs on rail {rail}")

    def explain_nic(self, nic: int) -> str:
        """Why a NIC is cut off, naming the element or cable at fault."""
        f = self.fabric
        srv = int(f.parent[nic])
        if not self.up[srv]:
            return f"its server {f.ids[srv]} is down"
        if not self.up[nic]:
            return "the NIC is down"
        causes = []
        for link in f.links_at(nic).tolist():
            if f.link_kind[link] != int(LinkKind.ACCESS):
                continue
            leaf = f.other_end(link, nic)
            if not self.up[leaf]:
                causes.append(f"leaf {f.ids[leaf]} is down")
            elif self.cap[link] <= 0:
                causes.append(f"cable {f.link_ids[link]} is down")
            elif self.switch_component[leaf] >= 0:
                ups = [
                    x for x in f.links_at(leaf).tolist()
                    if f.link_kind[x] == int(LinkKind.LEAF_SPINE) and self.cap[x] > 0
                ]  # fmt: skip
                if not ups:
                    causes.append(f"leaf {f.ids[leaf]} has no live uplink")
        return "; ".join(causes) or "its fabric component differs from the others'"

    def jobs_lost(self) -> list[str]:
        return [v.name for v in self.verdicts if v.lost]

    # -- bandwidth -------------------------------------------------------------
    @cached_property
    def _leaf_uplinks(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per element: live and healthy uplink capacity (Gb/s) of leaves."""
        f = self.fabric
        links = self._links_by_kind[LinkKind.LEAF_SPINE]
        live: npt.NDArray[np.float64] = np.bincount(
            f.link_a[links], weights=self.cap[links], minlength=f.n_elements
        ).astype(np.float64)
        full: npt.NDArray[np.float64] = np.bincount(
            f.link_a[links], weights=f.link_capacity[links], minlength=f.n_elements
        ).astype(np.float64)
        return live, full

    @cached_property
    def _pod_uplinks(self) -> tuple[dict[int, float], dict[int, float]]:
        f = self.fabric
        links = self._links_by_kind[LinkKind.SPINE_CORE]
        live: dict[int, float] = defaultdict(float)
        full: dict[int, float] = defaultdict(float)
        pods = f.pod[f.link_a[links]].tolist()
        for p, c, h in zip(pods, self.cap[links].tolist(), f.link_capacity[links].tolist(),
                           strict=True):  # fmt: skip
            live[p] += c
            full[p] += h
        return live, full

    def leaf_uplink_ratio(self, leaf: str | None = None) -> float:
        live, full = self._leaf_uplinks
        f = self.fabric
        if leaf is not None:
            i = f.index.get(leaf)
            if i is None or f.kind[i] != int(Kind.LEAF):
                msg = f"{leaf!r} is not a leaf of fabric {f.name!r}"
                raise ScenarioError(msg)
            return float(live[i] / full[i]) if full[i] else 0.0
        leaves = f.leaves[self.up[f.leaves]]
        if not leaves.size or not full[leaves].any():
            return 0.0
        has = leaves[full[leaves] > 0]
        return float((live[has] / full[has]).min())

    def _port_leaf(self, nic: int) -> dict[int, int]:
        """Port -> leaf for a NIC's access cables (live or not)."""
        f = self.fabric
        out = {}
        for link in f.links_at(nic).tolist():
            if f.link_kind[link] == int(LinkKind.ACCESS):
                out[int(f.link_a_port[link])] = f.other_end(link, nic)
        return out

    @cached_property
    def nic_rates(self) -> npt.NDArray[np.float64]:
        """Per element: usable rate of a rail NIC in GB/s (live ports, PCIe path); 0 else."""
        f = self.fabric
        n = f.n_elements
        acc = self._links_by_kind[LinkKind.ACCESS]
        ok = self.switch_component[f.link_b[acc]] >= 0
        ports = np.bincount(f.link_a[acc], weights=self.cap[acc] * ok, minlength=n)
        pcie = self._links_by_kind[LinkKind.PCIE]
        a, b = f.link_a[pcie], f.link_b[pcie]
        from_gpu = f.kind[a] == int(Kind.GPU)
        gpu_side = np.bincount(
            b[from_gpu], weights=self.cap[pcie][from_gpu] * self.up[a[from_gpu]], minlength=n
        )
        from_nic = f.kind[a] == int(Kind.NIC)
        nic_pcie = np.zeros(n)
        nic_pcie[a[from_nic]] = self.cap[pcie][from_nic] * self.up[b[from_nic]]
        gpu_of_nic = np.zeros(n)
        gpu_of_nic[a[from_nic]] = gpu_side[b[from_nic]]
        rate = np.minimum(np.minimum(ports, nic_pcie), gpu_of_nic) / 8.0
        rate = np.where((f.kind == int(Kind.NIC)) & self.up, rate, 0.0)
        rate.flags.writeable = False
        return rate

    def _nic_rate_gbs(self, nic: int) -> float:
        """A NIC's usable rate (GB/s): live ports, limited by its PCIe path."""
        return float(self.nic_rates[nic])

    @cached_property
    def nvlink_rates(self) -> npt.NDArray[np.float64]:
        """Per element: bidirectional NVLink GB/s of a GPU through live NVSwitches."""
        f = self.fabric
        nv = self._links_by_kind[LinkKind.NVLINK]
        a, b = f.link_a[nv], f.link_b[nv]
        total = np.bincount(a, weights=self.cap[nv] * self.up[b], minlength=f.n_elements)
        rate = np.where(self.up, total / 8.0 * 2, 0.0)
        rate.flags.writeable = False
        return rate

    @cached_property
    def _flows(self) -> tuple[dict[int, int], dict[int, int], dict[int, int], dict[int, int]]:
        """Ring flows crossing leaves and pods: out/in counts per leaf, out/in per pod."""
        f = self.fabric
        leaf_out: dict[int, int] = defaultdict(int)
        leaf_in: dict[int, int] = defaultdict(int)
        pod_out: dict[int, int] = defaultdict(int)
        pod_in: dict[int, int] = defaultdict(int)
        for job in self.jobs:
            for _, _, leaf_a, leaf_b, _ in self.ring_flows(job):
                leaf_out[leaf_a] += 1
                leaf_in[leaf_b] += 1
                if f.tiers == 3 and f.pod[leaf_a] != f.pod[leaf_b]:
                    pod_out[int(f.pod[leaf_a])] += 1
                    pod_in[int(f.pod[leaf_b])] += 1
        return leaf_out, leaf_in, pod_out, pod_in

    def ring_flows(self, job: Job) -> list[tuple[int, int, int, int, int]]:
        """The job's ring edges that cross leaves: (NIC a, NIC b, leaf a, leaf b, ports).

        One ring per rail over the job's servers in id order; port ``p`` of a
        NIC talks to port ``p`` of the next server's NIC (the same plane).
        """
        out = []
        for a, b in self._ring_edges(job):
            for na, nb in self._rail_pairs(a, b):
                la, lb = self._port_leaf(na), self._port_leaf(nb)
                for p, leaf_a in la.items():
                    leaf_b = lb.get(p)
                    if leaf_b is not None and leaf_b != leaf_a:
                        out.append((na, nb, leaf_a, leaf_b, max(len(la), 1)))
        return out

    @staticmethod
    def _ring_edges(job: Job) -> list[tuple[int, int]]:
        s = job.servers
        if len(s) < 2:
            return []
        return [(s[i], s[(i + 1) % len(s)]) for i in range(len(s))] if len(s) > 2 else [
            (s[0], s[1]), (s[1], s[0])
        ]  # fmt: skip

    def _rail_pairs(self, a: int, b: int) -> list[tuple[int, int]]:
        na = self.parts(a, Kind.NIC)
        nb = self.parts(b, Kind.NIC)
        return list(zip(na, nb, strict=False))

    def _share(self, leaf_a: int, leaf_b: int) -> float:
        """Gb/s one flow gets through the uplinks of both leaves (and pods)."""
        f = self.fabric
        live, _ = self._leaf_uplinks
        lo, li, po, pi = self._flows
        share = min(live[leaf_a] / max(lo[leaf_a], 1), live[leaf_b] / max(li[leaf_b], 1))
        if f.tiers == 3 and f.pod[leaf_a] != f.pod[leaf_b]:
            plive, _ = self._pod_uplinks
            pa, pb = int(f.pod[leaf_a]), int(f.pod[leaf_b])
            share = min(share, plive[pa] / max(po[pa], 1), plive[pb] / max(pi[pb], 1))
        return float(share)

    def job_busbw_gbs(self, job: Job) -> float:
        """Ring all-reduce bus bandwidth estimate of a job (GB/s); 0 when lost."""
        got = self._busbw_cache.get(job.name)
        if got is None:
            got = self._busbw_cache[job.name] = self._job_busbw(job)
        return got

    def _job_busbw(self, job: Job) -> float:
        verdict = self.verdicts[self.jobs.index(job)]
        if verdict.lost:
            return 0.0
        f = self.fabric
        nvlink = min(
            (self.intra_gbs(g) for s in job.servers for g in self.parts(s, Kind.GPU)),
            default=0.0,
        )
        if len(job.servers) < 2:
            return nvlink if np.isfinite(nvlink) else 0.0  # one GPU: no collective
        rates: dict[int, float] = {}
        for s in job.servers:
            for n in self.parts(s, Kind.NIC):
                rates[n] = self._nic_rate_gbs(n)
        for na, nb, leaf_a, leaf_b, nports in self.ring_flows(job):
            flow = self._share(leaf_a, leaf_b) / 8.0
            rates[na] = min(rates[na], flow * nports)
            rates[nb] = min(rates[nb], flow * nports)
        rails = f.rails
        return min(rails * min(rates.values()), nvlink) if rates else nvlink

    def job(self, name: str | None) -> Job:
        if name is None:
            msg = "this observation needs a job: name one with `job: NAME`"
            raise ScenarioError(msg)
        for job in self.jobs:
            if job.name == name:
                return job
        from harness.suggest import closest

        near = closest(name, [j.name for j in self.jobs], n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = (
            f"no job named {name!r}{hint} (jobs: {', '.join(j.name for j in self.jobs) or 'none'})"
        )
        raise ScenarioError(msg)

    def job_busbw_ratio(self, job: Job) -> float:
        base = self.healthy.job_busbw_gbs(job)
        return self.job_busbw_gbs(job) / base if base else 0.0

    # -- capacity ----------------------------------------------------------------
    def nvlink_gbs(self, gpu: int) -> float:
        """Bidirectional NVLink bandwidth of one GPU (GB/s) through live NVSwitches."""
        return float(self.nvlink_rates[gpu])

    def intra_gbs(self, gpu: int) -> float:
        """One-way bandwidth a GPU has to the other GPUs of its server (GB/s).

        NVLink (half the bidirectional figure); with no NVLink left, its PCIe
        link, if the server's GPUs can still reach each other through the CPUs.
        """
        nv = float(self.nvlink_rates[gpu]) / 2
        if nv > 0 or not self.up[gpu]:
            return nv
        srv = int(self.fabric.parent[gpu])
        if not any(gpu in g and len(g) > 1 for g in self._intra_connected(srv)):
            return 0.0 if len(self.parts(srv, Kind.GPU)) > 1 else float("inf")
        return max(
            (float(self.cap[link]) / 8.0 for sw, link in self._adj(gpu)
             if self.fabric.kind[sw] == int(Kind.PCIE_SWITCH)),
            default=0.0,
        )  # fmt: skip

    def node_nic_gbs(self, server: int) -> float:
        if not self.up[server]:
            return 0.0
        return sum(self._nic_rate_gbs(n) for n in self.parts(server, Kind.NIC))

    @cached_property
    def bisection_gbps(self) -> float:
        """Exact max-flow between the NICs of the two halves of the SUs (Gb/s)."""
        f = self.fabric
        if f.n_sus < 2:
            msg = f"bisection needs at least 2 SUs; fabric {f.name!r} has {f.n_sus}"
            raise ScenarioError(msg)
        half = (f.n_sus + 1) // 2
        n = f.n_elements
        src, dst = n, n + 1
        sw_links = np.concatenate(
            [self._links_by_kind[LinkKind.LEAF_SPINE], self._links_by_kind[LinkKind.SPINE_CORE]]
        )
        sw_links = sw_links[self.cap[sw_links] > 0]
        units = np.floor(self.cap * 10).astype(np.int64)  # 0.1 Gb/s units
        rows = [f.link_a[sw_links], f.link_b[sw_links]]
        cols = [f.link_b[sw_links], f.link_a[sw_links]]
        vals = [units[sw_links], units[sw_links]]
        acc = self._links_by_kind[LinkKind.ACCESS]
        acc = acc[self.cap[acc] > 0]
        leaf = f.link_b[acc]
        side_a = f.su[leaf] <= half
        rows += [np.full(int(side_a.sum()), src), leaf[~side_a]]
        cols += [leaf[side_a], np.full(int((~side_a).sum()), dst)]
        vals += [units[acc][side_a], units[acc][~side_a]]
        m = coo_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(n + 2, n + 2),
        ).tocsr()
        m.sum_duplicates()
        if m.data.size and m.data.max() > np.iinfo(np.int32).max:
            msg = "bisection capacities overflow 32-bit flow units"
            raise ScenarioError(msg)
        flow_graph = csr_array((m.data.astype(np.int32), m.indices, m.indptr), shape=m.shape)
        return float(maximum_flow(flow_graph, src, dst).flow_value) / 10.0

    # -- storage and checkpoints ---------------------------------------------------
    @cached_property
    def _storage(self) -> tuple[dict[int, float], dict[int, float]]:
        """Per server: live bond Gb/s to storage; per storage switch: uplink share."""
        f = self.fabric
        links = self._links_by_kind[LinkKind.STORAGE]
        up_live: dict[int, float] = defaultdict(float)
        demand: dict[int, float] = defaultdict(float)
        member: list[tuple[int, int, float]] = []
        for i in links.tolist():
            a, b = int(f.link_a[i]), int(f.link_b[i])
            if f.kind[a] == int(Kind.STORAGE_SWITCH):
                up_live[a] += float(self.cap[i])
            elif self.cap[i] > 0:
                member.append((int(f.parent[a]), b, float(self.cap[i])))
                demand[b] += float(self.cap[i])
        bond: dict[int, float] = defaultdict(float)
        for srv, sw, c in member:
            if up_live[sw] > 0:
                bond[srv] += c * min(1.0, up_live[sw] / demand[sw])
        return bond, up_live

    def storage_gbps(self, server: int) -> float:
        if not self.up[server]:
            return 0.0
        return self._storage[0].get(server, 0.0)

    def host_copy_gbs(self, server: int) -> float:
        """GPU -> host memory copy bandwidth of a server (GB/s), phase 1 of a 2-phase save."""
        f = self.fabric
        if not self.up[server]:
            return 0.0
        spec = f.node_spec(server)
        total = 0.0
        for sw in self.parts(server, Kind.PCIE_SWITCH):
            for cpu, link in self._adj(sw):
                if f.kind[cpu] == int(Kind.CPU) and self.up[cpu] and self.up[sw]:
                    total += float(self.cap[link]) / 8.0
        return min(total, spec.host_memory_gbs)

    def checkpoint(
        self, job: Job, size_gb: float, *, sharded: bool = True
    ) -> tuple[float, float, float]:
        """(sync stall, async phase-1 stall, background write) in seconds."""
        writers = list(job.servers) if sharded else list(job.servers[:1])
        share = size_gb / len(writers)
        sync = max(
            (share * 8 / bw if (bw := self.storage_gbps(s)) > 0 else float("inf")) for s in writers
        )
        phase1 = max(
            (share / bw if (bw := self.host_copy_gbs(s)) > 0 else float("inf")) for s in writers
        )
        return sync, phase1, sync


class _UnionFind:
    """Disjoint sets over hashable items (path halving)."""

    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def add(self, x: Any) -> None:
        self.parent.setdefault(x, x)

    def find(self, x: Any) -> Any:
        self.add(x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: Any, b: Any) -> None:
        self.parent[self.find(a)] = self.find(b)

    def groups(self, items: Iterable[int]) -> list[list[int]]:
        """The given items grouped by set, in first-seen order."""
        out: dict[Any, list[int]] = defaultdict(list)
        for x in items:
            out[self.find(x)].append(x)
        return list(out.values())


def _ranges(values: list[int]) -> str:
    """[1,2,3,5] -> '1-3,5'."""
    if not values:
        return "-"
    out = []
    start = prev = values[0]
    for v in values[1:]:
        if v == prev + 1:
            prev = v
            continue
        out.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = v
    out.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(out)
