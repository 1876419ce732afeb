"""Hypothesis's settings for the suite: no per-example deadline.

Timing is not a property (these machines are shared and noisy; speed is measured in
``benchmarks/``), so a slow example under load is never a failure.  Everything else of
hypothesis's defaults holds.  Loaded when the root ``conftest.py`` registers this module.
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("harness", deadline=None)
settings.load_profile("harness")
