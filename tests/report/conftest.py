"""Fixtures of the report tests: one headless chromium per test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.report.browser import browser


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A Playwright browser context on Debian's chromium, offline, fresh profile."""
    with browser() as context:
        yield context
