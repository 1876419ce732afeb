"""Faults: what breaks (the fault kinds, the selectors that name their targets, the --change text,
saved fault states).
"""

from __future__ import annotations
