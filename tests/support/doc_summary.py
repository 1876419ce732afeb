"""The doc-example summary: after a run of ``tests/docs/test_doc_examples.py``, which blocks ran.

A plugin of the suite, registered in the root ``conftest.py``: at the end of a run that
included the doc-example tests it says how many code blocks of README.md and docs/*.md
were executed and lists the ones that were not run, with their reasons.
"""

from __future__ import annotations

import pytest

from tests.docs.doc_blocks import all_blocks


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a run that included the doc-example tests, say which blocks were not run."""
    ran = any(
        getattr(report, "nodeid", "").startswith("tests/docs/test_doc_examples.py::")
        for reports in terminalreporter.stats.values()
        for report in reports
    )
    if not ran:
        return
    blocks = all_blocks()
    executed = sum(1 for b in blocks if b.executed)
    not_run = [b for b in blocks if b.not_run is not None]
    terminalreporter.write_sep("-", "doc examples")
    terminalreporter.write_line(
        f"{executed} code blocks of README.md and docs/*.md executed, {len(not_run)} not run"
    )
    for b in not_run:
        terminalreporter.write_line(f"  not run: {b.where}: {b.not_run}")
