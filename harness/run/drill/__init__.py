"""Drills: a timeline of faults under running jobs, probed continuously, aborted on a bad
sign, always rolled back, journaled beside the model's prediction (run stage).

Modules:

``as_scenario`` A drill run where a scenario run is expected (``harness run``, the pytest
              plugin).
``document``  A drill run as a document: ``journal.json`` and ``harness drill --json``
              (pure).
``flow``      A drill's ``flow`` probe: bulk flows kept running through the drill, their
              total rate measured beside the model's fair share.
``guard``     A drill's guard: the risk budget predicted before every inject.
``halt``      The halt lever: stop one running drill, or every drill on the host and refuse
              new ones until released.
``journal``   A drill's journal: ``journal.jsonl`` appended and fsynced per event,
              ``journal.json`` at the end.
``probes``    A drill's probes sampled on a run session: the model's value beside the
              backend's.
``reach``     A drill's ``reachability`` probe: a seeded sample of rail NIC pairs plus the
              pairs the model says are cut now, probed by the backend.
``settle``    A drill's settle (convergence) times: the model's for each inject, and how an
              emulated backend's measured one disagrees with it.
``results``   What a drill run records: probe samples, events with prediction beside
              observation, the rollback, and the verdict (pure).
``summary``   A drill's records at its end: each probe's series and verdict, each inject's
              expected probe failures (pure).
``verdict``   A drill's verdict: from its probes, expectations, refusals and recovery, and
              against the outcome it declares (pure).
``watch``     The drill clock on the wall clock, and the real jobs looked at without a
              watch window.
``runner``    One drill's run: baseline, gate, the timed method under continuous probes,
              abort, the recovery window, the final expectations, and a rollback that always
              runs.
"""

from __future__ import annotations
