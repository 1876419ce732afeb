"""Exporters: a fabric written out for other tools (containerlab, GraphML, ibsim, Slurm)."""

from __future__ import annotations
