"""``nvidia-smi topo -m`` output: one server's GPU/NIC layout (importers stage).

The matrix gives, for every pair of devices, how they are connected:
``NV#`` (a bonded set of # NVLinks), ``PIX``/``PXB`` (through one or more PCIe
bridges, not the host bridge: the same PCIe switch), ``PHB``/``NODE``/``SYS``
(through the CPU).  GPUs and NICs joined by ``PIX``/``PXB`` form one PCIe
group.  When every GPU pair shows the same ``NV#`` and # times (GPUs - 1)
exceeds the 18 links a GPU has, the GPUs meet through NVSwitches and # is each
GPU's lane count (``NV18`` on H100/H200, ``NV12`` on A100); otherwise the lanes
are direct GPU-GPU links and are summed per GPU.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.importers.node import MAX_NVLINK_LANES_PER_GPU
from harness.importers.node import NodeTopology
from harness.importers.node import group_devices
from harness.importers.text import read_text

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TRAILERS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_NV = re.compile(r"^NV(\d+)$")
_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")


def parse_nvidia_smi_topo(text: str, path: str = "<string>") -> NodeTopology:
    """Parse ``nvidia-smi topo -m`` output into a :class:`NodeTopology`.

    Raises :class:`ScenarioError` (with ``path:line``) when the matrix header
    is missing or a row does not have one cell per device.
    """
    lines = [_ANSI.sub("", ln).rstrip("\n") for ln in text.splitlines()]
    header_at = next(
        (i for i, ln in enumerate(lines) if re.search(r"(^|\t)\s*GPU0\s*(\t|$)", ln)), None
    )
    if header_at is None:
        msg = (
            "no 'GPU0' column header found; save the output of `nvidia-smi topo -m` "
            "unchanged (tabs included)"
        )
        raise ScenarioError(Problem(msg, path=path, line=1))
    cols = [c.strip() for c in lines[header_at].split("\t") if c.strip()]
    devices = []
    for c in cols:
        if c in _TRAILERS:
            break
        devices.append(c)
    legend = {m.group(1): m.group(2) for ln in lines if (m := _LEGEND.match(ln))}
    gpu_cols = [d for d in devices if re.fullmatch(r"GPU\d+", d)]
    nic_cols = [d for d in devices if d not in gpu_cols]
    cells: dict[str, list[str]] = {}
    numa: dict[str, int] = {}
    for i in range(header_at + 1, len(lines)):
        parts = lines[i].split("\t")
        label = parts[0].strip()
        if label not in devices:
            if cells and not lines[i].strip():
                break
            continue
        row = [p.strip() for p in parts[1 : 1 + len(devices)]]
        if len(row) != len(devices) or (row and row[devices.index(label)] != "X"):
            msg = (
                f"row {label} has {len(row)} cells for {len(devices)} devices (or no 'X' on "
                "the diagonal); save the output unchanged"
            )
            raise ScenarioError(Problem(msg, path=path, line=i + 1))
        cells[label] = row
        rest = [p.strip() for p in parts[1 + len(devices) :] if p.strip()]
        numa[label] = int(rest[1]) if len(rest) > 1 and rest[1].isdigit() else -1
    missing = [d for d in devices if d not in cells]
    if missing:
        msg = f"no matrix row for {', '.join(missing)}; save the whole output"
        raise ScenarioError(Problem(msg, path=path, line=header_at + 1))
    col = {d: k for k, d in enumerate(devices)}

    def rel(a: str, b: str) -> str:
        return cells[a][col[b]]

    nv = [[0] * len(gpu_cols) for _ in gpu_cols]
    for i, a in enumerate(gpu_cols):
        for j, b in enumerate(gpu_cols):
            m = _NV.match(rel(a, b))
            nv[i][j] = int(m.group(1)) if m else 0
    pairs = {nv[i][j] for i in range(len(gpu_cols)) for j in range(len(gpu_cols)) if i != j}
    n = len(gpu_cols)
    if pairs == {0} or not pairs:
        lanes, nvswitch = [0] * n, None
    elif len(pairs) == 1 and pairs.pop() * (n - 1) > MAX_NVLINK_LANES_PER_GPU:
        lanes, nvswitch = [nv[0][1]] * n, True
    else:
        lanes, nvswitch = [sum(row) for row in nv], False
    together: list[tuple[str, int, str, int]] = []
    kinds = [("gpu", gpu_cols), ("nic", nic_cols)]
    for ka, la in kinds:
        for i, a in enumerate(la):
            for kb, lb in kinds:
                for j, b in enumerate(lb):
                    if (ka, i) < (kb, j) and rel(a, b) in ("PIX", "PXB"):
                        together.append((ka, i, kb, j))
    nic_names = tuple(legend.get(c, c) for c in nic_cols)
    return NodeTopology(
        source=path,
        fmt="nvidia-smi topo -m",
        gpus=tuple(gpu_cols),
        nics=nic_names,
        groups=group_devices(len(gpu_cols), len(nic_cols), together, nic_names),
        nvlink_lanes=tuple(lanes),
        nvswitch=nvswitch,
        gpu_numa=tuple(numa[g] for g in gpu_cols),
        nic_numa=tuple(numa[c] for c in nic_cols),
    )


def load_nvidia_smi_topo(path: str | Path) -> NodeTopology:
    """Read a saved ``nvidia-smi topo -m`` output."""
    p = str(path)
    return parse_nvidia_smi_topo(read_text(p, "nvidia-smi topo -m"), p)
