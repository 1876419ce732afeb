"""Audits: an imported fabric compared with its design, or with the regular shape it should have.

* :mod:`~harness.planning.audit.diff`: a live fabric against its design
  (:func:`~harness.planning.audit.diff.diff_fabrics`: missing, extra, slow and
  wrong-rail switches and cables, as an
  :class:`~harness.planning.audit.diff.AuditReport`);
* :mod:`~harness.planning.audit.regular`: a fabric against the regular design
  inferred from it, no design needed
  (:func:`~harness.planning.audit.regular.audit_regular`), with
  :mod:`~harness.planning.audit.rates` for cables below their peers' rate;
* :mod:`~harness.planning.audit.faults`: an audit report turned into faults on
  the design, for ``--state DUMP``
  (:func:`~harness.planning.audit.faults.faults_from_audit`);
* :mod:`~harness.planning.audit.rewire`: wrong-rail cables moved on the design,
  as NCCL meets them (its rail's traffic over the spines), and what each costs
  a job (:func:`~harness.planning.audit.rewire.wrong_rail_effects`).

Modules:

``diff``     Compare a discovered fabric with its design.
``rates``    Links below their peers: cables slower or narrower than the others of their
             tier and kind.
``faults``   Audit findings as faults: what a live dump lacks, turned into faults on its design.
``rewire``   Wrong-rail cables as NCCL meets them: the design re-cabled, and what that costs
             each job.
``regular``  The design-free audit: the regular design a dump was meant to be, and its
             departures.
``upper``    Missing cables above the leaves: spines with fewer core cables than their peers.
``state``    Audits of the state a change meets: the faults a ``--state`` argument names.
"""
