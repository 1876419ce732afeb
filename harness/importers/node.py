"""What is inside one server, as ``nvidia-smi topo -m`` or NCCL's XML shows it (importers stage).

:class:`NodeTopology` is the common result of :mod:`harness.importers.nvsmi` and
:mod:`harness.importers.nccl`: the GPUs and NICs, which NICs sit behind the
same PCIe switch as which GPUs (PIX/PXB), and how many NVLink lanes each GPU
has.  :meth:`NodeTopology.to_template` turns it into a
:class:`~harness.fabric.nodes.NodeTemplate`, and :func:`fabric_from_node` into
a one-server :class:`~harness.fabric.Fabric`.

The template is canonical: PCIe switch ``k`` holds the ``k``-th group of GPUs
(groups ordered by their lowest GPU), and the ``i``-th GPU of a group uses the
``i``-th NIC of the group (by device name) as its rail NIC.  NICs beyond one
per GPU in a group become storage NICs.  :meth:`NodeTopology.device_map` says
which real device each template part stands for.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from harness.errors import FabricDesignError
from harness.errors import Problem
from harness.errors import ScenarioError
from harness.fabric.builder import FabricBuilder
from harness.fabric.model import Fabric
from harness.fabric.nodes import NODE_TEMPLATES
from harness.fabric.nodes import NodeTemplate
from harness.fabric.nodes import node_template

MAX_NVLINK_LANES_PER_GPU = 18  # NVLink4/5 GPUs have 18 links; more than that means NVSwitches


@dataclass(frozen=True, slots=True)
class PcieGroup:
    """GPUs and NICs behind one PCIe switch (indices into the topology's lists)."""

    gpus: tuple[int, ...]
    nics: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class NodeTopology:
    """One server's GPUs, NICs, PCIe grouping and NVLink lanes."""

    source: str
    fmt: str
    gpus: tuple[str, ...]  # device names: GPU0.. or PCI bus ids
    nics: tuple[str, ...]  # device names: mlx5_0.. or PCI bus ids
    groups: tuple[PcieGroup, ...]  # PCIe switches, ordered by lowest GPU then lowest NIC
    nvlink_lanes: tuple[int, ...]  # per GPU: lanes to NVSwitches, or summed over peers
    nvswitch: bool | None  # True: GPUs meet through NVSwitches; None: unknown
    gpu_numa: tuple[int, ...] = ()  # -1: unknown
    nic_numa: tuple[int, ...] = ()
    nic_gbps: float = 0.0  # 0: unknown

    def local_nics(self, gpu: int) -> tuple[int, ...]:
        """NICs behind the same PCIe switch as ``gpu`` (GPUDirect RDMA candidates)."""
        for g in self.groups:
            if gpu in g.gpus:
                return g.nics
        return ()

    def rail_nics(self) -> tuple[int, ...]:
        """One NIC per GPU that has a local NIC, in template order (the rail NICs)."""
        out: list[int] = []
        for g in self.groups:
            out += list(g.nics[: len(g.gpus)])
        return tuple(out)

    def storage_nics(self) -> tuple[int, ...]:
        """The NICs that are not rail NICs (storage, front end), by index."""
        rails = set(self.rail_nics())
        return tuple(n for n in range(len(self.nics)) if n not in rails)

    def _gpu_groups(self) -> list[PcieGroup]:
        return [g for g in self.groups if g.gpus]

    def template_gpus(self) -> tuple[int, ...]:
        """Real GPU index of template GPU 0, 1, ..."""
        return tuple(gpu for g in self._gpu_groups() for gpu in g.gpus)

    def to_template(self, base: str | NodeTemplate | None = None) -> NodeTemplate:
        """A :class:`NodeTemplate` with this server's GPUs, rails, PCIe switches and NVLink.

        ``base`` supplies what the dump does not show (NIC and PCIe speeds,
        storage NIC speed, host memory).  By default it is the known template
        whose NVLink lane count matches (8: A800, 12: A100, 18: H100), or A100
        when the dump shows no NVLink.
        """
        groups = self._gpu_groups()
        if not groups:
            msg = "the topology shows no GPU; a server template needs at least one"
            raise ScenarioError(Problem(msg, path=self.source))
        per_gpus = {len(g.gpus) for g in groups}
        per_rails = {min(len(g.gpus), len(g.nics)) for g in groups}
        if len(per_gpus) > 1 or len(per_rails) > 1:
            shape = ", ".join(f"{len(g.gpus)} GPU/{len(g.nics)} NIC" for g in groups)
            msg = (
                f"PCIe switches are not alike ({shape}), which a NodeTemplate cannot describe; "
                "build the template by hand: node_template(...).with_overrides(gpus=..., "
                "rails=..., pcie_switches=...)"
            )
            raise ScenarioError(Problem(msg, path=self.source))
        lanes = max(self.nvlink_lanes, default=0)
        tmpl = _base(base, lanes if self.nvswitch else 0)
        s = tmpl.spec
        changes: dict[str, object] = {
            "model": f"{s.model} ({self.fmt})",
            "gpus": len(self.template_gpus()),
            "pcie_switches": len(groups),
            "rails": len(self.rail_nics()),
            "storage_nics": len(self.storage_nics()),
        }
        if self.nic_gbps:
            changes["nic_gbps"] = self.nic_gbps
        if lanes and self.nvswitch:
            if sum(s.nvlink_lanes) != lanes:
                changes["nvswitches"] = 1
                changes["nvlink_lanes"] = (lanes,)
        elif lanes:
            # direct GPU-GPU links: one virtual NVSwitch with each GPU's summed lanes keeps
            # the per-GPU bandwidth (not the per-pair limits)
            changes["nvswitches"] = 1
            changes["nvlink_lanes"] = (lanes,)
        try:
            return tmpl.with_overrides(**changes)
        except FabricDesignError as err:  # e.g. more NVLink lanes than a link can have
            msg = f"this server cannot be modelled: {err}"
            raise ScenarioError(Problem(msg, path=self.source)) from None

    def device_map(self, prefix: str) -> dict[str, str]:
        """Template part id (under server ``prefix``) -> real device name."""
        out = {f"{prefix}/gpu{t}": self.gpus[g] for t, g in enumerate(self.template_gpus())}
        out.update({f"{prefix}/nic{r}": self.nics[n] for r, n in enumerate(self.rail_nics())})
        out.update({f"{prefix}/stor{m}": self.nics[n] for m, n in enumerate(self.storage_nics())})
        return out


def _base(base: str | NodeTemplate | None, lanes: int) -> NodeTemplate:
    if isinstance(base, NodeTemplate):
        return base
    if base is not None:
        return node_template(base)
    for tmpl in NODE_TEMPLATES.values():
        if lanes and sum(tmpl.spec.nvlink_lanes) == lanes:
            return tmpl
    return node_template("a100")


def group_devices(
    gpus: int, nics: int, together: list[tuple[str, int, str, int]], nic_names: tuple[str, ...]
) -> tuple[PcieGroup, ...]:
    """PCIe groups from pairs of devices that share a PCIe switch.

    ``together`` holds ``("gpu"|"nic", index, "gpu"|"nic", index)`` pairs;
    every device ends up in exactly one group (alone if it shares with none).
    """
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        parent.setdefault(x, x)
        while parent[x] != x:
            x = parent[x]
        return x

    for k1, i1, k2, i2 in together:
        parent[find((k1, i1))] = find((k2, i2))
    members: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for d in [("gpu", i) for i in range(gpus)] + [("nic", i) for i in range(nics)]:
        members.setdefault(find(d), []).append(d)
    groups = []
    for ms in members.values():
        g = tuple(sorted(i for k, i in ms if k == "gpu"))
        n = tuple(sorted((i for k, i in ms if k == "nic"), key=lambda i: nic_names[i]))
        groups.append(PcieGroup(g, n))
    groups.sort(key=lambda p: (0, p.gpus[0]) if p.gpus else (1, p.nics[0]))
    return tuple(groups)


def fabric_from_node(
    topo: NodeTopology, *, base: str | NodeTemplate | None = None, name: str = "node"
) -> Fabric:
    """A fabric of one server (``su01/node01``) built from ``topo``; no switches.

    The fabric's ``meta`` maps each GPU and NIC part to its real device name
    (``device:su01/node01/nic0`` -> ``mlx5_3``).  ``tiers`` is 2, the smallest
    the model knows, although there are no switches.
    """
    tmpl = topo.to_template(base)
    b = FabricBuilder()
    prefix = "su01/node01"
    b.add_server(prefix, tmpl, su=1, node=1)
    fabric = b.build(name, tiers=2, params={"importer": topo.fmt, "source": topo.source})
    meta = (("format", topo.fmt), ("source", topo.source),
            *((f"device:{k}", v) for k, v in topo.device_map(prefix).items()))  # fmt: skip
    return dataclasses.replace(fabric, meta=meta)
