"""The fabric description: model, builder, node templates, generators, presets."""

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
