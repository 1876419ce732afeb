"""GraphML export and the load_dump dispatcher."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from harness.errors import ScenarioError
from harness.exporters.graphml import to_graphml
from harness.fabric import two_tier
from harness.importers import FORMATS
from harness.importers import load_dump
from harness.importers import load_ibnetdiscover
from harness.importers import sniff_format
from tests.importers.conftest import DUMPS
from tests.importers.conftest import THIRD_PARTY


def test_graphml_reads_back_with_networkx(tmp_path: Path) -> None:
    f = two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False)
    path = to_graphml(f, tmp_path / "f.graphml")
    g = nx.read_graphml(path, force_multigraph=True)
    assert g.number_of_nodes() == f.n_elements
    assert g.number_of_edges() == f.n_links
    assert g.nodes["su01/leaf-r2"]["kind"] == "leaf"
    assert g.nodes["su01/leaf-r2"]["rail"] == 2
    cable = "su01/node02/nic2:1--su01/leaf-r2:2"
    data = next(d for _, _, k, d in g.edges(keys=True, data=True) if k == cable)
    assert data["kind"] == "access"
    assert data["capacity_gbps"] == 200.0
    assert (data["a"], data["a_port"], data["b"], data["b_port"]) == (
        "su01/node02/nic2", 1, "su01/leaf-r2", 2,
    )  # fmt: skip
    assert g.graph["param:generator"] == "two-tier"


def test_graphml_of_an_imported_fabric_keeps_its_notes(tmp_path: Path) -> None:
    f = load_ibnetdiscover(THIRD_PARTY / "ibsim_net.2sw2path4hca")
    g = nx.read_graphml(to_graphml(f, tmp_path / "i.graphml", cables_only=True),
                        force_multigraph=True)  # fmt: skip
    assert g.number_of_edges() == 6
    assert "same tier" in g.graph["meta:note"]
    assert g.graph["meta:format"] == "ibnetdiscover"


@pytest.mark.parametrize(
    ("path", "fmt", "servers"),
    [
        (THIRD_PARTY / "ibsim_net.2sw2path4hca", "ibnetdiscover", 4),
        (DUMPS / "rail2x2_wrong_rail.ibnetdiscover", "ibnetdiscover", 4),
        (THIRD_PARTY / "simai_Rail_Opti_SingleToR_32g_8gps_400Gbps_H100", "simai", 4),
        (THIRD_PARTY / "containerlab_clos02.clab.yml", "containerlab", 4),
        (THIRD_PARTY / "nvidia-smi_topo-m_8xNV18_10nic.txt", "nvidia-smi", 1),
        (THIRD_PARTY / "azure_ndv4-topo.xml", "nccl-topo", 1),
        (DUMPS / "netq" / "spectrumx_rail.json", "netq", 8),
        (DUMPS / "prod_hdr_broken.ports", "ibnetdiscover", 16),
    ],
)
def test_load_dump_sniffs_every_format(path: Path, fmt: str, servers: int) -> None:
    assert sniff_format(path) == fmt
    assert load_dump(path).summary()["nodes"] == servers
    assert load_dump(path, fmt).summary()["nodes"] == servers


def test_load_dump_cannot_tell(tmp_path: Path) -> None:
    p = tmp_path / "mystery.txt"
    p.write_text("just some words\n")
    with pytest.raises(ScenarioError, match=r"mystery.txt:1: cannot tell the format.*fmt="):
        load_dump(p)
    gz = THIRD_PARTY / "infinitehbd_fault_trace.json.gz"  # decompressed: a JSON of no known format
    with pytest.raises(ScenarioError, match=r"\.json\.gz:1: cannot tell the format"):
        load_dump(gz)


def test_load_dump_bad_format_name_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"unknown dump format 'simia'; did you mean 'simai'"):
        load_dump(THIRD_PARTY / "azure_ndv4-topo.xml", "simia")
    with pytest.raises(ScenarioError, match=r"nope.txt: cannot read the dump file.*check the path"):
        load_dump(tmp_path / "nope.txt")
    assert set(FORMATS) == {"ibnetdiscover", "simai", "containerlab", "nvidia-smi", "nccl-topo",
                            "netq"}  # fmt: skip
