"""The backend tests' one hook: which conformance tests run alone.

A conformance case on a backend that measures flows with real TCP is marked
``real_tcp``; a test that measures flows is marked ``measures_flows``.  Where both
meet, the test runs alone (tests/support/alone.py): another test's emulation would
take the cores the flows are measured on.  The case's other tests (kills, crashed
jobs, the life cycle) run beside other tests.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``alone`` the tests that measure flows over real TCP."""
    for item in items:
        if item.get_closest_marker("real_tcp") and item.get_closest_marker("measures_flows"):
            item.add_marker(pytest.mark.alone)
