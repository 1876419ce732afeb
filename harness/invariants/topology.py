"""Topology of a fabric under one observation: masks, switch components, access ports (pure).

* **Switch components.**  Live compute switches (leaves, spines, cores) form
  components over live switch-to-switch cables (``components``: scipy's
  connected components, the one graph search every invariant uses).
* **Access ports.**  A NIC port reaches the component of the leaf its live
  access cable goes to.  Servers never forward between their NICs (NCCL does
  not), so two NICs can talk iff they reach a common component.

>>> from harness.fabric import preset
>>> f = preset("seed-a800")
>>> obs = healthy_observation(f)
>>> comp = switch_components(f, obs)
>>> int((comp >= 0).sum()), len(set(comp[comp >= 0].tolist()))
(60, 1)
>>> ports = access_ports(f, obs, comp)
>>> ports.nic.size == f.nics.size
True
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.invariants.state import Observation

IntArray = npt.NDArray[np.int32]
NONE = -1
SWITCH_CABLES = (LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)


def healthy_observation(fabric: Fabric) -> Observation:
    """Every element up, every link at its healthy capacity."""
    return Observation("model", np.ones(fabric.n_elements, dtype=bool), fabric.link_capacity)


def is_healthy(fabric: Fabric, obs: Observation) -> bool:
    """Whether ``obs`` is the healthy fabric (every element up, every link at full capacity)."""
    return bool(obs.element_up.all()) and np.array_equal(obs.link_capacity, fabric.link_capacity)


def kind_mask(fabric: Fabric, kinds: Iterable[Kind]) -> npt.NDArray[np.bool_]:
    """Per element: whether its kind is one of ``kinds``."""
    return np.isin(fabric.kind, np.array([int(k) for k in kinds], dtype=np.int8))


def live_switch_links(fabric: Fabric, obs: Observation) -> IntArray:
    """Live switch-to-switch cables (leaf-spine, spine-core)."""
    by_kind = fabric.links_by_kind
    links: IntArray = np.concatenate([by_kind[k] for k in SWITCH_CABLES])
    live: IntArray = links[obs.link_capacity[links] > 0]
    return live


def components(n: int, a: npt.NDArray[np.integer], b: npt.NDArray[np.integer]) -> IntArray:
    """Component label of each of ``n`` nodes over the undirected edges ``a[i]-b[i]``.

    >>> components(4, np.array([0, 2]), np.array([1, 3])).tolist()
    [0, 0, 1, 1]
    """
    m = coo_matrix((np.ones(a.size, dtype=np.int8), (a, b)), shape=(n, n))
    _, labels = connected_components(m, directed=False)
    out: IntArray = labels.astype(np.int32)
    return out


def switch_components(fabric: Fabric, obs: Observation) -> IntArray:
    """Per element: component id of a live compute switch, -1 otherwise."""
    f = fabric
    sw = kind_mask(f, COMPUTE_SWITCH_KINDS) & obs.element_up
    links = live_switch_links(f, obs)
    labels = components(f.n_elements, f.link_a[links], f.link_b[links])
    return np.where(sw, labels, NONE).astype(np.int32)


@dataclass(frozen=True, slots=True)
class AccessPorts:
    """Live access ports, one row each: NIC, port number, leaf, switch component, capacity
    (Gb/s)."""

    nic: IntArray
    port: IntArray
    leaf: IntArray
    comp: IntArray
    capacity: npt.NDArray[np.float64]

    def by_nic(self) -> dict[int, dict[int, int]]:
        """NIC -> {port: leaf}."""
        out: dict[int, dict[int, int]] = defaultdict(dict)
        for n, p, c in zip(self.nic.tolist(), self.port.tolist(), self.leaf.tolist(), strict=True):
            out[n][p] = c
        return out


def access_ports(fabric: Fabric, obs: Observation, comp: IntArray) -> AccessPorts:
    """The live access ports whose leaf is a live switch (``comp``: :func:`switch_components`)."""
    f = fabric
    links = f.links_by_kind[LinkKind.ACCESS]
    cap = obs.link_capacity
    leaf_comp = comp[f.link_b[links]]
    ok = (cap[links] > 0) & (leaf_comp >= 0)
    return AccessPorts(
        f.link_a[links][ok].astype(np.int32),
        f.link_a_port[links][ok].astype(np.int32),
        f.link_b[links][ok].astype(np.int32),
        leaf_comp[ok].astype(np.int32),
        cap[links][ok],
    )


def nic_leaves(fabric: Fabric, obs: Observation, nic: int) -> list[int]:
    """The live leaves a NIC's live access cables reach."""
    f = fabric
    out = []
    for link in f.links_at(nic).tolist():
        if f.link_kind[link] == int(LinkKind.ACCESS) and obs.link_capacity[link] > 0:
            leaf = f.other_end(link, nic)
            if obs.element_up[leaf]:
                out.append(leaf)
    return out


def port_leaf(fabric: Fabric, nic: int) -> dict[int, int]:
    """Port -> leaf for a NIC's access cables (live or not)."""
    f = fabric
    out = {}
    for link in f.links_at(nic).tolist():
        if f.link_kind[link] == int(LinkKind.ACCESS):
            out[int(f.link_a_port[link])] = f.other_end(link, nic)
    return out


def ranges(values: list[int]) -> str:
    """[1,2,3,5] -> '1-3,5'.

    >>> ranges([1, 2, 3, 5]), ranges([])
    ('1-3,5', '-')
    """
    if not values:
        return "-"
    out = []
    start = prev = values[0]
    for v in values[1:]:
        if v == prev + 1:
            prev = v
            continue
        out.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = v
    out.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(out)
