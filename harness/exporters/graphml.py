"""Fabrics out to GraphML: a fabric's graph for Gephi, yEd, Cytoscape or networkx."""

from __future__ import annotations

from pathlib import Path

from harness.fabric.model import Fabric


def to_graphml(fabric: Fabric, path: str | Path, *, cables_only: bool = False) -> Path:
    """Write ``fabric`` as GraphML at ``path`` and return the path.

    Goes through :meth:`Fabric.to_networkx` and networkx's writer.  GraphML
    holds only strings, numbers and booleans, so each edge's ``ports`` pair is
    written as ``a``/``a_port`` and ``b``/``b_port`` (the link's own ends, which
    an undirected reader may list in either order), and the fabric's ``meta``
    entries become graph attributes ``meta:<key>`` (repeated keys joined by
    newlines).

    Examples
    --------
    >>> import networkx as nx, tempfile, os
    >>> from harness.fabric import two_tier
    >>> f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    >>> p = to_graphml(f, os.path.join(tempfile.mkdtemp(), "f.graphml"))
    >>> nx.read_graphml(p, force_multigraph=True).number_of_edges() == f.n_links
    True
    """
    import networkx as nx

    g = fabric.to_networkx(cables_only=cables_only)
    for _u, _v, key, data in g.edges(keys=True, data=True):
        a_port, b_port = data.pop("ports")
        i = fabric.link_index[key]
        data["a"] = fabric.ids[int(fabric.link_a[i])]
        data["b"] = fabric.ids[int(fabric.link_b[i])]
        data["a_port"] = int(a_port)
        data["b_port"] = int(b_port)
        data["id"] = key
    g.graph["tiers"] = int(fabric.tiers)
    meta: dict[str, list[str]] = {}
    for k, val in fabric.meta:
        meta.setdefault(k, []).append(str(val))
    for k, vals in meta.items():
        g.graph[f"meta:{k}"] = "\n".join(vals)
    for k, val in fabric.params:
        g.graph[f"param:{k}"] = val if isinstance(val, int | float | str) else str(val)
    out = Path(path)
    nx.write_graphml(g, out)
    return out
