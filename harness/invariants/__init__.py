"""The invariants of a fabric under faults, one pure module per concern.

:class:`harness.invariants.analysis.Analysis` is the cached facade over them; the sweep
engine calls the functions directly.

* :mod:`~harness.invariants.topology`: masks, switch components, access ports;
* :mod:`~harness.invariants.servers`: per-server structure;
* :mod:`~harness.invariants.connectivity`: which GPUs and NICs can talk;
* :mod:`~harness.invariants.paths`: routes and path classes;
* :mod:`~harness.invariants.verdicts`: which jobs survive, and why not;
* :mod:`~harness.invariants.capacity`: NIC/NVLink rates, uplinks, bisection;
* :mod:`~harness.invariants.bandwidth`: ring flows and bus bandwidth;
* :mod:`~harness.invariants.storage`: storage bonds and checkpoints.
"""
