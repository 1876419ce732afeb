"""Jobs as a scheduler sees them, turned into the jobs the analysis runs.

Every reader of a scheduler's view (``squeue --json``, ``squeue -o '%i|%j|%N'``,
``kubectl get pods -o json``) gives a :class:`SchedulerView`: the running jobs,
each with its node names in rank order and the line it is written on, and how
many jobs of which other states were left out.  :func:`job_specs` maps the node
names to the fabric's servers (:class:`~harness.importers.node_map.ServerNames`)
and gives one :class:`~harness.fabric.jobs.JobSpec` per job, located at its
line, so a later problem still names the file and the line.

Job names: the scheduler's name of the job; where two running jobs share one,
each is named ``NAME#ID`` (its scheduler id) so that every name is unique; a job
without a name is ``job-ID``.
"""

from __future__ import annotations

import glob
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.errors import Origin
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.importers.node_map import NodeMap
from harness.importers.node_map import ServerNames
from harness.inputs.hostlist import compress_hostlist

if TYPE_CHECKING:  # the model is numpy: imported where jobs are built, not to parse a view
    from harness.fabric.jobs import JobSpec
    from harness.fabric.model import Fabric


@dataclass(frozen=True, slots=True)
class SchedulerJob:
    """One running job as the scheduler lists it."""

    name: str
    job_id: str
    nodes: tuple[str, ...]  # node names in rank order
    line: int = 0  # where the input writes it (0: not known)


@dataclass(frozen=True, slots=True)
class SchedulerView:
    """What one saved scheduler listing holds: its running jobs and what was left out."""

    source: str  # what the file is, e.g. "squeue --json (Slurm 23.11.1, data_parser v0.0.40)"
    path: str
    jobs: tuple[SchedulerJob, ...]
    left_out: tuple[tuple[str, int], ...] = ()  # (state, how many), not running

    def note(self) -> str:
        """One line for the output: what was read and what was left out."""
        n = len(self.jobs)
        text = f"{self.path}: {self.source}: {n} running job{'' if n == 1 else 's'} read"
        if self.left_out:
            parts = ", ".join(f"{count} {state}" for state, count in self.left_out)
            text += f"; left out (not running): {parts}"
        return text


def count_states(states: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """``(state, count)`` pairs, the most common first, then by name.

    >>> count_states(["PENDING", "COMPLETED", "PENDING"])
    (('PENDING', 2), ('COMPLETED', 1))
    """
    return tuple(sorted(Counter(states).items(), key=lambda kv: (-kv[1], kv[0])))


def line_of(text: str, pattern: str, default: int = 0) -> int:
    """The 1-based line of the first match of the regex ``pattern`` (``default`` if none).

    >>> line_of('{\\n  "job_id": 71,\\n  "job_id": 7\\n}', r'"job_id"\\s*:\\s*7(?!\\d)')
    3
    """
    m = re.search(pattern, text)
    return default if m is None else text.count("\n", 0, m.start()) + 1


def _unique_names(jobs: Sequence[SchedulerJob]) -> list[str]:
    counts = Counter(j.name for j in jobs)
    return [
        (j.name if counts[j.name] == 1 else f"{j.name}#{j.job_id}") if j.name else f"job-{j.job_id}"
        for j in jobs
    ]


def job_specs(
    view: SchedulerView, fabric: Fabric, node_map: NodeMap | None = None
) -> tuple[list[JobSpec], list[str]]:
    """The view's jobs as job specs on ``fabric``, and notes for the output.

    Every node must name a server (the rule of
    :mod:`~harness.importers.node_map`); every node that does not is reported at
    once, at the line of its job, with the closest server names.  A server two
    jobs share is noted: the model gives each job all of its GPUs.
    """
    from harness.fabric.jobs import JobSpec

    names = ServerNames(fabric, node_map)
    specs: list[JobSpec] = []
    problems: list[Problem] = []
    owner: dict[str, str] = {}
    shared: dict[str, list[str]] = {}
    for job, name in zip(view.jobs, _unique_names(view.jobs), strict=True):
        servers: list[str] = []
        unknown: list[str] = []
        for node in job.nodes:
            try:
                server = names.server(node)
            except ScenarioError as err:
                problems += [Problem(f"job {name!r}: {p.message}", view.path, job.line)
                             for p in err.problems]  # fmt: skip
                continue
            if server is None:
                unknown.append(node)
                continue
            servers.append(server)
            if owner.setdefault(server, name) != name:
                shared.setdefault(server, [owner[server]]).append(name)
        if unknown:
            msg = f"job {name!r}: {names.unknown(unknown[0])}"
            if len(unknown) > 1:
                more = compress_hostlist(unknown)
                msg += f"; {len(unknown)} of its nodes name no server: {more}"
            problems.append(Problem(msg, view.path, job.line))
        if not job.nodes:
            msg = f"job {name!r} (id {job.job_id}) is running on no node; the listing is cut short?"
            problems.append(Problem(msg, view.path, job.line))
        if servers:
            specs.append(
                JobSpec(
                    name=name,
                    nodes=tuple(glob.escape(s) for s in dict.fromkeys(servers)),
                    origin=Origin(view.path, job.line),
                )
            )
    if problems:
        raise ScenarioError(problems)
    notes = [view.note()]
    if shared:
        first = sorted(shared)[0]
        notes.append(
            f"{len(shared)} server(s) run more than one job (e.g. {first}: "
            f"{', '.join(shared[first])}); the model gives each job every GPU of its servers"
        )
    return specs, notes
