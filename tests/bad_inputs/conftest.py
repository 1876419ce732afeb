"""The hostile files here are inputs of tests/fuzz/test_bad_inputs.py, never test items."""

from __future__ import annotations

collect_ignore_glob = ["*"]
