"""ibsim's limits, and the check that refuses a fabric past them (backends stage).

From the ibsim 0.10 source (Debian's ``ibsim-utils``; github.com/linux-rdma/ibsim,
tag ``ibsim-0.10``, GPL-2.0/BSD):

* ``ibsim/sim.h``: ``MAXNETNODES 2048``, ``MAXNETSWITCHS 256``,
  ``MAXNETPORTS (MAXNETSWITCHS*36+MAXNETNODES*2)`` = 13,312 ports in all (a
  switch takes its port count + 1 for port 0, an HCA its port count),
  ``MAXLINEARCAP (30*1024)`` = 30,720 LIDs (a switch's LFT has that many
  entries; a LID at or past it is never forwarded);
* ``include/ibsim.h``: ``IBSIM_MAX_CLIENTS 10`` (OpenSM and every
  ``ibsim-run`` tool attached at once, so the harness never runs more than
  nine tools beside OpenSM);
* ``NODEIDLEN 65``: node ids of at most 64 characters (the exporter allows 60);
* NodeInfo ``NumPorts`` is an 8-bit field and port 255 is reserved in the IB
  spec: at most 254 ports per switch.

One limit is the backend's own, not ibsim's: it reads every HCA through its
port 1 (one LID, one leaf, the tools attached there), so a fabric whose rail
NICs are cabled on two ports (hpn-dual-tor's dual-ToR NICs, one port per plane)
is refused naming it rather than read half.

The node, switch and port counts are only defaults (``ibsim -N/-S/-P`` raise
them at start), so the harness sizes them to the fabric; the LID space
(``MAXLINEARCAP``, a compile-time constant) and the 254 ports per switch cannot
be raised, and a fabric past them is refused naming the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import FabricDesignError
from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind


@dataclass(frozen=True, slots=True)
class IbsimLimits:
    """ibsim's compile-time limits (defaults of ``-N -S -P``, and the fixed ones)."""

    max_nodes: int = 2048
    max_switches: int = 256
    max_ports: int = 256 * 36 + 2048 * 2
    linear_cap: int = 30 * 1024
    max_clients: int = 10
    max_ports_per_switch: int = 254


IBSIM_LIMITS = IbsimLimits()


@dataclass(frozen=True, slots=True)
class Sizing:
    """What a fabric needs from ibsim: passed as ``-N -S -P`` when it starts."""

    nodes: int
    switches: int
    ports: int
    lids: int

    def args(self, limits: IbsimLimits = IBSIM_LIMITS) -> list[str]:
        """``ibsim`` options that make room for this fabric (never below the defaults)."""
        return [
            "-N",
            str(max(self.nodes, limits.max_nodes)),
            "-S",
            str(max(self.switches, limits.max_switches)),
            "-P",
            str(max(self.ports, limits.max_ports)),
        ]


def check_fits(fabric: Fabric, limits: IbsimLimits = IBSIM_LIMITS) -> Sizing:
    """The sizing ``fabric`` needs in ibsim; raises FabricDesignError past a fixed limit.

    >>> from harness.fabric import preset
    >>> check_fits(preset("seed-a800"))
    Sizing(nodes=860, switches=60, ports=3260, lids=861)
    """
    kinds = fabric.kind
    switches = [i for i in range(fabric.n_elements) if Kind(int(kinds[i])) in COMPUTE_SWITCH_KINDS]
    nics = fabric.nics.tolist()
    widest = max((int(fabric.ports[i]) for i in switches), default=0)
    if widest > limits.max_ports_per_switch:
        name = next(fabric.ids[i] for i in switches if int(fabric.ports[i]) == widest)
        msg = (
            f"fabric {fabric.name!r}: switch {name} has {widest} ports, past ibsim's limit of "
            f"{limits.max_ports_per_switch} ports per switch (NodeInfo NumPorts is 8 bits); "
            f"use switches of at most {limits.max_ports_per_switch} ports or another backend"
        )
        raise FabricDesignError(msg)
    ports = sum(int(fabric.ports[i]) + 1 for i in switches) + sum(
        max(int(fabric.ports[i]), 1) for i in nics
    )
    lids = len(switches) + len(nics) + 1  # LID 0 is reserved
    if lids > limits.linear_cap:
        msg = (
            f"fabric {fabric.name!r} needs {lids - 1} LIDs ({len(switches)} switches, "
            f"{len(nics)} HCAs), past ibsim's compile-time MAXLINEARCAP of {limits.linear_cap} "
            "LFT entries; simulate a smaller fabric (fewer SUs) or use the model backend"
        )
        raise FabricDesignError(msg)
    cabled = set(fabric.links_of_kind(*COMPUTE_CABLE_KINDS).tolist())
    for nic in nics:
        n = sum(1 for li in fabric.links_at(nic).tolist() if li in cabled)
        if n > 1:
            msg = (
                f"fabric {fabric.name!r}: NIC {fabric.ids[nic]} is cabled on {n} ports (dual-ToR); "
                "the ibsim backend reads every HCA through port 1 (one LID, one leaf), so it does "
                "not run multi-ported HCAs; use the model or netns backend"
            )
            raise FabricDesignError(msg)
    return Sizing(len(switches) + len(nics), len(switches), ports, lids)
