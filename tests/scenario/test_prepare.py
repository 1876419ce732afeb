"""``harness validate`` rejects what ``harness run`` rejects, with the same message.

Both go through :func:`harness.scenario.prepare.prepare`: the fabric is built,
jobs, selectors, restores and expectation arguments resolved, before anything
is injected.  Each case below once passed ``validate`` and failed ``run``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.scenario.load import load_text
from harness.scenario.prepare import prepare
from harness.scenario.prepare import restore_choice

HEAD = """\
name: case
description: once valid to validate, rejected by run
"""
SEED = "fabric: {preset: seed-a800}\n"

# name -> (scenario body after the name/description, a piece of the expected message)
CASES: dict[str, tuple[str, str]] = {
    "selector-matches-nothing": (
        SEED + "steps:\n  - inject: {kill: spine-5}\n",
        "5:5: selector 'spine-5' matches no elements; closest: spine-05, spine-15, spine-04",
    ),
    "job-on-a-missing-su": (
        SEED + "jobs:\n  - {name: big, nodes: 'su99/*'}\nsteps:\n  - expect: {jobs_lost: 0}\n",
        "job 'big': nodes 'su99/*' match no server",
    ),
    "radix-1": (
        "fabric: {generator: two-tier, params: {sus: 2, nodes_per_su: 4, spines: 2, "
        "leaf_radix: 1}}\nsteps:\n  - expect: {jobs_lost: 0}\n",
        "3:1: two-tier fabric past its limit",
    ),
    "nodes-per-su-1e9": (
        "fabric: {preset: seed-a800, params: {nodes_per_su: 1000000000}}\n"
        "steps:\n  - expect: {jobs_lost: 0}\n",
        "parameter 'nodes_per_su' must be at most 100,000 (MAX_SERVERS)",
    ),
    "between-a-non-gpu": (
        SEED + "steps:\n  - expect:\n      path_class: {between: [su01/node01/gpu0, "
        "su01/node1/gpu1], is: nvlink}\n",
        "6:7: 'su01/node1/gpu1' is not a gpu of fabric 'seed-a800'; "
        "did you mean 'su01/node01/gpu1'?",
    ),
    "per-su-job-beyond-the-fabric": (
        SEED + "jobs: [per-su]\nsteps:\n  - expect: {job_busbw_ratio: {job: su11, is: 1.0}}\n",
        "no job named 'su11'; did you mean 'su01'? (jobs: su01, su02, su03",
    ),
    "bisection-on-one-su": (
        "fabric: {preset: seed-a800, params: {sus: 1}}\nsteps:\n  - expect: {bisection_ratio: 1}\n",
        "bisection needs at least 2 SUs; fabric 'seed-a800' has 1",
    ),
    "node-argument-is-a-leaf": (
        SEED + "steps:\n  - expect: {node_nic_ratio: {node: su01/leaf-r0, is: 1}}\n",
        "'su01/leaf-r0' is not a node of fabric 'seed-a800'",
    ),
    "checkpoint-without-storage": (
        "fabric: {preset: seed-a800, params: {storage: false}}\njobs: [per-su]\n"
        "checkpoint: {size_gb: 112}\nsteps:\n  - expect: {checkpoint_sync_stall_s: '< 10'}\n",
        "checkpoint_sync_stall_s needs a storage network, and fabric 'seed-a800' has none",
    ),
    "drain-a-nic": (
        SEED + "steps:\n  - inject: {drain: su01/node01/nic0}\n",
        "drain cannot apply to su01/node01/nic0 (a nic)",
    ),
    "uplink-flows-of-a-leaf-while-flaky": (
        SEED + "steps:\n  - inject: {flaky: {target: {between: [su01/leaf-r0, spine-01]}, "
        "loss: 1%}}\n  - expect: {leaf_uplink_ratio: {leaf: su01/leaf-r0, is: 1}}\n",
        "6:14: leaf_uplink_ratio: the model does not predict bandwidth through a lossy link",
    ),
    "busbw-while-flaky": (
        SEED + "jobs: [per-su]\nsteps:\n  - inject: {flaky: {target: 'su01/leaf-r0:21--spine-01:1'"
        ", loss: 1%}}\n  - expect: {job_busbw_ratio: 1}\n",
        "7:14: job_busbw_ratio: the model does not predict bandwidth through a lossy link",
    ),
    "degrade-more-lanes-than-the-cable-has": (
        SEED + "steps:\n  - inject: {degrade: {target: 'su01/leaf-r0:21--spine-01:1', lanes: 4}}\n",
        "has only 4; give fewer lanes or use fraction:",
    ),
}


def write_case(tmp_path: Path, name: str) -> Path:
    body, _ = CASES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_validate_rejects_what_run_rejects_with_the_same_message(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_case(tmp_path, name)
    assert main(["run", str(path), "--quiet"]) == 2
    run_errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error: ")]
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    summary, *validate_errors = err.splitlines()
    assert summary == "error: 1 problem in 1 of 1 file"
    assert validate_errors == run_errors
    (line,) = validate_errors
    assert line.startswith(f"error: {path}:")
    assert CASES[name][1] in line


def test_validate_reports_every_problem_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "many.yaml"
    path.write_text(
        HEAD
        + textwrap.dedent("""\
            fabric: {preset: seed-a800}
            jobs:
              - {name: a, nodes: 'su98/*'}
              - {name: b, nodes: 'su99/*'}
            steps:
              - inject: {kill: spine-5}
                as: one
              - inject: {cut: 'su01/leaf-r0:21--spine-02:1'}
              - restore: one
              - expect: {hops: {between: [gpu0, su01/node01/gpu1], is: 0}}
            """),
        encoding="utf-8",
    )
    assert main(["validate", str(path)]) == 2
    summary, *lines = capsys.readouterr().err.splitlines()
    assert summary == "error: 5 problems in 1 of 1 file"
    where = [line.removeprefix(f"error: {path}:").split(": ", 1) for line in lines]
    assert [w for w, _ in where] == ["1:1", "1:1", "8:5", "10:5", "12:14"]
    assert [m.split(";")[0] for _, m in where] == [
        "job 'a': nodes 'su98/*' match no server",
        "job 'b': nodes 'su99/*' match no server",
        "selector 'spine-5' matches no elements",
        "selector 'su01/leaf-r0:21--spine-02:1' matches no cables",
        "'gpu0' is not a gpu of fabric 'seed-a800'",
    ]


def test_validate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_case(tmp_path, "selector-matches-nothing")
    good = tmp_path / "good.yaml"
    good.write_text(HEAD.replace("case", "good") + SEED + "steps:\n  - inject: {kill: spine-05}\n")
    assert main(["validate", "--json", str(tmp_path)]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] is False
    assert sorted(doc["files"]) == sorted([str(bad), str(good)])
    assert sorted(doc["scenarios"]) == ["case", "good"]
    (problem,) = doc["problems"]
    assert problem["path"] == str(bad)
    assert (problem["line"], problem["column"], problem["scenario"]) == (5, 5, "case")
    assert problem["message"].startswith("selector 'spine-5' matches no elements")
    bad.unlink()
    assert main(["validate", "--json", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "valid": True,
        "files": [str(good)],
        "scenarios": ["good"],
        "problems": [],
    }


def test_validate_json_keeps_load_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(HEAD + SEED + "steps:\n  - inject: {kil: spine-05}\n", encoding="utf-8")
    assert main(["validate", "--json", str(path)]) == 2
    (problem,) = json.loads(capsys.readouterr().out)["problems"]
    assert problem["scenario"] is None
    assert "did you mean 'kill'?" in problem["message"]


def test_validate_every_shipped_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2] / "scenarios"
    assert main(["validate", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.endswith(" are valid\n")


# -- the library -------------------------------------------------------------------------
def test_prepare_resolves_each_inject_and_what_each_restore_reverts() -> None:
    (s,) = load_text(
        HEAD
        + SEED
        + textwrap.dedent("""\
            steps:
              - inject: {kill: spine-01}
                as: a
              - inject: {cut: 'su01/leaf-r0:22--spine-02:1'}
                as: b
              - inject: {kill: spine-03}
                as: a
              - restore: a
              - restore: all
            """)
    )
    p = prepare(s)
    assert p.fabric is not None
    assert [ps.applied.describe(p.fabric) if ps.applied else None for ps in p.steps] == [
        "killed spine-01",
        "cut su01/leaf-r0:22--spine-02:1",
        "killed spine-03",
        None,
        None,
    ]
    assert [ps.reverts for ps in p.steps] == [(), (), (), (2, 0), (1,)]


def test_prepare_keeps_an_expected_fabric_error() -> None:
    (s,) = load_text(
        HEAD
        + "fabric: {preset: seed-a800, params: {sus: 11}}\n"
        + "expect_fabric_error: past its limit\n"
    )
    p = prepare(s)
    assert p.fabric is None
    assert "two-tier fabric past its limit" in p.fabric_error


@pytest.mark.parametrize(
    ("names", "target", "chosen"),
    [
        (["a", None, "a"], "a", [2, 0]),
        (["a", None, "b"], "last", [2]),
        (["a", None, "b"], "all", [2, 1, 0]),
    ],
)
def test_restore_choice(names: list[str | None], target: str, chosen: list[int]) -> None:
    assert restore_choice(names, target) == chosen


def test_restore_choice_errors() -> None:
    with pytest.raises(ScenarioError, match="restore: no fault is applied"):
        restore_choice([], "all")
    with pytest.raises(ScenarioError, match=r"named 'c' \(named: \['a'\]\)"):
        restore_choice(["a", None], "c")


FLAKY_UPLINK_RATIO = """\
name: flaky-ratio
description: one leaf's uplink ratio, measured with flows, while its uplink is flaky
backends: [model, netns]
fabric: {{file: {fabric}}}
steps:
  - inject: {{flaky: {{target: {{between: [leaf-r0, spine1]}}, loss: 10%}}}}
  - expect:
      leaf_uplink_ratio: {{leaf: leaf-r0, is: "> 0.5"}}
  - restore: all
  - expect:
      leaf_uplink_ratio: {{leaf: leaf-r0, is: 1}}
"""


@pytest.mark.privileged
def test_a_bandwidth_expected_while_flaky_stops_netns_before_anything_is_built(
    tmp_path: Path,
) -> None:
    tiny = Path(__file__).parents[2] / "fabrics" / "tiny-explicit.yaml"
    path = tmp_path / "flaky-ratio.yaml"
    path.write_text(FLAKY_UPLINK_RATIO.format(fabric=tiny), encoding="utf-8")
    state = tmp_path / "state"
    env = {**os.environ, "HARNESS_STATE_DIR": str(state)}
    for command in (["validate"], ["run", "--backend", "netns"]):
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "harness", *command, str(path)],
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
        took = time.monotonic() - t0
        assert done.returncode == 2, done.stderr
        assert (
            f"error: {path}:8:7: leaf_uplink_ratio: the model does not predict bandwidth "
            "through a lossy link (leaf-r0:5--spine1:1 loses 10% of its packets, flaky)"
        ) in done.stderr
        assert done.stderr.count("error: ") == 1 + (command == ["validate"])  # + the summary
        assert took < 5, f"{command[0]} took {took:.1f} s (python and its imports: about 1 s)"
    assert not state.exists()  # no run ledger: not a namespace was made
