"""Fuzz every loader with broken versions of the shipped files: the input contract holds.

For every mutated scenario, fabric, state, jobs file and dump the loader either
reads it or raises :class:`~harness.errors.ScenarioError` whose every problem
names the file (and, for content problems, the line) -- never another
exception, and within a few seconds.  Deterministic (``derandomize``) and
bounded (a fixed number of examples per loader) so it runs in CI.
"""

from __future__ import annotations

import functools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric import Fabric
from harness.fabric import preset
from harness.fabric.fabric_file import load_fabric_file
from harness.faults.state_file import load_jobs
from harness.faults.state_file import load_state_file
from harness.importers import load_dump
from harness.importers.jobs import load_jobs as load_any_jobs
from harness.scenario.load import load_file
from harness.scenario.prepare import prepare
from tests.fuzz.mutate import mutated_bytes
from tests.fuzz.mutate import mutated_yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SCENARIOS = [ROOT / "scenarios" / n for n in ("seed-drain-vs-kill.yaml",
                                              "seed-storage-bond-checkpoint.yaml")]  # fmt: skip
FABRICS = [ROOT / "fabrics" / "lab-2su.yaml", ROOT / "fabrics" / "tiny-explicit.yaml"]
STATE = (
    "- kill: su02/leaf-r1\n- drain: [spine-01, spine-02]\n"
    "- degrade: {target: su01/leaf-r0:21--spine-01:1, fraction: 0.5}\n- optic: spine-03:7\n"
)
JOBS = "- {name: train, nodes: 'su01/*'}\n- name: eval\n  nodes: [su02/node01, su02/node02]\n" \
       "  failover: port\n- per-su: true\n"  # fmt: skip
DUMPS = {
    "rail2x2.ibnetdiscover": DATA / "importers" / "rail2x2.ibnetdiscover",
    "clos02.clab.yml": DATA / "third_party" / "containerlab_clos02.clab.yml",
    "simai.txt": DATA / "third_party" / "simai_Rail_Opti_SingleToR_32g_8gps_400Gbps_H100",
    "topo.xml": DATA / "third_party" / "azure_ndv4-topo.xml",
    "nvsmi.txt": DATA / "third_party" / "nvidia-smi_topo-m_8xNV18_10nic.txt",
    "netq.json": DATA / "importers" / "netq" / "spectrumx_rail.json",
}
WHOLE_FILE = (
    "file not found", "not a regular file", "larger than the limit",
    # one-server topologies (nvidia-smi, NCCL XML) are judged as a whole server
    "this server cannot be modelled", "which a NodeTemplate cannot describe",
)  # fmt: skip
SECONDS = 20.0  # per example, on a loaded 2-core CI box

FUZZ = settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@functools.cache
def seed_a800() -> Fabric:
    return preset("seed-a800")


def holds_contract(load: Callable[[Path], Any], path: Path) -> None:
    """``load(path)`` reads, or fails with located problems that name ``path``."""
    start = time.perf_counter()
    problems: tuple[Problem, ...] = ()
    try:
        load(path)
    except ScenarioError as err:
        problems = err.problems or (Problem("an error without problems"),)
    for p in problems:
        assert p.path, f"the problem names no file: {p}"
        if not any(w in p.message for w in WHOLE_FILE):
            assert p.line >= 1, f"the problem has no line: {p}"
    took = time.perf_counter() - start
    assert took < SECONDS, f"{took:.1f} s"


def write(directory: str, name: str, content: str | bytes) -> Path:
    path = Path(directory) / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def load_and_prepare(path: Path) -> None:
    for scenario in load_file(path):
        prepare(scenario)


def _yaml_or_bytes(text: str) -> st.SearchStrategy[str | bytes]:
    return st.one_of(mutated_yaml(text), mutated_bytes(text.encode()))


@FUZZ
@given(st.data())
def test_scenario_files(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(SCENARIOS))
    content = data.draw(_yaml_or_bytes(seed.read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory() as d:
        holds_contract(load_and_prepare, write(d, "scenario.yaml", content))


@FUZZ
@given(st.data())
def test_fabric_files(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(FABRICS))
    content = data.draw(_yaml_or_bytes(seed.read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory() as d:
        holds_contract(load_fabric_file, write(d, "fabric.yaml", content))


@FUZZ
@given(_yaml_or_bytes(STATE))
def test_state_files(content: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        holds_contract(lambda p: load_state_file(p, seed_a800()), write(d, "state.yaml", content))


@FUZZ
@given(_yaml_or_bytes(JOBS))
def test_jobs_files(content: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        holds_contract(lambda p: load_jobs(str(p), seed_a800()), write(d, "jobs.yaml", content))


SCHEDULER_VIEWS = {
    name: DATA / "jobs" / name for name in ("squeue-23.11.json", "squeue-24.05.json",
                                            "squeue.txt", "pods.json")
}  # fmt: skip


@FUZZ
@given(st.data())
def test_scheduler_views(data: st.DataObject) -> None:
    """--jobs with a broken squeue --json, squeue text or pod list."""
    name = data.draw(st.sampled_from(sorted(SCHEDULER_VIEWS)))
    content = data.draw(mutated_bytes(SCHEDULER_VIEWS[name].read_bytes()))
    with tempfile.TemporaryDirectory() as d:
        holds_contract(lambda p: load_any_jobs(str(p), seed_a800()), write(d, name, content))


@FUZZ
@given(st.data())
def test_dumps(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(DUMPS)))
    raw = DUMPS[name].read_bytes()
    content = data.draw(mutated_bytes(raw))
    with tempfile.TemporaryDirectory() as d:
        holds_contract(load_dump, write(d, name, content))
