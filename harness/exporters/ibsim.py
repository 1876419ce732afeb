"""Fabrics out to ibsim: a net file (ibnetdiscover syntax) that ibsim simulates and opensm routes.

:func:`to_ibsim_net` writes the compute fabric's switches, rail HCAs and
cables with their InfiniBand rates; ``ibnetdiscover`` run against the
simulation dumps it back, and :mod:`harness.importers.ibnetdiscover` reads
either the net file or the dump into the same fabric.
"""

from __future__ import annotations

from harness.errors import FabricDesignError
from harness.fabric.ib_rates import ib_rate_name
from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind


def _check_ibsim_id(eid: str) -> str:
    if any(ch in eid for ch in '#@"') or len(eid) > 60:
        msg = (
            f"element id {eid!r} cannot be an ibsim node id ('#', '@' and '\"' are reserved, "
            "60 characters at most); rename the element"
        )
        raise FabricDesignError(msg)
    return eid


def to_ibsim_net(fabric: Fabric) -> str:
    """The compute fabric as an ibsim net file (ibnetdiscover syntax).

    Switches (leaf, spine, core) become ``Switch`` records, rail NICs ``Hca``
    records whose node description is ``"<server> mlx5_<rail>"`` (what the
    importer reads back), and every compute cable is listed at both ends with
    its rate (``4xHDR`` for 200 Gb/s), which ibsim uses as the port's enabled
    width and speed.  Storage NICs and switches are left out.
    """
    order = {Kind.LEAF: 0, Kind.SPINE: 1, Kind.CORE: 2}
    switches = sorted(
        (i for i in range(fabric.n_elements) if Kind(int(fabric.kind[i])) in COMPUTE_SWITCH_KINDS),
        key=lambda i: (order[Kind(int(fabric.kind[i]))], i),
    )
    is_switch = set(switches)
    nics = fabric.nics.tolist()
    cables = fabric.links_of_kind(*COMPUTE_CABLE_KINDS).tolist()
    desc: dict[int, str] = {i: fabric.ids[i] for i in switches}
    for i in nics:
        server = int(fabric.parent[i])
        host = fabric.ids[server] if server >= 0 else fabric.ids[i]
        desc[i] = f"{host} mlx5_{int(fabric.rail[i])}"
    lines: dict[int, list[tuple[int, str]]] = {i: [] for i in (*switches, *nics)}
    used: set[tuple[int, int]] = set()
    for li in cables:
        a, b = int(fabric.link_a[li]), int(fabric.link_b[li])
        ap, bp = int(fabric.link_a_port[li]), int(fabric.link_b_port[li])
        rate = ib_rate_name(float(fabric.link_capacity[li]))
        for end, port in ((a, ap), (b, bp)):
            if (end, port) in used:
                msg = f"port {fabric.ids[end]}:{port} carries two cables; fix the fabric"
                raise FabricDesignError(msg)
            used.add((end, port))
        for here, hp, there, tp in ((a, ap, b, bp), (b, bp, a, ap)):
            remote = _check_ibsim_id(fabric.ids[there])
            if here in is_switch:
                note = f'# "{desc[there]}" lid 0 {rate}'
            else:
                note = f'# lid 0 lmc 0 "{desc[there]}" lid 0 {rate}'
            lines[here].append((hp, f'[{hp}]\t"{remote}"[{tp}]\t\t{note}'))
    out = [
        f"# ibsim net file written by harness from fabric {fabric.name!r}",
        "# (ibnetdiscover syntax; each cable is listed at both ends with its rate)",
        "",
    ]
    for i in (*switches, *nics):
        eid = _check_ibsim_id(fabric.ids[i])
        if i in is_switch:
            radix = int(fabric.ports[i]) or max((p for p, _ in lines[i]), default=1)
            out.append(f'Switch\t{radix} "{eid}"\t\t# "{desc[i]}"')
        else:
            out.append(f'Hca\t{max(int(fabric.ports[i]), 1)} "{eid}"\t\t# "{desc[i]}"')
        out += [text for _, text in sorted(lines[i])]
        out.append("")
    return "\n".join(out)
