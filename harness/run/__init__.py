"""Running scenarios: a run session over a backend, step by step, with predictions beside
measurements.
"""

from __future__ import annotations
