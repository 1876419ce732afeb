"""Server (node) templates: what is inside one GPU server (fabric stage, pure).

Figures (sources in ``docs/domain.md``):

* NVLink3 lane: 25 GB/s per direction.  A100: 12 lanes per GPU, 2 to each of
  6 NVSwitches = 600 GB/s bidirectional.  A800: 8 lanes = 400 GB/s.  H100/H800
  (NVLink4): 18 lanes over 4 NVSwitches (5+4+4+5) = 900 GB/s; H800: 8 lanes.
* PCIe Gen4 x16: 32 GB/s raw per direction, 31.5 GB/s after 128b/130b
  encoding; after TLP/DLLP overhead at 256-byte payloads a GPUDirect RDMA path
  moves about 26 GB/s, which is the *effective* figure used here.  That is why a
  200 Gb/s NIC (25 GB/s) already nearly fills the link and a 400 Gb/s NIC
  (50 GB/s) behind the same switch gains almost nothing.  Gen5 doubles it.
* A800/A100 (seed): 4 PCIe switches, each with 2 GPUs and 1 rail NIC (the GDR
  path), 2 CPUs, 2 x 25 Gb/s storage NICs straight to the CPUs, bonded.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from harness.errors import FabricDesignError
from harness.fabric.limits import NODE_FIELDS
from harness.fabric.model import BOND_HASHES
from harness.fabric.model import NodeSpec
from harness.inputs.values import bool_problem
from harness.inputs.values import number_problem
from harness.inputs.values import text_problem

PCIE_GEN4_X16_EFFECTIVE_GBS = 26.0
PCIE_GEN5_X16_EFFECTIVE_GBS = 52.0
NVLINK3_LANE_GBS = 25.0
NVLINK4_LANE_GBS = 25.0
NVLINK5_LANE_GBS = 50.0


@dataclass(frozen=True, slots=True)
class NodeTemplate:
    """A server model plus the wiring rules of its parts."""

    spec: NodeSpec
    cpus: int = 2

    def with_overrides(self, **changes: object) -> NodeTemplate:
        """A copy with some :class:`NodeSpec` fields changed (checked: types, then bounds)."""
        fields = set(NodeSpec.__dataclass_fields__)
        unknown = sorted(set(changes) - fields - {"cpus"})
        if unknown:
            msg = (
                f"unknown node parameter(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(fields | {'cpus'}))}"
            )
            raise FabricDesignError(msg)
        problems = [p for key, value in changes.items() for p in field_problems(key, value)]
        if problems:
            raise FabricDesignError("; ".join(problems))
        cpus = changes.pop("cpus", self.cpus)
        if "nvlink_lanes" in changes:
            lanes: Any = changes["nvlink_lanes"]
            changes["nvlink_lanes"] = tuple(lanes)
        tmpl = NodeTemplate(replace(self.spec, **changes), cpus)  # type: ignore[arg-type]
        tmpl.check()
        return tmpl

    def check(self) -> None:
        """Raise FabricDesignError unless the fields are in bounds and fit together."""
        s = self.spec
        problems = [
            p
            for key in (*NODE_FIELDS, "model", "nic_lag", "bond_hash")
            for p in field_problems(key, self.cpus if key == "cpus" else getattr(s, key))
        ]
        if problems:  # the relations below assume sane numbers
            raise FabricDesignError("; ".join(problems))
        if s.gpus % s.pcie_switches:
            problems.append(
                f"{s.gpus} GPUs do not spread evenly over {s.pcie_switches} PCIe switches; "
                "use a GPU count that is a multiple of pcie_switches"
            )
        if s.rails and s.rails % s.pcie_switches and s.pcie_switches % s.rails:
            problems.append(
                f"{s.rails} rail NICs do not spread evenly over {s.pcie_switches} PCIe switches"
            )
        if len(s.nvlink_lanes) != s.nvswitches:
            problems.append(
                f"nvlink_lanes lists {len(s.nvlink_lanes)} values for {s.nvswitches} NVSwitches; "
                "give one lane count per NVSwitch"
            )
        if problems:
            raise FabricDesignError("; ".join(problems))

    def gpus_of_pcie(self, k: int) -> range:
        """The GPUs behind PCIe switch ``k``."""
        per = self.spec.gpus // self.spec.pcie_switches
        return range(k * per, (k + 1) * per)

    def pcie_of_nic(self, r: int) -> int:
        """The PCIe switch rail NIC ``r`` sits behind."""
        s = self.spec
        if s.rails >= s.pcie_switches:
            return r // (s.rails // s.pcie_switches)
        return r * (s.pcie_switches // s.rails)

    def rail_of_gpu(self, g: int) -> int:
        """The rail NIC a GPU uses (GPUDirect RDMA, the NIC behind its PCIe switch)."""
        s = self.spec
        if s.rails == 0:
            return -1
        if s.rails >= s.gpus:
            return g * (s.rails // s.gpus)
        k = g // (s.gpus // s.pcie_switches)
        if s.rails >= s.pcie_switches:
            return k * (s.rails // s.pcie_switches) + (g % (s.gpus // s.pcie_switches)) % max(
                1, s.rails // s.pcie_switches
            )
        return k // (s.pcie_switches // s.rails)

    def cpu_of_pcie(self, k: int) -> int:
        """The CPU PCIe switch ``k`` hangs off."""
        return k * self.cpus // self.spec.pcie_switches


def field_problems(key: str, value: object) -> list[str]:
    """What is wrong with one node-template field (bounds: :data:`NODE_FIELDS`)."""
    what = f"node parameter {key!r}"
    if key == "model":
        problem = text_problem(value, what)
        return [problem] if problem else []
    if key == "nic_lag":
        problem = bool_problem(value, what)
        return [problem] if problem else []
    if key == "bond_hash":
        if value in BOND_HASHES:
            return []
        return [f"{what} is {value!r}; use one of {', '.join(BOND_HASHES)} (xmit_hash_policy)"]
    rule = NODE_FIELDS.get(key)
    if rule is None:
        return []
    bounds: dict[str, Any] = {
        "integer": rule.integer,
        "maximum": rule.maximum,
        "limit": rule.limit,
        ("above" if rule.exclusive_minimum else "minimum"): rule.minimum,
    }
    if key == "nvlink_lanes":
        if not isinstance(value, list | tuple):
            return [f"{what} must be a list of lane counts, one per NVSwitch, not {value!r}"]
        return [p for v in value if (p := number_problem(v, what, **bounds))]
    problem = number_problem(value, what, **bounds)
    return [problem] if problem else []


def _spec(model: str, **kw: object) -> NodeTemplate:
    base: dict[str, object] = {
        "model": model,
        "gpus": 8,
        "pcie_switches": 4,
        "pcie_gbs": PCIE_GEN4_X16_EFFECTIVE_GBS,
        "nic_ports": 1,
        "storage_nics": 2,
        "storage_gbps": 25.0,
        "host_memory_gbs": 200.0,
    }
    base.update(kw)
    return NodeTemplate(NodeSpec(**base))  # type: ignore[arg-type]


NODE_TEMPLATES: dict[str, NodeTemplate] = {
    "a100": _spec(
        "A100",
        nvswitches=6,
        nvlink_lanes=(2, 2, 2, 2, 2, 2),
        nvlink_lane_gbs=NVLINK3_LANE_GBS,
        rails=4,
        nic_gbps=200.0,
    ),
    "a800": _spec(
        "A800",
        nvswitches=6,
        nvlink_lanes=(2, 2, 1, 1, 1, 1),
        nvlink_lane_gbs=NVLINK3_LANE_GBS,
        rails=4,
        nic_gbps=200.0,
    ),
    "dgx-a100": _spec(
        "DGX A100",
        nvswitches=6,
        nvlink_lanes=(2, 2, 2, 2, 2, 2),
        nvlink_lane_gbs=NVLINK3_LANE_GBS,
        rails=8,
        nic_gbps=200.0,
    ),
    "h100": _spec(
        "H100",
        nvswitches=4,
        nvlink_lanes=(5, 4, 4, 5),
        nvlink_lane_gbs=NVLINK4_LANE_GBS,
        pcie_gbs=PCIE_GEN5_X16_EFFECTIVE_GBS,
        rails=8,
        nic_gbps=400.0,
        storage_gbps=200.0,
        host_memory_gbs=400.0,
    ),
    "h800": _spec(
        "H800",
        nvswitches=4,
        nvlink_lanes=(2, 2, 2, 2),
        nvlink_lane_gbs=NVLINK4_LANE_GBS,
        pcie_gbs=PCIE_GEN5_X16_EFFECTIVE_GBS,
        rails=8,
        nic_gbps=200.0,
        nic_ports=2,
        nic_lag=True,
        storage_gbps=100.0,
        host_memory_gbs=400.0,
    ),
    "b200": _spec(
        "B200",
        nvswitches=2,
        nvlink_lanes=(9, 9),
        nvlink_lane_gbs=NVLINK5_LANE_GBS,
        pcie_gbs=PCIE_GEN5_X16_EFFECTIVE_GBS,
        rails=8,
        nic_gbps=400.0,
        storage_gbps=200.0,
        host_memory_gbs=400.0,
    ),
}


def node_template(name: str) -> NodeTemplate:
    """Look a template up by name (``a800``, ``a100``, ``h100``...)."""
    try:
        return NODE_TEMPLATES[name.lower()]
    except KeyError:
        import difflib

        near = difflib.get_close_matches(name.lower(), NODE_TEMPLATES, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = f"unknown node model {name!r}{hint} (known: {', '.join(NODE_TEMPLATES)})"
        raise FabricDesignError(msg) from None
