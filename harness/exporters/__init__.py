"""Exporters: a fabric written out for other tools (containerlab, GraphML, ibsim, Slurm).

* :mod:`~harness.exporters.containerlab`: :func:`to_containerlab`, a ``*.clab.yml``
  topology (read back by :mod:`harness.importers.containerlab`);
* :mod:`~harness.exporters.fabric_file`: :func:`to_fabric_file`, an explicit
  fabric file (read back by every command; ``harness import``);
* :mod:`~harness.exporters.graphml`: :func:`to_graphml`, the fabric's graph as GraphML;
* :mod:`~harness.exporters.ibsim`: :func:`to_ibsim_net`, an ibsim net file
  (read back by :mod:`harness.importers.ibnetdiscover`);
* :mod:`~harness.exporters.slurm`: :func:`to_slurm_topology`, a Slurm
  ``topology.conf`` for the tree plugin.

Each writes text (or a file) only; none reads anything from an importer.

Modules:

``containerlab``  Fabrics out to containerlab: a ``*.clab.yml`` topology that runs the compute
                  fabric as a lab.
``fabric_file``   Fabrics out to a fabric file: the explicit form that every command reads
                  back.
``graphml``       Fabrics out to GraphML: a fabric's graph for Gephi, yEd, Cytoscape or
                  networkx.
``ibsim``         Fabrics out to ibsim: a net file (ibnetdiscover syntax) that ibsim simulates
                  and opensm routes.
``slurm``         Fabrics out to Slurm: a ``topology.conf`` for the tree plugin (text out, no
                  I/O).
"""

from __future__ import annotations

from harness.exporters.containerlab import to_containerlab
from harness.exporters.fabric_file import to_fabric_file
from harness.exporters.graphml import to_graphml
from harness.exporters.ibsim import to_ibsim_net
from harness.exporters.slurm import to_slurm_topology

__all__ = [
    "to_containerlab",
    "to_fabric_file",
    "to_graphml",
    "to_ibsim_net",
    "to_slurm_topology",
]
