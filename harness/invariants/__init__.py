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
* :mod:`~harness.invariants.ecmp`: per-hop ECMP hashing between pods;
* :mod:`~harness.invariants.figures`: bus bandwidth against line rate and healthy;
* :mod:`~harness.invariants.storage`: storage bonds and checkpoints;
* :mod:`~harness.invariants.bond_hash`: the bond's transmit hash (Linux's).

Modules:

``analysis``      Invariants and measures of a fabric under faults: the cached facade.
``bandwidth``     Bus bandwidth of the jobs over the live fabric (pure).
``bond_hash``     The storage bond's transmit hash, as the Linux bonding driver computes it
                  (pure).
``capacity``      What the live hardware can carry: NIC and NVLink rates, leaf and pod uplinks,
                  bisection (pure).
``collectives``   Collectives as flows between ranks: NCCL's ring, double binary tree and all-
                  to-all.
``connectivity``  Which GPUs and NICs can still talk (pure).
``ecmp``          Per-hop ECMP between pods: the leaf, the spine, the core and the spine each
                  hash the flow.
``figures``       A job's bus bandwidth stated as an operator checks it: expected, against line
                  rate and healthy.
``forwarding``    Paths of flows under the forwarding models: pooled (adaptive), d-mod-k
                  (static), hashed (ecmp).
``leaf_flows``    Flows of a job when no flow crosses two leaves: re-evaluated for the NICs a
                  case touches.
``network``       The live fabric as the flow engine reads it: wiring tables, live capacities,
                  pod-pair capacity.
``outage``        How long a fault goes un-routed-around: the reroute, and a hang's detection
                  (pure).
``paths``         Paths between NICs and GPUs over the routes the fabric's routing uses (pure).
``reach``         Which leaves reach which under the fabric's routing (pure).
``routed_links``  The cables each job's flows are routed over: the blast radius of a failure
                  (pure).
``servers``       Per-server structure under one observation: damaged servers, GPU NICs, NVLink
                  groups (pure).
``state``         The predicted state of a fabric after faults.
``storage``       Storage bonds and checkpoints (pure).
``timeline``      Time and history: what a running job lives through.
``topology``      Topology of a fabric under one observation: masks, switch components, access
                  ports (pure).
``traffic``       Traffic of jobs: the flows each collective places on each link, and what is
                  left of them.
``verdicts``      Whether each job survives, and if not, why (pure).
"""
