"""One-way packet loss on an emulated link, counted with real packets.

For a (link, sending end) pair, :func:`one_way_loss` sends :data:`COUNT`
numbered UDP datagrams from the sending end's link address to the other end's,
and counts which arrive at a UDP socket bound there.  Only the two namespaces
of that link take part, and only their own addresses.

The datagrams are written with an ``AF_PACKET`` socket bound to the sending
interface with ``PACKET_QDISC_BYPASS``: they go straight onto the wire,
past the link's tbf shaper.  So what is counted is what the *link* loses (a
``flaky`` fault's nftables drop on the far end's ingress, a down or dead
link), not congestion: a real job filling the same link would otherwise make
the shaper's queue drop probes too, and the measured loss would depend on the
traffic.  Datagrams are sent in bursts of :data:`BURST`, the receiver drained
between bursts, so neither the receiving backlog nor the socket buffer
overflows.  The result is counted over ``sent`` packets; the runner judges it
against the prediction with a binomial tolerance
(:func:`harness.observations.compare.agree_fraction`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import struct
import time

from harness.backends.netns.emulation import Emulation
from harness.errors import BackendError

COUNT = 1000  # datagrams per direction: 4 standard deviations of 5 % loss are 2.8 %
BURST = 50
DRAIN_S = 0.3  # after the last burst, for stragglers
SOL_PACKET = 263
PACKET_QDISC_BYPASS = 20
ETH_P_IP = 0x0800
_SEND_ERRORS = (errno.ENETDOWN, errno.ENXIO, errno.ENOBUFS, errno.EAGAIN, errno.ENETUNREACH)


def _checksum(data: bytes) -> int:
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def frame(macs: tuple[bytes, bytes], src: str, dst: str, dport: int, payload: bytes) -> bytes:
    """An Ethernet frame holding one IPv4 UDP datagram (UDP checksum 0: none, as IPv4 allows).

    ``macs``: (source, destination) hardware addresses.

    >>> f = frame((b"\\x02" * 6, b"\\x04" * 6), "10.0.0.1", "10.0.0.2", 9, b"abcd")
    >>> len(f), f[12:14].hex(), f[23], _checksum(f[14:34])
    (46, '0800', 17, 0)
    """
    udp = struct.pack("!HHHH", 9, dport, 8 + len(payload), 0) + payload
    header = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, socket.IPPROTO_UDP, 0,
        socket.inet_aton(src), socket.inet_aton(dst),
    )  # fmt: skip
    header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
    return macs[1] + macs[0] + struct.pack("!H", ETH_P_IP) + header + udp


def _mac(emu: Emulation, ns: int, ifindex: int) -> bytes:
    for msg in emu.batches[ns].dump("link"):
        if int(msg["index"]) == ifindex:
            addr = msg.get_attr("IFLA_ADDRESS")
            if addr:
                return bytes.fromhex(str(addr).replace(":", ""))
    name = emu.built.namespaces[ns].name
    msg = f"no hardware address for interface {ifindex} in {name}"
    raise BackendError(msg)


def one_way_loss(emu: Emulation, wire: int, sender: int, count: int = COUNT) -> tuple[float, int]:
    """(fraction lost, packets sent) of ``count`` datagrams end ``sender`` sends over ``wire``."""
    ns = emu._ns
    if ns is None:
        msg = "the emulation is not up"
        raise BackendError(msg)
    tx, rx = emu.port(wire, sender), emu.port(wire, 1 - sender)
    if not (tx.v4 and rx.v4):
        msg = f"{emu.fabric.link_ids[emu.built.wires[wire].link]} has no IPv4 link addresses"
        raise BackendError(msg)
    macs = (_mac(emu, tx.ns, tx.ifindex), _mac(emu, rx.ns, rx.ifindex))
    with ns.entered(emu.fds[rx.ns]):
        rsock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with ns.entered(emu.fds[tx.ns]):
        ssock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # 0: sends, never receives
    try:
        with contextlib.suppress(OSError):
            rsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        rsock.bind((rx.v4, 0))
        rsock.setblocking(False)
        port = rsock.getsockname()[1]
        ssock.bind((tx.ifname, 0))
        ssock.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
        nonce = os.urandom(4)
        got: set[int] = set()
        for start in range(0, count, BURST):
            for seq in range(start, min(start + BURST, count)):
                data = frame(macs, tx.v4, rx.v4, port, nonce + struct.pack("!I", seq))
                try:
                    ssock.send(data)
                except OSError as err:  # a down end sends nothing: those packets are lost
                    if err.errno not in _SEND_ERRORS:
                        raise
            _drain(rsock, nonce, got, 0.002)
        _drain(rsock, nonce, got, DRAIN_S, until=count)
    finally:
        rsock.close()
        ssock.close()
    return (count - len(got)) / count, count


def _drain(s: socket.socket, nonce: bytes, got: set[int], wait: float, until: int = -1) -> None:
    """Read every datagram that arrives within ``wait`` seconds (stop once ``until`` are in)."""
    deadline = time.perf_counter() + wait
    while (left := deadline - time.perf_counter()) > 0 and len(got) != until:
        ready, _, _ = select.select([s], [], [], left)
        if not ready:
            continue
        while True:
            try:
                data = s.recv(64)
            except BlockingIOError:
                break
            if len(data) == 8 and data[:4] == nonce:
                got.add(struct.unpack("!I", data[4:])[0])
