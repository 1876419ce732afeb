"""``python -m harness``: the same command line as ``harness``."""

from __future__ import annotations

from harness.cli import entrypoint

if __name__ == "__main__":
    entrypoint()
