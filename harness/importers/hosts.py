"""Which HCAs make up which server (importers stage, pure, no I/O).

A production dump names most HCAs ``"<hostname> mlx5_N"`` or
``"<hostname> HCA-N"``, but not all: an HCA whose node description was never
set reports the vendor default (``"MT4129 ConnectX7   Mellanox Technologies"``),
a freshly imaged host a placeholder (``"localhost HCA-1"``, ``"ubuntu mlx5_0"``),
and cloned hosts share one name.  :func:`split_by_description` keeps the HCAs
whose description names their server and sets the others aside;
:func:`group_by_wiring` then puts those into servers from the wiring:

1. HCAs that share a system image GUID (one server image) are one server;
2. in a rail-optimized fabric the HCAs of one server sit on the same port
   number of the rail leaves of one group, so HCAs on the same port of leaves
   of the same group (and of distinct rails) are one server -- joined to the
   named server on that port when there is exactly one and it has those rails
   free.

Every server made this way is noted with the rule that made it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

DEFAULT_PLACEHOLDER_HOSTS: tuple[str, ...] = (
    "localhost",
    "localhost.localdomain",
    "ubuntu",
    "debian",
    "centos",
    "rocky",
    "rhel",
    "(none)",
    "none",
    "unknown",
)
"""Host names an image leaves behind before the node is named (compared lower-case)."""

DEFAULT_UNSET_PATTERN = r"(?i)^(?:MT\d+\b.*|)\s*(?:Mellanox|NVIDIA)\s+Technologies\s*$"
"""What an HCA reports when nobody set its description (``MT4129 ConnectX7   Mellanox ...``)."""


class NicLike(Protocol):
    """What this module needs of a NIC record (``records.RawNic``)."""

    @property
    def key(self) -> str:
        """The NIC's key in the file (what its cables name)."""
        ...

    @property
    def desc(self) -> str:
        """The node description the NIC reports."""
        ...

    @property
    def line(self) -> int:
        """The line of the file that states it."""
        ...

    @property
    def host(self) -> str | None:
        """The server name, when the file states it."""
        ...

    @property
    def index(self) -> int | None:
        """The device index, when the file states it."""
        ...

    @property
    def sysimg(self) -> str | None:
        """The system image GUID, when the file states it."""
        ...


@dataclass(frozen=True, slots=True)
class Host:
    """A server as inferred: its id and its NICs with their rails."""

    hid: str
    nics: tuple[tuple[str, int], ...]  # (nic key, rail), by rail


@dataclass(frozen=True, slots=True)
class Named:
    """An HCA whose description names its server."""

    key: str
    host: str
    index: int | None  # device index (``mlx5_3`` and ``HCA-4`` -> 3); None: not stated
    line: int


@dataclass(frozen=True, slots=True)
class Unnamed:
    """An HCA whose description does not tell its server, and why."""

    key: str
    desc: str
    why: str  # "unset", "placeholder" or "shared"
    sysimg: str | None
    line: int


def describe(desc: str, rx: re.Pattern[str]) -> tuple[str, int | None] | None:
    """(host, device index) from an HCA description, or None when it does not match.

    ``HCA-N`` is 1-based (Mellanox's ``HCA-1`` is ``mlx5_0``), so its index is N - 1.

    >>> from harness.importers.rules import DEFAULT_HCA_PATTERN
    >>> rx = re.compile(DEFAULT_HCA_PATTERN)
    >>> describe("a08-p1-dgx-04-c01 mlx5_5", rx), describe("b05-p1-dgx-05-c02 HCA-6", rx)
    (('a08-p1-dgx-04-c01', 5), ('b05-p1-dgx-05-c02', 5))
    >>> describe("gpu017 ibp12s0f0", rx)[1] < describe("gpu017 ibp13s0f0", rx)[1]
    True
    """
    m = rx.match(desc.strip())
    if m is None:
        return None
    groups = m.groupdict()
    if groups.get("hca") is not None:
        return m.group("host"), int(groups["hca"]) - 1
    if groups.get("bus") is not None:  # a PCI address: ordered like the devices
        domain, func = int(groups.get("domain") or 0), int(groups.get("func") or 0)
        slot = int(groups.get("slot") or 0)
        return m.group("host"), ((domain * 256 + int(groups["bus"])) * 32 + slot) * 8 + func
    idx = groups.get("index")
    return m.group("host"), int(idx) if idx is not None else None


def split_by_description(
    nics: Iterable[NicLike],
    rx: re.Pattern[str],
    unset: re.Pattern[str] | None,
    placeholders: Iterable[str],
) -> tuple[list[Named], list[Unnamed]]:
    """The NICs whose description names their server, and the others (with the reason).

    A description is *unset* when it matches ``unset`` or when several HCAs
    share a description that names no device; *placeholder* when its host part
    is one of ``placeholders``; *shared* when two HCAs claim the same host and
    device index (cloned hosts), which puts all HCAs of that host aside.
    """
    ph = {p.lower() for p in placeholders}
    parsed: list[tuple[NicLike, str | None, int | None, str]] = []
    for nic in nics:
        if nic.host is not None:
            parsed.append((nic, nic.host, nic.index, ""))
            continue
        desc = nic.desc.strip()
        if unset is not None and unset.match(desc):
            parsed.append((nic, None, None, "unset"))
            continue
        got = describe(desc, rx)
        if got is None:
            parsed.append((nic, desc, None, ""))
        elif got[0].strip().lower() in ph:
            parsed.append((nic, None, None, "placeholder"))
        else:
            parsed.append((nic, got[0], got[1], ""))
    plain = Counter(h for n, h, i, why in parsed if h is not None and i is None and n.host is None)
    claims = Counter((h, i) for _, h, i, _ in parsed if h is not None and i is not None)
    shared_hosts = {h for (h, _), c in claims.items() if c > 1}
    named: list[Named] = []
    unnamed: list[Unnamed] = []
    for nic, host, idx, reason in parsed:
        why = reason
        if host is not None and idx is None and nic.host is None and plain[host] > 1:
            why = "unset"
        elif host is not None and host in shared_hosts and nic.host is None:
            why = "shared"
        if host is None or why:
            unnamed.append(Unnamed(nic.key, nic.desc.strip(), why, nic.sysimg, nic.line))
        else:
            named.append(Named(nic.key, host, idx, nic.line))
    return named, unnamed


def group_by_wiring(
    unnamed: list[Unnamed],
    attach: Mapping[str, tuple[str, int]],
    *,
    su_of_leaf: Mapping[str, int],
    rail_of_leaf: Mapping[str, int],
    named_at: Mapping[tuple[int, int], list[tuple[str, set[int]]]],
    leaf_name: Mapping[str, str],
) -> tuple[dict[str, list[tuple[str, int]]], dict[str, list[tuple[str, int]]], list[str]]:
    """Put unnamed HCAs into servers.

    Parameters
    ----------
    unnamed
        The HCAs :func:`split_by_description` set aside.
    attach
        NIC key -> (leaf key, leaf port) of its (first) cable to a leaf.
    su_of_leaf, rail_of_leaf
        Group and rail of each leaf, as the named servers give them.
    named_at
        (group, port) -> [(named host id, all the rails it has)] for the named
        servers with an HCA on that port of a leaf of that group.
    leaf_name
        Leaf key -> its name (for the notes).

    Returns
    -------
    (new servers, additions to named servers, notes)
        Servers as host id -> [(nic key, rail)].
    """
    notes: list[str] = []
    new: dict[str, list[tuple[str, int]]] = {}
    joined: dict[str, list[tuple[str, int]]] = {}

    def why_text(members: list[Unnamed]) -> str:
        kinds = Counter(m.why for m in members)
        descs = sorted({m.desc for m in members})
        shown = ", ".join(repr(d) for d in descs[:2]) + (", ..." if len(descs) > 2 else "")
        return f"{len(members)} HCA(s) with {'/'.join(sorted(kinds))} descriptions ({shown})"

    def rails_for(members: list[Unnamed]) -> list[tuple[str, int]] | None:
        """(key, rail) from the leaves; None when two land on one rail."""
        out: list[tuple[str, int]] = []
        taken: set[int] = set()
        pending: list[str] = []
        for m in members:
            leaf = attach.get(m.key)
            rail = rail_of_leaf.get(leaf[0], -1) if leaf else -1
            if rail < 0:
                pending.append(m.key)
                continue
            if rail in taken:
                return None
            taken.add(rail)
            out.append((m.key, rail))
        free = (r for r in range(len(members) + len(taken) + 1) if r not in taken)
        out += [(k, next(free)) for k in pending]
        return sorted(out, key=lambda kr: kr[1])

    def place(hid: str) -> str:
        base, n = hid, 2
        while hid in new:
            hid, n = f"{base}-{n}", n + 1
        return hid

    def site(m: Unnamed) -> tuple[int, int] | None:
        leaf = attach.get(m.key)
        if leaf is None or leaf[0] not in su_of_leaf:
            return None
        return su_of_leaf[leaf[0]], leaf[1]

    # 1. a shared system image GUID
    by_img: dict[str, list[Unnamed]] = {}
    for m in unnamed:
        if m.sysimg:
            by_img.setdefault(m.sysimg, []).append(m)
    done: set[str] = set()
    for img, members in sorted(by_img.items()):
        if len(members) < 2:
            continue
        nics = rails_for(members)
        if nics is None:
            continue
        sites = Counter(s for s in (site(m) for m in members) if s is not None)
        g, p = max(sites, key=lambda s: (sites[s], -s[0], -s[1])) if sites else (0, 0)
        hid = place(f"unnamed-su{g:02d}-p{p:02d}" if sites else f"unnamed-{img}")
        new[hid] = nics
        done.update(m.key for m in members)
        notes.append(
            f"server {hid}: {why_text(members)} share the system image GUID {img}; "
            "taken as one server (rule: shared system image GUID)"
        )
    # 2. the same port of the rail leaves of one group
    by_site: dict[tuple[int, int], list[Unnamed]] = {}
    alone: list[Unnamed] = []
    for m in unnamed:
        if m.key in done:
            continue
        s = site(m)
        if s is None:
            alone.append(m)
        else:
            by_site.setdefault(s, []).append(m)
    for (g, p), members in sorted(by_site.items()):
        nics = rails_for(members)
        groups = [members] if nics is not None else [[m] for m in members]
        for part in groups:
            part_nics = rails_for(part) or []
            rails = {r for _, r in part_nics}
            owners = [(h, have) for h, have in named_at.get((g, p), []) if not have & rails]
            leaves = ", ".join(sorted({leaf_name[attach[m.key][0]] for m in part}))
            if len(owners) == 1 and len(named_at.get((g, p), [])) == 1:
                owner = owners[0][0]
                joined.setdefault(owner, []).extend(part_nics)
                notes.append(
                    f"server {owner}: joined by {why_text(part)} on port {p} of {leaves} "
                    f"(rule: same port of the rail leaves of group {g} as its named HCAs)"
                )
                continue
            hid = place(f"unnamed-su{g:02d}-p{p:02d}")
            new[hid] = part_nics
            rule = (
                f"same port of the rail leaves of group {g}"
                if len(part) > 1 or len(groups) == 1
                else f"one server per HCA: they share port {p} of leaves of one rail"
            )
            notes.append(f"server {hid}: {why_text(part)} on port {p} of {leaves} (rule: {rule})")
    for m in alone:
        leaf = attach.get(m.key)
        where = f"port {leaf[1]} of {leaf_name[leaf[0]]}" if leaf else "no leaf"
        hid = place(f"unnamed-{m.key}")
        new[hid] = [(m.key, 0)]
        notes.append(
            f"server {hid}: {why_text([m])} on {where}, a leaf no named server tells the group "
            "of (rule: one server per HCA)"
        )
    return new, joined, notes
