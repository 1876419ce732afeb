"""The pytest plugin, driven through real pytest sessions (``pytester``)."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points

import pytest

from harness.backends import BACKENDS
from harness.backends import unavailable
from harness.pytest_plugin import ScenarioItem
from harness.pytest_plugin import is_scenario_file

# A test module may require plugins; a conftest below the rootdir may not
# (pytest refuses ``pytest_plugins`` there once collection has started).
pytest_plugins = ["pytester"]

PASSING = """\
name: one-spine
description: Kill one spine; every job survives.
fabric:
  preset: seed-a800
jobs:
  - per-su: true
steps:
  - inject: {kill: spine-05}
  - expect:
      jobs_lost: 0
      all_gpus_connected: true
"""

# Line 9 holds the expectation that fails.
FAILING = """\
name: wrong-hope
description: Kill one spine and (wrongly) hope the leaves keep all their uplinks.
fabric:
  preset: seed-a800
steps:
  - inject: {kill: spine-05}
  - expect:
      jobs_lost: 0
      leaf_uplink_ratio: 1.0
"""

TWO_IN_ONE = """\
- name: drain-one
  description: Drain one spine.
  fabric: {preset: seed-a800}
  steps:
    - inject: {drain: spine-01}
    - expect: {all_gpus_connected: true}
- name: kill-a-leaf
  description: Kill one leaf; its rail in that SU is cut off.
  fabric: {preset: seed-a800}
  steps:
    - inject: {kill: su01/leaf-r0}
    - expect: {nics_isolated: 20}
"""

NETNS_ONLY = """\
name: needs-netns
description: Only meaningful with real routing.
backends: [netns]
fabric:
  preset: seed-a800
steps:
  - inject: {kill: spine-05}
  - expect:
      jobs_lost: 0
"""

# Line 8 has the typo ('kil'), line 9 an unknown key.
BAD = """\
name: bad-one
description: A fault kind with a typo.
fabric:
  preset: seed-a800
jobs:
  - per-su: true
steps:
  - inject: {kil: spine-05}
  - expectt:
      jobs_lost: 0
"""

NO_MATCH = """\
name: no-such-spine
description: A selector that matches nothing.
fabric:
  preset: seed-a800
steps:
  - inject: {kill: spine-99}
  - expect:
      jobs_lost: 0
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project with no conftest: the installed plugin (entry point) does the work."""
    # When this suite runs under xdist, the inner sessions are not workers
    # (plugins such as pytest-benchmark read these variables and warn).
    for var in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    return pytester


def add(pytester: pytest.Pytester, **files: str) -> None:
    for name, text in files.items():
        path = pytester.path / "scenarios" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_passing_and_failing_scenarios(project: pytest.Pytester) -> None:
    add(project, one=PASSING, two=FAILING)
    result = project.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "scenarios/one.yaml::one-spine PASSED*",
            "scenarios/two.yaml::wrong-hope FAILED*",
        ]
    )


def test_failure_text_is_readable(project: pytest.Pytester) -> None:
    add(project, two=FAILING)
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "leaf_uplink_ratio: expected 1.0, observed 0.95 at scenarios/two.yaml:9:7",
            "scenario wrong-hope on fabric seed-a800 (backend model, routing control sm, "
            "forwarding static, paths up-down, engine ftree, reroute 1s, link_up 3s, sweep 10s): "
            "failed: 1 of 2 expectations",
            "steps:",
            "    scenarios/two.yaml:6:5: inject: killed spine-05 (t=0 s -> 0 s)",
            "        every GPU pair can still talk",
            "failed expectations:",
            "    scenarios/two.yaml:9:7: leaf_uplink_ratio",
            "        expected: 1.0",
            "        observed: 0.95",
        ]
    )
    text = result.stdout.str()
    assert "Traceback" not in text
    assert "def runtest" not in text  # no Python source in the report
    assert "scenarios/two.yaml:8:7" not in text  # jobs_lost held
    result.stdout.fnmatch_lines(
        ["FAILED scenarios/two.yaml::wrong-hope - leaf_uplink_ratio: expected 1.0*"]
    )


def test_a_file_may_hold_a_list_of_scenarios(project: pytest.Pytester) -> None:
    add(project, pair=TWO_IN_ONE)
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["scenarios/pair.yaml::drain-one", "scenarios/pair.yaml::kill-a-leaf"]
    )
    project.runpytest().assert_outcomes(passed=2)


def test_only_yaml_below_a_scenarios_directory_is_collected(project: pytest.Pytester) -> None:
    add(project, one=PASSING)
    other = project.path / "fabrics" / "lab.yaml"
    other.parent.mkdir()
    other.write_text("generator: two-tier\nparams: {sus: 1}\n")
    nested = project.path / "suite" / "scenarios" / "deep" / "x.yml"
    nested.parent.mkdir(parents=True)
    nested.write_text(PASSING.replace("one-spine", "deep-one"))
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["scenarios/one.yaml::one-spine", "suite/scenarios/deep/x.yml::deep-one", "*2 tests*"]
    )
    assert "lab.yaml" not in result.stdout.str()


@pytest.mark.parametrize(
    ("rel", "collected"),
    [
        ("scenarios/a.yaml", True),
        ("x/scenarios/b/c.yml", True),
        ("scenarios/a.json", False),
        ("fabrics/a.yaml", False),
        ("scenarios.yaml", False),
    ],
)
def test_is_scenario_file(pytester: pytest.Pytester, rel: str, collected: bool) -> None:
    assert is_scenario_file(pytester.path / rel, pytester.path) is collected


@pytest.mark.parametrize(
    ("globs", "rel", "collected"),
    [
        (["checks/*.yaml"], "checks/spines.yaml", True),
        (["checks/*.yaml"], "checks/old/spines.yaml", False),  # * stays in one directory
        (["checks/*.yaml"], "other/checks/spines.yaml", False),  # relative to the ini file
        (["checks/**/*.yaml"], "checks/spines.yaml", True),  # ** may be no directory
        (["checks/**/*.yaml"], "checks/a/b/spines.yaml", True),
        (["**/*.yaml"], "deep/down/x.yaml", True),
        (["checks/spine-0[1-3].yaml"], "checks/spine-02.yaml", True),
        (["checks/spine-0[!1-3].yaml"], "checks/spine-02.yaml", False),
        (["checks/?.yaml"], "checks/ab.yaml", False),
        (["a.yaml", "b/*.yml"], "b/c.yml", True),
        ([], "scenarios/a.yaml", False),
    ],
)
def test_scenario_globs(
    pytester: pytest.Pytester, globs: list[str], rel: str, collected: bool
) -> None:
    assert is_scenario_file(pytester.path / rel, pytester.path, globs) is collected


def test_the_plugin_is_a_pytest11_entry_point() -> None:
    # What makes `pip install harness` enough: pytest loads every pytest11 entry point.
    found = [e for e in entry_points(group="pytest11") if e.value == "harness.pytest_plugin"]
    assert [e.name for e in found] == ["harness"]


FOREIGN_INI = """\
[pytest]
harness_scenarios =
    checks/*.yaml
"""


def test_foreign_layout_configured_by_the_ini_option(project: pytest.Pytester) -> None:
    # Another repository: scenario files in checks/, nothing but an ini file.
    project.makeini(FOREIGN_INI)
    checks = project.path / "checks"
    checks.mkdir()
    (checks / "spines.yaml").write_text(PASSING)
    (checks / "old").mkdir()
    (checks / "old" / "stale.yaml").write_text(FAILING)  # not matched by checks/*.yaml
    add(project, ignored=FAILING)  # scenarios/ is not in the globs of this project
    # A subprocess, as a user runs it: only the installed entry point loads the plugin.
    result = project.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["checks/spines.yaml::one-spine PASSED*"])
    out = project.path / "repro"
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--save-reproducer={out}", "--backend", "model"
    )
    result.assert_outcomes(passed=1)


def test_ini_option_is_documented_in_help(project: pytest.Pytester) -> None:
    result = project.runpytest("--help")
    result.stdout.fnmatch_lines(["*--save-reproducer=DIR*", "*harness_scenarios (args):*"])


def test_plugin_can_be_switched_off(project: pytest.Pytester) -> None:
    add(project, one=PASSING)
    result = project.runpytest("-p", "no:harness")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_bad_file_is_a_collection_error_with_locations(project: pytest.Pytester) -> None:
    add(project, bad=BAD, one=PASSING)
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting scenarios/bad.yaml*",
            "bad scenario file:",
            "scenarios/bad.yaml:8:*kil*",
            "scenarios/bad.yaml:9:*expectt*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_bad_input_found_while_running_is_located(project: pytest.Pytester) -> None:
    add(project, nomatch=NO_MATCH)
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["bad input in scenario no-such-spine:", "scenarios/nomatch.yaml:6:*spine-99*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_backend_option(project: pytest.Pytester) -> None:
    add(project, one=PASSING, netns=NETNS_ONLY)
    result = project.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED * scenarios/netns.yaml*: scenario runs on netns, not on --backend model"]
    )
    # A backend that is not available here is not offered: a usage error naming those that are.
    # (netns is available where tests run as root, as in CI: take one that is not.)
    missing = next(b for b in BACKENDS if unavailable(b) is not None)
    result = project.runpytest("-rs", "--backend", missing)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--backend: invalid choice: '{missing}' (choose from *model*)"])


def test_unknown_backend_is_a_usage_error(project: pytest.Pytester) -> None:
    add(project, one=PASSING)
    result = project.runpytest("--backend", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--backend: invalid choice: 'nope'*"])


def test_backend_option_is_in_the_harness_group(project: pytest.Pytester) -> None:
    result = project.runpytest("--help")
    result.stdout.fnmatch_lines(["harness scenarios:", "  --backend*"])


def test_junitxml(project: pytest.Pytester) -> None:
    add(project, one=PASSING, two=FAILING, netns=NETNS_ONLY)
    result = project.runpytest("--junitxml=out/junit.xml")
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    root = ET.parse(project.path / "out" / "junit.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    assert (suite.attrib["tests"], suite.attrib["failures"], suite.attrib["skipped"]) == (
        "3",
        "1",
        "1",
    )
    cases = {c.attrib["name"]: c for c in suite.iter("testcase")}
    assert set(cases) == {"one-spine", "wrong-hope", "needs-netns"}
    assert cases["one-spine"].attrib["classname"] == "scenarios.one.yaml"
    failure = cases["wrong-hope"].find("failure")
    assert failure is not None
    assert "expected 1.0, observed 0.95" in failure.attrib["message"]
    assert "scenarios/two.yaml:9:7: leaf_uplink_ratio" in (failure.text or "")


def test_reportinfo_points_at_the_scenario(project: pytest.Pytester) -> None:
    add(project, pair=TWO_IN_ONE)
    items = project.getitems(project.path / "scenarios" / "pair.yaml")
    assert all(isinstance(i, ScenarioItem) for i in items)
    infos = [i.reportinfo() for i in items]
    path = project.path / "scenarios" / "pair.yaml"
    # 0-based as pytest wants: the two scenarios start on lines 1 and 7.
    assert infos == [(path, 0, "scenario: drain-one"), (path, 6, "scenario: kill-a-leaf")]
    assert items[1].location == ("scenarios/pair.yaml", 6, "scenario: kill-a-leaf")


def test_xdist(project: pytest.Pytester) -> None:
    add(project, one=PASSING, two=FAILING, pair=TWO_IN_ONE)
    # In a subprocess, as CI runs it (and out of this session's warning filters:
    # pytest-benchmark, where installed, warns that xdist disables it).
    result = project.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*2 workers*", "*scenarios/two.yaml:9:7: leaf_uplink_ratio"])


STATEFUL_TEST = """
from harness.fabric.resolve import FabricRef
from harness.fabric.jobs import JobSpec
from hypothesis import settings
from harness.search.stateful import FabricStateMachine, run


class NoJobEverLost(FabricStateMachine):
    fabric = FabricRef(generator="two-tier", params=(
        ("sus", 2), ("nodes_per_su", 2), ("spines", 2), ("leaf_radix", 8), ("storage", False),
    ))
    jobs = (JobSpec(per_su=True),)
    expectations = {"jobs_lost": 0}


def test_machine():
    run(NoJobEverLost, settings=settings(max_examples=60, stateful_step_count=4, deadline=None))
"""


def test_save_reproducer_writes_the_shrunk_scenario(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_SAVE_REPRODUCER", raising=False)
    project.makepyfile(test_machine=STATEFUL_TEST)
    out = project.path / "repro"
    result = project.runpytest("-p", "no:cacheprovider", f"--save-reproducer={out}")
    result.assert_outcomes(failed=1)
    files = sorted(out.glob("*.yaml"))
    assert files, "the failing machine wrote no reproducer"
    text = files[0].read_text()
    assert "inject:" in text
    assert "jobs_lost: 0" in text
    import os

    assert "HARNESS_SAVE_REPRODUCER" not in os.environ  # restored at unconfigure


def test_scenario_tags_are_markers_under_strict_markers(project: pytest.Pytester) -> None:
    tagged = PASSING.replace("fabric:", "tags: [spine, blast-radius, skip]\nfabric:", 1)
    other = PASSING.replace("name: one-spine", "name: untagged", 1)
    add(project, tagged=tagged, other=other)
    project.makeini("[pytest]\naddopts = --strict-markers\n")
    result = project.runpytest("--collect-only", "-q", "-m", "spine and blast-radius")
    result.stdout.fnmatch_lines(["scenarios/tagged.yaml::one-spine", "*1/2 tests collected*"])
    assert "untagged" not in result.stdout.str()
    # a tag named like one of pytest's own markers is no marker: 'skip' does not skip
    project.runpytest("-m", "not spine").assert_outcomes(passed=1, deselected=1)
    project.runpytest("-m", "skip").assert_outcomes(deselected=2)
