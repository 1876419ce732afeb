"""A saved ``kubectl get pods -o json``: training jobs as the pods that run them.

A job is the set of Running pods that carry the same job label value (in one
namespace); its servers are the pods' ``spec.nodeName``.  The label is
``--job-label`` when given, else the first of :data:`JOB_LABELS` a pod carries:

1. ``training.kubeflow.org/job-name`` (Kubeflow training operator: PyTorchJob,
   MPIJob...);
2. ``jobset.sigs.k8s.io/jobset-name`` (a JobSet: all its replicated jobs are one job);
3. ``batch.kubernetes.io/job-name`` (a Job; Kubernetes 1.27 and later);
4. ``job-name`` (a Job, the older label).

Rank order is the pod index where the pods carry one: the replica type
(Kubeflow ``training.kubeflow.org/replica-type``: master or launcher before
workers), then the JobSet's ``jobset.sigs.k8s.io/job-index``, then the pod's
index (``batch.kubernetes.io/job-completion-index``, annotation or label, or
Kubeflow's ``training.kubeflow.org/replica-index``); pods without an index
come after, by name.  A server that runs several pods of one job is ranked at
its first pod.  Pods that are not Running, and pods without a job label, are
left out and counted.
"""

from __future__ import annotations

import re
from typing import Any

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.importers.scheduler import SchedulerJob
from harness.importers.scheduler import SchedulerView
from harness.importers.scheduler import count_states
from harness.inputs.location import first_lines

JOB_LABELS = (
    "training.kubeflow.org/job-name",
    "jobset.sigs.k8s.io/jobset-name",
    "batch.kubernetes.io/job-name",
    "job-name",
)
"""The labels that name a pod's job, in the order they are looked up."""

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
JOBSET_INDEX = "jobset.sigs.k8s.io/job-index"
_FIRST_TYPES = ("master", "launcher", "chief")


def looks_like_pod_list(doc: Any) -> bool:
    """Whether a JSON document is ``kubectl get pods -o json`` (a ``List`` of ``Pod``)."""
    if not isinstance(doc, dict) or doc.get("kind") not in ("List", "PodList"):
        return False
    items = doc.get("items")
    return isinstance(items, list) and all(
        isinstance(i, dict) and i.get("kind", "Pod") == "Pod" for i in items
    )


def _part(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` when it is a mapping, else an empty one."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _index(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def rank_key(pod_name: str, labels: dict[str, Any], notes: dict[str, Any]) -> tuple[Any, ...]:
    """The sort key of a pod within its job (see the module doc).

    >>> rank_key("w-1", {REPLICA_TYPE: "worker", REPLICA_INDEX: "1"}, {})
    (1, -1, 0, 1, 'w-1')
    >>> rank_key("m-0", {REPLICA_TYPE: "master", REPLICA_INDEX: "0"}, {})
    (0, -1, 0, 0, 'm-0')
    >>> rank_key("p", {}, {})
    (1, -1, 1, 0, 'p')
    """
    kind = str(labels.get(REPLICA_TYPE, "")).lower()
    first = 0 if kind in _FIRST_TYPES else 1
    jobset = _index(labels.get(JOBSET_INDEX))
    index = _index(notes.get(COMPLETION_INDEX))
    for source in (labels.get(COMPLETION_INDEX), labels.get(REPLICA_INDEX)):
        if index is None:
            index = _index(source)
    return (first, -1 if jobset is None else jobset, int(index is None), index or 0, pod_name)


def read_pod_list(
    doc: dict[str, Any], text: str, path: str, job_label: str | None = None
) -> SchedulerView:
    """The running jobs of a pod list (``text`` locates each job at its first pod)."""
    labels_tried = (job_label,) if job_label else JOB_LABELS
    lines = first_lines(_NAME, text)
    items_at = text.count("\n", 0, max(text.find('"items"'), 0)) + 1  # for a pod not found
    groups: dict[tuple[str, str], list[tuple[tuple[Any, ...], str, str]]] = {}
    other: list[str] = []
    problems: list[Problem] = []
    for pod in doc["items"]:
        meta, spec, status = _part(pod, "metadata"), _part(pod, "spec"), _part(pod, "status")
        phase = str(status.get("phase") or "Unknown")
        if phase != "Running":
            other.append(phase)
            continue
        labels, notes = _part(meta, "labels"), _part(meta, "annotations")
        job = next((str(labels[k]) for k in labels_tried if labels.get(k)), None)
        if job is None:
            other.append("Running without a job label")
            continue
        name = str(meta.get("name") or "")
        node = spec.get("nodeName")
        if not isinstance(node, str) or not node:
            msg = f"pod {name!r} is Running but has no spec.nodeName; save the list again"
            problems.append(Problem(msg, path, lines.get(name, items_at)))
            continue
        namespace = str(meta.get("namespace") or "default")
        groups.setdefault((namespace, job), []).append((rank_key(name, labels, notes), name, node))
    if problems:
        raise ScenarioError(problems)
    jobs: list[SchedulerJob] = []
    names_seen: dict[str, int] = {}
    for _, job in groups:
        names_seen[job] = names_seen.get(job, 0) + 1
    for (namespace, job), pods in groups.items():
        pods.sort()
        shown = job if names_seen[job] == 1 else f"{namespace}/{job}"
        nodes = tuple(dict.fromkeys(node for _, _, node in pods))
        jobs.append(
            SchedulerJob(shown, f"{namespace}/{job}", nodes, lines.get(pods[0][1], items_at))
        )
    label = f"label {job_label}" if job_label else "labels " + ", ".join(JOB_LABELS)
    return SchedulerView(
        f"kubectl get pods -o json (jobs by {label})", path, tuple(jobs), count_states(other)
    )


_NAME = re.compile(r'"name"\s*:\s*"([^"\\]*)"')
