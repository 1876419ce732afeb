"""The ibsim net file for a fabric, and how ibsim's names map back to elements.

The net file is the existing exporter's (:func:`harness.exporters.to_ibsim_net`):
a switch's ibsim node id and node description are its element id, an HCA's
node id is the rail NIC's element id and its description ``"<server>
mlx5_<rail>"``.  ``dump_lfts`` and ``ibnetdiscover`` report node descriptions,
so :class:`IbsimNames` maps a description back to the element index.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.exporters import to_ibsim_net
from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import COMPUTE_SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind


def hca_description(fabric: Fabric, nic: int) -> str:
    """The node description the exporter gives a rail NIC's HCA."""
    server = int(fabric.parent[nic])
    host = fabric.ids[server] if server >= 0 else fabric.ids[nic]
    return f"{host} mlx5_{int(fabric.rail[nic])}"


@dataclass(frozen=True, slots=True)
class IbsimNames:
    """Node descriptions (as the IB tools print them) to element indices, and back."""

    by_desc: dict[str, int]
    desc_of: dict[int, str]
    switches: frozenset[int]
    hcas: frozenset[int]

    @classmethod
    def of(cls, fabric: Fabric) -> IbsimNames:
        """The descriptions of a fabric's compute switches and rail HCAs."""
        switches = [
            i for i in range(fabric.n_elements) if Kind(int(fabric.kind[i])) in COMPUTE_SWITCH_KINDS
        ]
        nics = [int(i) for i in fabric.nics.tolist()]
        desc_of = {i: fabric.ids[i] for i in switches}
        desc_of |= {i: hca_description(fabric, i) for i in nics}
        return cls(
            {d: i for i, d in desc_of.items()}, desc_of, frozenset(switches), frozenset(nics)
        )

    def element(self, desc: str) -> int:
        """The element index of a node description (KeyError names a node the fabric lacks)."""
        try:
            return self.by_desc[desc]
        except KeyError:
            msg = f"ibsim reported a node {desc!r} that the fabric does not have"
            raise KeyError(msg) from None


@dataclass(frozen=True, slots=True)
class CablePort:
    """One end of a compute cable as ibsim knows it: node id and port number."""

    node: str
    port: int


def cable_ends(fabric: Fabric, link: int) -> tuple[CablePort, CablePort]:
    """The two ibsim (node id, port) ends of a compute cable."""
    kinds = {int(k) for k in COMPUTE_CABLE_KINDS}
    if int(fabric.link_kind[link]) not in kinds:
        msg = f"link {fabric.link_id(link)} is not a compute cable; ibsim has only those"
        raise ValueError(msg)
    a, b = int(fabric.link_a[link]), int(fabric.link_b[link])
    return (
        CablePort(fabric.ids[a], int(fabric.link_a_port[link])),
        CablePort(fabric.ids[b], int(fabric.link_b_port[link])),
    )


def net_file(fabric: Fabric) -> str:
    """The ibsim net file text for ``fabric``."""
    return to_ibsim_net(fabric) + "\n"
