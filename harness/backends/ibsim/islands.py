"""The subnet's islands as the IB tools see them, each read from an HCA inside it.

The IB tools see only what is connected to the HCA they attach at: after a
fault that splits the subnet, ``ibnetdiscover`` from the SM's HCA sees the
SM's island and nothing else.  So the fabric is read island by island: from
the master SM's HCA first, then from an HCA that no island found so far
contains, until every HCA is either in an island or known to be cut off (its
own cable down: its leaf was seen and the port to it was not linked, or
``ibnetdiscover`` from it finds no switch).

SM placement (stated, and what the model assumes too): every island of the
subnet has a subnet manager.  The master OpenSM runs on one HCA for the whole
run; an island without it is routed by an OpenSM started on an HCA inside it
(``opensm --once``: a standby that becomes master there), as real fabrics
with standby SMs on several nodes are.  See ``docs/ibsim.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass

from harness.backends.ibsim.tables import Wiring


@dataclass(frozen=True, slots=True)
class Island:
    """One connected part of the subnet: the HCA it was read from and its live links."""

    host: str  # ibsim node id (element id) of the HCA the tools attached at
    wiring: Wiring

    @property
    def signature(self) -> frozenset[tuple[tuple[str, int], tuple[str, int]]]:
        """What the island is made of (its live links): equal signatures, same routing."""
        return frozenset(self.wiring.peer.items())

    def holds(self, desc: str) -> bool:
        """Whether the node with this description is in the island."""
        return desc in self.wiring.switches or desc in self.wiring.hcas


def discover(
    read: Callable[[str], Wiring],
    hosts: Iterable[tuple[str, str]],
    leaf_port: Callable[[str], tuple[str, int] | None],
) -> list[Island]:
    """Every island with a switch, read from the first of ``hosts`` it contains.

    ``hosts``: (ibsim node id, node description) of every HCA, the master
    SM's first; ``read(node_id)`` is ``ibnetdiscover`` from that HCA;
    ``leaf_port(desc)`` the (switch description, port) the HCA is cabled to.

    >>> def wiring(*links: tuple[str, int, str, int]) -> Wiring:
    ...     peer = {(a, p): (b, q) for a, p, b, q in links}
    ...     peer |= {v: k for k, v in list(peer.items())}
    ...     nodes = {n for link in links for n in (link[0], link[2])}
    ...     sws = frozenset(n for n in nodes if n.startswith("leaf"))
    ...     return Wiring(peer, sws, frozenset(nodes - sws))
    >>> fabric = {"h1": wiring(("h1", 1, "leaf1", 1), ("h2", 1, "leaf1", 2)),
    ...           "h3": wiring(("h3", 1, "leaf2", 1)), "h4": wiring()}
    >>> seen = []
    >>> def read(host: str) -> Wiring:
    ...     seen.append(host)
    ...     return next(w for h, w in fabric.items() if host in w.hcas or host == h)
    >>> cabled = {"h1": ("leaf1", 1), "h2": ("leaf1", 2), "h3": ("leaf2", 1), "h4": ("leaf1", 3)}
    >>> islands = discover(read, [(h, h) for h in ("h1", "h2", "h3", "h4")], cabled.get)
    >>> [(i.host, sorted(i.wiring.switches)) for i in islands], seen  # h4: leaf1 seen, port down
    ([('h1', ['leaf1']), ('h3', ['leaf2'])], ['h1', 'h3'])
    """
    islands: list[Island] = []
    covered: set[str] = set()
    for node_id, desc in hosts:
        if desc in covered:
            continue
        cabled = leaf_port(desc)
        if cabled is not None and any(
            i.holds(cabled[0]) and not i.wiring.linked(*cabled) for i in islands
        ):
            covered.add(desc)  # its leaf is in an island and the port to it is down
            continue
        wiring = read(node_id)
        covered.add(desc)
        if not wiring.switches:
            continue  # cut off: nothing but itself
        islands.append(Island(node_id, wiring))
        covered |= wiring.hcas
    return islands


def merged(islands: Iterable[Island]) -> Wiring:
    """One wiring of all islands (their nodes are disjoint)."""
    peer: dict[tuple[str, int], tuple[str, int]] = {}
    switches: set[str] = set()
    hcas: set[str] = set()
    for i in islands:
        peer |= i.wiring.peer
        switches |= i.wiring.switches
        hcas |= i.wiring.hcas
    return Wiring(peer, frozenset(switches), frozenset(hcas))
