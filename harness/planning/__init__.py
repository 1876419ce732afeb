"""Planning: questions asked of a fabric before a change (risk, failure sweeps, audits against a
design).
"""

from __future__ import annotations
