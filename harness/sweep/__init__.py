"""Failure sweeps: every single (and pair of) failures of a fabric, evaluated fast."""

from __future__ import annotations

from harness.sweep.cases import CATEGORIES
from harness.sweep.cases import DEFAULT_CATEGORIES
from harness.sweep.cases import parse_categories
from harness.sweep.engine import CaseEvaluator
from harness.sweep.engine import CaseResult
from harness.sweep.engine import Failure
from harness.sweep.run import SweepResult
from harness.sweep.run import SweepSpec
from harness.sweep.run import run_sweep
from harness.sweep.run import sweep

__all__ = [
    "CATEGORIES",
    "DEFAULT_CATEGORIES",
    "CaseEvaluator",
    "CaseResult",
    "Failure",
    "SweepResult",
    "SweepSpec",
    "parse_categories",
    "run_sweep",
    "sweep",
]
