"""Planning: questions asked of a fabric before a change (risk, failure sweeps, audits against a
design).

Modules:

``risk``    Pre-change risk checks: the blast radius of a change and its N+1 margin.
``audit/``  Audits: an imported fabric compared with its design, or with the regular shape it
            should have.
``sweep/``  Failure sweeps: every single (and pair of) failures of a fabric, evaluated fast.
"""

from __future__ import annotations
