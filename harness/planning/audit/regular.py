"""The design-free audit: the regular design a dump was meant to be, and its departures.

(Core layer: pure.)  A rail-optimized two-tier fabric is regular: every group
(SU) has one leaf per rail, every leaf the same number of cables to each
spine, every server one HCA per rail on the same port number of its group's
rail leaves.  :func:`infer_design` reads that design off an imported fabric by
majority -- groups, rails, spines, cables per leaf-spine pair, uplinks per
leaf, servers per group -- and :func:`audit_regular` lists where the fabric
departs from it:

``missing-leaf``
    a group without a leaf of one of the rails the other groups have (the
    rail HCAs of its servers are then unreachable too: not reported again);
``missing-spine``
    a spine the others imply: a gap in the spines' numbering, or leaf ports
    that are dark on every leaf inside the uplink port range (one run of
    ``cables_per_pair`` ports per spine);
``leaf-uplinks``
    a leaf with fewer cables to the spines than its peers, by (leaf, spine);
``spine-uplinks``
    a spine with fewer cables to the cores than its peers (three tiers:
    :mod:`harness.planning.audit.upper`);
``swapped-nics``
    two HCAs of one server, each on the other's rail leaf (one finding);
``wrong-rail``
    any other HCA on another rail's leaf (these three and the next two only when
    the fabric is rail-optimized: most servers' HCAs on distinct leaves);
``missing-hca``
    a server without an HCA on a rail whose leaf its group has;
``port-mismatch``
    a server whose HCAs sit on different port numbers of its rail leaves;
``missing-server``
    a group with fewer servers than the others, by the ports dark on all its leaves;
``slow-link``
    a cable slower or narrower than most cables of its kind (access, leaf-spine,
    spine-core): :mod:`harness.planning.audit.rates`.

A spine whose loss leaves no gap (the highest-numbered one, on the last
uplink ports) cannot be told from a dump alone: audit against the design
(``harness audit DUMP --design FABRIC``) for that.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass

from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.planning.audit.rates import slow_links
from harness.planning.audit.upper import spine_uplinks


@dataclass(frozen=True, slots=True)
class RegularDesign:
    """The design a fabric was meant to be, by majority."""

    groups: int
    rails: tuple[int, ...]
    spines: int  # present plus missing
    cables_per_pair: int
    uplinks_per_leaf: int  # to the spines present
    servers_per_group: int
    hcas_per_server: int
    rail_optimized: bool
    rules: tuple[str, ...] = ()  # which name and wiring rules were applied, and why, in words

    def lines(self) -> list[str]:
        """The inferred design in words: two lines, then one per rule (``rule: ...``)."""
        return [
            f"{self.groups} group(s) x {len(self.rails)} rail(s) "
            f"({'rail-optimized' if self.rail_optimized else 'not rail-optimized'}), "
            f"{self.servers_per_group} server(s) per group with {self.hcas_per_server} HCA(s) each",
            f"{self.spines} spine(s), {self.cables_per_pair} cable(s) per leaf-spine pair, "
            f"{self.uplinks_per_leaf} uplink(s) per leaf to the spines present",
            *(f"rule: {r}" for r in self.rules),
        ]


@dataclass(frozen=True, slots=True)
class Departure:
    """One way the fabric departs from its regular design."""

    kind: str  # missing-leaf, missing-spine, leaf-uplinks, swapped-nics, wrong-rail, ...
    subject: str  # the leaf, spine, server or NIC it is about (or "suNN rail R")
    text: str  # one line for a person
    detail: tuple[tuple[str, int], ...] = ()  # leaf-uplinks: (spine, cables missing)


@dataclass(frozen=True, slots=True)
class RegularAudit:
    """The inferred design and the departures from it."""

    design: RegularDesign
    departures: tuple[Departure, ...]

    @property
    def ok(self) -> bool:
        """Whether the fabric departs from its regular design nowhere (no departure found)."""
        return not self.departures

    def lines(self) -> list[str]:
        """Every departure, one line each."""
        return [d.text for d in self.departures]

    def kinds(self) -> list[tuple[str, str]]:
        """(kind, subject) of every departure, in report order."""
        return [(d.kind, d.subject) for d in self.departures]

    def to_json(self) -> dict[str, object]:
        """The inferred design and its departures as a JSON-ready dict."""
        d = self.design
        return {
            "design": {
                "groups": d.groups, "rails": list(d.rails), "spines": d.spines,
                "cables_per_pair": d.cables_per_pair, "uplinks_per_leaf": d.uplinks_per_leaf,
                "servers_per_group": d.servers_per_group, "hcas_per_server": d.hcas_per_server,
                "rail_optimized": d.rail_optimized, "rules": list(d.rules),
            },
            "departures": [
                {"kind": x.kind, "subject": x.subject, "text": x.text,
                 **({"missing_cables": dict(x.detail)} if x.detail else {})}
                for x in self.departures
            ],
            "ok": self.ok,
        }  # fmt: skip


def _majority(values: Iterable[int], default: int = 0) -> int:
    """The most common value (ties: the larger, so one short peer does not set the norm)."""
    c = Counter(values)
    return max(c, key=lambda v: (c[v], v)) if c else default


@dataclass(frozen=True, slots=True)
class _View:
    """The compute fabric as the audit needs it."""

    leaves: tuple[int, ...]
    spines: tuple[int, ...]
    servers: tuple[int, ...]
    access: tuple[tuple[int, int, int], ...]  # (nic, leaf, leaf port)
    uplinks: tuple[tuple[int, int, int], ...]  # (leaf, spine, leaf port)


def _view(f: Fabric) -> _View:
    kind = f.kind
    leaves = tuple(int(i) for i in f.leaves.tolist())
    spines = tuple(int(i) for i in f.spines.tolist())
    access: list[tuple[int, int, int]] = []
    for li in f.links_of_kind(LinkKind.ACCESS).tolist():
        a, b = int(f.link_a[li]), int(f.link_b[li])
        pa, pb = int(f.link_a_port[li]), int(f.link_b_port[li])
        if int(kind[a]) == Kind.NIC and int(kind[b]) == Kind.LEAF:
            access.append((a, b, pb))
        elif int(kind[b]) == Kind.NIC and int(kind[a]) == Kind.LEAF:
            access.append((b, a, pa))
    uplinks: list[tuple[int, int, int]] = []
    for li in f.links_of_kind(LinkKind.LEAF_SPINE).tolist():
        a, b = int(f.link_a[li]), int(f.link_b[li])
        pa, pb = int(f.link_a_port[li]), int(f.link_b_port[li])
        if int(kind[a]) == Kind.LEAF and int(kind[b]) == Kind.SPINE:
            uplinks.append((a, b, pa))
        elif int(kind[b]) == Kind.LEAF and int(kind[a]) == Kind.SPINE:
            uplinks.append((b, a, pb))
    return _View(leaves, spines, tuple(int(i) for i in f.servers.tolist()), tuple(access),
                 tuple(uplinks))  # fmt: skip


_TRAILING_NUMBER = re.compile(r"(\d+)(\D*)$")
_GUID_ID = re.compile(r"^(?:[SHR]-)?(?:0x)?[0-9a-fA-F]{8,16}$")
"""An element id that is a node GUID (``S-2c5eab0300c20040``): the dump named no switch."""


def _spine_gaps(f: Fabric, spines: tuple[int, ...]) -> tuple[list[str], str]:
    """Names missing from the spines' numbering (``...-01``, ``...-03`` -> ``...-02``), and why.

    The rule applies only when the names are a numbering: no id is a node
    GUID, every spine's name is one template with a trailing decimal number
    (``A10-P1-IBSPINE-NN``), and the gaps are fewer than the spines present (a
    name scheme with more holes than members is no scheme).  The second value
    says in words whether the rule was used and why.
    """
    ids = [f.ids[s] for s in spines]
    if len(ids) < 2:
        return [], f"spine numbering not used: {len(ids)} spine(s), nothing to number"
    guids = sum(1 for i in ids if _GUID_ID.match(i))
    if guids:
        who = "the spines are" if guids == len(ids) else f"{guids} of {len(ids)} spines are"
        return [], (
            f"spine numbering not used: {who} known by node GUIDs only (their "
            "descriptions name no switch)"
        )
    numbered: dict[int, str] = {}
    templates: set[tuple[str, str]] = set()
    for i in ids:
        m = _TRAILING_NUMBER.search(i)
        if m is None:
            return [], f"spine numbering not used: {i!r} carries no number"
        numbered[int(m.group(1))] = i
        templates.add((i[: m.start(1)], m.group(2)))
    if len(templates) > 1:
        shown = ", ".join(sorted(repr(i) for i in ids)[:3])
        return [], f"spine numbering not used: the spines' names share no scheme ({shown}, ...)"
    if len(numbered) < len(ids):
        return [], "spine numbering not used: two spines carry the same number"
    nums = sorted(numbered)
    holes = (nums[-1] - nums[0] + 1) - len(nums)
    if holes >= len(nums):
        return [], (
            f"spine numbering not used: numbers {nums[0]}..{nums[-1]} would leave {holes} gaps "
            f"among {len(nums)} spines (not a numbering)"
        )
    out: list[str] = []
    for lo, hi in itertools.pairwise(nums):
        for n in range(lo + 1, hi):
            tmpl = numbered[lo]
            m = _TRAILING_NUMBER.search(tmpl)
            assert m is not None
            digits = f"{n:0{len(m.group(1))}d}"
            out.append(tmpl[: m.start(1)] + digits + m.group(2))
    return out, (
        f"spine numbering used: the {len(ids)} spines present are numbered "
        f"{numbered[nums[0]]} .. {numbered[nums[-1]]} in one scheme (a gap is a missing spine)"
    )


def _port_holes(v: _View, cables_per_pair: int) -> list[tuple[int, int]]:
    """Runs of leaf ports dark on most leaves inside the uplink port range, one per spine."""
    used: dict[int, set[int]] = {leaf: set() for leaf in v.leaves}
    for leaf, _, port in v.uplinks:
        used[leaf].add(port)
    down: dict[int, set[int]] = {leaf: set() for leaf in v.leaves}
    for _, leaf, port in v.access:
        down[leaf].add(port)
    if not v.uplinks or cables_per_pair < 1:
        return []
    all_up = [p for ports in used.values() for p in ports]
    lo, hi = min(all_up), max(all_up)
    n = len(v.leaves)
    dark = [
        p for p in range(lo, hi + 1)
        if sum(1 for leaf in v.leaves if p not in used[leaf] and p not in down[leaf]) > n / 2
    ]  # fmt: skip
    runs: list[tuple[int, int]] = []
    for p in dark:
        if runs and runs[-1][1] == p - 1:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((p, p))
    out: list[tuple[int, int]] = []
    for a, b in runs:
        length = b - a + 1
        if length % cables_per_pair == 0:
            out += [(a + k * cables_per_pair, a + (k + 1) * cables_per_pair - 1)
                    for k in range(length // cables_per_pair)]  # fmt: skip
    return out


def _main_ports(f: Fabric, v: _View) -> dict[tuple[int, int], int]:
    """(group, port) -> the server whose HCAs are mostly on that port of its group's leaves."""
    ports_of: dict[int, Counter[int]] = {}
    for nic, _, port in v.access:
        ports_of.setdefault(int(f.parent[nic]), Counter())[port] += 1
    out: dict[tuple[int, int], int] = {}
    for s, ports in sorted(ports_of.items()):
        out.setdefault((int(f.su[s]), max(ports, key=lambda q: (ports[q], -q))), s)
    return out


def _server_ports(at: Mapping[tuple[int, int], int], groups: list[int]) -> list[int]:
    """The leaf ports that hold a server in most groups: the design's server slots."""
    used = Counter(port for (_, port) in at)
    return sorted(p for p, c in used.items() if c > len(groups) / 2)


def infer_design(fabric: Fabric) -> RegularDesign:
    """The regular design ``fabric`` was meant to be (see :func:`audit_regular`)."""
    return _infer(fabric, _view(fabric))[0]


def _infer(f: Fabric, v: _View) -> tuple[RegularDesign, list[str], list[tuple[int, int]]]:
    groups = sorted({int(f.su[leaf]) for leaf in v.leaves})
    rails_by_group: dict[int, set[int]] = {g: set() for g in groups}
    for leaf in v.leaves:
        if int(f.rail[leaf]) >= 0:
            rails_by_group[int(f.su[leaf])].add(int(f.rail[leaf]))
    rail_count = Counter(r for rs in rails_by_group.values() for r in rs)
    rails = tuple(sorted(r for r, c in rail_count.items() if c > len(groups) / 2))
    pair = Counter((leaf, spine) for leaf, spine, _ in v.uplinks)
    cpp = _majority(pair.values())
    per_leaf = Counter(leaf for leaf, _, _ in v.uplinks)
    uplinks = _majority(per_leaf[leaf] for leaf in v.leaves)
    per_group = Counter(int(f.su[s]) for s in v.servers)
    nic_leaves: dict[int, list[int]] = {}
    for nic, leaf, _ in v.access:
        nic_leaves.setdefault(int(f.parent[nic]), []).append(leaf)
    hcas = _majority(len(ls) for ls in nic_leaves.values())
    distinct = sum(1 for ls in nic_leaves.values() if len(ls) > 1 and len(set(ls)) == len(ls))
    rail_optimized = distinct > len(nic_leaves) / 2
    spg = (
        len(_server_ports(_main_ports(f, v), groups)) if rail_optimized
        else _majority(per_group[g] for g in groups)
    )  # fmt: skip
    gaps, numbering = _spine_gaps(f, v.spines)
    holes = _port_holes(v, cpp)
    missing = max(len(gaps), len(holes))
    dark = (
        f"dark uplink ports used: a run of {cpp} leaf port(s) dark on most leaves inside the "
        "uplink port range is a missing spine (wiring)"
        if v.uplinks
        else "dark uplink ports not used: no leaf-spine cable"
    )
    design = RegularDesign(
        groups=len(groups), rails=rails, spines=len(v.spines) + missing, cables_per_pair=cpp,
        uplinks_per_leaf=uplinks, servers_per_group=spg, hcas_per_server=hcas,
        rail_optimized=rail_optimized, rules=(numbering, dark),
    )  # fmt: skip
    return design, gaps, holes


def _su(f: Fabric, g: int) -> str:
    return f"su{g:02d}"


def audit_regular(fabric: Fabric) -> RegularAudit:
    """Infer the regular design of ``fabric`` and list its departures from it.

    Examples
    --------
    >>> from harness.fabric import two_tier
    >>> f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False,
    ...              node_overrides={"rails": 2})
    >>> report = audit_regular(f)
    >>> report.ok, report.design.groups, report.design.rails, report.design.spines
    (True, 2, (0, 1), 2)
    """
    f = fabric
    v = _view(f)
    if not v.access:
        source = dict(f.meta).get("source", f.name)
        switches = len(v.leaves) + len(v.spines)
        msg = (
            f"{source}: no server NIC is cabled to a leaf ({switches} switch(es), "
            f"{len(v.servers)} server(s), {f.n_links} cable(s)), so there is no design to "
            "infer; audit a dump of the whole fabric (ibnetdiscover without -S/-H), or give "
            "the design with --design"
        )
        raise ScenarioError(msg)
    design, gaps, holes = _infer(f, v)
    out: list[Departure] = []
    name = f.ids

    # missing leaves
    have: dict[tuple[int, int], int] = {}
    for leaf in v.leaves:
        have[int(f.su[leaf]), int(f.rail[leaf])] = leaf
    groups = sorted({int(f.su[leaf]) for leaf in v.leaves})
    missing_leaf: set[tuple[int, int]] = set()
    for g in groups:
        for r in design.rails:
            if (g, r) not in have:
                missing_leaf.add((g, r))
                out.append(Departure(
                    "missing-leaf", f"{_su(f, g)} rail {r}",
                    f"missing leaf: group {_su(f, g)} has no rail-{r} leaf (its servers' rail-{r} "
                    "HCAs are unreachable)",
                ))  # fmt: skip

    # missing spines
    if gaps or holes:
        for k in range(max(len(gaps), len(holes))):
            subject = (
                gaps[k] if k < len(gaps) else f"spine on leaf ports {holes[k][0]}-{holes[k][1]}"
            )
            why = []
            if k < len(gaps):
                why.append("a gap in the spines' numbering")
            if k < len(holes):
                a, b = holes[k]
                span = f"{a}" if a == b else f"{a}-{b}"
                why.append(f"leaf port(s) {span} dark on every leaf")
            out.append(Departure("missing-spine", subject,
                                 f"missing spine: {subject} ({'; '.join(why)})"))  # fmt: skip

    # leaves with fewer uplinks, by (leaf, spine)
    pair = Counter((leaf, spine) for leaf, spine, _ in v.uplinks)
    # a leaf's peers are the leaves of its pod (all of them on two tiers)
    pod_leaves: dict[int, list[int]] = {}
    for leaf in v.leaves:
        pod_leaves.setdefault(int(f.pod[leaf]), []).append(leaf)
    spines_of: dict[int, list[int]] = {}
    for leaf, spine in pair:
        spines_of.setdefault(leaf, []).append(spine)
    expected: dict[int, list[int]] = {}
    for pod, members in pod_leaves.items():
        reach = Counter(s for leaf in members for s in spines_of.get(leaf, []))
        expected[pod] = sorted((s for s, c in reach.items() if c > len(members) / 2),
                               key=lambda s: name[s])  # fmt: skip
    for leaf in v.leaves:
        expected_spines = expected[int(f.pod[leaf])]
        short = [(name[s], design.cables_per_pair - pair[leaf, s]) for s in expected_spines
                 if pair[leaf, s] < design.cables_per_pair]  # fmt: skip
        if not short:
            continue
        total = sum(pair[leaf, s] for s in spines_of.get(leaf, []))
        expect = design.cables_per_pair * len(expected_spines)
        what = ", ".join(
            f"{n} to {s}"
            if n < design.cables_per_pair or design.cables_per_pair == 1
            else f"all {n} to {s}"
            for s, n in short
        )
        out.append(Departure(
            "leaf-uplinks", name[leaf],
            f"leaf {name[leaf]} has {total} of {expect} uplinks: missing {what}",
            tuple(short),
        ))  # fmt: skip

    # spines with fewer cables to the cores than their peers (three tiers)
    out += [Departure("spine-uplinks", spine, text, detail)
            for spine, text, detail in spine_uplinks(f)]  # fmt: skip

    # servers: rails, swaps, missing HCAs, ports
    nic_at: dict[int, tuple[int, int]] = {nic: (leaf, port) for nic, leaf, port in v.access}
    nics_of: dict[int, list[int]] = {}
    for nic in f.nics.tolist():
        nics_of.setdefault(int(f.parent[nic]), []).append(int(nic))
    for s in v.servers:
        g = int(f.su[s])
        cabled = [n for n in nics_of.get(s, []) if n in nic_at]
        wrong = [n for n in cabled if design.rail_optimized
                 and int(f.rail[n]) != int(f.rail[nic_at[n][0]])
                 and int(f.rail[nic_at[n][0]]) >= 0]  # fmt: skip
        if (len(wrong) == 2 and int(f.rail[wrong[0]]) == int(f.rail[nic_at[wrong[1]][0]])
                and int(f.rail[wrong[1]]) == int(f.rail[nic_at[wrong[0]][0]])):  # fmt: skip
            a, b = wrong
            out.append(Departure(
                "swapped-nics", name[s],
                f"swapped NICs: {name[a]} (rail {int(f.rail[a])}) is on {name[nic_at[a][0]]} "
                f"port {nic_at[a][1]} and {name[b]} (rail {int(f.rail[b])}) on "
                f"{name[nic_at[b][0]]} port {nic_at[b][1]}: each on the other's rail leaf "
                "(NCCL still uses each for its own rail: their traffic crosses the spines)",
            ))  # fmt: skip
        else:
            for n in wrong:
                leaf = nic_at[n][0]
                out.append(Departure(
                    "wrong-rail", name[n],
                    f"wrong rail: {name[n]} (rail {int(f.rail[n])}) is on {name[leaf]} "
                    f"(rail {int(f.rail[leaf])}) port {nic_at[n][1]} (NCCL still uses it for "
                    f"rail {int(f.rail[n])}: its traffic crosses the spines, slower, not cut off)",
                ))  # fmt: skip
        rails_on = {int(f.rail[n]) for n in cabled}
        lacking = [r for r in design.rails if r not in rails_on and (g, r) not in missing_leaf]
        if cabled and lacking and design.rail_optimized:
            out.append(Departure(
                "missing-hca", name[s],
                f"server {name[s]} has {len(cabled)} of {len(design.rails)} HCAs: none on rail "
                + ", ".join(str(r) for r in lacking),
            ))  # fmt: skip
        leaves = [nic_at[n][0] for n in cabled]
        ports = Counter(nic_at[n][1] for n in cabled)
        if not ports:
            continue
        main = max(ports, key=lambda q: (ports[q], -q))
        if design.rail_optimized and len(set(leaves)) == len(leaves) > 1 and len(ports) > 1:
            odd = [n for n in cabled if nic_at[n][1] != main]
            out.append(Departure(
                "port-mismatch", name[s],
                f"server {name[s]}: " + ", ".join(
                    f"{name[n]} on port {nic_at[n][1]} of {name[nic_at[n][0]]}" for n in odd
                ) + f", its other HCAs on port {main}",
            ))  # fmt: skip

    # groups with fewer servers than the others: server slots dark on all their leaves
    if design.rail_optimized:
        at = _main_ports(f, v)
        slots = _server_ports(at, groups)
        for g in groups:
            dark = [p for p in slots if (g, p) not in at]
            if not dark:
                continue
            present = design.servers_per_group - len(dark)
            out.append(Departure(
                "missing-server", _su(f, g),
                f"group {_su(f, g)} has {present} of {design.servers_per_group} servers: "
                f"port {', '.join(map(str, dark))} of its leaves dark",
            ))  # fmt: skip

    # cables below the rate or width of their peers (same kind)
    out += [Departure("slow-link", link, text) for link, _, text in slow_links(f)]
    return RegularAudit(design, tuple(out))
