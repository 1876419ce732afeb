"""Property search: hypothesis strategies over fabrics and faults, stateful tests, and reproducers
for what they find.
"""

from __future__ import annotations
