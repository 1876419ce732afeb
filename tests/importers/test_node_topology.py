"""nvidia-smi topo -m and NCCL topology XML: one server's GPU/NIC layout."""

from __future__ import annotations

import pytest

from harness.errors import ScenarioError
from harness.fabric import Kind
from harness.fabric import LinkKind
from harness.importers import fabric_from_node
from harness.importers import load_nccl_topo
from harness.importers import load_nvidia_smi_topo
from harness.importers.nccl import parse_nccl_topo
from harness.importers.nvsmi import parse_nvidia_smi_topo
from tests.importers.conftest import THIRD_PARTY

NVSMI = THIRD_PARTY / "nvidia-smi_topo-m_8xNV18_10nic.txt"
NCCL = THIRD_PARTY / "azure_ndv4-topo.xml"


def test_nvidia_smi_h200_layout() -> None:
    t = load_nvidia_smi_topo(NVSMI)
    assert t.gpus == tuple(f"GPU{i}" for i in range(8))
    assert t.nics == tuple(f"mlx5_{i}" for i in range(10))  # names from the NIC Legend
    assert (t.nvswitch, set(t.nvlink_lanes)) == (True, {18})
    assert t.gpu_numa == (0, 0, 0, 0, 1, 1, 1, 1)
    names = [t.nics[n] for n in t.local_nics(3)]
    assert names == ["mlx5_0", "mlx5_1", "mlx5_2"]  # three NICs behind GPU3's switch
    assert [t.nics[n] for n in t.local_nics(0)] == ["mlx5_3"]
    assert [t.nics[n] for n in t.rail_nics()] == [
        "mlx5_3", "mlx5_5", "mlx5_4", "mlx5_0", "mlx5_7", "mlx5_9", "mlx5_8", "mlx5_6",
    ]  # fmt: skip
    assert [t.nics[n] for n in t.storage_nics()] == ["mlx5_1", "mlx5_2"]


def test_nvidia_smi_template_and_fabric() -> None:
    t = load_nvidia_smi_topo(NVSMI)
    s = t.to_template().spec
    assert (s.gpus, s.rails, s.pcie_switches, s.storage_nics) == (8, 8, 8, 2)
    assert (s.nvswitches, sum(s.nvlink_lanes)) == (4, 18)  # NV18 = the H100 NVSwitch layout
    assert s.nvlink_gbs_per_gpu == 900.0
    f = fabric_from_node(t)
    assert f.summary()["gpus"] == 8
    assert f.summary()["nics"] == 8
    meta = dict(f.meta)
    assert meta["device:su01/node01/nic0"] == "mlx5_3"
    assert meta["device:su01/node01/stor1"] == "mlx5_2"
    # template GPU g and its rail NIC share a PCIe switch, as GPU0 and mlx5_3 do
    gpu0, nic0 = f.index["su01/node01/gpu0"], f.index["su01/node01/nic0"]
    sw = {f.other_end(i, gpu0) for i in f.links_at(gpu0).tolist()
          if f.link_kind[i] == LinkKind.PCIE}  # fmt: skip
    assert any(f.other_end(i, nic0) in sw for i in f.links_at(nic0).tolist())


def test_nccl_xml_azure_ndv4() -> None:
    t = load_nccl_topo(NCCL)
    assert len(t.gpus) == len(t.nics) == 8
    assert t.gpus[0] == "0001:00:00.0"  # PCI bus-id order
    assert [len(g.gpus) for g in t.groups] == [2, 2, 2, 2]
    assert [t.nics[n] for n in t.local_nics(2)] == ["0103:00:00.0", "0104:00:00.0"]
    assert t.gpu_numa[2] == 0
    assert t.nvswitch is None  # the file has no NVLink entries
    s = t.to_template().spec
    assert (s.gpus, s.rails, s.pcie_switches, s.storage_nics) == (8, 8, 4, 0)
    assert s.nvswitches == 6  # from the A100 base, since the file says nothing
    f = fabric_from_node(t, base="dgx-a100")
    assert dict(f.meta)["device:su01/node01/nic2"] == "0103:00:00.0"
    assert f.element("su01/node01/gpu2").rail == 2


NCCL_WITH_NVLINK = """<system version="1">
  <cpu numaid="0" arch="x86_64">
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x030200">
        <gpu dev="1" sm="90" rank="1" gdr="1">
          <nvlink target="0000:a0:00.0" count="9" tclass="0x068000"/>
          <nvlink target="0000:a1:00.0" count="9" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:12:00.0" class="0x020700">
        <nic><net name="mlx5_1" dev="1" speed="400000" port="1"/></nic>
      </pci>
    </pci>
    <pci busid="0000:20:00.0" class="0x060400">
      <pci busid="0000:21:00.0" class="0x030200">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="0000:a0:00.0" count="9" tclass="0x068000"/>
          <nvlink target="0000:a1:00.0" count="9" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:22:00.0" class="0x020700">
        <nic><net name="mlx5_0" dev="0" speed="400000" port="1"/></nic>
      </pci>
    </pci>
  </cpu>
</system>
"""


def test_nccl_xml_with_gpu_and_nvlink_entries() -> None:
    t = parse_nccl_topo(NCCL_WITH_NVLINK, "dump.xml")
    assert t.gpus == ("GPU0", "GPU1")  # ordered by <gpu dev>
    assert t.nics == ("mlx5_0", "mlx5_1")
    assert (t.nvswitch, t.nvlink_lanes, t.nic_gbps) == (True, (18, 18), 400.0)
    assert [t.nics[n] for n in t.local_nics(0)] == ["mlx5_0"]
    s = t.to_template().spec
    assert (s.gpus, s.rails, s.pcie_switches, s.nic_gbps) == (2, 2, 2, 400.0)
    assert sum(s.nvlink_lanes) == 18


NVSMI_MESH = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tNV4\tNV4\tNV4\tPXB\t0-31\t0\n"
    "GPU1\tNV4\t X \tNV4\tNV4\tSYS\t0-31\t0\n"
    "GPU2\tNV4\tNV4\t X \tNV4\tSYS\t0-31\t0\n"
    "GPU3\tNV4\tNV4\tNV4\t X \tSYS\t0-31\t0\n"
    "NIC0\tPXB\tSYS\tSYS\tSYS\t X \n\nLegend:\n\n  X    = Self\n"
)


def test_nvidia_smi_direct_nvlink_mesh_sums_lanes() -> None:
    t = parse_nvidia_smi_topo(NVSMI_MESH, "mesh.txt")
    assert t.nics == ("NIC0",)  # no legend: column names kept
    assert (t.nvswitch, t.nvlink_lanes) == (False, (12, 12, 12, 12))
    # GPU0 has the only NIC, the others none: PCIe switches are not alike
    with pytest.raises(ScenarioError, match=r"mesh.txt: PCIe switches are not alike .*by hand"):
        t.to_template()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("nothing here\n", r"t:1: no 'GPU0' column header"),
        ("\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU1\tNV1\n", r"t:3: row GPU1 has 1 cells for 2"),
        ("\tGPU0\tGPU1\nGPU0\t X \tNV1\n", r"t:1: no matrix row for GPU1"),
    ],
)
def test_malformed_nvidia_smi(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_nvidia_smi_topo(text, "t")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("<system><cpu>", r"x.xml:1:14: not well-formed NCCL topology XML \(no element found\)"),
        ("<system>" + "<pci>" * 5000, r"x.xml:1:\d+: the NCCL topology XML nests elements more "),
        (
            '<system><cpu numaid="zero"/></system>',
            r"x.xml:1:1: <cpu numaid='zero'>: the NUMA id must be a whole number",
        ),
        (
            '<system><cpu><pci class="0x03zz"/></cpu></system>',
            r"x.xml:1:1: <pci class='0x03zz'>: the PCI class must be a hexadecimal number",
        ),
        (
            "<!DOCTYPE x [<!ENTITY a 'aaaa'>]><system>&a;</system>",
            r"x.xml:1:\d+: the NCCL topology XML declares a DTD or entities",
        ),
        ("<topology/>", r"x.xml:1: root element is <topology>"),
        ("<system><cpu numaid='0'/></system>", r"x.xml:1: no GPU"),
    ],
)
def test_malformed_nccl_xml(text: str, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        parse_nccl_topo(text, "x.xml")


def test_one_server_fabric_has_no_switches() -> None:
    f = fabric_from_node(load_nvidia_smi_topo(NVSMI))
    assert f.indices_of_kind(Kind.LEAF, Kind.SPINE, Kind.CORE).size == 0
    assert f.links_of_kind(LinkKind.ACCESS).size == 0
    assert f.links_of_kind(LinkKind.NVLINK).size == 8 * 4
