"""Failure sweeps: every single (and pair of) failures of a fabric, evaluated fast."""

from __future__ import annotations

from harness.planning.sweep.cases import CATEGORIES
from harness.planning.sweep.cases import DEFAULT_CATEGORIES
from harness.planning.sweep.cases import parse_categories
from harness.planning.sweep.evaluator import CaseEvaluator
from harness.planning.sweep.records import CaseResult
from harness.planning.sweep.records import Failure
from harness.planning.sweep.run import SweepResult
from harness.planning.sweep.run import SweepSpec
from harness.planning.sweep.run import run_sweep
from harness.planning.sweep.run import sweep

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
