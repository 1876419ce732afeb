"""A saved ``squeue --json``: the running jobs of a Slurm cluster and their nodes.

The layout changed between Slurm releases; this reader takes each of them
(the data_parser plugin version in brackets, as ``meta.plugin`` states it):

* 21.08 / 22.05 (v0.0.37, v0.0.38): numbers are plain ints, ``job_state`` a
  string (``"RUNNING"``), ``meta.Slurm.release``;
* 23.02 (v0.0.39): numbers become ``{"set": .., "infinite": .., "number": ..}``
  objects, ``job_state`` is still a string;
* 23.11 (v0.0.40): ``job_state`` is a list (``["RUNNING"]``, the base state
  first, then flags such as ``CONFIGURING``), ``meta.slurm`` in lower case,
  ``job_resources.allocated_nodes`` a list of ``{"nodename": ..}``;
* 24.05 and 24.11 (v0.0.41, v0.0.42): ``job_resources.nodes`` becomes an
  object (``{"count": .., "list": "gpu[01-02]", "allocation": [{"name": ..}]}``).

In every one the job's ``nodes`` is a Slurm hostlist (``gpu[001-003,007]``),
expanded by :func:`~harness.inputs.hostlist.expand_hostlist`; where it is
missing the node list of ``job_resources`` is read instead.  Slurm places
ranks in the order of that list, so it is the job's rank order.

Only jobs whose base state is ``RUNNING`` are jobs of the fabric; the others
are counted by state in the view's note.  slurmrestd's ``/jobs`` answer has the
same layout, and a ``sacct --json`` is read too (its state is
``state.current``, its nodes ``nodes``).
"""

from __future__ import annotations

import re
from typing import Any

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.importers.scheduler import SchedulerJob
from harness.importers.scheduler import SchedulerView
from harness.importers.scheduler import count_states
from harness.importers.scheduler import line_of
from harness.inputs.hostlist import expand_hostlist
from harness.inputs.location import first_lines

BASE_STATES = frozenset(
    {
        "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
        "OUT_OF_MEMORY", "PENDING", "PREEMPTED", "RUNNING", "SUSPENDED", "TIMEOUT",
    }
)  # fmt: skip
"""Slurm's base job states (``JOB_STATE_BASE``); anything else in a state list is a flag."""


def looks_like_squeue_json(doc: Any) -> bool:
    """Whether a JSON document is a ``squeue --json`` (or slurmrestd ``/jobs``) answer."""
    return isinstance(doc, dict) and isinstance(doc.get("jobs"), list) and "items" not in doc


def number(value: Any) -> int | None:
    """A Slurm number: a plain int (21.08, 22.05) or ``{"set", "infinite", "number"}``.

    >>> number(7), number({"set": True, "infinite": False, "number": 7}), number("7")
    (7, 7, 7)
    >>> number({"set": False, "infinite": False, "number": 0}), number({"infinite": True})
    (None, None)
    """
    if isinstance(value, dict):
        if value.get("infinite") or not value.get("set", True):
            return None
        value = value.get("number")
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def base_state(value: Any) -> str:
    """A job's base state from ``job_state``: a string, or a list of the state and flags.

    >>> base_state("RUNNING"), base_state(["RUNNING", "CONFIGURING"]), base_state(["COMPLETING"])
    ('RUNNING', 'RUNNING', 'COMPLETING')
    >>> base_state(None)
    'UNKNOWN'
    """
    if isinstance(value, str):
        return value.upper() or "UNKNOWN"
    if isinstance(value, list):
        states = [str(s).upper() for s in value if isinstance(s, str)]
        base = [s for s in states if s in BASE_STATES]
        return (base or states or ["UNKNOWN"])[0]
    return "UNKNOWN"


def _state_field(job: dict[str, Any]) -> Any:
    """``job_state``, or ``state.current`` where a ``sacct --json`` writes the state."""
    if "job_state" in job:
        return job["job_state"]
    state = job.get("state")
    return state.get("current") if isinstance(state, dict) else state


def _release(doc: dict[str, Any]) -> str:
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
    assert isinstance(meta, dict)
    slurm = meta.get("slurm") or meta.get("Slurm") or {}
    release = ""
    if isinstance(slurm, dict):
        release = str(slurm.get("release") or "")
        version = slurm.get("version")
        if not release and isinstance(version, dict):
            parts = [str(version.get(k, "")) for k in ("major", "minor", "micro")]
            release = ".".join(p for p in parts if p)
    plugin = meta.get("plugin") if isinstance(meta.get("plugin"), dict) else {}
    assert isinstance(plugin, dict)
    parser = str(plugin.get("data_parser") or plugin.get("type") or "")
    parser = parser.rsplit("/", 1)[-1]
    what = [f"Slurm {release}" if release else "", f"data_parser {parser}" if parser else ""]
    said = ", ".join(w for w in what if w)
    return f"squeue --json ({said})" if said else "squeue --json"


def _node_text(job: dict[str, Any]) -> str:
    """The job's node list: ``nodes``, else the node list ``job_resources`` gives."""
    nodes = job.get("nodes")
    if isinstance(nodes, str) and nodes.strip():
        return nodes
    res = job.get("job_resources")
    if not isinstance(res, dict):
        return ""
    inner = res.get("nodes")
    if isinstance(inner, str):  # 23.02, 23.11
        return inner
    if isinstance(inner, list):  # a list of names, as some slurmrestd clients write it
        return ",".join(str(n) for n in inner if isinstance(n, str))
    if isinstance(inner, dict):  # 24.05 and later
        if isinstance(inner.get("list"), str) and inner["list"].strip():
            return str(inner["list"])
        alloc = inner.get("allocation")
        if isinstance(alloc, list):
            return ",".join(str(a["name"]) for a in alloc if isinstance(a, dict) and "name" in a)
    alloc = res.get("allocated_nodes")
    if isinstance(alloc, list):  # 23.11
        return ",".join(
            str(a["nodename"]) for a in alloc if isinstance(a, dict) and "nodename" in a
        )
    return ""


_JOB_ID = re.compile(r'"job_id"\s*:\s*"?(\d+)')


def read_squeue_json(doc: dict[str, Any], text: str, path: str) -> SchedulerView:
    """The running jobs of a ``squeue --json`` document (``text`` locates them)."""
    id_lines = first_lines(_JOB_ID, text)
    jobs_line = line_of(text, r'"jobs"\s*:', 1)  # where a job that cannot be found is placed
    jobs: list[SchedulerJob] = []
    other: list[str] = []
    problems: list[Problem] = []
    for i, job in enumerate(doc["jobs"]):
        if not isinstance(job, dict):
            msg = f"jobs[{i}] is not a job object (a JSON object with job_id, name, nodes)"
            problems.append(Problem(msg, path, jobs_line))
            continue
        raw_id = job.get("job_id")
        job_id = number(raw_id)
        shown_id = str(job_id) if job_id is not None else str(raw_id or f"{i + 1}?")
        line = id_lines.get(shown_id, jobs_line)
        state = base_state(_state_field(job))
        if state != "RUNNING":
            other.append(state)
            continue
        name = job.get("name")
        try:
            nodes = expand_hostlist(_node_text(job))
        except ScenarioError as err:
            problems += [Problem(f"job {shown_id}: {p.message}", path, line) for p in err.problems]
            continue
        jobs.append(
            SchedulerJob(name if isinstance(name, str) else "", shown_id, tuple(nodes), line)
        )
    if problems:
        raise ScenarioError(problems)
    return SchedulerView(_release(doc), path, tuple(jobs), count_states(other))
