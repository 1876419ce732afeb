"""Property search: hypothesis strategies over fabrics and faults, stateful tests, and reproducers
for what they find.

Modules:

``reproducer``  Reproducers: faults and expectations written back as a scenario file.
``stateful``    Stateful fault search: a hypothesis state machine over a fabric (public API).
``strategies``  Hypothesis strategies for fabrics, faults and fault programs (public API).
"""

from __future__ import annotations
