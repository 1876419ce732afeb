"""Shortcuts inside the invariants give what the long way gives.

The sweep tests compare the sweep's fast paths with the full
:class:`~harness.invariants.analysis.Analysis`; these check the shortcuts the full
analysis itself takes, against the long way written out here:

* ``Analysis.parts`` (every server's parts of every kind in one pass) is
  :meth:`Fabric.parts_of`;
* :func:`~harness.invariants.connectivity.gpu_reach` reads an undamaged server
  off its healthy wiring: the same as walking every server's PCIe and NVLink
  wiring (what it does for a damaged one);
* :meth:`UpDownIndex.breaks_cut` (one cable, memoized by what decides it) is
  :meth:`UpDownIndex.breaks` the long way, and both are the up-down
  signatures of the fabric without that cable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from harness.fabric import Fabric
from harness.fabric import dual_tor
from harness.fabric import preset
from harness.fabric import three_tier
from harness.fabric import two_tier
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.faults.fault import Fault
from harness.faults.fault import FaultState
from harness.invariants import servers
from harness.invariants.analysis import Analysis
from harness.invariants.connectivity import Reach
from harness.invariants.connectivity import gpu_reach
from harness.invariants.reach import UpDownIndex
from harness.invariants.reach import up_down_signatures
from harness.invariants.reach import up_links
from harness.invariants.state import Observation

FABRICS: dict[str, Callable[[], Fabric]] = {
    "seed-a800": lambda: preset("seed-a800"),
    "two-tier": lambda: two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8),
    "three-tier": lambda: three_tier(
        sus=4, nodes_per_su=2, node="a800", sus_per_pod=2, spines_per_pod=4, radix=16
    ),
    "dual-tor": lambda: dual_tor(
        segments=2, hosts_per_segment=2, spines_per_plane=2, leaf_radix=16, spine_radix=16
    ),
}


@functools.cache
def fabric(name: str) -> Fabric:
    return FABRICS[name]()


def _nth(f: Fabric, kind: Kind, nth: int = 0) -> str:
    return f.ids[int(f.indices_of_kind(kind)[nth])]


STATES: dict[str, Callable[[Fabric], list[Fault]]] = {
    "healthy": lambda f: [],
    "gpu down": lambda f: [Fault.parse({"kill": _nth(f, Kind.GPU, 3)})],
    "nic down": lambda f: [Fault.parse({"kill": _nth(f, Kind.NIC, 1)})],
    "nvswitch down": lambda f: [Fault.parse({"kill": _nth(f, Kind.NVSWITCH)})],
    "pcie switch down": lambda f: [Fault.parse({"kill": _nth(f, Kind.PCIE_SWITCH, 1)})],
    "pcie cable cut": lambda f: [],  # no fault kind cuts inside a server: see analysis()
    "server and leaf down": lambda f: [
        Fault.parse({"kill": _nth(f, Kind.NODE, 2)}),
        Fault.parse({"kill": _nth(f, Kind.LEAF)}),
    ],
}


def analysis(name: str, state: str) -> Analysis:
    f = fabric(name)
    s = FaultState.healthy(f)
    for fault in STATES[state](f):
        s = s.inject(fault)
    obs = Observation.from_state(s)
    if state == "pcie cable cut":  # a GPU's PCIe link down, as a backend may observe it
        cap = obs.link_capacity.copy()
        cap[int(f.links_of_kind(LinkKind.PCIE)[2])] = 0.0
        obs = Observation(obs.backend, obs.element_up, cap)
    return Analysis(f, obs)


def reach_the_long_way(f: Fabric, a: Analysis) -> tuple[Reach, Reach]:
    """Per GPU its direct and PXN reach, every server's wiring walked as if it were damaged."""
    everyone = frozenset(f.servers.tolist())
    direct: Reach = {}
    pxn: Reach = {}
    for srv in f.servers.tolist():
        gpus = f.parts_of(srv, Kind.GPU).tolist()
        for g in gpus:
            nics = servers.gpu_nics(f, a.obs, everyone, a.gpu_nic, g)
            direct[g] = frozenset().union(*(a.nic_comps(n) for n in nics))
        for group in servers.server_groups(f, a.obs, srv, "nvlink"):
            union = frozenset().union(*(direct[g] for g in group))
            for g in group:
                pxn[g] = union
        for g in gpus:
            pxn.setdefault(g, frozenset())
    return direct, pxn


CASES = [(name, state) for name in FABRICS for state in STATES]


@pytest.mark.parametrize(("name", "state"), CASES)
def test_gpu_reach_equals_the_wiring_walked(name: str, state: str) -> None:
    f = fabric(name)
    a = analysis(name, state)
    direct, pxn = gpu_reach(f, a)
    want_direct, want_pxn = reach_the_long_way(f, a)
    assert direct == want_direct
    assert pxn == want_pxn
    if state == "healthy":
        assert not a.damaged_servers
        assert all(direct.values())  # every GPU reaches the fabric
    else:  # one server takes the long way, the others the shortcut
        assert 0 < len(a.damaged_servers) < f.servers.size


@pytest.mark.parametrize("name", list(FABRICS))
def test_parts_of_every_kind_equal_the_fabric_s(name: str) -> None:
    f = fabric(name)
    a = analysis(name, "healthy")
    for srv in f.servers.tolist():
        for kind in Kind:
            assert a.parts(srv, kind) == f.parts_of(srv, kind).tolist()
    leaf = int(f.leaves[0])
    assert a.parts(leaf, Kind.GPU) == []  # not a server: no parts
    assert a.parts(int(f.servers[0]), Kind.GPU)  # a server has GPUs


@pytest.mark.parametrize(("name", "state"), [(n, s) for n in FABRICS for s in ("healthy",
                                             "server and leaf down")])  # fmt: skip
def test_one_cable_breaks_as_the_long_way_and_the_signatures_say(name: str, state: str) -> None:
    f = fabric(name)
    obs = analysis(name, state).obs
    links = up_links(f, obs)
    elements = sorted(int(links.switches[c]) for c in links.leaves)
    cables = sorted(links.lower)
    assert cables
    fast = UpDownIndex(f, obs, elements, links)
    slow = UpDownIndex(f, obs, elements, links)
    sigs, _ = up_down_signatures(links)
    for link in cables:
        got = fast.breaks_cut(link)
        assert got == slow._breaks([], [link])
        # the long way: the signatures of the fabric without the cable
        cap = obs.link_capacity.copy()
        cap[link] = 0.0
        after, _ = up_down_signatures(up_links(f, Observation("model", obs.element_up, cap)))
        split = any(
            bool(sigs[x] & sigs[y]) and not (after[x] & after[y])
            for i, x in enumerate(elements)
            for y in elements[i + 1 :]
        )
        assert got == split, f.link_ids[link]
