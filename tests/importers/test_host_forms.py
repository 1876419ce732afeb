"""HCA descriptions in every common form group into the same servers (issue 22).

The committed production-style plane (ibsim + OpenSM + ibnetdiscover) names
its HCAs ``HOST mlx5_N`` and ``HOST HCA-N``; newer drivers name the RDMA
device after its PCI address (``HOST ibp11s0f0``, ``HOST ibP1p11s0f0``).
Rewritten to those forms, the dump must read into the same servers and rails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.fabric.fabric_file import load_fabric_file
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.importers import load_dump
from harness.importers.hosts import describe
from harness.importers.name_map import load_name_map
from harness.importers.rules import DEFAULT_HCA_PATTERN
from tests.importers.conftest import DUMPS

HEALTHY = (DUMPS / "prod_hdr.ibnetdiscover").read_text(encoding="utf-8")
RX = re.compile(DEFAULT_HCA_PATTERN)


def servers(f: Fabric) -> dict[str, list[tuple[str, int, str]]]:
    """Server -> its NICs' (id, rail, leaf it is cabled to)."""
    leaf_of: dict[int, str] = {}
    for li in f.links_of_kind(LinkKind.ACCESS).tolist():
        a, b = int(f.link_a[li]), int(f.link_b[li])
        nic, leaf = (a, b) if int(f.kind[a]) == Kind.NIC else (b, a)
        leaf_of[nic] = f.ids[leaf]
    out: dict[str, list[tuple[str, int, str]]] = {}
    for nic in f.nics.tolist():
        entry = (f.ids[nic], int(f.rail[nic]), leaf_of.get(int(nic), ""))
        out.setdefault(f.ids[int(f.parent[nic])], []).append(entry)
    return {k: sorted(v) for k, v in out.items()}


@pytest.mark.parametrize(
    ("form", "pci"),
    [("ibp{bus}s0f0", lambda k: 16 * k + 11), ("ibP1p{bus}s0", lambda k: 16 * k + 11),
     ("ibp{bus}s0f1np1", lambda k: 100 + k)],
)  # fmt: skip
def test_rdma_device_names_group_like_mlx5_names(tmp_path: Path, form: str, pci: object) -> None:
    assert callable(pci)

    def pci_name(m: re.Match[str]) -> str:
        k = int(m.group(2)) if m.group(2) is not None else int(m.group(3)) - 1
        return f'"{m.group(1)} {form.format(bus=pci(k))}"'

    text = re.sub(r'"(\S+) (?:mlx5_(\d+)|HCA-(\d+))"', pci_name, HEALTHY)
    assert "mlx5_" not in text
    assert "HCA-" not in text
    path = tmp_path / "pci.out"
    path.write_text(text, encoding="utf-8")
    want = servers(load_dump(DUMPS / "prod_hdr.ibnetdiscover"))
    assert len(want) == 16
    assert all(leaf for nics in want.values() for _, _, leaf in nics)
    assert servers(load_dump(path)) == want


def test_the_forms_of_one_host() -> None:
    assert describe("node01 mlx5_0", RX) == ("node01", 0)
    assert describe("HOST HCA-3", RX) == ("HOST", 2)
    assert describe("gpu-a17 ib2", RX) == ("gpu-a17", 2)
    a, b = describe("gpu-a17 ibp11s0f0", RX), describe("gpu-a17 ibp11s0f1", RX)
    assert a is not None
    assert b is not None
    assert a[0] == b[0] == "gpu-a17"
    assert a[1] is not None
    assert b[1] is not None
    assert a[1] < b[1]
    assert describe("MT25408 ConnectX Mellanox Technologies", RX) is None


def test_a_node_name_map_names_hcas_the_dump_leaves_unnamed(tmp_path: Path) -> None:
    # the site's node-name-map (OpenSM format) written from the real descriptions; the
    # dump's HCAs all left at the ConnectX default: the map groups them into the servers
    site = re.finditer(r'caguid=0x([0-9a-f]+)\nCa\s+\d+\s+"H-[0-9a-f]+"\s+# "([^"]+)"',
                       HEALTHY)  # fmt: skip
    entries = [f'0x{m.group(1)} "{m.group(2)}"' for m in site if "dgx" in m.group(2)]
    assert len(entries) == 40  # the named HCAs (the other 24 are unset or placeholders)
    names = tmp_path / "node-name-map"
    names.write_text("# site map\n" + "\n".join(entries) + "\n", encoding="utf-8")
    hca = re.compile(
        r'"(?:[ab]0\d-p1-dgx-[^"]*|(?:localhost|ubuntu) [^"]*|MT4129 ConnectX7 +[^"]*)"'
    )
    dump = tmp_path / "unnamed.out"
    dump.write_text(hca.sub('"MT25408 ConnectX Mellanox Technologies"', HEALTHY), encoding="utf-8")
    out = tmp_path / "fabric.yaml"
    assert main(["import", str(dump), "--names", str(names), "-o", str(out)]) == 0
    assert servers(load_fabric_file(out)) == servers(load_dump(DUMPS / "prod_hdr.ibnetdiscover"))
    bad = tmp_path / "bad-map"
    bad.write_text('0x1 "a"\nnode01 0x2\n', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad-map:2: unreadable node-name-map line"):
        load_name_map(bad)
