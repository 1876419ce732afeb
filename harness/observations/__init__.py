"""Observations: what a scenario can look at, predicted from the model and measured on a backend,
and judged.

Modules:

``bandwidth``     Observations of bandwidth: a job's bus bandwidth (GB/s, and as a ratio to
                  healthy), predicted from its collectives' traffic and measured by the ...
``budget``        Budgets of a pre-change risk check (and a drill's guard): rules such as
                  ``jobs_lost=0,abs:bandwidth>=0.9``.
``capacity``      Observations of capacity: what the fabric and its servers can carry (pod to
                  pod, a leaf's uplinks, the bisection, NVLink per GPU, a server's rail ...
``compare``       Prediction against measurement.
``connectivity``  Observations of connectivity: which GPUs, NICs and rails still reach each
                  other, and the NIC islands; predicted from the fault state, measured by ...
``expect``        Expectations: compare an observed value with what a scenario expects.
``jobs``          Observations of jobs: which running jobs were lost (crashed), survived, or
                  could not be placed now; predicted from the jobs' fates on the clock, ...
``links``         Observations of elements and links: how many elements are down, a link's live
                  rate and the fraction of the packets one end sends that are lost; ...
``observation``   What one observation is: its definition, the value observed, the inputs of its
                  predict, plan and measure functions, and the :class:`Family` that ...
``paths``         Observations of paths: the class and switch count of the best live path
                  between two GPUs; predicted from the routed fabric, measured by tracing ...
``plans``         Measurement plans for the observations a scenario expects.
``registry``      The observation registry: every name a scenario may ``expect``, from every
                  family.
``state_summary`` States of a risk check (or a drill's guard) in numbers: before, after, and
                  what the change adds.
``storage``       Observations of storage: a server's storage bond bandwidth and the stall and
                  background time of a job's checkpoint (``checkpoint:`` in the ...
"""

from __future__ import annotations
