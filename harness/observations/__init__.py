"""Observations: what a scenario can look at, predicted from the model and measured on a backend,
and judged.
"""

from __future__ import annotations
