"""Faults: what breaks (the fault kinds, the selectors that name their targets, the --change text,
saved fault states).

Modules:

``fault``       Faults and the fault state of a fabric.
``selectors``   Selectors: which elements, links or ports a fault hits.
``state_file``  Faults and jobs from YAML list files: state files, ``--change @FILE``, jobs
                files.
``text``        Faults written on one line: the ``--change`` syntax.
"""

from __future__ import annotations
