"""Reliability: expected job interruptions per month of a fabric design, by Monte Carlo.

A rates file (what fails how often, how long repairs take, how jobs restart) is played
over months of a fabric's fault state; at every failure each job's fate is decided as a
scenario decides it.  ``harness reliability`` is the command (docs/reliability.md).

Modules:

``fates``       Which jobs a failure interrupts, in a given fault state: the scenarios' rule,
                cached.
``montecarlo``  The Monte Carlo study: runs of a fabric's year, serial or sharded over
                processes, summed up.
``rates``       Rates files: what fails how often on a fabric, how long its repair takes, how
                jobs restart.
``simulate``    One Monte Carlo run: a fabric's fault state over months, and what each change
                does to jobs.
``units``       A rates file on one fabric: the units that fail, and the fault each failure
                applies.
"""

from __future__ import annotations
