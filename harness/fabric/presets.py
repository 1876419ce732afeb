"""Named fabrics (fabric stage).  Figures and sources: ``docs/domain.md``.

=============== ===========================================================
name            what
=============== ===========================================================
seed-a800       the seed cluster: 10 SUs x 20 A800 nodes, 4 x 200G rails,
                40 leaves and 20 spines of 40 ports, one cable per pair
seed-a100       the same with A100 nodes (600 GB/s NVLink)
superpod-h100   DGX H100 SuperPOD, 4 SUs, 127 nodes (one SU-1 slot is UFM),
                8 rails, 32 leaves, 16 spines, 2 cables per pair, 64 ports
b200-16su       DGX B200 SuperPOD, 16 SUs, 512 nodes: 128 leaves, 128 spines
                (4 pods of 4 SUs), 64 cores, 4,096 cables per tier
hpn-dual-tor    one Alibaba HPN segment: 128 hosts x 8 GPUs, 8 x 2x200G NICs,
                16 ToRs (dual-ToR), 2 planes x 60 aggregation switches
clos-100k       102,400 GPUs: 12,800 H100 nodes, 8 rails, 64-port switches,
                three tiers (100 pods, 3,200 leaves, 3,200 spines, 1,600
                cores); full bisection, but pod pairs oversubscribed up to
                2.29:1 (see below)
=============== ===========================================================

``clos-100k``: a k-ary fat tree of 64-port switches stops at k^3/4 = 65,536
ports when every pod spine reaches every core of its group.  102,400 NIC ports
need 100 pods, more than a core's 64 ports can mesh with, so each spine's 32
uplinks are dealt round-robin over its group's 50 cores.  Every core still gets
exactly 64 cables, and the bisection between the two halves of the SUs is full
(checked by an exact max-flow in the tests and benchmark).

It is **not non-blocking between every pair of pods.**  Spine ``j`` of pod ``p``
reaches cores ``32(p-1) .. 32(p-1)+31`` (mod 50) of group ``j``; two pods share
only the cores their windows overlap on, 14 of 32 for adjacent pods.  Up-down
routing cannot detour through a third pod (that is a valley), so pod 1 can
send pod 2 at most 14 x 32 x 400 Gb/s = 179.2 Tb/s of its 409.6 Tb/s: 0.4375,
oversubscribed 2.29:1.  Of the 4,950 pod pairs, 1,600 get 0.4375 and only 150
(pods 25 apart, which share every core) are non-blocking
(``tests/invariants/test_traffic.py``; the ``pod_pair_gbps`` observation).  No
rewiring fixes that with 64-port cores: a pod has 1,024 core cables, and full
capacity to every other pod needs every pod to reach the same cores with the
same number of cables, i.e. 100 cables per core.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from harness.errors import FabricDesignError
from harness.fabric.generators import dual_tor
from harness.fabric.generators import three_tier
from harness.fabric.generators import two_tier
from harness.fabric.model import Fabric

PresetSpec = tuple[Callable[..., Fabric], dict[str, Any]]

PRESETS: dict[str, PresetSpec] = {
    "seed-a800": (
        two_tier,
        {"sus": 10, "nodes_per_su": 20, "node": "a800", "spines": 20, "cables_per_pair": 1,
         "leaf_radix": 40},
    ),
    "seed-a100": (
        two_tier,
        {"sus": 10, "nodes_per_su": 20, "node": "a100", "spines": 20, "cables_per_pair": 1,
         "leaf_radix": 40},
    ),
    "superpod-h100": (
        two_tier,
        {"sus": 4, "nodes_per_su": [31, 32, 32, 32], "node": "h100", "spines": 16,
         "cables_per_pair": 2, "leaf_radix": 64, "leaf_down_ports": 32},
    ),
    "b200-16su": (
        three_tier,
        {"sus": 16, "nodes_per_su": 32, "node": "b200", "sus_per_pod": 4,
         "spines_per_pod": 32, "radix": 64},
    ),
    "hpn-dual-tor": (
        dual_tor,
        {"segments": 1, "hosts_per_segment": 128, "node": "h800", "spines_per_plane": 60,
         "uplinks_per_leaf": 60, "uplink_gbps": 400.0},
    ),
    "clos-100k": (
        three_tier,
        {"sus": 400, "nodes_per_su": 32, "node": "h100", "sus_per_pod": 4,
         "spines_per_pod": 32, "radix": 64},
    ),
}  # fmt: skip


def preset_params(name: str) -> PresetSpec:
    """A preset's parameters (FabricDesignError names the nearest preset for an unknown one)."""
    try:
        return PRESETS[name]
    except KeyError:
        near = difflib.get_close_matches(name, PRESETS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = f"unknown fabric preset {name!r}{hint} (known: {', '.join(PRESETS)})"
        raise FabricDesignError(msg) from None


def preset(name: str, **overrides: Any) -> Fabric:
    """Build a named fabric, optionally with some generator parameters changed.

    >>> preset("seed-a800").summary()["gpus"]
    1600
    """
    gen, params = preset_params(name)
    merged = {**params, **overrides, "name": name}
    try:
        return gen(**merged)
    except TypeError as err:
        msg = f"bad parameter for preset {name!r}: {err}"
        raise FabricDesignError(msg) from None
