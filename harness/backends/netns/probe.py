"""Reachability with real packets: an in-process raw-ICMP prober.

One raw ICMP socket per source NIC port, opened inside the server's namespace,
bound to the port's address and interface (``SO_BINDTODEVICE``), so every echo
request really leaves on that rail NIC and every reply is matched to the exact
(source, destination) pair.  All requests of a round are sent back to back,
replies are collected with ``select``, and pairs still unanswered are retried
(the first packets toward a new neighbour can be dropped while ARP resolves).
Probes go only to addresses of the emulation's own namespaces.
"""

from __future__ import annotations

import contextlib
import errno
import random
import resource
import select
import socket
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass

from harness.backends.netns.emulation import Emulation
from harness.backends.netns.plan import Port
from harness.errors import BackendError

SO_BINDTODEVICE = 25
SOL_RAW = 255
ICMP_FILTER = 1
ECHO_REQUEST = 8
ECHO_REPLY = 0
TIME_EXCEEDED = 11

#: How long a round of echoes waits for its answers unless the plan says otherwise.
PROBE_WAIT_S = 0.5


@dataclass(frozen=True, slots=True)
class Probe:
    """One echo between two rail NIC ports: did it come back, and how fast (ms)."""

    src: int  # NIC element index
    dst: int
    ok: bool
    rtt_ms: float = 0.0


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def _echo(ident: int, seq: int) -> bytes:
    header = struct.pack("!BBHHH", ECHO_REQUEST, 0, 0, ident, seq)
    payload = b"harness-probe"
    csum = _checksum(header + payload)
    return struct.pack("!BBHHH", ECHO_REQUEST, 0, csum, ident, seq) + payload


def _raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(needed, soft), hard), hard))


def sample_pairs(emu: Emulation, count: int | None, seed: int = 0) -> list[tuple[int, int]]:
    """Same-rail NIC pairs: all of them (``count`` None) or a seeded sample."""
    plan = emu.built
    f = plan.fabric
    by_rail: dict[int, list[int]] = {}
    for nic in plan.nic_ports:
        by_rail.setdefault(int(f.rail[nic]), []).append(nic)
    pairs = [(a, b) for nics in by_rail.values() for a in nics for b in nics if a != b]
    if count is None or count >= len(pairs):
        return pairs
    return sorted(random.Random(seed).sample(pairs, count))


def _open(emu: Emulation, nic: int, accept: tuple[int, ...]) -> socket.socket:
    """A raw ICMP socket in the NIC's namespace, bound to its port, accepting ``accept`` types."""
    port: Port = emu.built.nic_ports[nic][0]
    ns = emu._ns
    assert ns is not None
    with ns.entered(emu.fds[port.ns]):
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.setblocking(False)
    s.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, port.ifname.encode())
    mask = 0xFFFFFFFF
    for t in accept:
        mask &= ~(1 << t)
    s.setsockopt(SOL_RAW, ICMP_FILTER, struct.pack("I", mask))
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((port.v4, 0))
    return s


@dataclass(frozen=True, slots=True)
class Trace:
    """The switches an echo crossed from ``src`` to ``dst`` (TTL by TTL), and if it arrived."""

    src: int
    dst: int
    hops: tuple[int, ...]  # switch element indices, in order
    complete: bool  # the echo arrived and every switch on the way answered


def trace(emu: Emulation, src: int, dst: int, *, max_hops: int = 8,
          timeout: float = 0.5) -> Trace:  # fmt: skip
    """A traceroute with echoes of TTL 1..max_hops sent at once (switches answer ``time exceeded``).

    ECMP may send two TTLs over different spines; the number of switches is the
    same on every equal-cost path, and the names reported are those that answered.
    """
    plan = emu.built
    f = plan.fabric
    owner: dict[str, int] = {}
    for wire in plan.wires:
        owner[wire.a.v4] = int(f.link_a[wire.link])
        owner[wire.b.v4] = int(f.link_b[wire.link])
    dst_addr = plan.nic_ports[dst][0].v4
    ident = (src * 31 + dst) & 0xFFFF
    s = _open(emu, src, (ECHO_REPLY, TIME_EXCEEDED))
    try:
        for ttl in range(1, max_hops + 1):
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
            with contextlib.suppress(OSError):
                s.sendto(_echo(ident, ttl), (dst_addr, 0))
        by_ttl: dict[int, int] = {}
        arrived: set[int] = set()
        poller = select.poll()
        poller.register(s.fileno(), select.POLLIN)
        deadline = time.perf_counter() + timeout
        while (left := deadline - time.perf_counter()) > 0:
            if not poller.poll(left * 1000):
                continue
            while True:
                try:
                    data, (addr, _) = s.recvfrom(2048)
                except BlockingIOError:
                    break
                ihl = (data[0] & 0x0F) * 4
                kind = data[ihl]
                if kind == ECHO_REPLY:
                    rid, seq = struct.unpack_from("!HH", data, ihl + 4)
                    if rid == ident:
                        arrived.add(seq)
                elif kind == TIME_EXCEEDED and len(data) >= ihl + 8 + 28:
                    inner = ihl + 8  # the original IP header, then 8 bytes of our echo
                    inner_ihl = (data[inner] & 0x0F) * 4
                    rid, seq = struct.unpack_from("!HH", data, inner + inner_ihl + 4)
                    if rid == ident and addr in owner:
                        by_ttl[seq] = owner[addr]
            if arrived and all(t in by_ttl for t in range(1, min(arrived))):
                break
    finally:
        s.close()
    if not arrived:
        hops = tuple(by_ttl[t] for t in sorted(by_ttl))
        return Trace(src, dst, hops, complete=False)
    first = min(arrived)
    hops = tuple(by_ttl[t] for t in range(1, first) if t in by_ttl)
    return Trace(src, dst, hops, complete=len(hops) == first - 1)


def probe(
    emu: Emulation,
    pairs: Sequence[tuple[int, int]],
    *,
    timeout: float = PROBE_WAIT_S,
    rounds: int = 3,
) -> list[Probe]:
    """Send one echo per pair (retrying the unanswered); the result keeps ``pairs`` order."""
    plan = emu.built
    ns = emu._ns
    if ns is None:
        msg = "the emulation is not up"
        raise BackendError(msg)
    sources = sorted({a for a, _ in pairs})
    _raise_fd_limit(len(sources) + len(plan.namespaces) * 2 + 256)
    socks: dict[int, socket.socket] = {}
    by_fd: dict[int, int] = {}
    try:
        for nic in sources:
            s = _open(emu, nic, (ECHO_REPLY,))
            socks[nic] = s
            by_fd[s.fileno()] = nic
        return _run(emu, pairs, socks, by_fd, timeout=timeout, rounds=rounds)
    finally:
        for s in socks.values():
            s.close()


def _run(
    emu: Emulation,
    pairs: Sequence[tuple[int, int]],
    socks: dict[int, socket.socket],
    by_fd: dict[int, int],
    *,
    timeout: float,
    rounds: int,
) -> list[Probe]:
    plan = emu.built
    ident = {nic: (i * 7919 + 1) & 0xFFFF for i, nic in enumerate(socks)}
    per_src: dict[int, list[int]] = {}
    key: dict[tuple[int, int], int] = {}  # (src nic, seq) -> pair position
    for i, (a, _b) in enumerate(pairs):
        lst = per_src.setdefault(a, [])
        key[a, len(lst)] = i
        lst.append(i)
        if len(lst) > 0xFFFF:
            msg = "more than 65,535 probes from one NIC in one plan"
            raise BackendError(msg)
    rtt: dict[int, float] = {}
    sent_at: dict[int, float] = {}
    pending = set(range(len(pairs)))
    for _ in range(rounds):
        if not pending:
            break
        for a, positions in per_src.items():
            s = socks[a]
            for seq, i in enumerate(positions):
                if i not in pending:
                    continue
                dst = plan.nic_ports[pairs[i][1]][0].v4
                try:
                    s.sendto(_echo(ident[a], seq), (dst, 0))
                    sent_at[i] = time.perf_counter()
                except OSError as err:
                    if err.errno not in (
                        errno.EAGAIN,
                        errno.ENOBUFS,
                        errno.EHOSTUNREACH,
                        errno.ENETUNREACH,
                        errno.EINVAL,
                    ):
                        raise
        deadline = time.perf_counter() + timeout
        poller = select.poll()
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        while pending and (left := deadline - time.perf_counter()) > 0:
            for fd, _ev in poller.poll(left * 1000):
                a = by_fd[fd]
                s = socks[a]
                while True:
                    try:
                        data = s.recv(2048)
                    except BlockingIOError:
                        break
                    ihl = (data[0] & 0x0F) * 4
                    if len(data) < ihl + 8 or data[ihl] != ECHO_REPLY:
                        continue
                    rid, seq = struct.unpack_from("!HH", data, ihl + 4)
                    pos = key.get((a, seq)) if rid == ident[a] else None
                    if pos is not None and pos in pending:
                        pending.discard(pos)
                        rtt[pos] = (time.perf_counter() - sent_at[pos]) * 1000
    return [Probe(a, b, i in rtt, round(rtt.get(i, 0.0), 3)) for i, (a, b) in enumerate(pairs)]
