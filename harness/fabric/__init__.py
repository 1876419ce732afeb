"""The fabric description: model, builder, node templates, generators, presets.

Modules:

``builder``        A mutable accumulator that produces an immutable :class:`Fabric`.
``explicit_file``  Explicit fabric files: servers, switches and cables listed one by one.
``fabric_file``    Fabric files: a fabric described in YAML.
``generators``     Fabric generators: rail-optimized two-tier, three-tier and dual-ToR.
``ib_rates``       InfiniBand link rates: ``<width>x<speed>`` names and their nominal Gb/s, both
                   ways.
``jobs``           Training jobs placed on servers, and their checkpoints.
``limits``         The largest fabric the harness builds, stated once and checked before
                   allocating.
``model``          The immutable fabric description.
``nodes``          Server (node) templates: what is inside one GPU server.
``params``         Generator parameters: what each generator (and preset) takes, and whether
                   YAML values fit.
``presets``        Named fabrics.
``resolve``        Fabrics from references: the fabric a scenario names, and the one a FABRIC
                   argument names.
``routing``        The ``routing:`` key of scenario and fabric files.
``schema``         JSON Schema of fabric files, and the fabric pieces scenario files share
                   (routing, params).
"""

from __future__ import annotations

from harness.fabric.builder import FabricBuilder
from harness.fabric.generators import dual_tor
from harness.fabric.generators import three_tier
from harness.fabric.generators import two_tier
from harness.fabric.model import Element
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import Link
from harness.fabric.model import LinkKind
from harness.fabric.model import NodeSpec
from harness.fabric.nodes import NODE_TEMPLATES
from harness.fabric.nodes import NodeTemplate
from harness.fabric.presets import PRESETS
from harness.fabric.presets import preset

__all__ = [
    "NODE_TEMPLATES",
    "PRESETS",
    "Element",
    "Fabric",
    "FabricBuilder",
    "Kind",
    "Link",
    "LinkKind",
    "NodeSpec",
    "NodeTemplate",
    "dual_tor",
    "preset",
    "three_tier",
    "two_tier",
]
