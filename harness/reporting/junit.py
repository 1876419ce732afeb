"""JUnit XML for CI consumers (reporting stage, only :func:`write_junit` writes).

One ``<testsuites>`` with one ``<testsuite>`` per run and one ``<testcase>`` per
scenario, in the attribute set of pytest's ``xunit2`` family (``classname``,
``name``, ``time``) so Jenkins, GitLab and GitHub reporters read it:

* a failed expectation: ``<failure message="first failure" type="ExpectationFailed">``
  with the whole story (steps, expected vs observed, detail, file:line) as text;
* a measurement that disagrees with the prediction: ``<failure type="Mismatch">``;
* bad input: ``<error message="..." type="ScenarioError">`` with every problem;
* a scenario whose ``backends:`` exclude the run's backend: ``<skipped>``.

Every step's line (with the scenario clock before and after it, ``t=0 s -> 10 s``)
and story go to ``<system-out>`` of every test case that ran, and on a measuring
backend every expectation's prediction beside its measurement.
"""

from __future__ import annotations

import platform
import re
import xml.etree.ElementTree as ET
from datetime import UTC
from datetime import datetime
from pathlib import Path
from pathlib import PurePath

from harness.reporting.outcome import RunReport
from harness.reporting.text import explain
from harness.reporting.text import failure_message
from harness.reporting.text import measured_elsewhere
from harness.reporting.text import measurement_lines
from harness.reporting.text import step_lines

# Characters XML 1.0 cannot carry, even escaped (as pytest's junitxml ``bin_xml_escape``).
_ILLEGAL = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _ILLEGAL.sub(lambda m: f"#x{ord(m.group()):02X}", text)


def classname(path: str) -> str:
    """``scenarios/seed/spines.yaml`` -> ``scenarios.seed.spines`` (as pytest names modules)."""
    if not path:
        return "harness"
    p = PurePath(path)
    parts = [part for part in p.with_suffix("").parts if part not in ("/", "..", ".")]
    return ".".join(parts) or "harness"


def junit_xml(report: RunReport, suite_name: str = "harness") -> ET.ElementTree[ET.Element]:
    """The report as a JUnit XML tree."""
    suite = ET.Element(
        "testsuite",
        name=suite_name,
        tests=str(report.total + len(report.skipped)),
        failures=str(report.failed + report.mismatched),
        errors=str(report.errors),
        skipped=str(len(report.skipped)),
        time=f"{report.seconds:.3f}",
        timestamp=datetime.now(UTC).isoformat(timespec="seconds"),
        hostname=platform.node(),
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="backend", value=report.backend)
    for r in report.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=classname(r.path),
            name=_clean(r.name),
            time=f"{r.seconds:.3f}",
        )
        if r.status in ("failed", "mismatch"):
            fail = ET.SubElement(case, "failure", message=_clean(failure_message(r)))
            fail.set("type", "Mismatch" if r.status == "mismatch" else "ExpectationFailed")
            fail.text = _clean(explain(r))
        elif r.status == "error":
            err = ET.SubElement(case, "error", message=_clean(failure_message(r)))
            err.set("type", "ScenarioError")
            err.text = _clean(r.error)
        story = [
            line
            for s in r.steps
            for line in (
                step_lines(s) + (measurement_lines(s) if measured_elsewhere(s) else [])
                if s.kind == "expect" else step_lines(s)
            )
        ]  # fmt: skip
        if story:
            ET.SubElement(case, "system-out").text = _clean("\n".join(story))
    for s in report.skipped:
        case = ET.SubElement(suite, "testcase", classname=classname(s.path), name=s.name, time="0")
        ET.SubElement(case, "skipped", message=_clean(s.reason))
    root = ET.Element(
        "testsuites",
        name=suite_name,
        tests=suite.get("tests", "0"),
        failures=str(report.failed + report.mismatched),
        errors=str(report.errors),
        skipped=str(len(report.skipped)),
        time=f"{report.seconds:.3f}",
    )
    root.append(suite)
    tree: ET.ElementTree[ET.Element] = ET.ElementTree(root)
    ET.indent(tree)
    return tree


def write_junit(report: RunReport, path: Path, suite_name: str = "harness") -> None:
    """Write the report to ``path`` (parent directories are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_xml(report, suite_name).write(path, encoding="utf-8", xml_declaration=True)
