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
``union_find``     A union-find over hashable items (networkx's, without networkx) (pure).
``resolve``        Fabrics from references: the fabric a scenario names, and the one a FABRIC
                   argument names.
``routing``        The ``routing:`` key of scenario and fabric files.
``schema``         JSON Schema of fabric files, and the fabric pieces scenario files share
                   (routing, params).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
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

#: Each re-exported name and the module that holds it, imported on first use (PEP 562):
#: importing one module of the package does not import the others.
_EXPORTS: dict[str, str] = {
    "Element": "harness.fabric.model",
    "Fabric": "harness.fabric.model",
    "FabricBuilder": "harness.fabric.builder",
    "Kind": "harness.fabric.model",
    "Link": "harness.fabric.model",
    "LinkKind": "harness.fabric.model",
    "NODE_TEMPLATES": "harness.fabric.nodes",
    "NodeSpec": "harness.fabric.model",
    "NodeTemplate": "harness.fabric.nodes",
    "PRESETS": "harness.fabric.presets",
    "dual_tor": "harness.fabric.generators",
    "preset": "harness.fabric.presets",
    "three_tier": "harness.fabric.generators",
    "two_tier": "harness.fabric.generators",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


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
