"""Failure sweeps: every single (and pair of) failures of a fabric, evaluated fast.

Modules:

``base``              The base state of a sweep, analysed once: the tables every case is
                      evaluated against.
``categories``         The categories of failure a sweep or an N+1 margin check
                      enumerates, and ``--elements`` (pure, light).
``cases``             Which failure cases a sweep or an N+1 margin check enumerates.
``evaluator``         The sweep's case evaluator: many small failure cases against one base
                      state, fast.
``exact``             The exact path of a sweep: a case evaluated by the full analysis of its
                      fault state.
``flow_cuts``         Every leaf-spine cable cut at once (numpy): the flows each cut moves,
                      re-placed and re-summed together.
``flows``             The flow engine of a sweep: the base's flows placed once, and per case only
                      the flows it moves re-placed (:class:`FlowDelta`).
``kernels_cables``    Bulk kernel of switch-to-switch cable cuts: every such single case at
                      once, with numpy.
``kernels_nics``      Bulk kernels of NIC cuts and leaf cases: whole single-port NICs cut on
                      undamaged servers.
``kernels_switches``  Bulk kernel of spine and core failures: single switches above the leaves
                      that split nothing.
``local``             The fast path of one case: a case that splits no class of leaves,
                      evaluated from what it touches.
``pairs``             GPU pairs that cannot talk, per case: the base's counts, redone for the
                      servers a case touches.
``ranking``           Worst first, and alike together: the order of a sweep's (or an N+1
                      margin's) cases.
``records``           Records of a sweep's cases: what failed (:class:`Failure`) and what it did
                      (:class:`CaseResult`).
``reroute``           The jobs a reroute crashes, on top of a failure case (the sweep's and the
                      N+1 margin's).
``run``               Run a failure sweep: enumerate cases, evaluate them (locally, in processes
                      or on a Dask cluster), and summarize.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.planning.sweep.cases import CATEGORIES
    from harness.planning.sweep.cases import DEFAULT_CATEGORIES
    from harness.planning.sweep.cases import parse_categories
    from harness.planning.sweep.evaluator import CaseEvaluator
    from harness.planning.sweep.records import CaseResult
    from harness.planning.sweep.records import Failure
    from harness.planning.sweep.run import SweepResult
    from harness.planning.sweep.run import SweepSpec
    from harness.planning.sweep.run import run_sweep
    from harness.planning.sweep.run import sweep

#: Each re-exported name and the module that holds it, imported on first use (PEP 562):
#: importing one module of the package does not import the others.
_EXPORTS: dict[str, str] = {
    "CATEGORIES": "harness.planning.sweep.cases",
    "CaseEvaluator": "harness.planning.sweep.evaluator",
    "CaseResult": "harness.planning.sweep.records",
    "DEFAULT_CATEGORIES": "harness.planning.sweep.cases",
    "Failure": "harness.planning.sweep.records",
    "SweepResult": "harness.planning.sweep.run",
    "SweepSpec": "harness.planning.sweep.run",
    "parse_categories": "harness.planning.sweep.cases",
    "run_sweep": "harness.planning.sweep.run",
    "sweep": "harness.planning.sweep.run",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "CATEGORIES",
    "DEFAULT_CATEGORIES",
    "CaseEvaluator",
    "CaseResult",
    "Failure",
    "SweepResult",
    "SweepSpec",
    "parse_categories",
    "run_sweep",
    "sweep",
]
