"""The storage bond's transmit hash, as the Linux bonding driver computes it (pure).

An 802.3ad bond sends each packet on member ``hash % count`` of its usable
members (``bond_xmit_3ad_xor_slave_get``: ``slaves->arr[hash % count]``, the
live members in the order they were enslaved), and the hash depends only on
the headers, so one TCP stream stays on one member.  ``bond_xmit_hash`` in
drivers/net/bonding/bond_main.c (Linux 5.18 and later, and the stable kernels
that took the fix "bonding: fix ... layer2+3" by suresh kumar, 2022):

* ``layer2`` (``xmit_hash_policy`` default, Documentation/networking/bonding.rst):
  ``h_dest[5] ^ h_source[5] ^ be16_to_cpu(h_proto)`` (``bond_eth_hash``): every
  stream between two MACs uses one member.
* ``layer2+3``: that value, then ``bond_ip_hash``.
* ``layer3+4``: the two ports as one 32-bit word (``memcpy`` of
  ``flow.ports.ports``: big-endian source port then destination port, read as
  a little-endian ``u32`` on x86), then ``bond_ip_hash``, then ``>> 1`` (the
  kernel drops the lowest bit "to deal with the common even ports pattern").

``bond_ip_hash``: ``hash ^= dst ^ src`` (the IPv4 addresses as the kernel holds
them, big-endian bytes read as a little-endian ``u32``), then the fold
``hash ^= hash >> 16; hash ^= hash >> 8``.

The addresses are those the netns emulation gives a server's bond (docs/netns.md):
the i-th server with storage NICs (by element order) has ``10.192.0.0 + 2i + 1``
and its storage side ``10.192.0.0 + 2i``; the model's MACs are locally
administered ``02:00`` + the four address bytes (a real NIC's MAC decides which
member a layer-2 bond uses, not whether the streams share one).  Stream ``k``
of a server runs from port ``50000 + k`` (``iperf3 --cport``) to port
``5201 + k`` (one ``iperf3 -s -p`` per stream): real clients pick ephemeral
source ports, which place layer3+4 streams at random (see docs/scenario-format.md).

>>> placement("layer3+4", 0, 8, 2), placement("layer3+4", 0, 8, 3)
([1, 0, 1, 0, 1, 0, 1, 0], [2, 2, 1, 2, 2, 2, 1, 0])
>>> {member("layer2", s, 2) for s in server_streams(0, 8)}
{1}
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final

from harness.fabric.model import BOND_HASHES

ETH_P_IP: Final = 0x0800
BOND_V4_BASE: Final = int(ipaddress.IPv4Address("10.192.0.0"))
CPORT_BASE: Final = 50000
"""Stream k's source port (``iperf3 --cport 50000+k``)."""
SERVER_PORT_BASE: Final = 5201
"""Stream k's destination port (iperf3's default port + k)."""
_U32: Final = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Stream:
    """One TCP stream's headers as the bond sees them (IPv4 addresses as integers)."""

    src_mac: bytes
    dst_mac: bytes
    src_ip: int
    dst_ip: int
    sport: int
    dport: int


def _le32(be: bytes) -> int:
    """A big-endian field of 4 bytes read as the little-endian ``u32`` x86 holds."""
    return int.from_bytes(be, "little")


def eth_hash(s: Stream) -> int:
    """``bond_eth_hash``: last bytes of the MACs XOR the EtherType."""
    return s.dst_mac[5] ^ s.src_mac[5] ^ ETH_P_IP


def ip_hash(value: int, s: Stream, policy: str) -> int:
    """``bond_ip_hash``: XOR the addresses, fold, and drop bit 0 for layer3+4."""
    h = (value ^ _le32(s.dst_ip.to_bytes(4, "big")) ^ _le32(s.src_ip.to_bytes(4, "big"))) & _U32
    h ^= h >> 16
    h ^= h >> 8
    return h >> 1 if policy == "layer3+4" else h


def xmit_hash(policy: str, s: Stream) -> int:
    """``bond_xmit_hash`` of one stream under ``policy`` (one of :data:`BOND_HASHES`)."""
    if policy == "layer2":
        return eth_hash(s)
    if policy == "layer2+3":
        return ip_hash(eth_hash(s), s, policy)
    if policy == "layer3+4":
        ports = s.sport.to_bytes(2, "big") + s.dport.to_bytes(2, "big")
        return ip_hash(_le32(ports), s, policy)
    msg = f"unknown bond hash {policy!r}; known: {', '.join(BOND_HASHES)}"
    raise ValueError(msg)


def member(policy: str, s: Stream, count: int) -> int:
    """The index among ``count`` usable members (enslave order) the stream is sent on."""
    return xmit_hash(policy, s) % count


def mac_of(v4: int) -> bytes:
    """The model's MAC for a bond address: locally administered ``02:00`` + its 4 bytes."""
    return b"\x02\x00" + v4.to_bytes(4, "big")


def bond_v4(rank: int) -> tuple[int, int]:
    """The ``rank``-th bonded server's bond address and its storage side's (the netns plan
    gives its bonds these: one statement, so the model hashes what the emulation sends)."""
    return BOND_V4_BASE + 2 * rank + 1, BOND_V4_BASE + 2 * rank


def server_streams(rank: int, flows: int) -> list[Stream]:
    """The ``flows`` streams the ``rank``-th bonded server writes to its storage side."""
    src, dst = bond_v4(rank)
    return [
        Stream(mac_of(src), mac_of(dst), src, dst, CPORT_BASE + k, SERVER_PORT_BASE + k)
        for k in range(flows)
    ]


def placement(policy: str, rank: int, flows: int, count: int) -> list[int]:
    """The member index of each of a server's ``flows`` streams over ``count`` usable members."""
    if count <= 0:
        return []
    return [member(policy, s, count) for s in server_streams(rank, flows)]
