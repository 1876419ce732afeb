"""Running scenarios: a run session over a backend, step by step, with predictions beside
measurements.

Modules:

``drill/``     Drills: a timeline of faults under running jobs, probed continuously, aborted
               on a bad sign, always rolled back, journaled beside the model's prediction.
``observers``  What watches a run: the :class:`RunObserver` protocol, told when a scenario
               starts, when each step is done and when the scenario finishes ...
``results``    The results of a run: each expectation's verdict beside its prediction and
               measurement, each step's, and each scenario's, with their JSON form.
``scenario``   One scenario's run: :func:`run_scenario` checks the input, skips what the backend
               cannot do, and runs the steps in order over a ...
``session``    The run session: one scenario's run over a backend -- the runner's own fault
               state (the prediction), the backend (the measurements), the faults ...
``story``      The story of a step: what survived and what was lost after it, in plain words
               (the jobs' fates on the clock, connectivity, uplinks, bisection, the ...
"""

from __future__ import annotations
