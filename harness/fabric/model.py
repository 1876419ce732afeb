"""The immutable fabric description (fabric stage, pure, no side effects).

A :class:`Fabric` is a typed, immutable graph of a GPU cluster: elements (GPUs,
NVSwitches, PCIe switches, CPUs, NICs, servers, switches...) and links (NVLink,
PCIe, cables).  It is stored column-wise in read-only numpy arrays so that a
102,400-GPU fabric (about 400,000 elements and 1.3 million links) builds in
seconds and fits in a few hundred megabytes; :class:`Element` and :class:`Link`
are frozen views made on demand.  :meth:`Fabric.to_networkx` gives the same
fabric as a ``networkx.MultiGraph`` for anything that wants one.

Element ids are hierarchical and human readable::

    su03/node07                 a server (node 7 of scalable unit 3)
    su03/node07/gpu3            one of its GPUs (0-based, as nvidia-smi counts)
    su03/node07/nic1            the rail-1 NIC (0-based, as mlx5_1)
    su03/leaf-r1                the rail-1 leaf of SU 3
    spine-05, pod02/spine-05    spines (per pod on three tiers)
    core-g07-03                 core switch 3 of core group 7

A port (and so the optic plugged into it) is ``ELEMENT:PORT`` (``su03/leaf-r1:21``);
a cable is ``A:PA--B:PB`` with the lower tier first; an internal link is
``A--B`` (``su03/node07/gpu3--su03/node07/nvsw0``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING
from typing import Any
from typing import Final

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import networkx as nx

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]


class Kind(enum.IntEnum):
    """What an element is."""

    NODE = 0
    GPU = 1
    NVSWITCH = 2
    PCIE_SWITCH = 3
    CPU = 4
    NIC = 5
    STORAGE_NIC = 6
    LEAF = 7
    SPINE = 8
    CORE = 9
    STORAGE_SWITCH = 10
    STORAGE = 11

    @property
    def label(self) -> str:
        """The kind as written in files (``nvswitch``, ``pcie-switch``)."""
        return self.name.lower().replace("_", "-")


SWITCH_KINDS = frozenset({Kind.LEAF, Kind.SPINE, Kind.CORE, Kind.STORAGE_SWITCH})
COMPUTE_SWITCH_KINDS = frozenset({Kind.LEAF, Kind.SPINE, Kind.CORE})
NODE_PART_KINDS = frozenset(
    {Kind.GPU, Kind.NVSWITCH, Kind.PCIE_SWITCH, Kind.CPU, Kind.NIC, Kind.STORAGE_NIC}
)


class LinkKind(enum.IntEnum):
    """What a link is.  Cables (with an optic at each end) are the last four."""

    NVLINK = 0
    PCIE = 1
    CPU_LINK = 2
    ACCESS = 3  # rail NIC port -- leaf
    LEAF_SPINE = 4
    SPINE_CORE = 5
    STORAGE = 6  # storage NIC -- storage switch, storage switch -- storage

    @property
    def label(self) -> str:
        """The link kind as written in files (lower case, ``-`` for ``_``)."""
        return self.name.lower().replace("_", "-")

    @property
    def is_cable(self) -> bool:
        """Whether links of this kind are cables between boxes (access and above), not in-box
        links."""
        return self >= LinkKind.ACCESS


CABLE_KINDS = frozenset(k for k in LinkKind if k.is_cable)
COMPUTE_CABLE_KINDS = frozenset({LinkKind.ACCESS, LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE})


BOND_HASHES: Final = ("layer2", "layer2+3", "layer3+4")
"""Storage bond ``xmit_hash_policy`` values the model computes (invariants.bond_hash)."""
DEFAULT_BOND_HASH: Final = "layer2"
"""Linux bonding's ``xmit_hash_policy`` default (bonding.rst: "The default value is layer2")."""


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """The numbers that describe one server, as the invariants need them.

    Bandwidths are per direction: ``nic_gbps`` in Gb/s, the others in GB/s.
    """

    model: str
    gpus: int
    nvswitches: int
    nvlink_lanes: tuple[int, ...]  # lanes from each GPU to NVSwitch k
    nvlink_lane_gbs: float  # GB/s per lane per direction
    pcie_switches: int
    pcie_gbs: float  # effective GB/s per direction of one x16 link
    rails: int
    nic_gbps: float  # per NIC port
    nic_ports: int
    storage_nics: int
    storage_gbps: float
    host_memory_gbs: float  # GPU -> host copy ceiling of the whole node
    nic_lag: bool = False  # NIC ports bonded in hardware (HPN dual-ToR): a port loss is absorbed
    bond_hash: str = DEFAULT_BOND_HASH  # storage bond xmit_hash_policy: see invariants.bond_hash

    @property
    def nvlink_gbs_per_gpu(self) -> float:
        """Bidirectional NVLink bandwidth of one GPU (the marketing figure)."""
        return sum(self.nvlink_lanes) * self.nvlink_lane_gbs * 2


@dataclass(frozen=True, slots=True)
class Element:
    """A view of one element of a fabric."""

    index: int
    id: str
    kind: Kind
    su: int  # 1-based scalable unit (0: none)
    node: int  # 1-based node within its SU (0: none)
    rail: int  # 0-based rail (-1: none)
    pod: int  # 1-based pod (0: none)
    plane: int  # 1-based plane of a dual-plane fabric (0: none)
    parent: int  # index of the owning server (-1: none)
    ports: int


@dataclass(frozen=True, slots=True)
class Link:
    """A view of one link of a fabric (a cable when ``kind.is_cable``)."""

    index: int
    id: str
    kind: LinkKind
    a: int
    b: int
    a_port: int
    b_port: int
    capacity_gbps: float  # per direction
    lanes: int

    @property
    def is_cable(self) -> bool:
        """Whether the link is a cable (see :attr:`LinkKind.is_cable`)."""
        return self.kind.is_cable


def _frozen(arr: npt.NDArray[Any]) -> npt.NDArray[Any]:
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class Fabric:
    """An immutable GPU-cluster fabric.

    Build one with a generator (:mod:`harness.fabric.generators`), a preset
    (:func:`harness.fabric.presets.preset`), a fabric file or an importer; never
    by hand.  All arrays are read-only.
    """

    name: str
    ids: tuple[str, ...]
    kind: npt.NDArray[np.int8]
    su: IntArray
    node_no: IntArray
    rail: IntArray
    pod: IntArray
    plane: IntArray
    parent: IntArray
    ports: IntArray
    link_a: IntArray
    link_b: IntArray
    link_a_port: IntArray
    link_b_port: IntArray
    link_kind: npt.NDArray[np.int8]
    link_capacity: FloatArray
    link_lanes: npt.NDArray[np.int16]
    node_specs: tuple[NodeSpec, ...]  # distinct server models
    node_spec_of: IntArray  # per element: index into node_specs (-1: none)
    tiers: int  # 2 or 3 (compute fabric switch tiers)
    params: tuple[tuple[str, Any], ...] = ()  # how it was made (generator + parameters)
    meta: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        for name in (
            "kind", "su", "node_no", "rail", "pod", "plane", "parent", "ports",
            "link_a", "link_b", "link_a_port", "link_b_port", "link_kind",
            "link_capacity", "link_lanes", "node_spec_of",
        ):  # fmt: skip
            _frozen(getattr(self, name))

    # -- sizes -------------------------------------------------------------
    @property
    def n_elements(self) -> int:
        """The number of elements."""
        return len(self.ids)

    @property
    def n_links(self) -> int:
        """The number of links."""
        return int(self.link_a.shape[0])

    @cached_property
    def index(self) -> dict[str, int]:
        """Element id -> element index."""
        return {eid: i for i, eid in enumerate(self.ids)}

    def indices_of_kind(self, *kinds: Kind) -> IntArray:
        """The indices of the elements of these kinds, in index order."""
        mask = np.isin(self.kind, np.array([int(k) for k in kinds], dtype=np.int8))
        return np.flatnonzero(mask).astype(np.int32)

    def links_of_kind(self, *kinds: LinkKind) -> IntArray:
        """The indices of the links of these kinds, in index order."""
        mask = np.isin(self.link_kind, np.array([int(k) for k in kinds], dtype=np.int8))
        return np.flatnonzero(mask).astype(np.int32)

    @cached_property
    def links_by_kind(self) -> dict[LinkKind, IntArray]:
        """Link indices of each link kind (read-only arrays, computed once)."""
        return {k: _frozen(self.links_of_kind(k)) for k in LinkKind}

    @cached_property
    def servers(self) -> IntArray:
        """The indices of the servers."""
        return self.indices_of_kind(Kind.NODE)

    @cached_property
    def gpus(self) -> IntArray:
        """The indices of the GPUs."""
        return self.indices_of_kind(Kind.GPU)

    @cached_property
    def nics(self) -> IntArray:
        """The indices of the NICs."""
        return self.indices_of_kind(Kind.NIC)

    @cached_property
    def leaves(self) -> IntArray:
        """The indices of the leaf switches."""
        return self.indices_of_kind(Kind.LEAF)

    @cached_property
    def spines(self) -> IntArray:
        """The indices of the spine switches."""
        return self.indices_of_kind(Kind.SPINE)

    @cached_property
    def cores(self) -> IntArray:
        """The indices of the core switches."""
        return self.indices_of_kind(Kind.CORE)

    @cached_property
    def rails(self) -> int:
        """The number of rails (the highest NIC rail plus one)."""
        nic_rails = self.rail[self.nics]
        return int(nic_rails.max()) + 1 if nic_rails.size else 0

    @cached_property
    def n_sus(self) -> int:
        """The number of scalable units (the highest SU number)."""
        return int(self.su.max()) if self.n_elements else 0

    # -- views -------------------------------------------------------------
    def element(self, key: int | str) -> Element:
        """One element by index or id, as a record."""
        i = self.index[key] if isinstance(key, str) else int(key)
        return Element(
            index=i,
            id=self.ids[i],
            kind=Kind(int(self.kind[i])),
            su=int(self.su[i]),
            node=int(self.node_no[i]),
            rail=int(self.rail[i]),
            pod=int(self.pod[i]),
            plane=int(self.plane[i]),
            parent=int(self.parent[i]),
            ports=int(self.ports[i]),
        )

    def link(self, i: int) -> Link:
        """One link by index, as a record."""
        return Link(
            index=i,
            id=self.link_id(i),
            kind=LinkKind(int(self.link_kind[i])),
            a=int(self.link_a[i]),
            b=int(self.link_b[i]),
            a_port=int(self.link_a_port[i]),
            b_port=int(self.link_b_port[i]),
            capacity_gbps=float(self.link_capacity[i]),
            lanes=int(self.link_lanes[i]),
        )

    def link_id(self, i: int) -> str:
        """A link's id: ``A:PORT--B:PORT`` for a cable, ``A--B`` for an in-box link."""
        a, b = self.ids[self.link_a[i]], self.ids[self.link_b[i]]
        if LinkKind(int(self.link_kind[i])).is_cable:
            return f"{a}:{self.link_a_port[i]}--{b}:{self.link_b_port[i]}"
        return f"{a}--{b}"

    @cached_property
    def link_ids(self) -> tuple[str, ...]:
        """Every link's id, in index order."""
        return tuple(self.link_id(i) for i in range(self.n_links))

    @cached_property
    def link_index(self) -> dict[str, int]:
        """Link id -> link index."""
        return {lid: i for i, lid in enumerate(self.link_ids)}

    @cached_property
    def port_index(self) -> dict[str, tuple[int, int]]:
        """Port id ``ELEMENT:PORT`` -> (cable index, end: 0 for a, 1 for b)."""
        out: dict[str, tuple[int, int]] = {}
        for i in self.links_of_kind(*CABLE_KINDS).tolist():
            out[f"{self.ids[self.link_a[i]]}:{self.link_a_port[i]}"] = (i, 0)
            out[f"{self.ids[self.link_b[i]]}:{self.link_b_port[i]}"] = (i, 1)
        return out

    @cached_property
    def port_position(self) -> dict[str, int]:
        """Port id -> its position in ``port_index`` order."""
        return {p: i for i, p in enumerate(self.port_index)}

    def port_id(self, link: int, end: int) -> str:
        """The port id ``ELEMENT:PORT`` at end ``end`` (0 for a, 1 for b) of a link."""
        if end == 0:
            return f"{self.ids[self.link_a[link]]}:{self.link_a_port[link]}"
        return f"{self.ids[self.link_b[link]]}:{self.link_b_port[link]}"

    @cached_property
    def children(self) -> dict[int, IntArray]:
        """Server index -> indices of its parts (GPUs, NICs, switches, CPUs)."""
        parts = np.flatnonzero(self.parent >= 0)
        order = np.argsort(self.parent[parts], kind="stable")
        parts = parts[order]
        owners = self.parent[parts]
        bounds = np.flatnonzero(np.diff(owners)) + 1
        groups = np.split(parts.astype(np.int32), bounds)
        return {int(self.parent[g[0]]): g for g in groups if g.size}

    def parts_of(self, server: int, kind: Kind | None = None) -> IntArray:
        """A server's parts, of one kind or all."""
        parts = self.children.get(server, np.empty(0, dtype=np.int32))
        if kind is None:
            return parts
        out: IntArray = parts[self.kind[parts] == int(kind)]
        return out

    def node_spec(self, element: int) -> NodeSpec:
        """The server model of a server or of one of its parts."""
        k = int(self.node_spec_of[element])
        if k < 0:
            msg = f"{self.ids[element]} is not a server or part of one"
            raise KeyError(msg)
        return self.node_specs[k]

    @cached_property
    def incident(self) -> tuple[IntArray, IntArray]:
        """CSR of links per element: ``(offsets, link indices)``."""
        n = self.n_elements
        ends = np.concatenate([self.link_a, self.link_b])
        links = np.concatenate([np.arange(self.n_links), np.arange(self.n_links)]).astype(np.int32)
        order = np.argsort(ends, kind="stable")
        counts = np.bincount(ends, minlength=n)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(counts, out=offsets[1:])
        return _frozen(offsets), _frozen(links[order])

    def links_at(self, element: int) -> IntArray:
        """The indices of the links at an element."""
        offsets, links = self.incident
        return links[offsets[element] : offsets[element + 1]]

    def other_end(self, link: int, element: int) -> int:
        """The element at the other end of ``link`` from ``element``."""
        a = int(self.link_a[link])
        return int(self.link_b[link]) if a == element else a

    def summary(self) -> dict[str, int]:
        """Counts for ``harness show``."""
        cables = self.links_of_kind(*CABLE_KINDS)
        return {
            "nodes": int(self.servers.size),
            "gpus": int(self.gpus.size),
            "rails": self.rails,
            "nics": int(self.nics.size),
            "leaves": int(self.leaves.size),
            "spines": int(self.spines.size),
            "cores": int(self.cores.size),
            "sus": self.n_sus,
            "tiers": self.tiers,
            "storage_switches": int(self.indices_of_kind(Kind.STORAGE_SWITCH).size),
            "links": self.n_links,
            "cables": int(cables.size),
            "access_cables": int(self.links_of_kind(LinkKind.ACCESS).size),
            "leaf_spine_cables": int(self.links_of_kind(LinkKind.LEAF_SPINE).size),
            "spine_core_cables": int(self.links_of_kind(LinkKind.SPINE_CORE).size),
            "elements": self.n_elements,
        }

    def iter_elements(self, kind: Kind | None = None) -> Iterator[Element]:
        """Every element (of one kind or all) as a record, in index order."""
        idx = range(self.n_elements) if kind is None else self.indices_of_kind(kind).tolist()
        for i in idx:
            yield self.element(i)

    def to_networkx(self, *, cables_only: bool = False) -> nx.MultiGraph:
        """The fabric as a ``networkx.MultiGraph`` keyed by element id.

        Nodes carry ``kind``, ``su``, ``node``, ``rail``, ``pod``; edges carry
        ``kind``, ``capacity_gbps``, ``lanes``, ``ports`` and ``key`` = link id.
        """
        import networkx as nx

        g = nx.MultiGraph(name=self.name)
        keep: npt.NDArray[np.int32] = np.arange(self.n_links, dtype=np.int32)
        if cables_only:
            keep = self.links_of_kind(*CABLE_KINDS)
            used = np.unique(np.concatenate([self.link_a[keep], self.link_b[keep]]))
        else:
            used = np.arange(self.n_elements)
        for i in used.tolist():
            g.add_node(
                self.ids[i],
                kind=Kind(int(self.kind[i])).label,
                su=int(self.su[i]),
                node=int(self.node_no[i]),
                rail=int(self.rail[i]),
                pod=int(self.pod[i]),
            )
        for i in keep.tolist():
            g.add_edge(
                self.ids[self.link_a[i]],
                self.ids[self.link_b[i]],
                key=self.link_id(i),
                kind=LinkKind(int(self.link_kind[i])).label,
                capacity_gbps=float(self.link_capacity[i]),
                lanes=int(self.link_lanes[i]),
                ports=(int(self.link_a_port[i]), int(self.link_b_port[i])),
            )
        return g
