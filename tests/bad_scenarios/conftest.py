"""The broken scenarios here are inputs of tests/scenario/test_load.py, never test items."""

from __future__ import annotations

collect_ignore_glob = ["*.yaml", "*.yml"]
