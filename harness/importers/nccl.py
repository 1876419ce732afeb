"""NCCL topology XML (``NCCL_TOPO_FILE`` / ``NCCL_TOPO_DUMP_FILE``): one server (importers stage).

The file is a tree ``<system><cpu><pci ...>...</pci></cpu></system>``.  A
``pci`` element's ``class`` says what it is: ``0x03xxxx`` a GPU, ``0x02xxxx``
a NIC (``0x0207`` InfiniBand), ``0x0604xx`` a PCIe bridge/switch.  Devices
under the same top-level bridge below a CPU share a PCIe switch (NCCL's
PIX/PXB); a device hanging straight off the CPU is alone.  GPUs are numbered in
PCI bus-id order (``CUDA_DEVICE_ORDER=PCI_BUS_ID``) unless a ``<gpu dev=..>``
child says otherwise; NICs are named (and ordered) by their ``<net name=..>`` child or bus id.
NVLink lanes come from ``<nvlink target=.. count=.. tclass=..>`` children of
``<gpu>`` (``tclass 0x068000`` is an NVSwitch); NIC speed from ``<net speed=..>``
(Mb/s).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.importers.names import natural_key
from harness.importers.node import NodeTopology
from harness.importers.node import group_devices
from harness.importers.text import read_text
from harness.inputs.xml import read_xml

_NVSWITCH_CLASS = 0x068000


def parse_nccl_topo(text: str, path: str = "<string>") -> NodeTopology:
    """Parse an NCCL topology XML file into a :class:`NodeTopology`."""
    doc = read_xml(text, path, what="NCCL topology XML")
    root = doc.root

    def _cls(el: ET.Element) -> int:
        return doc.int_attr(el, "class", 0, what="PCI class", base=16)

    if root.tag != "system":
        msg = f"root element is <{root.tag}>, not <system>; is this an NCCL topology file?"
        raise ScenarioError(Problem(msg, path=path, line=1))
    gpus: list[tuple[str, ET.Element, str, int]] = []  # (busid, element, group, numa)
    nics: list[tuple[str, ET.Element, str, int]] = []

    def walk(el: ET.Element, group: str, numa: int, depth: int) -> None:
        for child in el:
            if child.tag == "cpu":
                walk(child, "", doc.int_attr(child, "numaid", -1, what="NUMA id"), 0)
                continue
            if child.tag != "pci":
                continue
            busid = child.get("busid", "")
            cls = _cls(child)
            here = group or busid  # the top-level bridge below the CPU names the group
            if cls >> 16 == 0x03:
                gpus.append((busid, child, here, numa))
            elif cls >> 16 == 0x02:
                nics.append((busid, child, here, numa))
            walk(child, here, numa, depth + 1)

    walk(root, "", -1, 0)
    if not gpus:
        msg = "no GPU (pci class 0x03....) found; is this an NCCL topology file?"
        raise ScenarioError(Problem(msg, path=path, line=1))

    def gpu_order(item: tuple[str, ET.Element, str, int]) -> tuple[int, str]:
        dev = item[1].find("gpu")
        return (doc.int_attr(dev, "dev", 0, what="GPU index") if dev is not None else 0, item[0])

    gpus.sort(key=gpu_order if all(g[1].find("gpu") is not None for g in gpus) else
              (lambda g: (0, g[0])))  # fmt: skip

    def nic_name(item: tuple[str, ET.Element, str, int]) -> str:
        net = item[1].find("./nic/net")
        return net.get("name", item[0]) if net is not None else item[0]

    nics.sort(key=lambda n: natural_key(nic_name(n)))
    nic_names: list[str] = [nic_name(n) for n in nics]
    speeds: list[float] = []
    for _, el, _, _ in nics:
        net = el.find("./nic/net")
        if net is not None and net.get("speed", "").isdigit():
            speeds.append(int(net.get("speed", "0")) / 1000.0)
    lanes: list[int] = []
    nvswitch: bool | None = None
    for _, el, _, _ in gpus:
        links = el.findall("./gpu/nvlink")
        lanes.append(sum(doc.int_attr(lk, "count", 0, what="NVLink count") for lk in links))
        if links:
            to_switch = any(
                doc.int_attr(lk, "tclass", 0, what="NVLink target class", base=16)
                == _NVSWITCH_CLASS
                for lk in links
            )
            nvswitch = bool(nvswitch) or to_switch
    together: list[tuple[str, int, str, int]] = []
    devices = [("gpu", i, g[2]) for i, g in enumerate(gpus)] + [
        ("nic", i, n[2]) for i, n in enumerate(nics)
    ]
    for x, (k1, i1, g1) in enumerate(devices):
        for k2, i2, g2 in devices[x + 1 :]:
            if g1 == g2:
                together.append((k1, i1, k2, i2))
    names = tuple(nic_names)
    gpu_names = tuple(
        f"GPU{d.get('dev')}" if (d := el.find("gpu")) is not None else busid
        for busid, el, _, _ in gpus
    )
    return NodeTopology(
        source=path,
        fmt="nccl-topo",
        gpus=gpu_names,
        nics=names,
        groups=group_devices(len(gpus), len(nics), together, names),
        nvlink_lanes=tuple(lanes),
        nvswitch=nvswitch,
        gpu_numa=tuple(g[3] for g in gpus),
        nic_numa=tuple(n[3] for n in nics),
        nic_gbps=max(speeds, default=0.0),
    )


def load_nccl_topo(path: str | Path) -> NodeTopology:
    """Read an NCCL topology XML file."""
    p = str(path)
    return parse_nccl_topo(read_text(p, "NCCL topology"), p)
