"""``--jobs``: the jobs file, or the scheduler's own view of the running jobs.

:func:`load_jobs` takes ``per-su`` or a file, and tells the file's format from
its content (:func:`sniff_jobs`):

==============  ==========================================================
format          the file
==============  ==========================================================
jobs-yaml       a YAML list of jobs in the scenario syntax
                (``- {name: train, nodes: su01/*}``)
squeue-json     a saved ``squeue --json`` (Slurm 21.08 to 24.11 and later)
squeue-text     ``squeue -h -t RUNNING -o '%i|%j|%N'`` text
kubectl-pods    a saved ``kubectl get pods -o json`` (a ``List`` of ``Pod``)
==============  ==========================================================

A JSON object is a ``squeue --json`` when it holds a ``jobs`` list and a pod
list when it is a ``List`` of ``Pod`` items; text whose every line is
``ID|NAME|NODES`` is squeue text; anything else is read as a YAML jobs list.
The scheduler's node names are mapped to servers by the rule of
:mod:`~harness.importers.node_map` (``--node-map`` to say it yourself).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Literal

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.jobs import JobSpec
from harness.fabric.jobs import resolve_jobs
from harness.fabric.model import Fabric
from harness.importers.kube_pods import looks_like_pod_list
from harness.importers.kube_pods import read_pod_list
from harness.importers.node_map import load_node_map
from harness.importers.scheduler import SchedulerView
from harness.importers.scheduler import job_specs
from harness.importers.squeue_json import looks_like_squeue_json
from harness.importers.squeue_json import read_squeue_json
from harness.importers.squeue_text import looks_like_squeue_text
from harness.importers.squeue_text import read_squeue_text
from harness.inputs.files import MAX_DUMP_BYTES
from harness.inputs.files import display_path
from harness.inputs.files import read_text
from harness.inputs.yaml import parse_list_items

JobsFormat = Literal["jobs-yaml", "squeue-json", "squeue-text", "kubectl-pods"]
JOBS_EXAMPLE = "- {name: train, nodes: su01/*}"
EXPECTED = (
    "a jobs file is a YAML list of jobs ('- {name: train, nodes: su01/*}'), a saved "
    "'squeue --json', 'squeue -h -t RUNNING -o \"%i|%j|%N\"' text, or a saved "
    "'kubectl get pods -o json'"
)


@dataclass(frozen=True, slots=True)
class JobsInput:
    """The jobs ``--jobs`` gives, what it was read from, and notes for the output."""

    specs: tuple[JobSpec, ...]
    source: JobsFormat | Literal["per-su"]
    notes: tuple[str, ...] = ()


def _json(text: str, shown: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        msg = f"the file starts as JSON but is not valid JSON ({err.msg}); {EXPECTED}"
        raise ScenarioError(Problem(msg, shown, err.lineno, err.colno)) from None
    except RecursionError:
        msg = "the JSON is nested too deeply to be a scheduler's listing; " + EXPECTED
        raise ScenarioError(Problem(msg, shown, 1, 1)) from None


def sniff_jobs(text: str, shown: str = "") -> tuple[JobsFormat, Any]:
    """The format of a ``--jobs`` file's text, and its JSON document where it is JSON.

    >>> sniff_jobs('{"jobs": []}')[0], sniff_jobs("1|a|n1")[0], sniff_jobs("- per-su")[0]
    ('squeue-json', 'squeue-text', 'jobs-yaml')
    """
    if text.lstrip().startswith("{"):
        doc = _json(text, shown)
        if looks_like_squeue_json(doc):
            return "squeue-json", doc
        if looks_like_pod_list(doc):
            return "kubectl-pods", doc
        keys = ", ".join(sorted(doc)[:6]) if isinstance(doc, dict) else ""
        msg = (
            f"a JSON object with keys {keys or '(none)'} is neither a 'squeue --json' "
            "(a 'jobs' list) nor a 'kubectl get pods -o json' (kind List of Pod items); " + EXPECTED
        )
        raise ScenarioError(Problem(msg, shown, 1, 1))
    if looks_like_squeue_text(text):
        return "squeue-text", None
    return "jobs-yaml", None


def _view(fmt: JobsFormat, doc: Any, text: str, shown: str, job_label: str | None) -> SchedulerView:
    if fmt == "squeue-json":
        return read_squeue_json(doc, text, shown)
    if fmt == "kubectl-pods":
        return read_pod_list(doc, text, shown, job_label)
    return read_squeue_text(text, shown)


def load_jobs(
    value: str,
    fabric: Fabric,
    *,
    job_label: str | None = None,
    node_map: str | Path | None = None,
) -> JobsInput:
    """The jobs of ``--jobs VALUE`` on ``fabric``, resolved (bad input located in the file).

    ``job_label`` picks the pod label that names a pod's job (pod lists only);
    ``node_map`` is a ``--node-map`` file (scheduler views only).
    """
    if value == "per-su":
        return JobsInput((JobSpec(per_su=True),), "per-su")
    shown = display_path(value)
    text = read_text(value, "jobs", limit=MAX_DUMP_BYTES)
    fmt, doc = sniff_jobs(text, shown)
    misplaced = [opt for opt, given, fits in (
        ("--job-label", job_label, fmt == "kubectl-pods"),
        ("--node-map", node_map, fmt != "jobs-yaml"),
    ) if given is not None and not fits]  # fmt: skip
    if misplaced:
        what = {"jobs-yaml": "a YAML jobs list", "squeue-json": "a squeue --json",
                "squeue-text": "squeue text", "kubectl-pods": "a pod list"}[fmt]  # fmt: skip
        msg = (
            f"{' and '.join(misplaced)} do(es) not apply to {shown}, which is {what} "
            "(--job-label is for kubectl pod lists, --node-map for scheduler listings); "
            "leave it out"
        )
        raise ScenarioError(Problem(msg, shown))
    if fmt == "jobs-yaml":
        try:
            specs = [s for s, _ in parse_list_items(value, "jobs", JOBS_EXAMPLE, JobSpec.parse)]
        except ScenarioError as err:
            if len(err.problems) == 1 and "is a YAML list" in err.problems[0].message:
                p = err.problems[0]
                raise ScenarioError(Problem(EXPECTED, p.path, p.line, p.column)) from None
            raise
        resolve_jobs(specs, fabric)
        return JobsInput(tuple(specs), fmt)
    view = _view(fmt, doc, text, shown, job_label)
    mapping = None if node_map is None else load_node_map(node_map, fabric)
    specs, notes = job_specs(view, fabric, mapping)
    if not specs:
        msg = (
            f"{view.source} lists no running job, so no job could be judged; "
            "save it while the jobs run, or pass --jobs per-su or a YAML jobs list"
        )
        raise ScenarioError(Problem(msg, shown, 1))
    resolve_jobs(specs, fabric)
    return JobsInput(tuple(specs), fmt, tuple(notes))
