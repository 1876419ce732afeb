"""Inference rules: the knobs by which an importer tells roles, rails and SUs from names.

:class:`InferenceRules` holds the patterns (which names are leaves, spines,
cores, servers; how an HCA description names its server and device) and the
explicit maps that win over them; every field has a default that fits
rail-optimized fabrics named the usual way.  How the rules are applied:
:mod:`harness.importers.inference` and :mod:`harness.importers.build`, and
``docs/importers.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Literal

from harness.errors import ScenarioError
from harness.fabric.nodes import NodeTemplate
from harness.importers.hosts import DEFAULT_PLACEHOLDER_HOSTS
from harness.importers.hosts import DEFAULT_UNSET_PATTERN

Role = Literal["leaf", "spine", "core"]
ROLES: tuple[Role, ...] = ("leaf", "spine", "core")

DEFAULT_HCA_PATTERN = (
    r"^(?P<host>.+?)[\s/]+(?:(?:mlx\d+_|nic|ib)(?P<index>\d+)|HCA-(?P<hca>\d+)"
    r"|ib(?:P(?P<domain>\d+))?p(?P<bus>\d+)s(?P<slot>\d+)(?:f(?P<func>\d+))?(?:np\d+)?)$"
)
"""``HOST mlx5_3``, ``HOST ib3``, ``HOST nic3``, ``HOST HCA-4`` (1-based), and the RDMA
netdev names of newer drivers, ``HOST ibp11s0f0`` / ``HOST ibP1p11s0f0`` (PCI domain, bus,
slot, function: their order is the device order)."""


def compile_pattern(name: str, pattern: str | None) -> re.Pattern[str] | None:
    """``pattern`` compiled (None stays None); a bad one is an error naming the field."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as err:
        msg = f"InferenceRules.{name}: bad regular expression {pattern!r}: {err}; fix the pattern"
        raise ScenarioError(msg) from None


@dataclass(frozen=True, slots=True)
class InferenceRules:
    """How an importer turns names and wiring into roles, rails and SUs.

    Every field has a default that fits rail-optimized fabrics named the usual
    way; override what does not fit your naming.  ``roles`` and ``rails`` are
    explicit maps that win over every pattern.

    For example::

        InferenceRules(roles={"ib-sw-07": "spine"}, rails={0: 0, 3: 1, 4: 2, 5: 3})
    """

    hca_pattern: str = DEFAULT_HCA_PATTERN
    """Regex over an HCA's node description; group ``host`` names the server,
    optional group ``index`` the device index (``mlx5_3`` -> 3) or ``hca`` the
    1-based device number (``HCA-4`` -> index 3), or ``bus``/``slot`` (optional
    ``domain``, ``func``) a PCI address whose order is the device order (``ibp11s0f0``)."""
    unset_pattern: str | None = DEFAULT_UNSET_PATTERN
    """An HCA description nobody set (the vendor default); such HCAs are grouped by wiring."""
    placeholder_hosts: tuple[str, ...] = DEFAULT_PLACEHOLDER_HOSTS
    """Host names that name no server (``localhost``, ``ubuntu``); grouped by wiring."""
    leaf_pattern: str | None = r"(?i)leaf|\btor|asw"
    spine_pattern: str | None = r"(?i)spine|\bagg|psw"
    core_pattern: str | None = r"(?i)core|super-?spine|dsw"
    host_pattern: str | None = r"(?i)client|host|server|node|gpu|hca"
    """containerlab only: node names that are servers even when their kind is a NOS."""
    roles: Mapping[str, str] = field(default_factory=dict)
    """Switch description or id -> ``leaf``, ``spine`` or ``core``."""
    rails: Mapping[int, int] = field(default_factory=dict)
    """HCA device index -> rail (default: rank of the index among all indices seen)."""
    su_pattern: str | None = None
    """Regex with group ``su`` over host and leaf names; None: SUs from the wiring."""
    node_template: NodeTemplate | None = None
    """Template for every server; None: a generic one sized to what was seen."""
    default_gbps: float = 200.0
    """Capacity of a cable whose rate the file does not state."""
    node_names: Mapping[int, str] = field(default_factory=dict)
    """Node GUID -> name (OpenSM's node-name-map, :mod:`harness.importers.name_map`):
    ibnetdiscover nodes whose GUID is here are described by that name."""

    def __post_init__(self) -> None:
        for name in ("hca_pattern", "leaf_pattern", "spine_pattern", "core_pattern",
                     "host_pattern", "su_pattern", "unset_pattern"):  # fmt: skip
            compile_pattern(name, getattr(self, name))
        bad = sorted(v for v in self.roles.values() if v not in ROLES)
        if bad:
            msg = f"InferenceRules.roles: unknown role(s) {', '.join(bad)}; use leaf, spine or core"
            raise ScenarioError(msg)
        if self.su_pattern is not None and "(?P<su>" not in self.su_pattern:
            msg = "InferenceRules.su_pattern needs a named group (?P<su>...)"
            raise ScenarioError(msg)
        if "(?P<host>" not in self.hca_pattern:
            msg = "InferenceRules.hca_pattern needs a named group (?P<host>...)"
            raise ScenarioError(msg)
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))
        object.__setattr__(self, "rails", MappingProxyType(dict(self.rails)))
        object.__setattr__(self, "node_names", MappingProxyType(dict(self.node_names)))

    def role_by_name(self, name: str) -> Role | None:
        """The role a switch's name gives (core, spine, leaf, tried in that order), if any."""
        for role, pattern in (("core", self.core_pattern), ("spine", self.spine_pattern),
                              ("leaf", self.leaf_pattern)):  # fmt: skip
            rx = compile_pattern(role, pattern)
            if rx is not None and rx.search(name):
                return role  # type: ignore[return-value]
        return None
