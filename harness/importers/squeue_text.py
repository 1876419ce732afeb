"""``squeue -h -o '%i|%j|%N'`` text: job id | job name | node list, one job a line.

Run it as ``squeue -h -t RUNNING -o '%i|%j|%N'`` to list the running jobs only;
without ``-t`` squeue lists every state, and as the format carries none, a line
whose node list is empty (a pending job) or a reason in parentheses (``%R``:
``(Priority)``) is left out and counted.  The node list is a Slurm hostlist
(``gpu[001-003,007],cpu01``), expanded in Slurm's order, which is the rank
order.  A header line (``JOBID|NAME|NODELIST``, squeue without ``-h``) and
blank lines are skipped; the name is everything between the first and the last
``|``, so a name holding ``|`` is read whole.

>>> view = read_squeue_text("101|train|gpu[01-02]\\n102|eval|\\n", "q.txt")
>>> [(j.job_id, j.name, j.nodes, j.line) for j in view.jobs], view.left_out
([('101', 'train', ('gpu01', 'gpu02'), 1)], (('PENDING', 1),))
"""

from __future__ import annotations

import re

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.importers.scheduler import SchedulerJob
from harness.importers.scheduler import SchedulerView
from harness.importers.scheduler import count_states
from harness.inputs.hostlist import expand_hostlist

FORMAT = "%i|%j|%N"
# a job id: 1234, an array task 1234_7 (or a pending array 1234_[1-10]), a het component 1234+0
_JOB_ID = re.compile(r"^\d+(?:_(?:\d+|\[[\d,\-%]+\]))?(?:\+\d+)?$")
_HEADER = re.compile(r"^\s*JOBID\s*\|", re.IGNORECASE)


def _lines(text: str) -> list[tuple[int, str]]:
    return [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), 1) if ln.strip()]


def looks_like_squeue_text(text: str) -> bool:
    """Whether every non-blank line is ``ID|NAME|NODES`` (a header line aside).

    >>> looks_like_squeue_text("7|a|n1\\n8_2|b|n[1-2]\\n"), looks_like_squeue_text("- {name: a}")
    (True, False)
    """
    lines = [ln for _, ln in _lines(text) if not _HEADER.match(ln)]
    return bool(lines) and all(
        ln.count("|") >= 2 and _JOB_ID.match(ln.split("|", 1)[0].strip()) for ln in lines
    )


def read_squeue_text(text: str, path: str) -> SchedulerView:
    """The running jobs of ``squeue -h -o '%i|%j|%N'`` text (each located at its line)."""
    jobs: list[SchedulerJob] = []
    other: list[str] = []
    problems: list[Problem] = []
    for line, raw in _lines(text):
        if _HEADER.match(raw):
            continue
        job_id, _, rest = raw.partition("|")
        name, _, nodes = rest.rpartition("|")
        job_id, name, nodes = job_id.strip(), name.strip(), nodes.strip()
        if raw.count("|") < 2 or not _JOB_ID.match(job_id):
            msg = f"expected {FORMAT!r} (job id|name|node list), got {raw!r}"
            problems.append(Problem(msg, path, line))
            continue
        if not nodes or nodes.startswith("("):
            other.append("PENDING")
            continue
        try:
            names = expand_hostlist(nodes)
        except ScenarioError as err:
            problems += [Problem(f"job {job_id}: {p.message}", path, line) for p in err.problems]
            continue
        jobs.append(SchedulerJob(name, job_id, tuple(names), line))
    if problems:
        raise ScenarioError(problems)
    return SchedulerView(f"squeue -o '{FORMAT}' text", path, tuple(jobs), count_states(other))
