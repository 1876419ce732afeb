"""One hand-written bad file per message: exit 2, the file:line:column and the message.

Every file of ``tests/bad_inputs/{state,jobs,fabric,dumps,scenarios}/`` is run
through the CLI (``risk --state``, ``risk --jobs``, ``show``, ``audit``,
``validate``) in one subprocess under an address-space limit of
:data:`MEMORY_MB`, and must exit 2 within seconds with its expected message at
its place, never a traceback.  Mutated copies of the shipped files go through
the same driver: any exit code but a traceback, a memory error or a hang.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "bad_inputs"
DRIVER = Path(__file__).with_name("cli_driver.py")
MEMORY_MB = 768  # address space of the whole driver process (Python + numpy + scipy ~ 500)
SECONDS = 15.0  # per command, on a loaded 2-core box

EXPECTED: dict[str, str] = {
    "dumps/binary-appended.ibnetdiscover": ":121:1: the dump file contains a NUL byte (binary cont",
    "dumps/duplicate-node.ibnetdiscover": ":126: node id 'S-0000000000200003' appears twice (fir",
    "dumps/lab-syntax.clab.yml": ":4:1: YAML syntax error: expected the node content, but found '<",
    "dumps/nccl-attribute.xml": ":2:1: <cpu numaid='zero'>: the NUMA id must be a whole number",
    "dumps/nccl-deep.xml": ":1:324: the NCCL topology XML nests elements more than 64 deep",
    "dumps/radix-huge.ibnetdiscover": ":10: su02/leaf-r1 has 100000 ports; a radix is 0 (no limi",
    "dumps/rate-4xFOO.ibnetdiscover": ":11: unknown link rate '4xFOO'; a rate is <width>x<speed>",
    "dumps/simai-huge.txt": ":1: the header says 1,000,000,008 nodes; the limit is MAX_ELEMENTS",
    "fabric/count-huge.yaml": ":8:61: [links[1].count] count must be at most 4,096 (MAX_CABLES_PER",
    "fabric/cpus-not-a-number.yaml": ":1:12: [params] node parameter 'cpus' must be a whole number",
    "fabric/cpus-zero.yaml": ":1:12: [params] node parameter 'cpus' must be >= 1, got 0",
    "fabric/gbps-inf.yaml": ":7:47: [links[0].gbps] gbps (Gb/s per direction) must be a finite num",
    "fabric/gbps-zero.yaml": ":8:49: [links[1].gbps] gbps (Gb/s per direction) must be > 0, got 0",
    "fabric/gpus-huge.yaml": ":1:12: [params] node parameter 'gpus' must be at most 576 (MAX_GPUS_",
    "fabric/lanes-huge.yaml": ":8:61: [links[1].lanes] lanes must be at most 64 (MAX_LANES), got 1",
    "fabric/leaf-down-ports-one.yaml": ":1:12: [params] two-tier: leaf_down_ports 1 is fewer than",
    "fabric/nic-gbps-negative.yaml": ":1:12: [params] node parameter 'nic_gbps' must be > 0, got -",
    "fabric/nodes-per-su-huge.yaml": ":1:12: [params] two-tier: parameter 'nodes_per_su' must be a",
    "fabric/pcie-gbs-inf.yaml": ":1:12: [params] node parameter 'pcie_gbs' must be a finite number",
    "fabric/port-past-radix.yaml": ":8:5: [links[1]] leaf needs port 9 but has only 8 ports; give",
    "fabric/port-zero.yaml": ":8:62: [links[1].a_port] a_port must be >= 1, got 0",
    "fabric/su-past-32-bits.yaml": ":2:31: [nodes[0].su] su must be at most 1,000,000,000 (MAX_ID)",
    "fabric/sus-huge.yaml": ":1:12: [params] two-tier: parameter 'sus' must be at most 10,000 (MAX",
    "fabric/switch-id-is-a-gpu-id.yaml": ":5:10: [switches[1].id] id 'n1/gpu0' is already used on",
    "fabric/two-cables-one-port.yaml": ":9:5: [links[2]] port leaf:2 is taken by the cable on line",
    "jobs/duplicate-key.yaml": ":1:30: [[0].name] duplicate key 'name' (also on line 1); YAML keep",
    "jobs/duplicate-name.yaml": ":2:3: two jobs are named 'a'; job names must be unique",
    "jobs/nodes-match-nothing.yaml": ":2:3: job 'b': nodes 'su99/*' match no server",
    "jobs/per-su-twice.yaml": ":2:3: two jobs are named 'su01'; job names must be unique",
    "jobs/python-tag.yaml": (
        ":1:3: [[0]] unknown tag '!!python/object:harness.fabric.jobs.JobSpec'; only"
    ),
    "jobs/unknown-key.yaml": ":1:3: unknown job key 'node'; did you mean 'nodes'? (known: name, no",
    "scenarios/always-holds.yaml": ":6:25: [steps[0].expect.jobs_lost] jobs_lost is 0 or more, so",
    "scenarios/bound-outside-range.yaml": ":6:28: [steps[0].expect.node_nic_gbs] node_nic_gbs is 0",
    "scenarios/checkpoint-inf.yaml": ":5:56: [checkpoint.interval_s] checkpoint interval_s must be",
    "scenarios/compare-with-nan.yaml": ":6:35: [steps[0].expect.min_job_busbw_ratio] '!= nan': !=",
    "scenarios/params-sus-huge.yaml": ":3:1: two-tier: parameter 'sus' must be at most 10,000 (MAX",
    "scenarios/range-e-e.yaml": ":6:25: [steps[0].expect.jobs_lost] range 'e..e': both ends must b",
    "scenarios/range-three-parts.yaml": ":6:25: [steps[0].expect.jobs_lost] range '1..2..3' has 2",
    "state/alias-bomb.yaml": ":1:1: aliases ('*name') expand this document by more than 100,000 no",
    "state/binary.yaml": ":2:1: the state file is not UTF-8 text (byte 0x89 cannot be decoded: inv",
    "state/deep-nesting.yaml": ":1:65: the document is nested more than 64 levels deep; simplify i",
    "state/degrade-nan.yaml": ":1:3: degrade fraction must be a number between 0 and 1 (exclusive)",
    "state/duplicate-key.yaml": ":1:20: [[0].kill] duplicate key 'kill' (also on line 1); YAML kee",
    "state/int-tag.yaml": ":1:9: [[0].kill] cannot read this value as !!int: invalid literal for i",
    "state/mixed-key-types.yaml": ":2:3: an inject step takes exactly one fault, e.g. {kill: spine",
    "state/non-string-key.yaml": ":1:3: unknown fault kind '1' (known: kill, drain, cut, optic, de",
    "state/not-a-list.yaml": ":1:1: a state file is a YAML list, e.g. '- kill: su02/leaf-r1'",
    "state/nul-byte.yaml": ":2:15: the state file contains a NUL byte (binary content?); save it a",
    "state/python-tag.yaml": ":1:3: [[0]] unknown tag '!!python/object/apply:os.system'; only plai",
    "state/random-count-bool.yaml": ":1:3: 'random' needs a count >= 1 and an integer seed, got {'",
    "state/selector-matches-nothing.yaml": ":2:3: selector 'spine-99' matches no elements; closest",
}


def argv_for(path: Path) -> list[str]:
    kind = path.parent.name
    if kind == "state":
        return ["risk", "seed-a800", "--change", "drain spine-05", "--state", str(path)]
    if kind == "jobs":
        return ["risk", "seed-a800", "--change", "drain spine-05", "--jobs", str(path)]
    if kind == "fabric":
        return ["show", str(path)]
    if kind == "dumps":
        return ["audit", str(path)]
    return ["validate", str(path)]


def run_driver(commands: list[list[str]], timeout: float) -> list[dict[str, Any]]:
    result = subprocess.run(
        [sys.executable, str(DRIVER), str(MEMORY_MB)],
        input=json.dumps(commands), capture_output=True, text=True, timeout=timeout,
        cwd=ROOT, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == len(commands), result.stderr[-2000:]
    return rows


def corpus() -> list[Path]:
    return sorted(p for p in BAD.rglob("*") if p.is_file() and p.name != "conftest.py")


def test_every_bad_file_has_its_expected_message() -> None:
    names = {str(p.relative_to(BAD)) for p in corpus()}
    assert names == set(EXPECTED)


def test_bad_files_exit_2_at_their_place_within_bounds() -> None:
    files = corpus()
    rows = run_driver([argv_for(p.relative_to(ROOT)) for p in files],
                      timeout=60 + SECONDS * len(files) / 4)  # fmt: skip
    for path, row in zip(files, rows, strict=True):
        shown = str(path.relative_to(ROOT))
        name = str(path.relative_to(BAD))
        assert row["code"] == 2, (name, row["stderr"])
        assert "Traceback" not in row["stderr"], row["stderr"]
        assert f"error: {shown}{EXPECTED[name]}" in row["stderr"], (name, row["stderr"])
        assert row["seconds"] < SECONDS, (name, row["seconds"])


def _mutants(rng: random.Random, data: bytes, n: int) -> list[bytes]:
    out = []
    garbage = (b"\x00", b"\xff\xfe", b": [", b"{", b"&a *a", b"!!python/none", b"1e999",
               b"-1", b"\t", b"..", b"0", b"'")  # fmt: skip
    for _ in range(n):
        lines = data.split(b"\n")
        k = rng.randrange(len(lines))
        op = rng.choice(("splice", "delete", "duplicate", "truncate"))
        if op == "splice":
            at = rng.randrange(len(lines[k]) + 1)
            lines[k] = lines[k][:at] + rng.choice(garbage) + lines[k][at:]
        elif op == "delete":
            del lines[k]
        elif op == "duplicate":
            lines.insert(k, lines[k])
        else:
            lines = lines[:k]
        out.append(b"\n".join(lines))
    return out


SEEDS = {
    "scenarios/seed.yaml": ROOT / "scenarios" / "seed-drain-vs-kill.yaml",
    "fabric/lab.yaml": ROOT / "fabrics" / "tiny-explicit.yaml",
    "dumps/rail2x2.ibnetdiscover": ROOT / "tests" / "data" / "importers" / "rail2x2.ibnetdiscover",
    "dumps/simai.txt": ROOT
    / "tests"
    / "data"
    / "third_party"
    / "simai_Rail_Opti_SingleToR_32g_8gps_400Gbps_H100",
}


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_mutated_files_on_the_cli_never_crash(tmp_path: Path, seed: str) -> None:
    rng = random.Random(seed)  # deterministic
    files = []
    for i, content in enumerate(_mutants(rng, SEEDS[seed].read_bytes(), 12)):
        path = tmp_path / seed.split("/", maxsplit=1)[0] / f"m{i}-{Path(seed).name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        files.append(path)
    rows = run_driver([argv_for(p) for p in files], timeout=60 + SECONDS * len(files) / 4)
    for path, row in zip(files, rows, strict=True):
        assert row["code"] in (0, 1, 2), (path.read_bytes()[:300], row["stderr"])
        assert "Traceback" not in row["stderr"], (path.read_bytes()[:300], row["stderr"])
        assert row["seconds"] < SECONDS
        if row["code"] == 2:
            assert str(path.name) in row["stderr"] or "error:" in row["stderr"]
