"""Fabrics out to Slurm: a ``topology.conf`` for the tree plugin (text out, no I/O).

:func:`to_slurm_topology` writes a fabric -- modelled or imported -- as the
``SwitchName=... Switches=... Nodes=...`` lines of Slurm's ``topology/tree``
plugin, with node and switch lists compressed into Slurm hostlist expressions
(:func:`~harness.inputs.hostlist.compress_hostlist`: ``node01,node02,node03`` -> ``node[01-03]``).

Slurm's tree is a tree; a rail-optimized fabric is not.  So:

* the leaves of one SU serve the same servers (one leaf per rail), and are one
  Slurm leaf switch named after the SU (``su01``; a one-leaf SU keeps the leaf's
  name); every server sits under the leaf switch of its SU;
* above, the switches of each tier (spines, then cores) that reach the same
  Slurm switches below are merged into one (``spines``, ``cores``; numbered when
  a tier has several groups); groups whose children overlap are merged too, so
  every Slurm switch has one parent;
* a fabric in several disconnected parts gives several top switches, which is
  how Slurm is told not to place a job across them.

Names are element ids with ``/`` replaced by ``-`` (``su01/node01`` ->
``su01-node01``), or the map passed as ``node_names``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping

from harness.errors import FabricDesignError
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.inputs.hostlist import compress_hostlist

__all__ = ["compress_hostlist", "slurm_name", "to_slurm_topology"]

_BAD_NAME = re.compile(r"[\s,\[\]=#\"']")


def slurm_name(element_id: str) -> str:
    """The Slurm name of an element: ``/`` becomes ``-``.

    >>> slurm_name("su01/node01"), slurm_name("MF0;A09-P1-IBLEAF-01-01")
    ('su01-node01', 'MF0;A09-P1-IBLEAF-01-01')
    """
    return element_id.replace("/", "-")


def _check(names: Iterable[str]) -> None:
    bad = sorted(n for n in names if not n or _BAD_NAME.search(n))
    if bad:
        msg = (
            f"{len(bad)} name(s) cannot be Slurm node or switch names ({', '.join(bad[:3])}): "
            "whitespace, ',', '[', ']', '=', '#' and quotes are not allowed; pass node_names="
        )
        raise FabricDesignError(msg)


def to_slurm_topology(
    fabric: Fabric, *, node_names: Mapping[str, str] | None = None, header: bool = True
) -> str:
    """``fabric`` as a Slurm ``topology.conf`` for ``TopologyPlugin=topology/tree``.

    ``node_names`` maps server ids to Slurm node names (default:
    :func:`slurm_name`).  Raises :class:`FabricDesignError` when a name cannot
    be a Slurm name, or when a server reaches no leaf (Slurm wants every node
    under a switch).

    Examples
    --------
    >>> from harness.fabric import two_tier
    >>> f = two_tier(sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    >>> print(to_slurm_topology(f, header=False))
    SwitchName=su01 Nodes=su01-node[01-02]
    SwitchName=su02 Nodes=su02-node[01-02]
    SwitchName=spines Switches=su[01-02]
    """
    f = fabric
    names = dict(node_names or {})
    kind = f.kind
    # servers under the leaves they reach
    leaf_servers: dict[int, set[int]] = {}
    for li in f.links_of_kind(LinkKind.ACCESS).tolist():
        a, b = int(f.link_a[li]), int(f.link_b[li])
        nic, leaf = (a, b) if int(kind[b]) == Kind.LEAF else (b, a)
        if int(kind[leaf]) != Kind.LEAF or int(f.parent[nic]) < 0:
            continue
        leaf_servers.setdefault(leaf, set()).add(int(f.parent[nic]))
    servers = f.servers.tolist()
    cabled = {s for ss in leaf_servers.values() for s in ss}
    lost = [f.ids[s] for s in servers if s not in cabled]
    if lost:
        msg = (
            f"{len(lost)} server(s) reach no leaf ({', '.join(lost[:3])}); Slurm's tree "
            "plugin needs every node under a switch: cable them or leave them out"
        )
        raise FabricDesignError(msg)
    node_name = {s: names.get(f.ids[s], slurm_name(f.ids[s])) for s in servers}
    # level 0: one Slurm switch per SU (its rail leaves)
    leaves_of_su: dict[int, list[int]] = {}
    for leaf in f.leaves.tolist():
        leaves_of_su.setdefault(int(f.su[leaf]), []).append(int(leaf))
    group_of: dict[int, str] = {}  # element -> Slurm switch
    members: dict[str, list[int]] = {}
    nodes_of: dict[str, set[int]] = {}
    for su, leaves in sorted(leaves_of_su.items()):
        sw = slurm_name(f.ids[leaves[0]]) if len(leaves) == 1 else f"su{su:02d}"
        members[sw] = leaves
        nodes_of[sw] = set()
        for leaf in leaves:
            group_of[leaf] = sw
    for s in servers:
        votes: dict[str, int] = {}
        for leaf, ss in leaf_servers.items():
            if s in ss:
                votes[group_of[leaf]] = votes.get(group_of[leaf], 0) + 1
        home = max(sorted(votes), key=lambda g: votes[g])
        nodes_of[home].add(s)
    lines = [
        f"SwitchName={sw} Nodes={compress_hostlist(node_name[s] for s in sorted(ss))}"
        for sw, ss in nodes_of.items()
        if ss
    ]
    comments = [
        f"# {sw}: {compress_hostlist(slurm_name(f.ids[m]) for m in ms)}"
        for sw, ms in members.items()
        if len(ms) > 1
    ]
    # upper tiers: switches reaching the same Slurm switches below are one
    below = {sw for sw, ss in nodes_of.items() if ss}
    cables = f.links_of_kind(LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE).tolist()
    for tier_kind, word in ((Kind.SPINE, "spines"), (Kind.CORE, "cores")):
        tier = [i for i in range(f.n_elements) if int(kind[i]) == tier_kind]
        children: dict[int, set[str]] = {t: set() for t in tier}
        for li in cables:
            a, b = int(f.link_a[li]), int(f.link_b[li])
            for up, down in ((a, b), (b, a)):
                if up in children and group_of.get(down) in below:
                    children[up].add(group_of[down])
        reaching = [t for t in tier if children[t]]
        if not reaching:
            continue
        parent = {t: t for t in reaching}

        def find(x: int, parent: dict[int, int] = parent) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        owner: dict[str, int] = {}
        for t in reaching:
            for child in children[t]:
                if child in owner:
                    parent[find(t)] = find(owner[child])
                else:
                    owner[child] = t
        groups: dict[int, list[int]] = {}
        for t in reaching:
            groups.setdefault(find(t), []).append(t)
        ordered = sorted(groups.values(), key=min)
        new_below: set[str] = set()
        for n, group in enumerate(ordered, start=1):
            sw = slurm_name(f.ids[group[0]]) if len(group) == 1 else (
                word if len(ordered) == 1 else f"{word}{n:02d}"
            )  # fmt: skip
            kids = set().union(*(children[t] for t in group))
            lines.append(f"SwitchName={sw} Switches={compress_hostlist(kids)}")
            if len(group) > 1:
                comments.append(f"# {sw}: {compress_hostlist(slurm_name(f.ids[t]) for t in group)}")
            for t in group:
                group_of[t] = sw
            new_below.add(sw)
        below = new_below
    _check([*node_name.values(), *(ln.split()[0].split("=", 1)[1] for ln in lines)])
    out: list[str] = []
    if header:
        out += [
            f"# Slurm topology.conf (TopologyPlugin=topology/tree) for fabric {f.name!r},",
            "# written by harness; merged switches and their members:",
            *comments,
        ]
    return "\n".join([*out, *lines])
