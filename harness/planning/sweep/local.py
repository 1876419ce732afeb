"""The fast path of one case: a case that splits no class of leaves, evaluated from what it touches.

:meth:`LocalPath._evaluate_fast` collects the NIC ports, leaf uplinks and
storage links a case takes down, judges the jobs on the NICs it cuts or
degrades, and recomputes only the bus bandwidth of the jobs whose flows it
moves (:class:`~harness.invariants.leaf_flows.LeafLocalFlows` when no flow crosses leaves).
"""

from __future__ import annotations

from collections import Counter
from collections import defaultdict
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import numpy.typing as npt

from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants import bandwidth
from harness.invariants.capacity import nic_rate
from harness.invariants.capacity import nic_rate_terms
from harness.invariants.leaf_flows import LeafLocalFlows
from harness.invariants.reach import Signature
from harness.invariants.verdicts import tolerant
from harness.planning.sweep.flow_cuts import cut_busbw
from harness.planning.sweep.flows import FlowDelta
from harness.planning.sweep.pairs import GpuPairs
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure


class LocalPath(GpuPairs):
    """Evaluate one case locally: ports, uplinks, storage and flows it touches."""

    def _evaluate_fast(self, failures: Sequence[Failure]) -> CaseResult:
        f = self.fabric
        up = self.base.up
        lost_ports: dict[int, set[int]] = defaultdict(set)
        dead_servers: set[int] = set()
        uplive, _ = self._uplinks
        changed_leaves: dict[int, float] = {}
        dead_leaves: set[int] = set()
        lost_members: set[int] = set()  # storage NIC -> storage switch links lost
        uplink_cut: dict[int, float] = {}  # storage switch -> uplink Gb/s lost
        dead_storage_switches: set[int] = set()
        members = self._storage_share[3]
        s_base, s_healthy = self._storage
        killed = {x.index for x in failures if x.kind == "element"}
        seen_links: set[int] = set()
        switched = False  # a switch or a switch-to-switch cable goes: routes move
        for x in failures:
            i = x.index
            if x.kind != "element":
                # a cable whose end dies in the same case, or the second optic of
                # one cable, changes nothing more
                if i in seen_links or int(f.link_a[i]) in killed or int(f.link_b[i]) in killed:
                    continue
                seen_links.add(i)
            if x.kind == "element":
                k = Kind(int(f.kind[i]))
                if not up[i]:
                    continue
                if k is Kind.LEAF:
                    dead_leaves.add(i)
                    for nic, port in self._leaf_ports.get(i, []):
                        lost_ports[nic].add(port)
                elif k in (Kind.SPINE, Kind.CORE):
                    switched = True
                    for link in f.links_at(i).tolist():
                        if f.link_kind[link] == int(LinkKind.LEAF_SPINE):
                            leaf = f.other_end(link, i)
                            changed_leaves[leaf] = changed_leaves.get(leaf, uplive[leaf]) - float(
                                self.base.cap[link]
                            )
                elif k is Kind.NIC:
                    lost_ports[i].update(self._ports.get(i, {}))
                elif k is Kind.NODE:
                    dead_servers.add(i)
                elif k is Kind.STORAGE_SWITCH:
                    lost_members.update(link for _, _, link in members.get(i, []))
                    dead_storage_switches.add(i)
                elif k is Kind.STORAGE_NIC:
                    for link in f.links_at(i).tolist():
                        if int(f.link_kind[link]) == int(LinkKind.STORAGE):
                            lost_members.add(link)
            else:
                if self.base.cap[i] <= 0:
                    continue
                lk = LinkKind(int(f.link_kind[i]))
                switched = switched or lk in (LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
                if lk is LinkKind.ACCESS:
                    lost_ports[int(f.link_a[i])].add(int(f.link_a_port[i]))
                elif lk is LinkKind.LEAF_SPINE:
                    leaf = int(f.link_a[i])
                    changed_leaves[leaf] = changed_leaves.get(leaf, uplive[leaf]) - float(
                        self.base.cap[i]
                    )
                elif lk is LinkKind.STORAGE:
                    a = int(f.link_a[i])
                    if f.kind[a] == int(Kind.STORAGE_NIC):
                        lost_members.add(i)
                    else:  # a storage switch uplink: every server behind it shares less
                        uplink_cut[a] = uplink_cut.get(a, 0.0) + float(self.base.cap[i])
        storage_hit = self._storage_hits(lost_members, uplink_cut, dead_storage_switches)
        # NICs cut (no live port left) or degraded (a port lost)
        cut: set[int] = set()
        degraded: set[int] = set()
        for nic, ports in lost_ports.items():
            live = set(self._ports.get(nic, {}))
            if not live:
                continue
            if live <= ports:
                cut.add(nic)
            else:
                degraded.add(nic)
        # jobs
        reasons: list[str] = []
        new_lost: set[int] = set()
        for s in dead_servers:
            for j in self._job_of_server.get(s, []):
                new_lost.add(j)
                reasons.append(f"{self.jobs[j].name}: server {f.ids[s]} is down")
        rejudge: dict[tuple[int, int], list[int]] = defaultdict(list)  # (job, rail) -> NICs
        for nic in sorted(cut | degraded):
            s = int(f.parent[nic])
            for j in self._job_of_server.get(s, []):
                job = self.jobs[j]
                if len(job.servers) < 2:
                    continue
                if nic in cut or not tolerant(f, job, nic):
                    if j not in new_lost:
                        reasons.append(f"{job.name}: {f.ids[nic]} cut off")
                    new_lost.add(j)
                elif not self._single_component:  # one class: a live port reaches them all
                    rejudge[j, int(f.rail[nic])].append(nic)
        for (j, rail), nics in rejudge.items():
            if j not in new_lost and not self._rail_meets(j, rail, nics, lost_ports):
                new_lost.add(j)
                reasons.append(f"{self.jobs[j].name}: {f.ids[nics[0]]} cannot reach the job's "
                               f"other NICs on rail {rail}")  # fmt: skip
        lost_names = tuple(
            sorted(self.jobs[j].name for j in new_lost if self.jobs[j].name not in self._base_lost)
        )
        # GPU pairs
        pairs_d, pairs_p = self._case_pairs(cut | degraded, lost_ports, dead_servers)
        # leaf uplinks
        ratio = self._uplink_ratio(changed_leaves, dead_leaves, dead_servers)
        # bus bandwidth
        moved = (
            switched
            or bool(dead_leaves)
            or any(
                self._multi_server_jobs(s)
                for s in {int(f.parent[n]) for n in cut | degraded} | dead_servers
            )
        )  # some flow's path, rate or end changes (lost jobs' flows load links too)
        busbw, slowest = self._busbw_ratio(moved, new_lost, failures, degraded, lost_ports)
        # storage
        storage = 1.0
        if storage_hit or dead_servers:
            vals = [
                (storage_hit.get(s, s_base[s]) / s_healthy[s]) if s_healthy[s] else 1.0
                for s in s_base
                if up[s] and s not in dead_servers
            ]
            storage = min(vals, default=1.0)
        elif s_base:
            storage = self._base_storage_ratio
        bis = None
        if self.bisection:
            bis = self._bisection(failures)
        return CaseResult(
            tuple(failures), pairs_p, pairs_d, lost_names, ratio, busbw, storage, False, bis,
            tuple(reasons[:6]), slowest,
        )  # fmt: skip

    def _storage_hits(
        self, lost: set[int], uplink_cut: dict[int, float], dead: set[int]
    ) -> dict[int, float]:
        """New storage bond Gb/s of every server behind a storage switch the case touches.

        A switch's uplinks are shared by its live members in proportion, as
        :func:`harness.invariants.storage.storage_bonds` does: fewer members raise
        the others' share.
        """
        if not lost and not uplink_cut:
            return {}
        f = self.fabric
        shares, up_live, demand, members = self._storage_share
        touched = {int(f.link_b[link]) for link in lost} | set(uplink_cut)
        new_share: dict[int, float] = {}
        for sw in touched:
            gone = sum(c for _, c, link in members.get(sw, []) if link in lost)
            d = demand.get(sw, 0.0) - gone
            up = 0.0 if sw in dead else up_live.get(sw, 0.0) - uplink_cut.get(sw, 0.0)
            new_share[sw] = min(1.0, up / d) if d > 0 else 1.0
        s_base = self._storage[0]
        hits: dict[int, float] = {}
        for sw in touched:
            for s, c, link in members.get(sw, []):
                old = c * shares.get(sw, 1.0)
                new = 0.0 if link in lost or up_live.get(sw, 0.0) <= 0 else c * new_share[sw]
                hits[s] = hits.get(s, s_base[s]) - old + new
        return hits

    def _busbw_ratio(
        self,
        moved: bool,
        lost: set[int],
        failures: Sequence[Failure],
        degraded: set[int] = frozenset(),  # type: ignore[assignment]
        lost_ports: dict[int, set[int]] | None = None,
    ) -> tuple[float, str]:
        """Min bus bandwidth ratio of a fast case over the jobs that survive it, and that job:
        the base's, but for the jobs it loses and those running on a NIC that lost a port
        (``degraded``).

        When some job's flows cross leaves and the case ``moved`` something
        they may use (a switch, a switch-to-switch cable, a NIC or server of
        a job), the flows are placed again on the case's fabric (static and
        hashed routes depend on which cables are live; lost jobs' flows load
        the links too), exactly as the full analysis does: only those the case
        moves when :class:`.flows.FlowDelta` covers it, else all of them.  When
        no flow crosses leaves, jobs share no link and only the flows of the
        degraded NICs are evaluated again
        (:class:`~harness.invariants.leaf_flows.LeafLocalFlows`).
        """
        if not self.jobs:
            return 1.0, ""
        base, _ = self._busbw
        f = self.fabric
        hit = sorted({
            j for n in degraded for j in self._job_of_server.get(int(f.parent[n]), [])
            if j not in lost and base[j] > 0 and len(self.jobs[j].servers) > 1
        })  # fmt: skip
        if moved and self._flows.any():
            if FlowDelta.applies(f, self.base.network, failures):
                got = self._flow_delta.busbw(failures, self._nvlink_gbs)
                for j in lost:
                    got[j] = 0.0
                return self._min_busbw(np.where(base > 0, got, 0.0))
            a = self._case_analysis(failures)
            return self._min_busbw(np.array([
                0.0 if j in lost or base[j] <= 0 else bandwidth.job_busbw_gbs(
                    a, job, a.job_traffic(job), intra=a.intra_gbs)
                for j, job in enumerate(self.jobs)
            ], dtype=np.float64))  # fmt: skip
        bw = base.copy()
        for j in lost:
            bw[j] = 0.0
        for j in hit:
            bw[j] = self._local_busbw(j, degraded, lost_ports or {})
        return self._min_busbw(bw)

    def case_busbw_without(
        self, failures: Sequence[Failure], gone: Sequence[str]
    ) -> tuple[float, str]:
        """:meth:`SweepBase.case_busbw_without`, from the flows the case moves when
        :class:`.flows.FlowDelta` covers it (the same per-job figures as the full analysis:
        a reroute that crashes the slowest job of thousands of cases must not analyse each)."""
        if not (self.jobs and self._flows.any()) or not FlowDelta.applies(
            self.fabric, self.base.network, failures
        ):
            return super().case_busbw_without(failures, gone)
        base, _ = self._busbw
        got = self._flow_delta.busbw(failures, self._nvlink_gbs).copy()
        out = set(gone)
        for j, job in enumerate(self.jobs):
            if job.name in out:
                got[j] = 0.0
        return self._min_busbw(np.where(base > 0, got, 0.0))

    @cached_property
    def _tight_nics(self) -> npt.NDArray[np.bool_]:
        """Per element: whether base flows from or to it (a NIC) cross a link direction or pool
        that is full in some routing draw (an ECMP collision, a degraded uplink).

        Cutting such a NIC takes its flows off that resource and speeds up the other
        jobs' flows there, so a case that cuts it cannot take the survivors' bandwidth
        from the base (:func:`.kernels_nics.survivors`); on resources with room to
        spare taking flows off leaves every share at exactly 1.
        """
        out = np.zeros(self.fabric.n_elements, dtype=np.bool_)
        if not (self.jobs and self._flows.any()):
            return out
        d = self._flow_delta
        for draw in d.draws:
            on = np.isin(draw.paths, draw.res_ids[~draw.slack]).any(axis=1)
            out[d.fl.src[on]] = True
            out[d.fl.dst[on]] = True
        return out

    @cached_property
    def _flow_delta(self) -> FlowDelta:
        """The base's flows placed once, for the cases that move flows (:mod:`.flows`)."""
        return FlowDelta(self.base.network, self.jobs, self.forwarding)

    def _cut_busbw(self, links: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], list[str]]:
        """Per live leaf-spine cable of ``links``: the least bus bandwidth ratio with it cut
        (no job lost) and its job, as :meth:`_busbw_ratio` gives them
        (:func:`.flow_cuts.cut_busbw`)."""
        base, _ = self._busbw
        known = self._cut_ratios  # a cable and its two optics, in any order of calls
        new = np.array(sorted({i for i in links.tolist() if i not in known}), dtype=np.int64)
        if new.size:
            fabric = cut_busbw(self._flow_delta, new)
            nv = np.array(self._nvlink_gbs, dtype=np.float64)
            single = np.array([len(job.servers) < 2 for job in self.jobs], dtype=np.bool_)
            got = np.where(single, np.where(np.isfinite(nv), nv, 0.0), np.minimum(fabric, nv))
            ratios, slowest = self._min_busbw_rows(np.where(base > 0, got, 0.0))
            known.update(zip(new.tolist(), zip(ratios.tolist(), slowest, strict=True),
                             strict=True))  # fmt: skip
        got_links = [known[i] for i in links.tolist()]
        return np.array([r for r, _ in got_links], dtype=np.float64), [j for _, j in got_links]

    @cached_property
    def _cut_ratios(self) -> dict[int, tuple[float, str]]:
        """Leaf-spine cable -> the least bus bandwidth ratio with it cut, and its job (so far)."""
        return {}

    def _local_busbw(self, j: int, degraded: set[int], lost_ports: dict[int, set[int]]) -> float:
        """Job ``j``'s bus bandwidth (GB/s) once ``degraded`` NICs lost ``lost_ports`` (no flow
        of any job crosses leaves): as :func:`harness.invariants.bandwidth.job_busbw_gbs`."""
        f = self.fabric
        servers = set(self.jobs[j].servers)
        mine = [n for n in degraded if int(f.parent[n]) in servers]
        rates = {n: self._case_rate(n, lost_ports[n]) for n in mine}
        slots = {n: {max(p, 1) - 1 for p in lost_ports[n]} for n in mine}
        per = self._local_flows(j).busbw(rates, slots)
        return float(min(min(per.values(), default=np.inf), self._nvlink_gbs[j]))

    def _local_flows(self, j: int) -> LeafLocalFlows:
        got = self._local_cache.get(j)
        if got is None:
            got = self._local_cache[j] = LeafLocalFlows(
                self.base.network, self.jobs[j], self.forwarding
            )
        return got

    @cached_property
    def _local_cache(self) -> dict[int, LeafLocalFlows]:
        return {}

    @cached_property
    def _nvlink_gbs(self) -> list[float]:
        """Per job: its GPUs' least one-way bandwidth inside their server (GB/s; 0: none)."""
        b = self.base
        return [
            min((b.intra_gbs(g) for s in job.servers for g in b.parts(s, Kind.GPU)), default=0.0)
            for job in self.jobs
        ]

    @cached_property
    def _nic_terms(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per element: a NIC's live port Gb/s and PCIe path Gb/s in the base."""
        return nic_rate_terms(self.fabric, self.base.obs, self.base.switch_component)

    def _case_rate(self, nic: int, lost: set[int]) -> float:
        """A live NIC's rate (GB/s) once it lost the ports ``lost``, as the full analysis
        computes it (its live ports' Gb/s summed in cable order)."""
        ports = 0.0
        for port, link in sorted(self._ports.get(nic, {}).items(), key=lambda pl: pl[1]):
            if port not in lost:
                ports += float(self.base.cap[link])
        _, path = self._nic_terms
        return float(nic_rate(np.array([ports]), path[nic : nic + 1])[0])

    @cached_property
    def _rail_sigs(self) -> dict[tuple[int, int], Counter[Signature]]:
        """(job, rail) -> how many of the job's NICs on that rail reach each signature."""
        f = self.fabric
        b = self.base
        out: dict[tuple[int, int], Counter[Signature]] = defaultdict(Counter)
        for j, job in enumerate(self.jobs):
            for s in job.servers:
                if b.up[s]:
                    for n in b.parts(s, Kind.NIC):
                        out[j, int(f.rail[n])][b.nic_comps(n)] += 1
        return out

    def _rail_meets(
        self, j: int, rail: int, nics: Sequence[int], lost_ports: dict[int, set[int]]
    ) -> bool:
        """Whether the job's NICs on ``rail`` still all reach each other once the tolerant
        ``nics`` lost ports (the job was whole in the base): what
        :func:`harness.invariants.verdicts.judge` checks of a NIC that keeps a live port."""
        sigs = self._rail_sigs[j, rail].copy()
        for n in nics:
            sigs[self.base.nic_comps(n)] -= 1
            sigs[self._case_comps(n, lost_ports)] += 1
        keys = [k for k, v in sigs.items() if v > 0]
        return all(a & b for i, a in enumerate(keys) for b in keys[i + 1 :])
