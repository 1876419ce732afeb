"""Flows of a job when no flow crosses two leaves: re-evaluated for the NICs a case touches.

The failure sweep's fast path (:mod:`harness.planning.sweep.local`) uses
:class:`LeafLocalFlows` instead of placing every flow again.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from harness.fabric.jobs import Collective
from harness.fabric.jobs import Job
from harness.fabric.routing import Forwarding
from harness.invariants.collectives import rank_flows
from harness.invariants.network import Network
from harness.invariants.traffic import ECMP_DRAWS
from harness.invariants.traffic import over_draws


class LeafLocalFlows:
    """One job's flows when no flow of any job crosses two leaves: fast re-evaluation.

    Then no flow takes a cable or a pooled capacity, so jobs do not share
    anything and a flow's rate is its demand, ``min(rate of the sender /
    flows out, rate of the receiver / flows in)``, or 0 when the two NICs
    have no live port of one plane in common: exactly what :func:`job_traffic`
    computes in that case (the same float operations).  :meth:`busbw` gives
    each collective's bus bandwidth after some NICs changed their rate or
    lost ports, re-evaluating only the flows of those NICs (the failure
    sweep's fast path).
    """

    def __init__(self, net: Network, job: Job, forwarding: Forwarding) -> None:
        self.job = job
        self.rails = net.fabric.rails
        self.draws = ECMP_DRAWS if forwarding == "ecmp" else 1
        self.rate = net.nic_rate
        self.live = net.port_leaf >= 0  # (NIC, port slot) -> a live port
        self._rows: dict[int, tuple[bool, ...]] = {}  # NIC -> its live port slots
        rows = net.server_row[np.array(job.servers, dtype=np.int64)]
        self.flows: list[_LocalCollective] = []
        for collective in job.collectives:
            s_rank, d_rank = rank_flows(collective, len(job.servers))
            out_deg = np.bincount(s_rank, minlength=len(job.servers))
            in_deg = np.bincount(d_rank, minlength=len(job.servers))
            volume = float(max(out_deg.max(), in_deg.max())) if s_rank.size else 0.0
            a = net.rail_nics[rows[s_rank]].T.reshape(-1)  # rail-major
            b = net.rail_nics[rows[d_rank]].T.reshape(-1)
            n_out = np.tile(out_deg[s_rank], self.rails).astype(np.float64)
            n_in = np.tile(in_deg[d_rank], self.rails).astype(np.float64)
            ok = (a >= 0) & (b >= 0)
            a, b, n_out, n_in = a[ok], b[ok], n_out[ok], n_in[ok]
            common = (self.live[a] & self.live[b]).any(axis=1)
            demand = np.minimum(self.rate[a] / n_out, self.rate[b] / n_in)
            value = np.where(common, demand, 0.0) * volume  # as job_traffic's demand x scale
            of_nic: dict[int, list[int]] = defaultdict(list)
            for k, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
                of_nic[x].append(k)
                if y != x:
                    of_nic[y].append(k)
            self.flows.append(_LocalCollective(
                a.tolist(), b.tolist(), n_out.tolist(), n_in.tolist(), volume, value.tolist(),
                np.argsort(value, kind="stable").tolist(), dict(of_nic),
            ))  # fmt: skip

    def _live_row(self, nic: int) -> tuple[bool, ...]:
        got = self._rows.get(nic)
        if got is None:
            got = self._rows[nic] = tuple(bool(x) for x in self.live[nic])
        return got

    def busbw(
        self, rate: dict[int, float], lost_slots: dict[int, set[int]]
    ) -> dict[Collective, float]:
        """Bus bandwidth (GB/s) per collective once the NICs in ``rate`` run at that rate
        (GB/s) and the NICs in ``lost_slots`` lost those port slots (0-based)."""
        touched = set(rate) | set(lost_slots)

        def rate_of(nic: int) -> float:
            return rate[nic] if nic in rate else float(self.rate[nic])

        rows: dict[int, list[bool]] = {}

        def live_of(nic: int) -> list[bool]:
            row = rows.get(nic)
            if row is None:
                row = rows[nic] = list(self._live_row(nic))
                for slot in lost_slots.get(nic, ()):
                    row[slot] = False
            return row

        best = []
        for c in self.flows:
            hit = {k for nic in touched for k in c.of_nic.get(nic, ())}
            low = next((c.value[k] for k in c.order if k not in hit), math.inf)
            for k in hit:
                x, y = c.a[k], c.b[k]
                common = any(p and q for p, q in zip(live_of(x), live_of(y), strict=True))
                demand = min(rate_of(x) / c.n_out[k], rate_of(y) / c.n_in[k])
                low = min(low, (demand if common else 0.0) * c.volume)
            best.append(low)
        if self.draws == 1:  # the mean of one draw is the draw itself
            expected = [v * self.rails for v in best]
        else:  # the same reduction as job_traffic's (two columns at least)
            padded = np.array([*best, 0.0])
            expected = over_draws([padded] * self.draws, padded.size, self.rails)[0].tolist()
        return dict(zip(self.job.collectives, expected[: len(best)], strict=True))


@dataclass(frozen=True, slots=True)
class _LocalCollective:
    """One collective's flows over all rails (:class:`LeafLocalFlows`), as Python lists."""

    a: list[int]  # sender NIC
    b: list[int]  # receiver NIC
    n_out: list[float]  # flows out of the sender's rank
    n_in: list[float]  # flows into the receiver's rank
    volume: float  # per-rank volume (scale to a full NIC)
    value: list[float]  # the flow's rate x volume in the base
    order: list[int]  # flows by value, slowest first
    of_nic: dict[int, list[int]]  # NIC -> its flows
