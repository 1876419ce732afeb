"""Scenarios: the frozen model, the YAML loader, the JSON Schema, fabric references."""

from __future__ import annotations

from harness.scenario.discover import discover
from harness.scenario.load import load_file
from harness.scenario.model import Scenario

__all__ = ["Scenario", "discover", "load_file"]
