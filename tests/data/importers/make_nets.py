"""Write the ibsim net files that ``make_dumps.sh`` feeds to ibsim.

The good net mirrors ``DESIGN`` (a two-tier, rail-optimized fabric made by the
harness generator), written with :func:`harness.exporters.ibsim.to_ibsim_net`.
Each broken variant changes exactly one thing in that fabric before writing it.

``prod_hdr*.net`` are written directly (:func:`production_net`): a rail-optimized
HDR plane the way a production fabric looks to ``ibnetdiscover`` -- Mellanox
switch descriptions, one SHARP Aggregation Node per switch, HCAs named
``<host> HCA-N`` and ``<host> mlx5_N``, HCAs whose description was never set or
is a placeholder, a cloned host name, one server whose HCAs share a system
image GUID -- and, in ``prod_hdr_broken``, exactly five planted departures.

Usage: ``python tests/data/importers/make_nets.py OUTDIR``
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

from harness.exporters.ibsim import to_ibsim_net
from harness.fabric import Fabric
from harness.fabric import two_tier


def design() -> Fabric:
    """2 SUs x 2 hosts x 2 rails (4 leaves), 2 spines, 200 Gb/s (4xHDR) everywhere."""
    return two_tier(
        sus=2, nodes_per_su=2, spines=2, leaf_radix=8, storage=False,
        node_overrides={"rails": 2}, name="rail2x2",
    )  # fmt: skip


def _edit(
    fabric: Fabric,
    *,
    drop: set[str] | None = None,
    rewire: dict[str, tuple[str, int]] | None = None,
    capacity: dict[str, float] | None = None,
) -> Fabric:
    """A copy with cables dropped, re-plugged (new b end and port) or re-rated."""
    drop, rewire, capacity = drop or set(), rewire or {}, capacity or {}
    unknown = [lid for lid in (*drop, *rewire, *capacity) if lid not in fabric.link_index]
    if unknown:
        msg = f"make_nets.py: no such cable {unknown}; fix the variant"
        raise SystemExit(msg)
    keep = np.array([lid not in drop for lid in fabric.link_ids], dtype=bool)
    b = fabric.link_b.copy()
    bp = fabric.link_b_port.copy()
    cap = fabric.link_capacity.copy()
    for lid, (eid, port) in rewire.items():
        i = fabric.link_index[lid]
        b[i], bp[i] = fabric.index[eid], port
    for lid, gbps in capacity.items():
        cap[fabric.link_index[lid]] = gbps
    return dataclasses.replace(
        fabric,
        link_a=fabric.link_a[keep].copy(),
        link_b=b[keep],
        link_a_port=fabric.link_a_port[keep].copy(),
        link_b_port=bp[keep],
        link_kind=fabric.link_kind[keep].copy(),
        link_capacity=cap[keep],
        link_lanes=fabric.link_lanes[keep].copy(),
    )


def variants() -> dict[str, Fabric]:
    d = design()
    spine2 = {d.link_ids[i] for i in d.links_at(d.index["spine-02"]).tolist()}
    return {
        "rail2x2": d,
        # one leaf-spine cable pulled: su01/leaf-r1 port 4 and spine-02 port 2 go down
        "rail2x2_unlinked": _edit(d, drop={"su01/leaf-r1:4--spine-02:2"}),
        # one access cable pulled: the HCA su02/node02 mlx5_1 drops out of the dump
        "rail2x2_nic_down": _edit(d, drop={"su02/node02/nic1:1--su02/leaf-r1:2"}),
        # su01/node02 mlx5_1 (rail 1) plugged into the rail-0 leaf's spare port 5
        "rail2x2_wrong_rail": _edit(
            d, rewire={"su01/node02/nic1:1--su01/leaf-r1:2": ("su01/leaf-r0", 5)}
        ),
        # one access link trained at 1x (width) and one at EDR (speed); both are set on
        # the HCA end, which OpenSM leaves alone (it re-enables switch ports)
        "rail2x2_degraded": _edit(
            d,
            capacity={
                "su02/node01/nic0:1--su02/leaf-r0:1": 50.0,  # 1xHDR
                "su01/node01/nic1:1--su01/leaf-r1:1": 100.0,  # 4xEDR
            },
        ),
        # spine-02 powered off: all its cables dark, so ibnetdiscover cannot reach it
        "rail2x2_spine_down": _edit(d, drop=spine2),
    }


# -- the production-style plane ---------------------------------------------------
GROUPS, SERVERS, SPINES, PAIR = 4, 4, 4, 2
RAIL_DEVICES = (0, 1, 4, 5)  # the plane's HCAs of a DGX: mlx5_0,1,4,5 = HCA-1,2,5,6
LEAF_PORTS = 41  # QM8700: 40 ports + the Aggregation Node's
UPLINK0 = 21  # first uplink port of a leaf
UNSET = "MT4129 ConnectX7   Mellanox Technologies"
AN = "Mellanox Technologies Aggregation Node"
RATE = "4xHDR"  # ibsim 0.10 predates NDR


def _host_desc(g: int, n: int, rail: int) -> str:
    """The node description each HCA reports (group g, server n, 1-based; rail 0-based)."""
    dev = RAIL_DEVICES[rail]
    site = ("a01", "a02", "b03", "b04")[g - 1]
    name = f"{site}-p1-dgx-{g:02d}-c{n:02d}"
    hca, mlx = f"{name} HCA-{dev + 1}", f"{name} mlx5_{dev}"
    table = {
        (1, 1): hca, (1, 2): hca, (1, 3): UNSET, (1, 4): f"localhost HCA-{dev + 1}",
        (2, 1): mlx, (2, 2): mlx, (2, 3): mlx, (2, 4): f"ubuntu mlx5_{dev}",
        (3, 1): hca, (3, 2): f"ubuntu mlx5_{dev}", (3, 3): UNSET, (3, 4): hca,
        # c03 of group 4 is a clone that kept c01's host name
        (4, 1): mlx, (4, 2): UNSET, (4, 3): f"{site}-p1-dgx-04-c01 mlx5_{dev}", (4, 4): mlx,
    }  # fmt: skip
    return table[g, n]


def production_net(*, broken: bool) -> str:
    """An ibsim net of the production-style plane (see the module docstring).

    ``broken`` plants: one missing leaf-spine cable (IBLEAF-03-01 -- IBSPINE-03),
    a leaf with fewer uplinks (IBLEAF-02-03 has no cable to IBSPINE-04), two
    swapped NICs of one server (a02-p1-dgx-02-c03 mlx5_0 and mlx5_1), a server
    missing an HCA (group 4 server 2, rail 3, description unset) and a missing
    spine (IBSPINE-02 powered off).
    """
    sw_guid = {}
    leaves = [(g, r) for g in range(1, GROUPS + 1) for r in range(len(RAIL_DEVICES))]
    for j, (g, r) in enumerate(leaves):
        sw_guid[f"leaf-{g}-{r}"] = 0x2C5EAB0300B80000 + 0x40 * j
    for k in range(1, SPINES + 1):
        sw_guid[f"spine-{k}"] = 0x2C5EAB0300C20000 + 0x40 * k
    desc = {f"leaf-{g}-{r}": f"MF0;{('A09', 'A09', 'B09', 'B09')[g - 1]}-P1-IBLEAF-{r + 1:02d}-"
            f"{g:02d}:MQM8700/U1" for g, r in leaves}  # fmt: skip
    desc |= {f"spine-{k}": f"MF0;A10-P1-IBSPINE-{k:02d}:MQM8700/U1" for k in range(1, SPINES + 1)}
    cables: list[tuple[str, int, str, int]] = []
    hca_guid: dict[str, int] = {}
    hca_img: dict[str, int] = {}
    guid = 0xE09D730300850000
    for g in range(1, GROUPS + 1):
        for n in range(1, SERVERS + 1):
            img = 0xE09D73030099F000 if (g, n) == (3, 3) else None  # one image, 4 HCAs
            for r in range(len(RAIL_DEVICES)):
                hid = f"hca-{g}-{n}-{r}"
                hca_guid[hid] = guid
                hca_img[hid] = img or guid
                guid += 4
                leaf_rail = r
                if broken and (g, n) == (2, 3) and r in (0, 1):
                    leaf_rail = 1 - r  # swapped NICs
                if broken and (g, n, r) == (4, 2, 3):
                    continue  # its cable is out: the HCA is not in the dump
                cables.append((hid, 1, f"leaf-{g}-{leaf_rail}", n))
    for j, (g, r) in enumerate(leaves):
        for k in range(1, SPINES + 1):
            for c in range(PAIR):
                if broken and k == 2:
                    continue  # spine powered off
                if broken and (g, r, k, c) == (1, 2, 3, 1):
                    continue  # one missing cable
                if broken and (g, r, k) == (3, 1, 4):
                    continue  # a leaf with fewer uplinks
                lp = UPLINK0 + PAIR * (k - 1) + c
                cables.append((f"leaf-{g}-{r}", lp, f"spine-{k}", PAIR * j + 1 + c))
    ports: dict[str, list[tuple[int, str, int]]] = {}
    for a, ap, b, bp in cables:
        ports.setdefault(a, []).append((ap, b, bp))
        ports.setdefault(b, []).append((bp, a, ap))
    for sw in sw_guid:
        if not (broken and sw == "spine-2"):
            ports.setdefault(sw, []).append((LEAF_PORTS, f"an-{sw}", 1))
            ports.setdefault(f"an-{sw}", []).append((1, sw, LEAF_PORTS))
    node_desc = dict(desc)
    for g in range(1, GROUPS + 1):
        for n in range(1, SERVERS + 1):
            for r in range(len(RAIL_DEVICES)):
                node_desc[f"hca-{g}-{n}-{r}"] = _host_desc(g, n, r)
    node_desc |= {f"an-{sw}": AN for sw in sw_guid}

    def port_lines(node: str) -> list[str]:
        out = []
        for p, other, op in sorted(ports.get(node, [])):
            out.append(f'[{p}]\t"{other}"[{op}]\t\t# "{node_desc[other]}" lid 0 {RATE}')
        return out

    out = [
        "# ibsim net written by make_nets.py:production_net"
        + (" (broken: five planted departures)" if broken else ""),
        "# a rail-optimized HDR plane: 4 groups x 4 servers x 4 rails, 4 spines, 2 cables",
        "# per leaf-spine pair, one SHARP Aggregation Node per switch",
        "",
    ]
    for sw, sg in sw_guid.items():
        out += ["vendid=0x2c9", "devid=0xd2f0", f"sysimgguid={sg:#x}", f"switchguid={sg:#x}",
                f'Switch\t{LEAF_PORTS} "{sw}"\t\t# "{desc[sw]}"', *port_lines(sw), ""]  # fmt: skip
    for sw, sg in sw_guid.items():
        out += ["vendid=0x2c9", "devid=0xcf09", f"sysimgguid={sg:#x}", f"caguid={sg + 8:#x}",
                f'Ca\t1 "an-{sw}"\t\t# "{AN}"', *port_lines(f"an-{sw}"), ""]  # fmt: skip
    for hid, hg in hca_guid.items():
        out += ["vendid=0x2c9", "devid=0x1021", f"sysimgguid={hca_img[hid]:#x}",
                f"caguid={hg:#x}", f'Ca\t1 "{hid}"\t\t# "{node_desc[hid]}"',
                *port_lines(hid), ""]  # fmt: skip
    return "\n".join(out)


def production_nets() -> dict[str, str]:
    return {"prod_hdr": production_net(broken=False),
            "prod_hdr_broken": production_net(broken=True)}  # fmt: skip


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, fabric in variants().items():
        (out / f"{name}.net").write_text(to_ibsim_net(fabric) + "\n", encoding="utf-8")
        print(out / f"{name}.net")
    for name, text in production_nets().items():
        (out / f"{name}.net").write_text(text + "\n", encoding="utf-8")
        print(out / f"{name}.net")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
