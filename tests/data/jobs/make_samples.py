"""Write the scheduler samples of this folder: one set of six running jobs on seed-a800.

Every file holds the same six jobs that cross SUs (and a few jobs in other
states, which the readers leave out), in the layout of one scheduler output:
``squeue --json`` of Slurm 21.08, 23.02, 23.11, 24.05 and 24.11, ``squeue -h -o
'%i|%j|%N'`` text and ``kubectl get pods -o json``; ``jobs-cross-su.yaml`` is
the same jobs as a harness jobs file.  The layouts follow the public samples
named in README.md.  Run ``python tests/data/jobs/make_samples.py`` to write
them again; the tests check the committed files equal what this writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# name, Slurm job id, hostlist (rank order), its nodes as server ids
JOBS = [
    ("train-a", 4101, "su01-node[01-10],su02-node[01-10]"),
    ("train-b", 4102, "su03-node[01-20],su04-node[01-20]"),
    ("train-c", 4103, "su05-node[01-08],su06-node[01-08],su07-node[01-08]"),
    ("train-d", 4104, "su08-node[11-20],su09-node[11-20]"),
    ("eval-e", 4105, "su01-node[11-20],su10-node[01-10]"),
    ("train-f", 4106, "su02-node[11-20],su05-node[09-20]"),
]
# jobs the readers leave out: (name, id, 21.08/23.02 state, 23.11+ state list, nodes)
OTHERS = [
    ("queued-1", 4107, "PENDING", ["PENDING"], ""),
    ("queued-2", 4108, "PENDING", ["PENDING"], ""),
    ("done-3", 4099, "COMPLETED", ["COMPLETED", "COMPLETING"], "su10-node[11-12]"),
]


def expand(expr: str) -> list[str]:
    """The names of the simple hostlists above (prefix[lo-hi], comma separated)."""
    out: list[str] = []
    for part in expr.split("],"):
        prefix, rng = part.rstrip("]").split("[")
        lo, hi = rng.split("-")
        out += [f"{prefix}{n:0{len(lo)}d}" for n in range(int(lo), int(hi) + 1)]
    return out


def num(n: int, *, set_: bool = True, infinite: bool = False) -> dict[str, Any]:
    return {"set": set_, "infinite": infinite, "number": n}


def slurm_job(
    version: str, name: str, job_id: int, *, state: str, states: list[str], nodes: str
) -> dict[str, Any]:
    """One job of ``squeue --json`` in the layout of ``version``."""
    names = expand(nodes) if nodes else []
    plain = version == "21.08"
    job: dict[str, Any] = {
        "account": "research",
        "array_job_id": 0 if plain else num(0),
        "array_task_id": None if plain else num(0, set_=False),
        "cluster": "a800",
        "job_id": job_id,
        "name": name,
        "partition": "gpu",
        "user_name": "trainer",
        "node_count": len(names) if plain else num(len(names)),
        "time_limit": 4320 if plain else num(4320),
        "job_state": state if version in ("21.08", "23.02") else states,
        "nodes": nodes,
    }
    if not names:
        job["job_resources"] = {}
    elif version in ("21.08", "23.02"):
        job["job_resources"] = {
            "nodes": nodes,
            "allocated_hosts": len(names),
            "allocated_nodes": {
                str(i): {"cpus": 128, "memory": 1024000} for i in range(len(names))
            },
        }
    elif version == "23.11":
        job["job_resources"] = {
            "nodes": nodes,
            "allocated_hosts": len(names),
            "allocated_nodes": [{"nodename": n, "cpus_used": 128} for n in names],
        }
    else:  # 24.05, 24.11
        job["job_resources"] = {
            "select_type": ["CORE"],
            "nodes": {
                "count": len(names),
                "select_type": ["ONE_ROW"],
                "list": nodes,
                "whole": True,
                "allocation": [{"index": i, "name": n} for i, n in enumerate(names)],
            },
            "cpus": 128 * len(names),
        }
    return job


PARSERS = {"21.08": "v0.0.37", "23.02": "v0.0.39", "23.11": "v0.0.40", "24.05": "v0.0.41",
           "24.11": "v0.0.42"}  # fmt: skip
RELEASES = {"21.08": "21.08.8", "23.02": "23.02.7", "23.11": "23.11.1", "24.05": "24.05.3",
            "24.11": "24.11.5"}  # fmt: skip


def squeue_json(version: str) -> str:
    major, minor, micro = RELEASES[version].split(".")
    if version in ("21.08", "23.02"):
        meta: dict[str, Any] = {
            "plugin": {"type": f"openapi/{PARSERS[version]}",
                       "name": f"Slurm OpenAPI {PARSERS[version]}"},
            "Slurm": {"version": {"major": int(major), "micro": int(micro), "minor": int(minor)},
                      "release": RELEASES[version]},
        }  # fmt: skip
        if version == "23.02":
            meta["plugin"]["data_parser"] = PARSERS[version]
    else:
        meta = {
            "plugin": {"type": "openapi/slurmctld", "name": "Slurm OpenAPI slurmctld",
                       "data_parser": f"data_parser/{PARSERS[version]}",
                       "accounting_storage": "accounting_storage/slurmdbd"},
            "client": {"source": "/dev/pts/0", "user": "root", "group": "root"},
            "command": [],
            "slurm": {"version": {"major": major, "micro": micro, "minor": minor},
                      "release": RELEASES[version], "cluster": "a800"},
        }  # fmt: skip
    running = [
        slurm_job(version, n, i, state="RUNNING", states=["RUNNING"], nodes=h) for n, i, h in JOBS
    ]
    others = [slurm_job(version, n, i, state=s, states=ss, nodes=h) for n, i, s, ss, h in OTHERS]
    jobs = [running[0], others[0], *running[1:4], others[2], *running[4:], others[1]]
    doc: dict[str, Any] = {"meta": meta, "errors": [], "warnings": [], "jobs": jobs}
    if version not in ("21.08",):
        doc["last_backfill"] = num(1733150000)
        doc["last_update"] = num(1733150100)
    return json.dumps(doc, indent=2) + "\n"


def squeue_text() -> str:
    rows = [f"{i}|{n}|{h}" for n, i, h in JOBS] + [f"{i}|{n}|" for n, i, _, _, h in OTHERS[:2]]
    return "\n".join(rows) + "\n"


def pods() -> str:
    items: list[dict[str, Any]] = []
    for k, (name, _, hosts) in enumerate(JOBS):
        nodes = expand(hosts)
        pytorch = k % 2 == 1  # every other job a Kubeflow PyTorchJob: master-0, worker-0..
        order = list(range(len(nodes)))
        order = order[1::2] + order[0::2]  # listed out of rank order, as kubectl may
        for rank in order:
            if pytorch:
                kind, index = ("master", 0) if rank == 0 else ("worker", rank - 1)
                labels = {"training.kubeflow.org/job-name": name,
                          "training.kubeflow.org/operator-name": "pytorchjob-controller",
                          "training.kubeflow.org/replica-type": kind,
                          "training.kubeflow.org/replica-index": str(index)}  # fmt: skip
                annotations: dict[str, str] = {}
                pod_name = f"{name}-{kind}-{index}"
            else:
                labels = {"batch.kubernetes.io/job-name": name, "job-name": name,
                          "batch.kubernetes.io/job-completion-index": str(rank)}  # fmt: skip
                annotations = {"batch.kubernetes.io/job-completion-index": str(rank)}
                pod_name = f"{name}-{rank}-x{rank:03d}"
            items.append({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": pod_name, "namespace": "training", "labels": labels,
                             "annotations": annotations},
                "spec": {"nodeName": nodes[rank], "containers": [{"name": "trainer"}]},
                "status": {"phase": "Running"},
            })  # fmt: skip
    items.append({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "queued-1-0-a", "namespace": "training",
                               "labels": {"batch.kubernetes.io/job-name": "queued-1"}},
                  "spec": {"containers": [{"name": "trainer"}]},
                  "status": {"phase": "Pending"}})  # fmt: skip
    items.append({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "dcgm-exporter-abcde", "namespace": "monitoring",
                               "labels": {"app": "dcgm-exporter"}},
                  "spec": {"nodeName": "su10-node20", "containers": [{"name": "exporter"}]},
                  "status": {"phase": "Running"}})  # fmt: skip
    doc = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
    return json.dumps(doc, indent=4) + "\n"


def jobs_yaml() -> str:
    lines = [
        "# The six running jobs of the squeue and kubectl samples here, as a harness jobs file."
    ]
    for name, _, hosts in JOBS:
        ids = ", ".join(n.replace("-", "/", 1) for n in expand(hosts))
        lines.append(f"- {{name: {name}, nodes: [{ids}]}}")
    return "\n".join(lines) + "\n"


def node_map_yaml() -> str:
    """Hostnames gpu001..gpu200 (as another site names them) to seed-a800's servers."""
    rows = [
        f"gpu{i:03d}: su{(i - 1) // 20 + 1:02d}/node{(i - 1) % 20 + 1:02d}" for i in range(1, 201)
    ]
    return "# gpuNNN hostnames to seed-a800 server ids\n" + "\n".join(rows) + "\n"


def files() -> dict[str, str]:
    out = {f"squeue-{v}.json": squeue_json(v) for v in PARSERS}
    out["squeue.txt"] = squeue_text()
    out["pods.json"] = pods()
    out["jobs-cross-su.yaml"] = jobs_yaml()
    out["node-map.yaml"] = node_map_yaml()
    out["node-map.txt"] = node_map_yaml().replace(": ", " ")
    out["squeue-gpu-names.txt"] = "5001|train-a|gpu[001-010,021-030]\n5002|eval|gpu[041-045]\n"
    return out


if __name__ == "__main__":
    for name, text in files().items():
        (HERE / name).write_text(text)
    sys.stdout.write(f"wrote {len(files())} files to {HERE}\n")
