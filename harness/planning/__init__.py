"""Planning: questions asked of a fabric before a change (risk, failure sweeps, audits against a
design).

Modules:

``budget``         Budgets of a pre-change risk check: rules such as
                   ``jobs_lost=0,abs:bandwidth>=0.9``.
``cut_pairs``      Which GPU pairs a change cuts off, in words an operator reads: groups, not a
                   count.
``id_ranges``      Many ids written as one: ``su01/node01..20/nic0`` for twenty NICs (pure).
``margin``         The N+1 margin of a risk check: every single further failure, judged against
                   the budget.
``risk``           Pre-change risk checks: the blast radius of a change and its N+1 margin.
``state_summary``  States of a pre-change risk check in numbers: before, after, and what the
                   change adds.
``audit/``         Audits: an imported fabric compared with its design, or with the regular
                   shape it should have.
``sweep/``         Failure sweeps: every single (and pair of) failures of a fabric, evaluated
                   fast.
"""

from __future__ import annotations
