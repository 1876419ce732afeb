"""A fabric realized in Linux network namespaces: build, change, tear down.

:class:`Emulation` is the realization layer under the netns backend and
``harness emulate``.  Everything it makes is written to the run's
:class:`~harness.backends.ledger.Ledger` first; :meth:`Emulation.down` (or
``harness clean`` after a crash) removes it.  Nothing of the fabric lives in
the root namespace: the namespaces are created in-process, the veth pairs are
created from the lower-tier namespace with the peer placed directly in the
other one (``IFLA_NET_NS_FD``), and every request of a namespace goes in
batches over one netlink socket opened inside it.

Kernel facts this relies on (each observed while building it):

* the neighbour-table limits (``gc_thresh1..3``) are global, set only in the
  root namespace; past ``gc_thresh3`` reachability silently collapses
  ("neighbor table overflow"), so they are raised for the run and restored;
* a veth peer cannot be created already up (ENOTCONN): ends are set up after;
* next hops on a link without carrier keep being used unless
  ``ignore_routes_with_linkdown`` is set before the failure: under ``sm`` it is
  not (a dead next hop blackholes its share of the traffic until the subnet
  manager's sweep replaces the route, as a switch's forwarding table does),
  under ``bgp`` it is (zebra withdraws the next hop at once anyway), and on
  storage bond members always (a bond drops a member at carrier loss);
* an admin-down interface loses its static routes: routes are re-pushed on repair;
  it also loses its IPv6 addresses unless ``keep_addr_on_down`` is set (it is).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.backends.ledger import RAISABLE_SYSCTLS
from harness.backends.ledger import Entry
from harness.backends.ledger import Ledger
from harness.backends.ledger import teardown_entries
from harness.backends.ledger import warn_refused
from harness.backends.netns import nsutil
from harness.backends.netns.netlink import IFF_UP
from harness.backends.netns.netlink import Batch
from harness.backends.netns.plan import DEFAULT_SCALE
from harness.backends.netns.plan import Plan
from harness.backends.netns.plan import Port
from harness.backends.netns.routing import Alive
from harness.backends.netns.routing import Router
from harness.backends.netns.routing import compute
from harness.backends.netns.routing import port_table
from harness.backends.signals import cleaning_up
from harness.errors import BackendError
from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing

if TYPE_CHECKING:
    from harness.backends.netns.bgp import Bgp

IFF_LOWER_UP = 0x10000
OPER_UP = 1 << 40  # not a kernel flag: see Emulation.link_flags
IF_OPER_UP = 6
NEIGH_MINIMUM = 65_536  # per family; every veth end resolves one neighbour per family
NEIGH_SYSCTLS = tuple(sorted(RAISABLE_SYSCTLS))  # gc_thresh2 and 3, both families
_NS_SYSCTLS_ALL = (
    ("net/ipv6/conf/default/accept_dad", "0"),
    ("net/ipv6/conf/all/accept_dad", "0"),
    ("net/ipv6/conf/default/addr_gen_mode", "1"),
    ("net/ipv6/conf/default/keep_addr_on_down", "1"),  # IPv6 drops addresses on admin down
    ("net/ipv6/conf/all/keep_addr_on_down", "1"),  # no link-local addresses (no RS/MLD noise)
)
_LINKDOWN = ("ipv4/conf/default", "ipv4/conf/all", "ipv6/conf/default", "ipv6/conf/all")
_NS_SYSCTLS_SWITCH = (
    ("net/ipv4/ip_forward", "1"),
    ("net/ipv6/conf/all/forwarding", "1"),
    # ECMP on every packet's 5-tuple, as a switch ASIC hashes.  Not policy 1: for forwarded
    # packets it reuses the hash the sending socket put on the skb (it survives the veth),
    # which TCP redraws at every retransmission timeout (net.core.txrehash), so a flow would
    # steer itself around a dead next hop, which no real switch lets it do.
    ("net/ipv4/fib_multipath_hash_policy", "3"),
    ("net/ipv4/fib_multipath_hash_fields", "0x0037"),  # addresses, protocol, ports
    ("net/ipv6/fib_multipath_hash_policy", "3"),
    ("net/ipv6/fib_multipath_hash_fields", "0x0037"),  # the same (no flow label)
    ("net/ipv4/icmp_ratelimit", "0"),  # traced paths: every TTL gets its time-exceeded
)


@dataclass(slots=True)
class Timings:
    """Seconds per bring-up phase (printed by ``harness emulate up`` and the benchmark)."""

    phases: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        """The seconds of every phase together."""
        return sum(self.phases.values())

    def text(self) -> str:
        """The total and the phases' seconds."""
        parts = ", ".join(f"{k} {v:.2f}" for k, v in self.phases.items())
        return f"{self.total:.2f} s ({parts})"


class Emulation:
    """One fabric in namespaces.  ``up()`` builds and routes it; ``down()`` removes it."""

    def __init__(
        self,
        fabric: Fabric,
        *,
        scale: float = DEFAULT_SCALE,
        ipv6: bool = True,
        purpose: str = "run",
        root: Path | None = None,
        routing: Routing = DEFAULT_ROUTING,
    ) -> None:
        self.fabric = fabric
        self.routing = routing  # as resolved once; control and bfd decide what runs
        self.control = routing.control  # sm (static tables) or bgp (FRR on every switch)
        self.bfd_setting = routing.bfd
        self.scale = scale
        self.ipv6 = ipv6
        self.purpose = purpose
        self.root = root
        self.ledger: Ledger | None = None
        self.plan: Plan | None = None
        self.fds: list[int] = []
        self.batches: list[Batch] = []
        self.router: Router | None = None
        self.timings = Timings()
        self.admin_up: dict[tuple[int, int], bool] = {}  # (wire, end) -> admin state
        self.rates: dict[int, int] = {}  # wire -> shaped rate (bps)
        self.bgp: Bgp | None = None
        self._ns: nsutil.Namespaces | None = None

    # -- life cycle ---------------------------------------------------------------
    def up(self) -> Timings:
        """Build the healthy fabric and install its routes; on failure remove what was made."""
        try:
            self._up()
        except BaseException:
            self.down()
            raise
        return self.timings

    @contextlib.contextmanager
    def _phase(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        yield
        self.timings.phases[name] = time.perf_counter() - t

    def _up(self) -> None:
        if os.geteuid() != 0:
            msg = "the netns backend needs root (network namespaces, veth pairs, tc)"
            raise BackendError(msg)
        with self._phase("plan"):
            self.ledger = Ledger.create(self.purpose, root=self.root, fabric=self.fabric.name)
            self.plan = plan = Plan(self.fabric, self.ledger.run_id, self.scale)
            self.ledger.record("file", "names.json")
            import json

            (self.ledger.dir / "names.json").write_text(json.dumps(plan.names(), indent=1))
        with self._phase("sysctl"):
            for key in NEIGH_SYSCTLS:
                self.ledger.raise_sysctl(key, NEIGH_MINIMUM)
        # bgp: the kernel stops using a next hop whose link lost carrier at once (zebra
        # withdraws it too); sm: it keeps using it until the subnet manager's sweep
        ignore = "1" if self.control == "bgp" else "0"
        with self._phase("namespaces"):
            self._ns = nsutil.Namespaces()
            ledger = self.ledger
            ledger.record_many([Entry("netns", n.name) for n in plan.namespaces])
            for n in plan.namespaces:
                # each inode is in the ledger before the namespace is mounted on its name:
                # teardown deletes only a namespace whose inode this run recorded
                self.fds.append(self._ns.create(n.name, _recorder(ledger, n.name)))
            for i, n in enumerate(plan.namespaces):
                with self._ns.entered(self.fds[i]):
                    for key, value in _NS_SYSCTLS_ALL:
                        _write_proc(key, value, n.name)
                    for conf in _LINKDOWN:  # sm: a dead next hop blackholes until the sweep
                        _write_proc(f"net/{conf}/ignore_routes_with_linkdown", ignore, n.name)
                    if n.role == "switch":
                        for key, value in _NS_SYSCTLS_SWITCH:
                            _write_proc(key, value, n.name)
                        if self.control == "bgp":  # BGP unnumbered peers on link-local addresses
                            _write_proc("net/ipv6/conf/default/addr_gen_mode", "0", n.name)
                    self.batches.append(Batch(f"namespace {n.name}"))
        with self._phase("links"):
            for w, wire in enumerate(plan.wires):
                a, b = wire.a, wire.b
                self.batches[a.ns].veth(
                    a.ifindex,
                    a.ifname,
                    b.ifindex,
                    b.ifname,
                    self.fds[b.ns],
                    what=f"veth {a.ifname}<->{b.ifname} ({self._link_id(w)})",
                )
            self._flush_all()
            self._bond_members_fail_over()
        with self._phase("addresses+tc"):
            for i in range(len(plan.namespaces)):
                self.batches[i].set_up(1, True, "lo up")
            for w, wire in enumerate(plan.wires):
                self.rates[w] = wire.rate_bps
                for end, port in ((0, wire.a), (1, wire.b)):
                    self._address(port)
                    self.batches[port.ns].shape(
                        port.ifindex, wire.rate_bps, True, f"tbf on {port.ifname}"
                    )
                    self.batches[port.ns].set_up(port.ifindex, True, f"{port.ifname} up")
                    self.admin_up[w, end] = True
            for bond in plan.bonds:
                self._address(bond.host)
                self._address(bond.switch)
            self._port_rules()
            self._flush_all()
        with self._phase("routes"):
            static = None  # every namespace (sm); under bgp FRR routes the switches
            if self.control == "bgp":
                static = frozenset(i for i, n in enumerate(plan.namespaces) if n.role != "switch")
            self.router = Router(plan, self.batches, ipv6=self.ipv6, managed=static)
            self.router.push(compute(plan, self.alive_all()))
        if self.control == "bgp":
            with self._phase("frr"):
                from harness.backends.netns.bgp import Bgp

                self.bgp = Bgp(self, bfd_setting=self.bfd_setting, hold_s=self.routing.hold)
                self.bgp.start()

    def _bond_members_fail_over(self) -> None:
        """A storage member that loses carrier leaves the bond at once (as 802.3ad's
        link monitoring drops it), whatever the control plane: its route is ignored."""
        plan = self.built_plan
        assert self._ns is not None
        by_ns: dict[int, list[str]] = {}
        for bond in plan.bonds:
            for w in bond.members:
                for port in (plan.wires[w].a, plan.wires[w].b):
                    by_ns.setdefault(port.ns, []).append(port.ifname)
        for ns, names in sorted(by_ns.items()):
            where = plan.namespaces[ns].name
            with self._ns.entered(self.fds[ns]):
                for name in sorted(set(names)):
                    for fam in ("ipv4", "ipv6"):
                        _write_proc(f"net/{fam}/conf/{name}/ignore_routes_with_linkdown", "1",
                                    where)  # fmt: skip

    def _port_rules(self) -> None:
        """Traffic a server sends from a NIC port's address leaves through that port.

        A rule per port (``from ADDR iif lo``, before the ``local`` table, which
        moves from priority 0 to 200) looks up the port's own table: so a probe
        between two NICs of one server crosses the fabric as it does on real
        hardware, instead of short-cutting through the kernel, and cross-rail
        traffic leaves on the source rail.  Packets arriving from the fabric
        (``iif`` a NIC) skip these rules and are delivered locally.
        """
        plan = self.built_plan
        families = [(socket.AF_INET, 32)] + ([(socket.AF_INET6, 128)] if self.ipv6 else [])
        servers = {p.ns for ports in plan.nic_ports.values() for p in ports}
        for ns in servers:
            for fam, _ in families:
                b = self.batches[ns]
                b.rule(fam, "", 0, table=255, priority=200, what="local table at 200")
                b.rule(fam, "", 0, table=255, priority=0, what="local table off 0", delete=True)
        for ports in plan.nic_ports.values():
            for p in ports:
                tab = port_table(p.ifindex)
                for fam, plen in families:
                    addr = p.v4 if fam == socket.AF_INET else p.v6
                    self.batches[p.ns].rule(
                        fam, addr, plen, table=tab, priority=100, iif="lo", what=f"rule from {addr}"
                    )

    @property
    def built_plan(self) -> Plan:
        """The plan, once built (asserts it is)."""
        assert self.plan is not None
        return self.plan

    def _address(self, port: Port) -> None:
        if not port.v4:
            return
        b = self.batches[port.ns]
        b.address(port.ifindex, socket.AF_INET, port.v4, port.plen4, f"address {port.v4}")
        if self.ipv6:
            b.address(port.ifindex, socket.AF_INET6, port.v6, port.plen6, f"address {port.v6}")

    def _flush_all(self) -> None:
        for b in self.batches:
            b.flush()

    def _link_id(self, wire: int) -> str:
        assert self.plan is not None
        return self.fabric.link_ids[self.plan.wires[wire].link]

    def down(self) -> float:
        """Remove everything this emulation made (processes, namespaces); idempotent.

        No SIGINT/SIGTERM/SIGHUP cuts it short: one that arrives waits for the end
        (:func:`~harness.backends.signals.cleaning_up`), also when ``up`` tears down
        after an error.
        """
        with cleaning_up():
            return self._down()

    def _down(self) -> float:
        t = time.perf_counter()
        if self.bgp is not None:  # its daemons first, by PID (our children: reaped)
            self.bgp.stop()
            self.bgp = None
        for b in self.batches:
            with contextlib.suppress(OSError):
                b.close()
        self.batches = []
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []
        if self._ns is not None:
            self._ns.close()
            self._ns = None
        if self.ledger is not None:
            teardown_entries(self.ledger)
            warn_refused(self.ledger)
            self.ledger.release()
            self.ledger = None
        return time.perf_counter() - t

    def __enter__(self) -> Emulation:
        self.up()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    # -- state and changes ------------------------------------------------------------
    @property
    def built(self) -> Plan:
        """The plan of the emulation that is up (BackendError when it is not)."""
        if self.plan is None or self.router is None:
            msg = "the emulation is not up"
            raise BackendError(msg)
        return self.plan

    def alive_all(self) -> Alive:
        """Every wire and every element alive (the healthy fabric)."""
        assert self.plan is not None
        return Alive(
            frozenset(range(len(self.plan.wires))), frozenset(range(self.fabric.n_elements))
        )

    def port(self, wire: int, end: int) -> Port:
        """The port at end ``end`` (0 or 1) of wire ``wire``."""
        w = self.built.wires[wire]
        return w.a if end == 0 else w.b

    def set_admin(self, ends: Iterable[tuple[int, int]], up: bool) -> None:
        """Set interface ends (``(wire, end)``) administratively up or down."""
        for wire, end in ends:
            p = self.port(wire, end)
            self.batches[p.ns].set_up(p.ifindex, up, f"{p.ifname} {'up' if up else 'down'}")
            self.admin_up[wire, end] = up
        self._flush_all()

    def set_rate(self, wire: int, rate_bps: int) -> None:
        """Change the shaped rate of a wire, both directions."""
        self.rates[wire] = rate_bps
        for e in (0, 1):
            p = self.port(wire, e)
            self.batches[p.ns].shape(p.ifindex, rate_bps, False, f"tbf on {p.ifname}")
        self._flush_all()

    def set_drop(self, wires: Iterable[int], drop: bool) -> None:
        """Make wires drop every packet, both directions (or carry traffic again).

        Both ends keep their state and carrier, so every route over the wire
        stays as it is: the packets it takes are lost (a blackhole), as when a
        cable or optic dies under forwarding tables that still point at it.
        """
        for wire in wires:
            for e in (0, 1):
                p = self.port(wire, e)
                self.batches[p.ns].shape(p.ifindex, self.rates[wire], False,
                                         f"tbf {'drop' if drop else 'limit'} on {p.ifname}",
                                         drop=drop)  # fmt: skip
        self._flush_all()

    def link_flags(self, namespaces: Iterable[int]) -> dict[tuple[int, int], int]:
        """(namespace, ifindex) -> interface flags as the kernel reports them now.

        :data:`OPER_UP` is added when the operational state is UP: the kernel's
        linkwatch sets it asynchronously (up to a second after carrier returns on
        a veth), and until then IPv6 treats routes over the link as ``linkdown``.
        """
        out = {}
        for ns in set(namespaces):
            for msg in self.batches[ns].dump("link"):
                oper = OPER_UP if msg.get_attr("IFLA_OPERSTATE") in (IF_OPER_UP, "UP") else 0
                out[ns, int(msg["index"])] = int(msg["flags"]) | oper
        return out

    def carrier(self, wire: int, flags: dict[tuple[int, int], int]) -> tuple[bool, bool]:
        """Per end of a wire: admin up and carrier (both must hold for traffic)."""
        out = []
        for end in (0, 1):
            p = self.port(wire, end)
            fl = flags.get((p.ns, p.ifindex), 0)
            out.append(bool(fl & IFF_UP) and bool(fl & IFF_LOWER_UP))
        return out[0], out[1]

    def qdisc_rates(self, ns: int) -> dict[int, int]:
        """ifindex -> the tbf rate (bps) the kernel reports for its root qdisc."""
        return {i: rate for i, (rate, _) in self.qdisc_params(ns).items()}

    def qdisc_params(self, ns: int) -> dict[int, tuple[int, int]]:
        """ifindex -> (rate in bps, queue limit in bytes) of its root tbf qdisc."""
        out = {}
        for msg in self.batches[ns].dump("qdisc"):
            if msg.get_attr("TCA_KIND") != "tbf":
                continue
            opts = msg.get_attr("TCA_OPTIONS")
            parms = opts.get_attr("TCA_TBF_PARMS") if opts is not None else None
            if parms is not None:
                out[int(msg["index"])] = (int(parms["rate"]) * 8, int(parms["limit"]))
        return out

    def exec_argv(self, ns: int, argv: list[str]) -> list[str]:
        """A command line that runs ``argv`` inside namespace ``ns``."""
        return ["ip", "netns", "exec", self.built.namespaces[ns].name, *argv]


def running_ledger(emu: Emulation, task: str, why_not: str | None) -> Ledger:
    """The ledger of ``emu`` for a tool that will ``task`` in it (``measure flows``).

    :class:`BackendError` when the tool cannot run here (``why_not``) or the
    emulation is not up.
    """
    if why_not is not None:
        msg = f"netns cannot {task}: {why_not}"
        raise BackendError(msg)
    if emu.ledger is None:
        msg = "the emulation is not up"
        raise BackendError(msg)
    return emu.ledger


def _recorder(ledger: Ledger, name: str) -> Callable[[int], None]:
    """What writes down the inode of namespace ``name`` once it exists (before it is mounted)."""

    def record(inode: int) -> None:
        ledger.record("netns-created", name, inode=inode)

    return record


def _write_proc(key: str, value: str, where: str) -> None:
    try:
        Path("/proc/sys", key).write_text(value)
    except OSError as err:
        msg = f"cannot set {key.replace('/', '.')} in namespace {where}"
        raise BackendError(msg, err) from err
