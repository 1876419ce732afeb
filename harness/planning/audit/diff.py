"""Compare a discovered fabric with its design (planning stage, pure).

:func:`diff_fabrics` takes the fabric an importer read from the live network
(an ``ibnetdiscover`` dump, say) and the fabric it was meant to be (a
generator's output) and lists what differs on the compute fabric: switches and
cables that are missing or extra, cables running below their design rate, and
NICs cabled to another rail's leaf.  Storage switches, storage NICs and the
insides of servers are not compared.

Elements are matched by id first.  Those left over are matched by structure:
servers by (SU, node number), NICs by (server, rail), leaves by (SU, rail) and
then by which NICs they serve on which ports, spines and cores by which matched
switches they reach on which ports.  Cables are then compared on their mapped
end points, ports included unless ``ports=False``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind

_EPS = 1e-6


@dataclass(frozen=True, slots=True)
class DegradedLink:
    """A cable that is up but slower than designed (fewer lanes or a lower speed)."""

    design: str  # design cable id
    live: str  # live cable id
    design_gbps: float
    live_gbps: float


@dataclass(frozen=True, slots=True)
class WrongRail:
    """A NIC cabled to a leaf of another rail."""

    nic: str  # design id of the NIC (live id when it has no design counterpart)
    nic_rail: int
    leaf: str  # the leaf it reaches (design id when matched)
    leaf_rail: int
    expected: str  # the design leaf it should reach ("" when the design has none)
    cable: str  # the live cable id


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What differs between a live fabric and its design (ids are design ids when matched)."""

    missing_switches: tuple[str, ...]
    extra_switches: tuple[str, ...]
    missing_links: tuple[str, ...]
    extra_links: tuple[str, ...]
    degraded_links: tuple[DegradedLink, ...]
    wrong_rail: tuple[WrongRail, ...]
    matched_by_structure: tuple[tuple[str, str], ...]  # (design id, live id) with ids differing

    @property
    def ok(self) -> bool:
        """Whether the live fabric matches its design (nothing missing, extra, degraded or
        miswired)."""
        return not (
            self.missing_switches or self.extra_switches or self.missing_links
            or self.extra_links or self.degraded_links or self.wrong_rail
        )  # fmt: skip

    def lines(self) -> list[str]:
        """The report as text lines, one finding each (empty when ``ok``)."""
        out = [f"missing switch {s}" for s in self.missing_switches]
        out += [f"extra switch {s}" for s in self.extra_switches]
        out += [f"missing link {c}" for c in self.missing_links]
        out += [f"extra link {c}" for c in self.extra_links]
        out += [
            f"degraded link {d.live}: {d.live_gbps:g} of {d.design_gbps:g} Gb/s"
            for d in self.degraded_links
        ]
        out += [
            f"wrong rail: {w.nic} (rail {w.nic_rail}) is cabled to {w.leaf} (rail "
            f"{w.leaf_rail})" + (f", expected {w.expected}" if w.expected else "")
            for w in self.wrong_rail
        ]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines()) or "live fabric matches the design"


class _Side:
    """Lookup tables over one fabric's compute part."""

    def __init__(self, f: Fabric) -> None:
        self.f = f
        self.cables = [i for i in f.links_of_kind(*COMPUTE_CABLE_KINDS).tolist()]
        self.switches = [
            i for i in range(f.n_elements) if Kind(int(f.kind[i])) in COMPUTE_SWITCH_KINDS
        ]
        # element -> [(own port, other element, other port, cable)]
        self.nbrs: dict[int, list[tuple[int, int, int, int]]] = {}
        for c in self.cables:
            a, b = int(f.link_a[c]), int(f.link_b[c])
            ap, bp = int(f.link_a_port[c]), int(f.link_b_port[c])
            self.nbrs.setdefault(a, []).append((ap, b, bp, c))
            self.nbrs.setdefault(b, []).append((bp, a, ap, c))

    def of_kind(self, kind: Kind) -> list[int]:
        return [int(i) for i in self.f.indices_of_kind(kind)]


def _by_id(live: _Side, design: _Side, lidx: Iterable[int], didx: Iterable[int],
           m: dict[int, int]) -> None:  # fmt: skip
    dmap = {design.f.ids[i]: i for i in didx}
    for i in lidx:
        j = dmap.get(live.f.ids[i])
        if j is not None and i not in m:
            m[i] = j


def _by_key(
    lidx: list[int], didx: list[int], m: dict[int, int], lkey: Mapping[int, Hashable],
    dkey: Mapping[int, Hashable],
) -> None:  # fmt: skip
    taken = set(m.values())
    lfree = [i for i in lidx if i not in m]
    dfree = [j for j in didx if j not in taken]
    lc = Counter(lkey[i] for i in lfree)
    dc = Counter(dkey[j] for j in dfree)
    dby = {dkey[j]: j for j in dfree}
    for i in lfree:
        k = lkey[i]
        if lc[k] == 1 and dc[k] == 1:
            m[i] = dby[k]


def _by_votes(live: _Side, design: _Side, lidx: list[int], didx: list[int],
              m: dict[int, int]) -> None:  # fmt: skip
    """Match leftovers by neighbours already matched (same neighbour, same ports)."""
    dset = set(didx)
    for _ in range(2):
        taken = set(m.values())
        for i in lidx:
            if i in m:
                continue
            votes: Counter[int] = Counter()
            for port, other, oport, _c in live.nbrs.get(i, []):
                dj = m.get(other)
                if dj is None:
                    continue
                # the design neighbour's cable on the same port of the matched element
                for dport, dother, doport, _dc in design.nbrs.get(dj, []):
                    if dport == oport and dother in dset and dother not in taken:
                        votes[dother] += 2 if doport == port else 1
            if votes:
                best = max(votes.values())
                top = [j for j, v in votes.items() if v == best]
                if len(top) == 1:
                    m[i] = top[0]
                    taken.add(top[0])
    taken = set(m.values())
    lfree = [i for i in lidx if i not in m]
    dfree = [j for j in didx if j not in taken]
    if len(lfree) == 1 and len(dfree) == 1:
        m[lfree[0]] = dfree[0]


def _match(live: _Side, design: _Side) -> dict[int, int]:
    lf, df = live.f, design.f
    m: dict[int, int] = {}
    ls, ds = live.of_kind(Kind.NODE), design.of_kind(Kind.NODE)
    _by_id(live, design, ls, ds, m)
    _by_key(ls, ds, m, {i: (int(lf.su[i]), int(lf.node_no[i])) for i in ls},
            {j: (int(df.su[j]), int(df.node_no[j])) for j in ds})  # fmt: skip
    ln, dn = live.of_kind(Kind.NIC), design.of_kind(Kind.NIC)
    _by_id(live, design, ln, dn, m)
    _by_key(ln, dn, m, {i: (m.get(int(lf.parent[i]), -1 - i), int(lf.rail[i])) for i in ln},
            {j: (int(df.parent[j]), int(df.rail[j])) for j in dn})  # fmt: skip
    for kind in (Kind.LEAF, Kind.SPINE, Kind.CORE):
        lk = [i for i in live.switches if int(lf.kind[i]) == kind]
        dk = [j for j in design.switches if int(df.kind[j]) == kind]
        _by_id(live, design, lk, dk, m)
        if kind == Kind.LEAF:
            lkey = {i: (int(lf.su[i]), int(lf.rail[i]), int(lf.plane[i])) for i in lk}
            dkey = {j: (int(df.su[j]), int(df.rail[j]), int(df.plane[j])) for j in dk}
            _by_key(lk, dk, m, lkey, dkey)
        _by_votes(live, design, lk, dk, m)
    # a switch whose role was inferred differently (a spine named "core") still matches
    _by_id(live, design, live.switches, design.switches, m)
    _by_votes(live, design, live.switches, design.switches, m)
    return m


def _key(f: Fabric, c: int, name: dict[int, str], ports: bool) -> tuple[object, ...]:
    a, b = name[int(f.link_a[c])], name[int(f.link_b[c])]
    ap, bp = int(f.link_a_port[c]), int(f.link_b_port[c])
    ends = sorted([(a, ap if ports else 0), (b, bp if ports else 0)])
    return tuple(ends)


def _named(f: Fabric, c: int, name: dict[int, str]) -> str:
    """A live cable's id written with design ids where its ends were matched."""
    a, b = name[int(f.link_a[c])].lstrip("?"), name[int(f.link_b[c])].lstrip("?")
    return f"{a}:{int(f.link_a_port[c])}--{b}:{int(f.link_b_port[c])}"


def diff_fabrics(live: Fabric, design: Fabric, *, ports: bool = True) -> AuditReport:
    """List how ``live`` (discovered) differs from ``design`` on the compute fabric.

    Parameters
    ----------
    live, design
        The fabric an importer read from the network, and the intended one.
    ports
        Compare cables port by port (default).  With ``False`` a cable counts as
        present when the same two elements are joined, whatever the ports.

    Returns
    -------
    AuditReport
        Missing and extra switches and cables, degraded cables (up below their
        design capacity) and NICs on another rail's leaf.

    Examples
    --------
    >>> from harness.fabric import two_tier
    >>> f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    >>> diff_fabrics(f, f).ok
    True
    """
    lv, dz = _Side(live), _Side(design)
    m = _match(lv, dz)
    dname = {j: design.ids[j] for j in range(design.n_elements)}
    lname = {i: design.ids[m[i]] if i in m else f"?{live.ids[i]}" for i in range(live.n_elements)}
    matched_switch = {m[i] for i in lv.switches if i in m}
    missing_sw = tuple(design.ids[j] for j in dz.switches if j not in matched_switch)
    extra_sw = tuple(live.ids[i] for i in lv.switches if i not in m)

    dkeys: dict[tuple[object, ...], list[int]] = {}
    for c in dz.cables:
        dkeys.setdefault(_key(design, c, dname, ports), []).append(c)
    for group in dkeys.values():
        group.sort(key=lambda c: (int(design.link_a_port[c]), int(design.link_b_port[c])))
    lkeys: dict[tuple[object, ...], list[int]] = {}
    for c in lv.cables:
        lkeys.setdefault(_key(live, c, lname, ports), []).append(c)
    missing: list[str] = []
    extra: list[str] = []
    degraded: list[DegradedLink] = []
    for k, dl in dkeys.items():
        ll = sorted(lkeys.get(k, []),
                    key=lambda c: (int(live.link_a_port[c]), int(live.link_b_port[c])))  # fmt: skip
        for dc, lc in zip(dl, ll, strict=False):
            dg, lg = float(design.link_capacity[dc]), float(live.link_capacity[lc])
            if lg < dg - _EPS:
                degraded.append(DegradedLink(design.link_id(dc), live.link_id(lc), dg, lg))
        missing += [design.link_id(c) for c in dl[len(ll) :]]
        extra += [_named(live, c, lname) for c in ll[len(dl) :]]
    for k, ll in lkeys.items():
        if k not in dkeys:
            extra += [_named(live, c, lname) for c in ll]

    wrong: list[WrongRail] = []
    for c in lv.cables:
        if int(live.link_kind[c]) != LinkKind.ACCESS:
            continue
        nic, leaf = int(live.link_a[c]), int(live.link_b[c])
        if int(live.kind[nic]) != Kind.NIC:
            nic, leaf = leaf, nic
        nic_rail = int(design.rail[m[nic]]) if nic in m else int(live.rail[nic])
        leaf_rail = int(design.rail[m[leaf]]) if leaf in m else int(live.rail[leaf])
        if nic_rail < 0 or leaf_rail < 0 or nic_rail == leaf_rail:
            continue
        expected = ""
        if nic in m:
            ends = [o for _, o, _, _ in dz.nbrs.get(m[nic], [])
                    if int(design.kind[o]) == Kind.LEAF]  # fmt: skip
            expected = design.ids[ends[0]] if ends else ""
        wrong.append(WrongRail(
            nic=lname[nic].lstrip("?"), nic_rail=nic_rail, leaf=lname[leaf].lstrip("?"),
            leaf_rail=leaf_rail, expected=expected, cable=_named(live, c, lname),
        ))  # fmt: skip
    renamed = tuple(
        sorted((design.ids[j], live.ids[i]) for i, j in m.items() if design.ids[j] != live.ids[i])
    )
    return AuditReport(
        missing_switches=missing_sw,
        extra_switches=extra_sw,
        missing_links=tuple(sorted(missing)),
        extra_links=tuple(sorted(extra)),
        degraded_links=tuple(sorted(degraded, key=lambda d: d.design)),
        wrong_rail=tuple(wrong),
        matched_by_structure=renamed,
    )
