"""Planning: questions asked of a fabric before a change (risk, failure sweeps, audits against a
design).

Modules:

(Budgets and the state summaries they judge are in :mod:`harness.observations`, where
the drill runner's guard reads them too.)

``cut_pairs``      Which GPU pairs a change cuts off, in words an operator reads: groups, not a
                   count.
``id_ranges``      Many ids written as one: ``su01/node01..20/nic0`` for twenty NICs (pure).
``margin``         The N+1 margin of a risk check: every single further failure, judged against
                   the budget.
``risk``           Pre-change risk checks: the blast radius of a change and its N+1 margin.
``reliability/``   Expected job interruptions per month of a design, by Monte Carlo over a rates
                   file.
``audit/``         Audits: an imported fabric compared with its design, or with the regular
                   shape it should have.
``sweep/``         Failure sweeps: every single (and pair of) failures of a fabric, evaluated
                   fast.
"""

from __future__ import annotations
