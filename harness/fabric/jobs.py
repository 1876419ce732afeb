"""Training jobs placed on servers, and their checkpoints (fabric stage, pure).

A job uses every GPU and every rail NIC of its servers, as NCCL does.  Jobs
come from a scenario (``jobs:``), a jobs file (``--jobs FILE``) or the
``per-su`` shorthand: one job per SU over all of its servers.

>>> from harness.fabric import preset
>>> jobs = resolve_jobs([JobSpec(per_su=True)], preset("seed-a800"))
>>> len(jobs), jobs[0].name, len(jobs[0].servers)
(10, 'su01', 20)
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Literal

import numpy as np

from harness.errors import Origin
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.inputs.durations import parse_duration

Failover = Literal["none", "port"]
FAILOVERS: tuple[Failover, ...] = ("none", "port")
Collective = Literal["ring", "tree", "all-to-all"]
COLLECTIVES: tuple[Collective, ...] = ("ring", "tree", "all-to-all")
DEFAULT_COLLECTIVES: tuple[Collective, ...] = ("ring", "tree")
"""NCCL picks ring or tree per message size, so by default a job is judged by the worse."""
RankOrder = Literal["given", "sorted"]
RANK_ORDERS: tuple[RankOrder, ...] = ("given", "sorted")
_KEYS = ("name", "nodes", "per-su", "failover", "timeout", "collectives", "ranks")


def nccl_ib_timeout_s(timeout: int = 20, retry_cnt: int = 7) -> float:
    """Seconds NCCL waits on a dead InfiniBand/RoCE peer before the job fails.

    The queue pair's local ACK timeout is 4.096 us x 2^``NCCL_IB_TIMEOUT``,
    retried ``NCCL_IB_RETRY_CNT`` times, so an operation stalls for
    4.096 us x 2^timeout x (retry_cnt + 1) before the verbs error reaches
    NCCL and the collective fails.  Defaults: ``NCCL_IB_TIMEOUT=20`` and
    ``NCCL_IB_RETRY_CNT=7`` (NCCL 2.23 and later; 2.14 to 2.22 used 18).

    >>> round(nccl_ib_timeout_s(), 1)
    34.4
    >>> round(nccl_ib_timeout_s(18), 1)
    8.6
    """
    return 4.096e-6 * float(2**timeout) * (retry_cnt + 1)


DEFAULT_TIMEOUT_S = nccl_ib_timeout_s()


def parse_timeout(raw: Any) -> float:
    """A job timeout in seconds from a number or a duration string.

    >>> parse_timeout(5), parse_timeout("5s"), parse_timeout("500ms"), parse_timeout("2m")
    (5.0, 5.0, 0.5, 120.0)
    """
    return parse_duration(raw, "timeout")


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A job as written: a name and node patterns, or the per-SU shorthand."""

    name: str = ""
    nodes: tuple[str, ...] = ()
    per_su: bool = False
    failover: Failover = "none"
    timeout: float = DEFAULT_TIMEOUT_S  # seconds a stalled collective waits before the job fails
    collectives: tuple[Collective, ...] = DEFAULT_COLLECTIVES
    ranks: RankOrder = "given"  # rank order: the node list as written, or sorted by id
    origin: Origin | None = field(default=None, compare=False)  # where a jobs file wrote it

    def error(self, message: str) -> ScenarioError:
        """A :class:`ScenarioError` placed where this job was written (if known)."""
        err = ScenarioError(message)
        return err if self.origin is None else self.origin.locate(err)

    @classmethod
    def parse(cls, raw: Any) -> JobSpec:
        """Parse one job entry of a scenario or jobs file (``per-su`` or a mapping)."""
        if raw == "per-su":
            return cls(per_su=True)
        if not isinstance(raw, dict):
            msg = "a job is a mapping {name: N, nodes: GLOB|[ids]} or {per-su: true}"
            raise ScenarioError(msg)
        unknown = set(raw) - set(_KEYS)
        if unknown:
            import difflib

            key = sorted(unknown)[0]
            near = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"unknown job key {key!r}{hint} (known: {', '.join(_KEYS)})"
            raise ScenarioError(msg)
        failover = raw.get("failover", "none")
        if failover not in FAILOVERS:
            msg = f"failover is 'none' or 'port', got {failover!r}"
            raise ScenarioError(msg)
        timeout = parse_timeout(raw["timeout"]) if "timeout" in raw else DEFAULT_TIMEOUT_S
        collectives = parse_collectives(raw.get("collectives", list(DEFAULT_COLLECTIVES)))
        ranks = raw.get("ranks", "given")
        if ranks not in RANK_ORDERS:
            msg = (
                f"ranks is 'given' (the order of nodes:, as the launcher starts them) or "
                f"'sorted' (by node id), got {ranks!r}"
            )
            raise ScenarioError(msg)
        extra = {"failover": failover, "timeout": timeout, "collectives": collectives,
                 "ranks": ranks}  # fmt: skip
        if raw.get("per-su"):
            if "nodes" in raw or "name" in raw or "ranks" in raw:
                msg = (
                    "per-su jobs take no name, nodes or ranks (they are named su01, su02... "
                    "and ranked in node order)"
                )
                raise ScenarioError(msg)
            return cls(per_su=True, **extra)
        name, nodes = raw.get("name"), raw.get("nodes")
        if not isinstance(name, str) or not name:
            msg = "a job needs a name (or per-su: true)"
            raise ScenarioError(msg)
        if isinstance(nodes, str):
            nodes = [nodes]
        if not (isinstance(nodes, list) and nodes and all(isinstance(n, str) for n in nodes)):
            msg = f"job {name!r} needs nodes: a glob or a list of node ids/globs"
            raise ScenarioError(msg)
        return cls(name=name, nodes=tuple(nodes), **extra)


@dataclass(frozen=True, slots=True)
class Job:
    """A job resolved against a fabric: server indices in rank order.

    Rank order is the order of the job's ``nodes:`` (each pattern's matches in
    id order, a server named twice counted once), or sorted by id with
    ``ranks: sorted``.  ``collectives`` are the collectives it runs (NCCL's
    ``ring`` and ``tree`` by default; ``all-to-all`` for expert parallelism).

    ``timeout`` is the NCCL-equivalent timeout in seconds: a collective
    stalled that long makes the job fail (see :func:`nccl_ib_timeout_s`).
    """

    name: str
    servers: tuple[int, ...]
    failover: Failover = "none"
    timeout: float = DEFAULT_TIMEOUT_S
    collectives: tuple[Collective, ...] = DEFAULT_COLLECTIVES


@dataclass(frozen=True, slots=True)
class CheckpointSpec:
    """Checkpoint of one job: size of the whole checkpoint, sharded or not.

    ``shards_per_server``: streams each server writes when sharded (None: one
    per GPU, one per rank).
    """

    size_gb: float
    sharded: bool = True
    interval_s: float | None = None
    shards_per_server: int | None = None


def parse_collectives(raw: Any) -> tuple[Collective, ...]:
    """A job's ``collectives:``: one name or a list of them, each once.

    >>> parse_collectives("all-to-all"), parse_collectives(["tree", "ring"])
    (('all-to-all',), ('tree', 'ring'))
    """
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not items:
        msg = (
            f"collectives is one of {', '.join(COLLECTIVES)} or a list of them, "
            f"e.g. collectives: [ring, tree]; got {raw!r}"
        )
        raise ScenarioError(msg)
    out: list[Collective] = []
    for item in items:
        if item not in COLLECTIVES:
            from harness.inputs.suggest import closest

            near = closest(str(item), list(COLLECTIVES), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"unknown collective {item!r}{hint} (known: {', '.join(COLLECTIVES)})"
            raise ScenarioError(msg)
        if item in out:
            msg = f"collective {item!r} is listed twice; list each once"
            raise ScenarioError(msg)
        out.append(item)
    return tuple(out)


def resolve_jobs(specs: Sequence[JobSpec], fabric: Fabric) -> tuple[Job, ...]:
    """Resolve job specs; every pattern must match at least one server."""
    jobs: list[Job] = []
    made_by: list[JobSpec] = []  # per job: the spec it came from (for located errors)
    servers = fabric.servers.tolist()
    names = [fabric.ids[i] for i in servers]
    for spec in specs:
        if spec.per_su:
            su_of = fabric.su[fabric.servers]
            width = max(2, len(str(fabric.n_sus)))
            for s in sorted(set(su_of.tolist())):
                members = tuple(int(i) for i in fabric.servers[su_of == s].tolist())
                jobs.append(Job(f"su{s:0{width}d}", members, spec.failover, spec.timeout,
                                spec.collectives))  # fmt: skip
                made_by.append(spec)
            continue
        chosen: dict[int, None] = {}  # in rank order
        for pattern in spec.nodes:
            regex = re.compile(fnmatch.translate(pattern))
            hit = [servers[i] for i, n in enumerate(names) if regex.match(n)]
            if not hit:
                from harness.inputs.suggest import closest

                near = closest(pattern, names, n=3)
                hint = f"; closest: {', '.join(near)}" if near else ""
                msg = f"job {spec.name!r}: nodes {pattern!r} match no server{hint}"
                raise spec.error(msg)
            chosen.update(dict.fromkeys(hit))
        ranks = sorted(chosen) if spec.ranks == "sorted" else list(chosen)
        jobs.append(Job(spec.name, tuple(ranks), spec.failover, spec.timeout, spec.collectives))
        made_by.append(spec)
    seen: set[str] = set()
    for job, spec in zip(jobs, made_by, strict=True):
        if job.name in seen:
            msg = f"two jobs are named {job.name!r}; job names must be unique"
            raise spec.error(msg)
        seen.add(job.name)
    return tuple(jobs)


def job_matrix(jobs: Sequence[Job], n_elements: int) -> np.ndarray[Any, np.dtype[np.int32]]:
    """Per element: index of the job using that server (-1: none)."""
    owner = np.full(n_elements, -1, dtype=np.int32)
    for j, job in enumerate(jobs):
        owner[list(job.servers)] = j
    return owner
