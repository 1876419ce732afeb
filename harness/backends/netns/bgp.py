"""``routing: bgp``: FRR on every switch, as RoCE fabrics run by SONiC are routed.

Every leaf, spine and core namespace runs ``zebra`` and ``bgpd`` (and ``bfdd``
when BFD is on), started by :mod:`~harness.backends.netns.frr`.  The design
is the one of RFC 7938 with FRR's ``frr defaults datacenter``:

* **BGP unnumbered**: one eBGP session per fabric cable, on the interface
  (``neighbor pN interface``), over IPv6 link-local addresses; IPv4 routes are
  carried with IPv6 next hops (RFC 8950).  The switch namespaces get IPv6
  link-local addresses for that; servers and storage keep none.
* **AS numbers** (:func:`as_plan`): the spines of a pod (or plane, or the
  whole fabric when it has neither) share one AS, the cores another, each
  leaf has its own (4-byte private, RFC 6996), so a path can never go down
  and up again: a valley would cross its spine AS twice and be dropped.
* **ECMP**: ``maximum-paths 64`` and ``bestpath as-path multipath-relax``:
  every equal-length path is installed as one kernel multipath route.
* **What is advertised**: each leaf originates its access block
  (``network 10.r.j.0/24`` and its IPv6 twin), nothing else; servers route
  each rail through their NIC with static routes, as under ``routing: sm``.
* **BFD** (``routing: {bfd: on}``, :func:`bfd_timers`): ``bfdd`` on every
  switch, one single-hop session per BGP session (a profile in ``bfdd``,
  ``neighbor pN bfd profile fabric`` in ``bgpd``), timers by fabric size; a
  hung peer is then found in three intervals instead of the 9 s hold timer.
  The sessions run over IPv6 link-local addresses (``interface v6only``):
  with an IPv4 /31 on the interface bgpd 8.4 peers over IPv4 but registers its
  BFD session as IPv6 with no address (``_bfd_sess_valid: invalid address:
  ::``), so ``bfdd`` never gets it.  Off by default, as in FRR and SONiC.

Convergence is measured, never assumed (:meth:`Bgp.converge`): the kernel FIB
of every live switch (routes of protocol ``bgp``, their usable next hops) is
compared, until equal, with the tables :func:`~harness.backends.netns.routing.compute`
derives from what is alive -- up/down shortest paths with every equal-cost
next hop, which is what eBGP with these AS numbers converges to.
"""

from __future__ import annotations

import ipaddress
import json
import signal
import socket
import time
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from harness.backends.netns import frr
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.plan import Plan
from harness.backends.netns.plan import v6_of
from harness.backends.netns.routing import Alive
from harness.backends.netns.routing import Tables
from harness.backends.netns.routing import compute
from harness.errors import BackendError
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.routing import BFD_MULTIPLIER
from harness.fabric.routing import BFD_ON_MS
from harness.fabric.routing import BFD_WORDS
from harness.fabric.routing import DURATIONS
from harness.fabric.routing import parse_bfd

RTPROT_BGP = 186
RTNH_F_DEAD = 1
RTNH_F_LINKDOWN = 16
SPINE_AS = 64_600  # + the pod / plane number
CORE_AS = 64_512
LEAF_AS = 4_200_000_000  # + the leaf's number (RFC 6996 4-byte private)
POLL_S = 0.05
DRAIN_SEQ = 5  # the route-map entry a drain adds, before the plain permit (10)
DRAIN_PREPEND = 4  # times a drained switch prepends its AS
CONNECT_RETRY_S = 2  # bgpd's connect-retry timer (datacenter default: 10 s)
Fib = dict[str, frozenset[int]]  # "CIDR" (IPv4 or IPv6) -> the interfaces of its usable next hops


# -- the design, pure (tested without root) ---------------------------------------------------
@dataclass(frozen=True, slots=True)
class BfdTimers:
    """BFD transmit/receive interval (ms) and detect multiplier."""

    interval_ms: int
    multiplier: int = 3

    def describe(self) -> str:
        """The timers in words (``"300 ms x 3"``)."""
        return f"{self.interval_ms} ms x {self.multiplier}"


#: ``bfd: on``: the timers by fabric size, (most BGP sessions, timers), the last for any
#: size.  Measured on 2 shared cores (FRR 8.4, docs/netns.md): at 4 spines x 8 leaves (64
#: sessions) 100 ms x 3 flapped 167 times a minute under the load of other runs (load
#: average 14) and 300 ms x 3 not once; at 1,600 sessions (seed-a800) 100 ms flapped and
#: overloaded both cores and 300 ms slowed convergence and failover, so larger fabrics
#: get 1 s x 3 (still a third of the 9 s hold timer).
#: The table is the model's (:data:`harness.fabric.routing.BFD_ON_MS`): it predicts a hang's
#: detection from the same timers.
BFD_BY_SIZE: tuple[tuple[int, BfdTimers], ...] = tuple(
    (most, BfdTimers(ms, BFD_MULTIPLIER)) for most, ms in BFD_ON_MS
)


def bfd_timers(sessions: int, setting: str = "off") -> BfdTimers | None:
    """The BFD timers for a fabric of ``sessions`` BGP sessions (``None``: BFD off).

    ``setting`` is a ``routing: {bfd: ...}`` value: ``off``, ``on`` (by
    :data:`BFD_BY_SIZE`) or an interval (``"300ms"``).

    >>> bfd_timers(64), bfd_timers(64, "on").describe(), bfd_timers(600, "on").describe()
    (None, '300 ms x 3', '1000 ms x 3')
    >>> bfd_timers(1600, "on").describe(), bfd_timers(1600, "50ms").describe()
    ('1000 ms x 3', '50 ms x 3')
    """
    setting = parse_bfd(setting)
    if setting == BFD_WORDS[0]:
        return None
    if setting == BFD_WORDS[1]:
        return next(t for most, t in BFD_BY_SIZE if sessions <= most)
    return BfdTimers(int(setting.removesuffix("ms")))


def switch_namespaces(plan: Plan) -> list[int]:
    """The namespaces that run BGP: every leaf, spine and core."""
    return [i for i, n in enumerate(plan.namespaces) if n.role == "switch"]


def as_plan(plan: Plan) -> dict[int, int]:
    """Namespace index -> AS number (RFC 7938: spines of a pod share one, leaves one each).

    >>> from harness.fabric.generators import two_tier
    >>> from harness.backends.netns.plan import make_plan
    >>> p = make_plan(two_tier(sus=1, nodes_per_su=2, spines=2, leaf_radix=8, storage=False), "h1")
    >>> sorted({p.namespaces[i].name: a for i, a in as_plan(p).items()}.items())[:3]
    [('h1-s01l0', 4200000001), ('h1-s01l1', 4200000002), ('h1-s01l2', 4200000003)]
    >>> {a for i, a in as_plan(p).items() if p.namespaces[i].tier == 1}
    {64600}
    """
    f = plan.fabric
    out: dict[int, int] = {}
    leaves = 0
    for i in switch_namespaces(plan):
        el = plan.namespaces[i].elements[0]
        kind = Kind(int(f.kind[el]))
        if kind is Kind.LEAF:
            leaves += 1
            out[i] = LEAF_AS + leaves
        elif kind is Kind.SPINE:
            out[i] = SPINE_AS + max(int(f.pod[el]), int(f.plane[el]), 0)
        else:
            out[i] = CORE_AS
    return out


def router_id(ns: int) -> str:
    """A unique router id per namespace (never an address on the wire)."""
    return str(ipaddress.IPv4Address(int(ipaddress.IPv4Address("10.255.0.0")) + ns + 1))


def fabric_ports(plan: Plan, ns: int) -> list[str]:
    """The interfaces of a switch that face other switches (one BGP session each)."""
    out = []
    for wire in plan.wires:
        if wire.kind not in (LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE):
            continue
        for port in (wire.a, wire.b):
            if port.ns == ns:
                out.append(port.ifname)
    return out


def v6_block(cidr: str) -> str:
    """The IPv6 twin of an IPv4 block of the plan."""
    net = ipaddress.IPv4Network(cidr)
    return f"{v6_of(str(net.network_address))}/{96 + net.prefixlen}"


def leaf_networks(plan: Plan, ns: int) -> list[str]:
    """The access block a leaf originates (empty for spines and cores)."""
    el = plan.namespaces[ns].elements[0]
    block = plan.leaf_block.get(el)
    return [block] if block else []


#: FRR's ``datacenter`` hold timer (keepalive a third of it): another ``routing: {hold: ...}``
#: is configured with ``timers``.
DATACENTER_HOLD_S = DURATIONS["hold"]


def bgpd_config(
    plan: Plan, ns: int, asn: int, bfd: BfdTimers | None, hold_s: float | None = None
) -> str:
    """The ``bgpd`` configuration of one switch (``hold_s``: the hold timer, when it is not
    the datacenter default's 9 s; keepalive a third of it)."""
    name = plan.namespaces[ns].name
    nets = leaf_networks(plan, ns)
    lines = [
        "frr defaults datacenter",
        f"hostname {name}",
        "log timestamp precision 3",
        "bgp route-map delay-timer 0",
        "!",
        "route-map FABRIC-OUT permit 10",  # a drain adds an AS-path prepend here
        "!",
        f"router bgp {asn}",
        f" bgp router-id {router_id(ns)}",
        " no bgp network import-check",
        " bgp bestpath as-path multipath-relax",
        " neighbor FABRIC peer-group",
        " neighbor FABRIC remote-as external",
        " neighbor FABRIC advertisement-interval 0",
        # retry a lost session in 2 s, not 10: a peer that rebooted (fresh daemons, links
        # up all along) would otherwise wait 10 s (its zebra's next router advertisement)
        f" neighbor FABRIC timers connect {CONNECT_RETRY_S}",
    ]
    if hold_s is not None and hold_s != DATACENTER_HOLD_S:
        lines.append(f" neighbor FABRIC timers {max(1, int(hold_s) // 3)} {int(hold_s)}")
    for port in fabric_ports(plan, ns):
        # v6only: over the link-local addresses (an IPv4 session gets no BFD from bgpd 8.4)
        lines.append(f" neighbor {port} interface v6only peer-group FABRIC")
        if bfd is not None:
            lines.append(f" neighbor {port} bfd profile fabric")
    for family, blocks in (("ipv4", nets), ("ipv6", [v6_block(b) for b in nets])):
        lines.append(f" address-family {family} unicast")
        if family == "ipv6":
            lines.append("  neighbor FABRIC activate")
        lines += [f"  network {b}" for b in blocks]
        lines += ["  neighbor FABRIC route-map FABRIC-OUT out", "  maximum-paths 64"]
        lines.append(" exit-address-family")
    lines.append("!")
    return "\n".join(lines) + "\n"


def bfdd_config(bfd: BfdTimers) -> str:
    """The bfdd configuration: one ``fabric`` profile with these timers."""
    return (
        "bfd\n profile fabric\n"
        f"  detect-multiplier {bfd.multiplier}\n"
        f"  receive-interval {bfd.interval_ms}\n"
        f"  transmit-interval {bfd.interval_ms}\n"
        " exit\nexit\n"
    )


def bfd_sessions(plan: Plan, alive: Alive) -> dict[int, frozenset[str]]:
    """The BFD sessions that must be up: per live switch, its ports whose cable is alive
    and whose far switch is alive (the interface names ``bfdd`` reports them on)."""
    out: dict[int, set[str]] = {}
    for w, wire in enumerate(plan.wires):
        if wire.kind not in (LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE) or w not in alive.wires:
            continue
        a, b = plan.namespaces[wire.a.ns], plan.namespaces[wire.b.ns]
        if a.elements[0] in alive.elements and b.elements[0] in alive.elements:
            out.setdefault(wire.a.ns, set()).add(wire.a.ifname)
            out.setdefault(wire.b.ns, set()).add(wire.b.ifname)
    return {ns: frozenset(ports) for ns, ports in out.items()}


def bfd_up(peers: Any) -> frozenset[str]:
    """The interfaces of the sessions ``show bfd peers json`` reports up.

    >>> sorted(bfd_up([{"interface": "p1", "status": "up"}, {"interface": "p2", "status": "down"}]))
    ['p1']
    """
    return frozenset(
        str(p["interface"]) for p in peers if p.get("status") == "up" and p.get("interface")
    )


def expected_fib(plan: Plan, tables: Tables, ns: int) -> Fib:
    """What the kernel of switch ``ns`` must hold once BGP has converged (both families)."""
    out: Fib = {}
    for cidr, hops in tables.get(ns, {}).items():
        if "@" in cidr or not hops:
            continue
        oifs = frozenset(
            (plan.wires[w].a if end == 0 else plan.wires[w].b).ifindex for w, end in hops
        )
        out[cidr] = oifs
        out[v6_block(cidr)] = oifs
    return out


def fib_of(routes: Iterable[Any]) -> Fib:
    """The BGP routes of a netlink route dump: destination -> interfaces of usable next hops.

    A next hop the kernel marks dead or ``linkdown`` carries no traffic (the
    namespaces set ``ignore_routes_with_linkdown``), so it does not count; a
    route left with none is absent.
    """
    out: Fib = {}
    for m in routes:  # pyroute2 rtmsg
        if m["proto"] != RTPROT_BGP or m["table"] not in (254, 0):
            continue
        dst = m.get_attr("RTA_DST")
        if dst is None:
            continue
        cidr = f"{ipaddress.ip_address(dst)}/{m['dst_len']}"
        oifs: set[int] = set()
        multipath = m.get_attr("RTA_MULTIPATH")
        if multipath:
            for nh in multipath:
                if not nh["flags"] & (RTNH_F_DEAD | RTNH_F_LINKDOWN):
                    oifs.add(int(nh["oif"]))
        else:
            oif = m.get_attr("RTA_OIF")
            if oif is not None and not m["flags"] & (RTNH_F_DEAD | RTNH_F_LINKDOWN):
                oifs.add(int(oif))
        if oifs:
            out[cidr] = frozenset(oifs)
    return out


# -- the running control plane ---------------------------------------------------------------
@dataclass(slots=True)
class Bgp:
    """FRR on every switch of an emulation: start, converge, drain, hang, restart, stop."""

    emu: Emulation
    bfd_setting: str = "off"
    hold_s: float | None = None  # None: FRR's datacenter hold timer (9 s)
    asn: dict[int, int] = field(default_factory=dict)
    daemons: dict[int, list[frr.Daemon]] = field(default_factory=dict)  # namespace -> daemons
    dirs: dict[int, frr.SwitchDir] = field(default_factory=dict)
    bfd: BfdTimers | None = None
    drained: set[int] = field(default_factory=set)  # namespaces with the drain prepend
    started_at: float = 0.0

    @property
    def sessions(self) -> int:
        """BGP sessions of the fabric (one per end of every switch-to-switch cable)."""
        plan = self.emu.built
        return 2 * sum(
            1 for w in plan.wires if w.kind in (LinkKind.LEAF_SPINE, LinkKind.SPINE_CORE)
        )

    def describe(self) -> str:
        """The BGP control plane in words: daemons, sessions, BFD."""
        bfd = f"BFD {self.bfd.describe()}" if self.bfd else "BFD off"
        return (
            f"FRR zebra+bgpd on {len(self.asn)} switches, {self.sessions} unnumbered eBGP "
            f"sessions, {bfd}"
        )

    def _stages(self) -> list[str]:
        """The daemons in start order: zebra first, bfdd before bgpd registers its peers."""
        return ["zebra", *(["bfdd"] if self.bfd is not None else []), "bgpd"]

    def _start_daemons(self, namespaces: Sequence[int]) -> None:
        """Start the daemons of these switches, stage by stage, each stage on all at once."""
        for name in self._stages():
            started = [(ns, self._spawn(ns, name)) for ns in namespaces]
            for ns, daemon in started:
                frr.wait_started(self.dirs[ns], [daemon], frr.START_TIMEOUT_S)

    def start(self) -> None:
        """Write every switch's configuration and start its daemons (zebra first)."""
        emu = self.emu
        plan = emu.built
        ledger = emu.ledger
        if ledger is None:
            msg = "the emulation is not up"
            raise BackendError(msg)
        self.asn = as_plan(plan)
        self.bfd = bfd_timers(self.sessions, self.bfd_setting)
        root = ledger.dir / "frr"
        ledger.record("file", "frr")
        for ns, asn in self.asn.items():
            d = frr.SwitchDir(root, plan.namespaces[ns].name)
            configs = {
                "zebra": f"hostname {d.namespace}\nno zebra nexthop kernel enable\n",
                "bgpd": bgpd_config(plan, ns, asn, self.bfd, self.hold_s),
            }
            if self.bfd is not None:
                configs["bfdd"] = bfdd_config(self.bfd)
            d.make(configs)
            self.dirs[ns] = d
        self.started_at = time.monotonic()
        self._start_daemons(list(self.asn))

    def _spawn(self, ns: int, name: str) -> frr.Daemon:
        assert self.emu.ledger is not None
        d = frr.spawn(self.emu.ledger, self.dirs[ns], name, self.emu.fds[ns])
        self.daemons.setdefault(ns, []).append(d)
        return d

    def stop(self) -> None:
        """End every daemon by PID (idempotent)."""
        frr.stop([d for ds in self.daemons.values() for d in ds])
        self.daemons.clear()

    def memory_kb(self) -> int:
        """PSS of every daemon, kB."""
        return sum(d.pss_kb() for ds in self.daemons.values() for d in ds)

    # -- faults ---------------------------------------------------------------------------
    def hang(self, namespaces: Iterable[int]) -> None:
        """SIGSTOP a switch's daemons: it stops answering, its sessions time out."""
        for ns in namespaces:
            for d in self.daemons.get(ns, []):
                d.signal(signal.SIGSTOP)

    def restart(self, namespaces: Iterable[int]) -> None:
        """End a switch's (hung) daemons and start fresh ones: a switch that rebooted."""
        nss = list(namespaces)
        frr.stop([d for ns in nss for d in self.daemons.pop(ns, [])])
        self._start_daemons(nss)

    def hang_failover(self, ns: int, timeout: float) -> tuple[float, float]:
        """Hang switch ``ns`` (daemons stopped, links up: only BFD or the hold timer can
        tell), then reboot it: (seconds until the rest routed around it, seconds until
        the whole fabric converged again after the reboot, BFD sessions up)."""
        plan = self.emu.built
        whole = self.emu.alive_all()
        gone = Alive(whole.wires, whole.elements - set(plan.namespaces[ns].elements))
        live = [i for i in switch_namespaces(plan) if i != ns]
        self.hang([ns])
        took = self.converge(
            compute(plan, gone), live, timeout, what="routing around a hung switch"
        )
        t0 = time.monotonic()
        self.restart([ns])
        self.converge(compute(plan, whole), switch_namespaces(plan), timeout, alive=whole)
        return took, time.monotonic() - t0

    def set_drain(self, namespaces: Iterable[int], on: bool) -> None:
        """Prepend (``on``) or stop prepending the switch's AS on everything it advertises.

        Its peers then prefer every other path, so traffic moves away while its
        links still carry it (SONiC's traffic-shift-away does the same).
        """
        for ns in namespaces:
            prepend = " ".join([str(self.asn[ns])] * DRAIN_PREPEND)
            change = (
                [f"route-map FABRIC-OUT permit {DRAIN_SEQ}", f"set as-path prepend {prepend}"]
                if on  # an entry before the plain permit: the map is never empty meanwhile
                else [f"no route-map FABRIC-OUT permit {DRAIN_SEQ}"]
            )
            frr.vtysh(
                self.dirs[ns],
                [
                    "configure terminal",
                    *change,
                    "end",
                    "clear bgp ipv4 unicast * soft out",
                    "clear bgp ipv6 unicast * soft out",
                ],
            )
            (self.drained.add if on else self.drained.discard)(ns)

    # -- convergence ----------------------------------------------------------------------
    def fib(self, ns: int) -> Fib:
        """The IPv4 and IPv6 routes the kernel of namespace ``ns`` holds."""
        batch = self.emu.batches[ns]
        return fib_of(batch.dump("route", socket.AF_INET) + batch.dump("route", socket.AF_INET6))

    def differences(
        self, tables: Tables, live: Sequence[int], *, partial: bool = False
    ) -> list[str]:
        """Where the FIBs of the ``live`` switches differ from ``tables`` (empty: converged).

        ``partial``: only the destinations ``tables`` routes must match (a drain,
        before the links go: what has another way has moved, the rest has none).
        """
        plan = self.emu.built
        out = []
        for ns in live:
            want = expected_fib(plan, tables, ns)
            got = self.fib(ns)
            missing = sorted(k for k in want if got.get(k) != want[k])
            extra = [] if partial else sorted(k for k in got if k not in want)
            if missing or extra:
                out.append(
                    f"{plan.namespaces[ns].name}: {len(missing)} routes missing or with other "
                    f"next hops ({', '.join(missing[:2])}), {len(extra)} unexpected "
                    f"({', '.join(extra[:2])})"
                )
        return out

    def converge(
        self,
        tables: Tables,
        live: Sequence[int],
        timeout: float,
        *,
        partial: bool = False,
        what: str = "BGP",
        alive: Alive | None = None,
    ) -> float:
        """Wait until the live switches' FIBs equal ``tables``; seconds it took from now.

        With BFD on and ``alive`` given, also until every BFD session between
        live switches over a live cable is up (:func:`bfd_sessions`): until then
        a hung neighbour would be found by the hold timer, not by BFD.
        """
        t0 = time.monotonic()
        pending: dict[int, frozenset[str]] = {}
        if self.bfd is not None and alive is not None:
            keep = set(live)
            pending = {ns: p for ns, p in bfd_sessions(self.emu.built, alive).items() if ns in keep}
        while True:
            diff = self.differences(tables, live, partial=partial)
            if not diff and pending:
                pending = self._bfd_pending(pending)
                diff = [
                    f"{self.emu.built.namespaces[ns].name}: BFD sessions not up on "
                    f"{', '.join(sorted(ports))}"
                    for ns, ports in sorted(pending.items())
                ]
            if not diff:
                return time.monotonic() - t0
            self._check_daemons()
            if time.monotonic() - t0 > timeout:
                more = f" (+{len(diff) - 3} more switches)" if len(diff) > 3 else ""
                msg = f"{what} did not converge in {timeout:g} s: " + "; ".join(diff[:3]) + more
                raise BackendError(msg)
            time.sleep(POLL_S)

    def bfd_peers(self, ns: int) -> Any:
        """``show bfd peers json`` of one switch's ``bfdd``."""
        out = frr.vtysh(self.dirs[ns], ["show bfd peers json"], daemon="bfdd")
        try:
            return json.loads(out)
        except ValueError as err:
            msg = f"bfdd on {self.dirs[ns].namespace}: unreadable show bfd peers json"
            raise BackendError(msg, err) from err

    def bfd_downs(self) -> int:
        """Session-down events of every live ``bfdd`` so far (flaps, when nothing failed)."""
        total = 0
        for ns, ds in self.daemons.items():
            if any(d.name == "bfdd" for d in ds):
                out = frr.vtysh(self.dirs[ns], ["show bfd peers counters json"], daemon="bfdd")
                total += sum(int(p.get("session-down", 0)) for p in json.loads(out))
        return total

    def _bfd_pending(self, want: dict[int, frozenset[str]]) -> dict[int, frozenset[str]]:
        """Of the sessions in ``want``, those not up yet (per switch)."""
        left = {}
        for ns, ports in want.items():
            try:
                left[ns] = ports - bfd_up(self.bfd_peers(ns))
            except BackendError as err:  # a bfdd just started, not listening on its vty yet
                if "failed to connect" not in str(err):  # (a dead one: _check_daemons says)
                    raise
                left[ns] = ports
        return {ns: ports for ns, ports in left.items() if ports}

    def _check_daemons(self) -> None:
        """A daemon that died on its own is an environment error, named with its log."""
        for ns, ds in self.daemons.items():
            for d in ds:
                status = frr.reap(d)
                if status is not None:
                    log = self.dirs[ns].path / f"{d.name}.log"
                    msg = f"FRR {d.name} in {d.namespace} exited (status {status}); see {log}"
                    raise BackendError(msg)
