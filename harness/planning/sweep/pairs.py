"""GPU pairs that cannot talk, per case: the base's counts, redone for the servers a case touches.

The base's pairs split into same-server and cross-server terms; a case that
cuts NICs or kills servers changes the terms of those servers only, in closed
form (:func:`empty_pairs`) when every live NIC port reaches one class.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from harness.fabric.model import Kind
from harness.invariants.connectivity import cross_bad_pairs
from harness.invariants.connectivity import intra_bad_pairs
from harness.invariants.connectivity import server_pairs_term
from harness.invariants.reach import Signature
from harness.planning.sweep.base import SweepBase


def empty_pairs(n: int, e: int) -> int:
    """GPU pairs with an empty side among ``n`` GPUs of which ``e`` reach nothing (see
    :meth:`CaseEvaluator._inter_pairs`)."""
    return e * (n - e) + e * (e - 1) // 2


def empty_pairs_v(
    n: npt.NDArray[np.int64] | int, e: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """:func:`empty_pairs` of arrays."""
    return np.asarray(e * (n - e) + e * (e - 1) // 2, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class _ServerReach:
    """A server's GPUs in the base: their NICs, what they reach (direct, PXN), NVLink groups
    (positions), the pairs that cannot talk inside it, and its pair terms (direct, PXN)."""

    gpus: list[int]
    nics: list[tuple[int, ...]]
    direct: list[Signature]
    pxn: list[Signature]
    groups: list[list[int]]
    intra: int
    terms: tuple[int, int]


class GpuPairs(SweepBase):
    """The base's GPU-pair tables and the pairs of a case that touches a few servers."""

    @cached_property
    def _gpu_state(self) -> tuple[dict[int, int], dict[int, int], dict[int, int], dict[int, int]]:
        """Per server: GPUs, base direct-empty GPUs, base pxn-empty GPUs; GPU totals."""
        f = self.fabric
        parent = f.parent
        direct, pxn = self.base.gpu_reach
        servers = f.servers.tolist()
        n_s = dict.fromkeys(servers, 0) | Counter(parent[f.gpus].tolist())
        e_direct = dict.fromkeys(servers, 0) | Counter(
            parent[np.array([g for g, r in direct.items() if not r], dtype=np.int64)].tolist()
        )
        e_pxn = dict.fromkeys(servers, 0) | Counter(
            parent[np.array([g for g, r in pxn.items() if not r], dtype=np.int64)].tolist()
        )
        return n_s, e_direct, e_pxn, {}

    @staticmethod
    def _inter_pairs(total: int, empties: int, per_server: Iterable[tuple[int, int]]) -> int:
        """Cross-server GPU pairs with an empty side (all non-empty sides share one component)."""
        inter = empties * (total - empties) + empties * (empties - 1) // 2
        for n, e in per_server:
            inter -= e * (n - e) + e * (e - 1) // 2
        return inter

    @cached_property
    def _gpu_totals(self) -> tuple[int, int, int]:
        """(GPUs, base GPUs without a direct path, base GPUs without a PXN path)."""
        n_s, e_d, e_p, _ = self._gpu_state
        return sum(n_s.values()), sum(e_d.values()), sum(e_p.values())

    @cached_property
    def _base_pairs(self) -> tuple[int, int, int, int]:
        """(intra-server bad pairs direct, pxn, inter direct, inter pxn) of the base."""
        n_s, e_d, e_p, _ = self._gpu_state
        total = sum(n_s.values())
        inter_d = self._inter_pairs(total, sum(e_d.values()), ((n_s[s], e_d[s]) for s in n_s))
        inter_p = self._inter_pairs(total, sum(e_p.values()), ((n_s[s], e_p[s]) for s in n_s))
        intra_d = self.base.gpu_pairs_disconnected() - inter_d
        intra_p = self.base.gpu_pairs_disconnected(pxn=True) - inter_p
        return intra_d, intra_p, inter_d, inter_p

    @cached_property
    def _gpu_arrays(self) -> tuple[npt.NDArray[np.int64], ...]:
        """:attr:`_gpu_state` per element: a server's GPUs, base GPUs with no direct path,
        with no PXN path."""
        n = self.fabric.n_elements
        out = []
        for table in self._gpu_state[:3]:
            arr = np.zeros(n, dtype=np.int64)
            if table:
                arr[np.fromiter(table, dtype=np.int64, count=len(table))] = np.fromiter(
                    table.values(), dtype=np.int64, count=len(table)
                )
            out.append(arr)
        return tuple(out)

    def _intra_bad(self, server: int) -> int:
        """Base same-server GPU pairs that cannot talk."""
        return intra_bad_pairs(self.base, server)

    @cached_property
    def _reach_counts(self) -> tuple[Counter[Signature], Counter[Signature]]:
        """How many GPUs reach each set of classes in the base: directly, with PXN."""
        direct, pxn = self.base.gpu_reach
        return Counter(direct.values()), Counter(pxn.values())

    @cached_property
    def _base_cross(self) -> tuple[int, int]:
        return cross_bad_pairs(self._reach_counts[0]), cross_bad_pairs(self._reach_counts[1])

    def _server_reach(self, server: int) -> _ServerReach:
        got = self._server_cache.get(server)
        if got is None:
            b = self.base
            gpus = b.parts(server, Kind.GPU)
            at = {g: i for i, g in enumerate(gpus)}
            direct, pxn = b.gpu_reach
            d = [direct[g] for g in gpus]
            p = [pxn[g] for g in gpus]
            intra = self._intra_bad(server)
            got = self._server_cache[server] = _ServerReach(
                gpus, [tuple(b.gpu_nics(g)) for g in gpus], d, p,
                [[at[g] for g in group] for group in b.nvlink_groups(server)], intra,
                (server_pairs_term(intra, d), server_pairs_term(intra, p)),
            )  # fmt: skip
        return got

    @cached_property
    def _server_cache(self) -> dict[int, _ServerReach]:
        return {}

    def _case_pairs(
        self, nics: set[int], lost_ports: dict[int, set[int]], dead_servers: set[int]
    ) -> tuple[int, int]:
        """GPU pairs that cannot talk (direct, with PXN) once ``nics`` lost ``lost_ports``
        and ``dead_servers`` died: the base's, redone for the servers they touch."""
        f = self.fabric
        intra_d, intra_p, inter_d, inter_p = self._base_pairs
        touched = sorted({int(f.parent[n]) for n in nics} | dead_servers)
        if not touched:
            return intra_d + inter_d, intra_p + inter_p
        counts: list[Counter[Signature]] | None = None
        terms = [0, 0]
        empty: Signature = frozenset()
        for s in touched:
            sv = self._server_reach(s)
            n = len(sv.gpus)
            if s in dead_servers:
                new = ([empty] * n, [empty] * n)
                intra_new = n * (n - 1) // 2
            else:
                d = list(sv.direct)
                for i, own in enumerate(sv.nics):
                    if any(x in lost_ports for x in own):
                        d[i] = empty.union(*(self._case_comps(x, lost_ports) for x in own))
                if d == sv.direct:
                    continue
                p = [empty] * n
                for group in sv.groups:
                    union = empty.union(*(d[i] for i in group))
                    for i in group:
                        p[i] = union
                new = (d, p)
                intra_new = sv.intra
            if counts is None:
                counts = [c.copy() for c in self._reach_counts]
            for k, old in enumerate((sv.direct, sv.pxn)):
                for o, w in zip(old, new[k], strict=True):
                    if o != w:
                        counts[k][o] -= 1
                        counts[k][w] += 1
                terms[k] += server_pairs_term(intra_new, new[k]) - sv.terms[k]
        if counts is None:
            return intra_d + inter_d, intra_p + inter_p
        base_cross = self._base_cross
        pairs_d = intra_d + inter_d - base_cross[0] + cross_bad_pairs(counts[0]) + terms[0]
        pairs_p = intra_p + inter_p - base_cross[1] + cross_bad_pairs(counts[1]) + terms[1]
        return pairs_d, pairs_p

    def _case_ports(self, nic: int, lost_ports: dict[int, set[int]]) -> dict[int, Signature]:
        """A NIC's live ports and their signatures once the case took ``lost_ports``."""
        ports = self.base.nic_ports.get(nic, {})
        lost = lost_ports.get(nic)
        return {p: sig for p, sig in ports.items() if p not in lost} if lost else ports

    def _case_comps(self, nic: int, lost_ports: dict[int, set[int]]) -> Signature:
        if nic not in lost_ports:
            return self.base.nic_comps(nic)
        return frozenset().union(*self._case_ports(nic, lost_ports).values())
