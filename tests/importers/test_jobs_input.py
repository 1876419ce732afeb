"""``--jobs`` readers: every sample of tests/data/jobs gives the jobs of the YAML jobs file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.fabric import preset
from harness.fabric import two_tier
from harness.fabric.jobs import resolve_jobs
from harness.importers.jobs import load_jobs
from harness.importers.jobs import sniff_jobs
from harness.importers.kube_pods import read_pod_list
from harness.importers.squeue_json import read_squeue_json
from tests.data.jobs import make_samples

DATA = Path(__file__).resolve().parents[1] / "data" / "jobs"
SEED = preset("seed-a800")
SQUEUE_JSON = [f"squeue-{v}.json" for v in make_samples.PARSERS]
SAMPLES = [*SQUEUE_JSON, "squeue.txt", "pods.json"]


def test_samples_are_what_make_samples_writes() -> None:
    for name, text in make_samples.files().items():
        assert (DATA / name).read_text() == text, (
            f"run python tests/data/jobs/make_samples.py ({name})"
        )


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_sample_gives_the_jobs_of_the_yaml_file(sample: str) -> None:
    want = resolve_jobs(load_jobs(str(DATA / "jobs-cross-su.yaml"), SEED).specs, SEED)
    got = load_jobs(str(DATA / sample), SEED)
    assert resolve_jobs(got.specs, SEED) == want  # names, servers in rank order, defaults
    assert all(s.origin is not None and s.origin.line > 0 for s in got.specs)  # located


@pytest.mark.parametrize(
    ("sample", "source", "left_out"),
    [
        ("squeue-21.08.json", "Slurm 21.08.8, data_parser v0.0.37", "2 PENDING, 1 COMPLETED"),
        ("squeue-23.02.json", "Slurm 23.02.7, data_parser v0.0.39", "2 PENDING, 1 COMPLETED"),
        ("squeue-23.11.json", "Slurm 23.11.1, data_parser v0.0.40", "2 PENDING, 1 COMPLETED"),
        ("squeue-24.05.json", "Slurm 24.05.3, data_parser v0.0.41", "2 PENDING, 1 COMPLETED"),
        ("squeue-24.11.json", "Slurm 24.11.5, data_parser v0.0.42", "2 PENDING, 1 COMPLETED"),
        ("squeue.txt", "squeue -o '%i|%j|%N' text", "2 PENDING"),
        ("pods.json", "kubectl get pods -o json", "1 Pending, 1 Running without a job label"),
    ],
)
def test_the_note_says_what_was_read_and_left_out(sample: str, source: str, left_out: str) -> None:
    (note,) = load_jobs(str(DATA / sample), SEED).notes
    assert source in note
    assert "6 running jobs read" in note
    assert note.endswith(f"left out (not running): {left_out}")


def test_each_squeue_json_job_is_located_at_its_job_id() -> None:
    for sample in SQUEUE_JSON:
        text = (DATA / sample).read_text()
        lines = text.splitlines()
        for spec in load_jobs(str(DATA / sample), SEED).specs:
            assert spec.origin is not None
            assert '"job_id": 41' in lines[spec.origin.line - 1], (sample, spec.name)


def _squeue(jobs: list[dict[str, object]]) -> dict[str, object]:
    return {"meta": {}, "errors": [], "jobs": jobs}


def test_squeue_json_state_lists_flags_and_number_objects() -> None:
    doc = _squeue(
        [
            {
                "job_id": {"set": True, "infinite": False, "number": 9},
                "name": "a",
                "job_state": ["RUNNING", "CONFIGURING"],
                "nodes": "su01-node[01-02]",
            },
            {"job_id": 10, "name": "b", "job_state": ["COMPLETING"], "nodes": "su01-node03"},
            {"job_id": 11, "name": "c", "job_state": "SUSPENDED", "nodes": "su01-node04"},
        ]
    )
    view = read_squeue_json(doc, json.dumps(doc, indent=1), "q.json")
    assert [(j.job_id, j.name, j.nodes) for j in view.jobs] == [
        ("9", "a", ("su01-node01", "su01-node02"))
    ]
    assert view.left_out == (("COMPLETING", 1), ("SUSPENDED", 1))


def test_squeue_json_reads_job_resources_when_nodes_is_missing() -> None:
    doc = _squeue(
        [
            {
                "job_id": 1,
                "name": "new",
                "job_state": ["RUNNING"],  # 24.05+
                "job_resources": {"nodes": {"list": "su02-node[01-02]", "allocation": []}},
            },
            {
                "job_id": 2,
                "name": "alloc",
                "job_state": ["RUNNING"],  # 24.05+, no list
                "job_resources": {"nodes": {"allocation": [{"name": "su02-node04"}]}},
            },
            {
                "job_id": 3,
                "name": "old",
                "job_state": ["RUNNING"],  # 23.11
                "job_resources": {"allocated_nodes": [{"nodename": "su02-node03"}]},
            },
        ]
    )
    view = read_squeue_json(doc, json.dumps(doc), "q.json")
    assert [j.nodes for j in view.jobs] == [
        ("su02-node01", "su02-node02"), ("su02-node04",), ("su02-node03",)
    ]  # fmt: skip


def test_two_running_jobs_of_one_name_are_told_apart_by_id(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("1|train|su01-node01\n2|train|su01-node02\n3|eval|su01-node03\n")
    specs = load_jobs(str(path), SEED).specs
    assert [s.name for s in specs] == ["train#1", "train#2", "eval"]


def test_node_names_normalise_to_the_short_hostname_case_insensitive(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("1|a|SU01-NODE02.cluster.local,su01/node01\n")
    (spec,) = load_jobs(str(path), SEED).specs
    assert spec.nodes == ("su01/node02", "su01/node01")  # rank order kept


@pytest.mark.parametrize("node_map", ["node-map.yaml", "node-map.txt"])
def test_a_node_map_names_the_servers(node_map: str) -> None:
    got = load_jobs(str(DATA / "squeue-gpu-names.txt"), SEED, node_map=str(DATA / node_map))
    jobs = resolve_jobs(got.specs, SEED)
    assert [SEED.ids[s] for s in jobs[0].servers][:2] == ["su01/node01", "su01/node02"]
    assert [SEED.ids[s] for s in jobs[0].servers][-1] == "su02/node10"  # gpu030
    assert [SEED.ids[s] for s in jobs[1].servers] == [f"su03/node{n:02d}" for n in range(1, 6)]


def test_a_node_map_naming_no_server_is_located(tmp_path: Path) -> None:
    bad = tmp_path / "map.yaml"
    bad.write_text("gpu001: su01/node01\ngpu002: su01/nod02\n")
    with pytest.raises(ScenarioError) as err:
        load_jobs(str(DATA / "squeue-gpu-names.txt"), SEED, node_map=str(bad))
    (problem,) = err.value.problems
    assert problem.line == 2
    assert "'su01/nod02' is not a server of fabric seed-a800; closest: su01/node02" in str(problem)


def test_an_unknown_node_is_bad_input_at_its_job_with_the_closest_servers(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("1|ok|su01-node01\n2|typo|su01-node[01-02],su01-nod03\n")
    with pytest.raises(ScenarioError) as err:
        load_jobs(str(path), SEED)
    (problem,) = err.value.problems
    assert (problem.path.endswith("q.txt"), problem.line) == (True, 2)
    assert "job 'typo': node 'su01-nod03' is not a server of fabric seed-a800" in problem.message
    assert "closest: su01-node03" in problem.message
    assert "--node-map FILE" in problem.message


def test_one_server_named_twice_is_ranked_once(tmp_path: Path) -> None:
    fabric = two_tier(sus=1, nodes_per_su=2, spines=1, leaf_radix=8, storage=False)
    path = tmp_path / "q.txt"
    path.write_text("1|a|SU01-NODE01\n")
    (spec,) = load_jobs(str(path), fabric).specs
    assert spec.nodes == ("su01/node01",)
    path.write_text("1|a|su01-node01.a,su01-node01.b\n")
    (spec,) = load_jobs(str(path), fabric).specs  # one server named twice, counted once
    assert spec.nodes == ("su01/node01",)


def test_pod_rank_order_comes_from_the_index_and_job_label_overrides() -> None:
    text = (DATA / "pods.json").read_text()
    doc = json.loads(text)
    by_default = read_pod_list(doc, text, "pods.json")
    only_jobs = read_pod_list(doc, text, "pods.json", job_label="job-name")
    assert [j.name for j in by_default.jobs] == [n for n, _, _ in make_samples.JOBS]
    assert [j.name for j in only_jobs.jobs] == ["train-a", "train-c", "eval-e"]  # Job pods only
    unlabelled = dict(only_jobs.left_out)["Running without a job label"]
    assert unlabelled == 1 + 40 + 20 + 22  # dcgm-exporter, the PyTorchJobs train-b, -d, -f
    for job, (_, _, hosts) in zip(by_default.jobs, make_samples.JOBS, strict=True):
        assert list(job.nodes) == make_samples.expand(hosts)


def test_a_running_pod_without_a_node_is_located(tmp_path: Path) -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p-0", "labels": {"job-name": "p"}},
           "spec": {}, "status": {"phase": "Running"}}  # fmt: skip
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "List", "items": [pod]}, indent=2))
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if '"p-0"' in ln)
    with pytest.raises(ScenarioError, match=rf"pods.json:{line}: pod 'p-0' is Running but has no"):
        load_jobs(str(path), SEED)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"kind": "Node", "items": []}', "neither a 'squeue --json'"),
        ('{"jobs": [\n  {"job_id": 1,}\n]}', "q.in:2:.*not valid JSON"),
        ("name: train\n", "a jobs file is a YAML list of jobs .* 'kubectl get pods -o json'"),
        ('{"jobs": [{"job_id": 1, "job_state": "PENDING"}]}', "lists no running job"),
        ("1|a|gpu[1-\n", r"q.in:1: job 1: bad hostlist 'gpu\[1-'"),
    ],
)
def test_bad_jobs_files_say_what_was_expected(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "q.in"
    path.write_text(content)
    with pytest.raises(ScenarioError, match=message):
        load_jobs(str(path), SEED)


def test_scheduler_options_refused_where_they_do_not_apply() -> None:
    with pytest.raises(ScenarioError, match=r"--node-map do\(es\) not apply"):
        load_jobs(str(DATA / "jobs-cross-su.yaml"), SEED, node_map=str(DATA / "node-map.txt"))
    with pytest.raises(ScenarioError, match=r"--job-label do\(es\) not apply"):
        load_jobs(str(DATA / "squeue.txt"), SEED, job_label="job-name")


def test_sniffing() -> None:
    assert sniff_jobs((DATA / "pods.json").read_text())[0] == "kubectl-pods"
    assert sniff_jobs((DATA / "squeue.txt").read_text())[0] == "squeue-text"
    assert sniff_jobs("JOBID|NAME|NODELIST\n7|a|n1\n")[0] == "squeue-text"
    assert sniff_jobs((DATA / "jobs-cross-su.yaml").read_text())[0] == "jobs-yaml"
    assert load_jobs("per-su", SEED).source == "per-su"


@pytest.mark.parametrize(
    ("job", "nodes"),
    [
        # the shapes public squeue --json samples show, beside the files of tests/data/jobs
        ({"job_id": "77", "job_state": ["RUNNING"], "nodes": "su03-node01",
          "job_resources": {"allocated_nodes": None}}, ("su03-node01",)),
        ({"job_id": 78, "job_state": "RUNNING", "nodes": "",
          "job_resources": {"nodes": "su03-node[02-03]", "allocated_hosts": 2}},
         ("su03-node02", "su03-node03")),
        ({"job_id": 79, "job_state": ["RUNNING"],
          "job_resources": {"nodes": ["su03-node04"]}}, ("su03-node04",)),
        ({"job_id": 80, "job_state": ["RUNNING"], "node_count": {"number": 1, "set": True},
          "job_resources": {"cpus": 4, "nodes": {"count": 1, "list": "su03-node05",
                                                 "whole": True}}}, ("su03-node05",)),
    ],
)  # fmt: skip
def test_squeue_json_job_shapes(job: dict[str, object], nodes: tuple[str, ...]) -> None:
    doc = _squeue([job])
    (got,) = read_squeue_json(doc, json.dumps(doc, indent=2), "q.json").jobs
    assert got.nodes == nodes
    assert got.line == 6  # "job_id" is the first key of the job


def test_one_file_may_mix_layouts() -> None:
    """A 21.08 job (plain ints, a state string) beside a 23.02 one (number objects)."""
    doc = _squeue(
        [
            {"job_id": 26515966, "array_task_id": None, "job_state": "RUNNING", "name": "a",
             "nodes": "su04-node01", "node_count": 1},
            {"job_id": 58948420, "array_job_id": {"set": True, "infinite": False,
             "number": 58948420}, "job_state": "PENDING", "name": "b", "nodes": ""},
        ]
    )  # fmt: skip
    view = read_squeue_json(doc, json.dumps(doc, indent=2), "q.json")
    assert [(j.job_id, j.nodes) for j in view.jobs] == [("26515966", ("su04-node01",))]
    assert view.left_out == (("PENDING", 1),)
    assert view.source == "squeue --json"  # no meta: nothing to say about the release


_PODS_DOC = json.loads((DATA / "pods.json").read_text())


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(len(_PODS_DOC["items"]))))
def test_pod_order_in_the_list_does_not_change_the_ranks(order: list[int]) -> None:
    doc = {**_PODS_DOC, "items": [_PODS_DOC["items"][i] for i in order]}
    view = read_pod_list(doc, json.dumps(doc), "pods.json")
    by_name = {j.name: j.nodes for j in view.jobs}
    for name, _, hosts in make_samples.JOBS:
        assert list(by_name[name]) == make_samples.expand(hosts)


def test_a_sacct_json_is_read_by_its_current_state() -> None:
    doc = _squeue(
        [
            {"job_id": 5, "name": "a", "state": {"current": ["RUNNING"], "reason": "None"},
             "nodes": "su06-node[01-02]"},
            {"job_id": 6, "name": "b", "state": {"current": ["COMPLETED"], "reason": "None"},
             "nodes": "su06-node03"},
        ]
    )  # fmt: skip
    view = read_squeue_json(doc, json.dumps(doc, indent=2), "sacct.json")
    assert [(j.name, j.nodes) for j in view.jobs] == [("a", ("su06-node01", "su06-node02"))]
    assert view.left_out == (("COMPLETED", 1),)
