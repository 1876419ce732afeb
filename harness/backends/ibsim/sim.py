"""A fabric in ibsim, routed by a real OpenSM, faulted through ibsim's console.

::

    with Simulation(fabric, routing="ftree") as sim:   # ibsim + OpenSM up (SUBNET UP)
        before = sim.routes()                          # LFTs of every switch, walked
        sim.change([port], up=False, what="a cut")     # Unlink, verified by ibnetdiscover,
        after = sim.routes()                           # every island routed again

Everything lives in the run's ledger directory (``STATE_ROOT/<run-id>/ibsim``):
the net file, OpenSM's config, cache, dumps and log, the tools' ``sys-<pid>``
trees.  ibsim listens on the abstract socket ``IBSIM_SOCKNAME=harness-<run-id>``,
so two runs at once never meet.  Both daemons are in the ledger before they
run and are ended by PID on every way out (``close``, an exception,
SIGINT/SIGTERM/SIGHUP through ``cleanup_on_signals``, a second signal
waiting for the cleanup); after a SIGKILL,
``harness clean`` ends them from the ledger.

The subnet is read island by island (:mod:`.islands`): after a split, every
island is routed by an SM inside it -- the master OpenSM in its own, an
``opensm --once`` started on an HCA of each other island (a standby taking
over) -- and its tables are read from inside it.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Protocol

from harness.backends.ibsim.islands import Island
from harness.backends.ibsim.islands import discover
from harness.backends.ibsim.islands import merged
from harness.backends.ibsim.limits import IBSIM_LIMITS
from harness.backends.ibsim.limits import Sizing
from harness.backends.ibsim.limits import check_fits
from harness.backends.ibsim.net import CablePort
from harness.backends.ibsim.net import IbsimNames
from harness.backends.ibsim.net import cable_ends
from harness.backends.ibsim.net import net_file
from harness.backends.ibsim.procs import Owned
from harness.backends.ibsim.procs import run_tool
from harness.backends.ibsim.procs import sim_env
from harness.backends.ibsim.procs import start_owned
from harness.backends.ibsim.procs import wait_for
from harness.backends.ibsim.procs import write_console
from harness.backends.ibsim.tables import LFT_ATTRIBUTE
from harness.backends.ibsim.tables import LFT_BLOCK
from harness.backends.ibsim.tables import NO_PORT
from harness.backends.ibsim.tables import LftHead
from harness.backends.ibsim.tables import Lfts
from harness.backends.ibsim.tables import Wiring
from harness.backends.ibsim.tables import parse_dump_lfts
from harness.backends.ibsim.tables import parse_lft_block
from harness.backends.ibsim.tables import parse_node_description
from harness.backends.ibsim.tables import parse_switch_guids
from harness.backends.ibsim.tables import parse_wiring
from harness.backends.ibsim.walk import Routes
from harness.backends.ibsim.walk import walk
from harness.backends.ledger import Ledger
from harness.backends.signals import ClosesOnSignals
from harness.backends.signals import cleaning_up
from harness.backends.signals import deferring_signals
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind

ROUTING_ENGINES = {
    "ftree": "ftree,updn",  # OpenSM falls back to the next engine when ftree refuses
    "updn": "updn",
    "minhop": "minhop",
    "dor": "dor",
}
OSM_CONF = """\
# written by harness for one ibsim run
force_log_flush TRUE
# keep the widths and speeds the net file gives (as make_dumps.sh does)
force_link_speed 0
force_link_speed_ext 0
force_link_width 0
"""
_READY = "Network simulator ready"
_VERIFY_S = 10.0  # seconds for ibsim to apply console lines before a fault "changed nothing"
_SUBNET_UP = "SUBNET UP"
_TOP_READERS = 4  # smpdump processes at once (ibsim takes 10 clients; the SMs hold two)
_ENGINE = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")


class ChangeWatcher(Protocol):
    """Told of every change of the subnet (the ibsim backend's jobs follow them)."""

    def before(self, cables: Iterable[frozenset[str]], *, up: bool) -> None:
        """``cables`` (element ids at both ends) are about to go down (``up``: back)."""

    def after(self, started: float, routed_s: float, what: str) -> None:
        """The change began at ``started`` (monotonic); the SM's new tables came
        ``routed_s`` later."""


@dataclass(slots=True)
class Timings:
    """Seconds each phase took (measured here, on this machine)."""

    phases: dict[str, float] = field(default_factory=dict)

    def text(self) -> str:
        """The phases and their seconds, comma-separated."""
        return ", ".join(f"{k} {v:.2f} s" for k, v in self.phases.items())


class Simulation(ClosesOnSignals):
    """ibsim running ``fabric`` and OpenSM routing it; ends both on every way out."""

    def __init__(
        self,
        fabric: Fabric,
        *,
        routing: str = "ftree",
        roots: bool = True,
        sweep_interval: int = 1,
        timeout: float = 120.0,
        root: Path | None = None,
    ) -> None:
        if routing not in ROUTING_ENGINES:
            known = ", ".join(ROUTING_ENGINES)
            msg = f"unknown OpenSM routing engine {routing!r}; choose one of {known}"
            raise ScenarioError(msg)
        self.fabric = fabric
        self.routing = routing
        self.roots = roots
        self.root_guids: tuple[int, ...] = ()  # what OpenSM was told (root_guid_file)
        self.sizing: Sizing = check_fits(fabric)
        self.names = IbsimNames.of(fabric)
        self.sweep_interval = sweep_interval
        self.timeout = timeout
        self._root = root
        self.ledger: Ledger | None = None
        self.dir: Path | None = None
        self.ibsim: Owned | None = None
        self.opensm: Owned | None = None
        self.timings = Timings()
        self.islands: list[Island] = []  # as last read (route_islands)
        self.island_engines: dict[str, str] = {}  # other islands' host -> engine their SM used
        self.down: set[int] = set()  # compute cables unlinked now (link indices)
        self.generation = 0  # console lines sent so far: what was read is stale once it moves
        self.watchers: list[ChangeWatcher] = []
        # what each island the master cannot reach is made of -> the engine its SM used
        self._routed: dict[frozenset[tuple[tuple[str, int], tuple[str, int]]], str] = {}
        self._standbys = 0
        self._wiring_read = False  # self.islands read since the last console line
        self._cable = {
            p: li for li in self.fabric.links_of_kind(*COMPUTE_CABLE_KINDS).tolist()
            for p in cable_ends(fabric, int(li))
        }  # fmt: skip
        self._hca_port: dict[str, tuple[str, int]] = {}
        for nic in self.names.hcas:
            for li in fabric.links_at(nic).tolist():
                if int(li) in self._cable.values():
                    a, b = cable_ends(fabric, int(li))
                    far = b if a.node == fabric.ids[nic] else a
                    self._hca_port[self.names.desc_of[nic]] = (far.node, far.port)

    @property
    def sm_host(self) -> str:
        """The rail NIC whose HCA the master OpenSM runs on: the last server's last rail.

        An island the master cannot reach (a split, or this HCA cut off) is
        routed by an SM of its own (:meth:`route_islands`).
        """
        return self.fabric.ids[max(self.names.hcas)]

    # -- life cycle -----------------------------------------------------------------
    @property
    def sockname(self) -> str:
        """The simulator's socket name, unique to the run."""
        assert self.ledger is not None
        return f"harness-{self.ledger.run_id}"

    def start(self) -> None:
        """Start ibsim on the fabric and OpenSM on it; return at SUBNET UP.

        A simulation that is running already is left as it is (``with Simulation(...)``
        starts it: a second ``start()`` inside must not start another pair and lose
        the first one's ledger).
        """
        if self.ledger is not None:
            return
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        self.ledger = Ledger.create("ibsim", root=self._root, fabric=self.fabric.name)
        self.dir = self.ledger.dir / "ibsim"
        self.dir.mkdir(mode=0o700)
        net = self.dir / "fabric.net"
        net.write_text(net_file(self.fabric), encoding="utf-8")
        t0 = time.monotonic()
        with deferring_signals():  # a signal now waits until self.ibsim holds it
            self.ibsim = start_owned(
                self.ledger,
                "ibsim",
                ["ibsim", "-s", *self.sizing.args(IBSIM_LIMITS), str(net)],
                cwd=self.dir,
                env=sim_env(self.sockname, preload=False),
                log=self.dir / "ibsim.log",
                stdin_pipe=True,
            )
        wait_for(self.ibsim, lambda t: _READY in t, self.timeout, "'Network simulator ready'")
        self.timings.phases["ibsim ready"] = time.monotonic() - t0
        self._write_conf()
        t1 = time.monotonic()
        with deferring_signals():
            self.opensm = start_owned(
                self.ledger,
                "opensm",
                [*self._opensm_argv(self.dir), "-s", str(self.sweep_interval)],
                cwd=self.dir,
                env=self._opensm_env(self.sm_host, self.dir),
                log=self.dir / "opensm.out",
            )
        self.timings.phases["SUBNET UP"] = self.wait_routed(0, t1, "SUBNET UP")
        self.route_islands()  # parts the master cannot reach (a fabric of several planes)

    def _write_conf(self) -> None:
        """OpenSM's config: the net file's rates kept, and the fabric's roots (``roots``)."""
        assert self.dir is not None
        conf = OSM_CONF
        if self.roots:
            self.root_guids = self._root_guids()
        if self.root_guids:
            guids = self.dir / "root_guids"
            guids.write_text("".join(f"0x{g:016x}\n" for g in self.root_guids), encoding="utf-8")
            conf += f"# the fabric's top tier (up-down roots)\nroot_guid_file {guids}\n"
        (self.dir / "opensm.conf").write_text(conf, encoding="utf-8")

    def top_tier(self) -> list[str]:
        """The fabric's top switches (its cores, else its spines): up-down routing's roots."""
        f = self.fabric
        for kind in (Kind.CORE, Kind.SPINE):
            top = [f.ids[i] for i in sorted(self.names.switches) if int(f.kind[i]) == int(kind)]
            if top:
                return top
        return []

    def _root_guids(self) -> tuple[int, ...]:
        """The node GUIDs ibsim gave the top tier, read with ``ibnetdiscover`` (DR SMPs need
        no SM), plane by plane from an HCA of each."""
        top = set(self.top_tier())
        if not top:
            return ()
        guids: dict[str, int] = {}

        def read(host: str) -> Wiring:
            text = self.tool("ibnetdiscover", host=host)
            guids.update(parse_switch_guids(text))
            return parse_wiring(text)

        discover(read, self._hosts(), self._hca_port.get)
        return tuple(sorted(guids[d] for d in top if d in guids))

    def _hosts(self) -> list[tuple[str, str]]:
        """(node id, description) of every HCA, the master SM's first (where reads start)."""
        master = self.fabric.index[self.sm_host]
        order = [master, *sorted(h for h in self.names.hcas if h != master)]
        return [(self.fabric.ids[h], self.names.desc_of[h]) for h in order]

    def _opensm_env(self, host: str, workdir: Path) -> dict[str, str]:
        env = sim_env(self.sockname, preload=True)
        env["SIM_HOST"] = host  # the HCA OpenSM runs on (ibsim node id)
        env["OSM_TMP_DIR"] = str(workdir)
        env["OSM_CACHE_DIR"] = str(workdir)  # its own guid2lid cache
        return env

    def _opensm_argv(self, workdir: Path) -> list[str]:
        assert self.dir is not None
        return [
            "opensm",
            "-F",
            str(self.dir / "opensm.conf"),
            "-f",
            str(workdir / "opensm.log"),
            "--dump_files_dir",
            str(workdir),
            "-R",
            ROUTING_ENGINES[self.routing],
        ]

    def _osm_log(self) -> str:
        assert self.dir is not None
        try:
            return (self.dir / "opensm.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def routings_done(self) -> int:
        """How many times OpenSM has brought the subnet up so far (``SUBNET UP`` lines)."""
        return self._osm_log().count(_SUBNET_UP)

    def wait_routed(self, after: int, t0: float, what: str) -> float:
        """Wait for a ``SUBNET UP`` past the first ``after``; seconds since ``t0``.

        OpenSM logs SUBNET UP each time a sweep has routed the subnet and set
        every switch's LFT: after the first sweep and after each re-routing
        (on a trap from ibsim, or the light sweep every ``sweep_interval``).
        """
        assert self.opensm is not None
        while True:
            if self.routings_done() > after:
                return time.monotonic() - t0
            if not self.opensm.alive():
                log = self._osm_log()
                msg = f"opensm exited (status {self.opensm.proc.returncode}) before {what}:\n"
                raise BackendError(msg + "\n".join(log.splitlines()[-15:]))
            if time.monotonic() - t0 > self.timeout:
                msg = f"opensm did not reach {what} within {self.timeout:g} s (log in {self.dir})"
                raise BackendError(msg)
            time.sleep(0.01)

    def close(self) -> None:
        """End OpenSM and ibsim by PID and remove the run's directory and ledger (no
        SIGINT/SIGTERM/SIGHUP cuts it short, see :func:`cleaning_up`)."""
        with cleaning_up():
            for owned in (self.opensm, self.ibsim):
                if owned is not None:
                    owned.stop()
            self.opensm = self.ibsim = None
            if self.ledger is not None:
                self.ledger.release()
                self.ledger = None

    def opened(self) -> None:
        """Entering ``with Simulation(...)`` starts it (inside the signal guard)."""
        self.start()

    # -- what OpenSM did ------------------------------------------------------------
    def routing_engine_used(self) -> str:
        """The engine that computed the current tables, as OpenSM's log says."""
        found = _ENGINE.findall(self._osm_log())
        if not found:
            msg = "OpenSM's log names no routing engine yet"
            raise BackendError(msg)
        return str(found[-1])

    def resweep(self) -> float:
        """Make OpenSM sweep now (SIGHUP: a heavy sweep) and wait for new tables; seconds."""
        assert self.opensm is not None
        mark, t0 = self.routings_done(), time.monotonic()
        self.opensm.proc.send_signal(signal.SIGHUP)
        return self.wait_routed(mark, t0, "SUBNET UP after a re-sweep")

    # -- reading the fabric, island by island --------------------------------------------
    def tool(self, *argv: str, host: str | None = None) -> str:
        """Run an IB diagnostic tool attached at ``host`` (default the SM's HCA); its stdout."""
        assert self.dir is not None
        env = sim_env(self.sockname, preload=True)
        env["SIM_HOST"] = host or self.sm_host  # the HCA the tool attaches at
        return run_tool(list(argv), cwd=self.dir, env=env)

    def read_islands(self, *, fresh: bool = False) -> list[Island]:
        """Every island, each read with ``ibnetdiscover`` from an HCA inside it.

        The wiring changes only through ibsim's console, so the islands read since
        the last console line are still the islands (``fresh``: read them anyway).
        """
        if self._wiring_read and not fresh:
            return self.islands
        t0 = time.monotonic()
        self.islands = discover(
            lambda host: parse_wiring(self.tool("ibnetdiscover", host=host)),
            self._hosts(),
            self._hca_port.get,
        )
        self.timings.phases["ibnetdiscover"] = time.monotonic() - t0
        self._wiring_read = True
        return self.islands

    def wiring(self) -> Wiring:
        """The live links of every island."""
        return merged(self.read_islands())

    def lfts(self, islands: list[Island] | None = None) -> Lfts:
        """Every switch's LFT, each island's read with ``dump_lfts`` from inside it."""
        t0 = time.monotonic()
        tables: dict[str, dict[str, int]] = {}
        lids: dict[str, int] = {}
        heads: dict[str, LftHead] = {}
        for island in self.islands if islands is None else islands:
            got = self._top_entries(parse_dump_lfts(self.tool("dump_lfts", host=island.host)),
                                    island.host)  # fmt: skip
            tables |= got.tables
            lids |= got.lids
            heads |= got.heads
        self.timings.phases["dump_lfts"] = time.monotonic() - t0
        return Lfts(tables, lids, heads)

    def _top_entries(self, got: Lfts, host: str) -> Lfts:
        """``got`` with the entry ``dump_lfts`` skips when a switch's top LID is a multiple
        of 64 (:class:`LftHead`), read from the switch with ``smpdump`` (its block, raw)."""
        unread = {sw: head for sw, head in got.heads.items() if head.top_unread}
        if not unread:
            return got
        owners = {
            top: parse_node_description(self.tool("smpquery", "nodedesc", str(top), host=host))
            for top in {head.top for head in unread.values()}
        }

        def block(head: LftHead) -> tuple[int, ...]:
            argv = ["smpdump", "-D", head.path, LFT_ATTRIBUTE, str(head.top_block)]
            return parse_lft_block(self.tool(*argv, host=host))

        # a few tools at once, well inside ibsim's client limit beside the SMs
        with ThreadPoolExecutor(max_workers=_TOP_READERS) as pool:
            blocks = dict(zip(unread, pool.map(block, unread.values()), strict=True))
        tables = {sw: dict(t) for sw, t in got.tables.items()}
        lids = dict(got.lids)
        for sw, head in unread.items():
            port = blocks[sw][head.top % LFT_BLOCK]
            nports = int(self.fabric.ports[self.names.element(sw)])
            if port != NO_PORT and port <= nports:
                tables[sw][owners[head.top]] = port
                lids[owners[head.top]] = head.top
        return Lfts(tables, lids, got.heads)

    def routes(self) -> Routes:
        """Every HCA pair's route, from every switch's LFT, walked over the live wiring."""
        islands = self.read_islands()
        lfts, wiring = self.lfts(islands), merged(islands)
        t0 = time.monotonic()
        out = walk(lfts, wiring, self.names)
        self.timings.phases["LFT walk"] = time.monotonic() - t0
        return out

    # -- an SM in every island ------------------------------------------------------------
    def master_island(self) -> Island | None:
        """The island the master OpenSM is in (None: its HCA is cut off)."""
        return next((i for i in self.islands if i.host == self.sm_host), None)

    def route_islands(self) -> list[Island]:
        """Read the islands; route each one the master cannot reach with an SM inside it.

        An island is routed again only when it is not exactly as it was at the last read
        (then nothing can have changed it: no link joined it to the master since).
        """
        routed: dict[frozenset[tuple[tuple[str, int], tuple[str, int]]], str] = {}
        for island in self.read_islands():
            if island.host == self.sm_host:
                continue
            engine = self._routed.get(island.signature)
            routed[island.signature] = engine or self._standby_sweep(island)
        self._routed = routed
        self.island_engines = {
            i.host: routed[i.signature] for i in self.islands if i.host != self.sm_host
        }
        return self.islands

    def _standby_sweep(self, island: Island) -> str:
        """``opensm --once`` on ``island.host``: the island's standby SM, master there."""
        assert self.ledger is not None
        assert self.dir is not None
        self._standbys += 1
        workdir = self.dir / f"sm-{self._standbys}"
        workdir.mkdir()
        sm: Owned | None = None
        try:
            with deferring_signals():  # a signal now waits until sm holds it
                sm = start_owned(
                    self.ledger,
                    f"opensm --once on {island.host}",
                    [*self._opensm_argv(workdir), "--once"],
                    cwd=workdir,
                    env=self._opensm_env(island.host, workdir),
                    log=workdir / "opensm.out",
                )
            sm.proc.wait(self.timeout)
        except BaseException as err:  # a timeout or a signal: never left behind
            if sm is not None:
                with cleaning_up():
                    sm.stop()
            if isinstance(err, subprocess.TimeoutExpired):
                msg = f"opensm --once on {island.host} did not finish within {self.timeout:g} s"
                raise BackendError(msg) from None
            raise
        log = (workdir / "opensm.log").read_text(errors="replace")
        engines = _ENGINE.findall(log)
        if sm.proc.returncode != 0 or _SUBNET_UP not in log or not engines:
            msg = (
                f"opensm --once on {island.host} did not route its island "
                f"(status {sm.proc.returncode}; log in {workdir})"
            )
            raise BackendError(msg)
        return str(engines[-1])

    # -- changes: console lines, then every island routed again ----------------------------
    def _touches_master(self, ports: list[CablePort]) -> bool:
        island = self.master_island()
        nodes = {self.fabric.ids[self.fabric.index[self.sm_host]]}
        for p in ports:
            for end in cable_ends(self.fabric, self._cable[p]):
                desc = self.names.desc_of[self.fabric.index[end.node]]
                if end.node in nodes or (island is not None and island.holds(desc)):
                    return True
        return False

    def master_cut_off(self) -> bool:
        """Whether the master SM's own cable is down (it then routes nothing)."""
        desc = self.names.desc_of[self.fabric.index[self.sm_host]]
        leaf = self._hca_port.get(desc)
        return leaf is None or self._cable[CablePort(*leaf)] in self.down

    def unlinked(self, port: CablePort) -> bool:
        """Whether the cable at ``port`` is unlinked now (a console line took it down)."""
        return self._cable[port] in self.down

    def change(self, ports: list[CablePort], *, up: bool, what: str) -> float:
        """Unlink (``up=False``) or ReLink ``ports``, verify it, wait until every island is
        routed again; the seconds from the first console line to the last island routed."""
        if all((self._cable[p] in self.down) != up for p in ports):
            state = "up" if up else "down"
            msg = f"{what} would change nothing on ibsim: every port of it is already {state}"
            raise BackendError(msg)
        cables = [frozenset(e.node for e in cable_ends(self.fabric, self._cable[p])) for p in ports]
        for w in self.watchers:
            w.before(cables, up=up)
        t0 = time.monotonic()
        touched = self._touches_master(ports)
        mark = self.routings_done()
        for p in ports:
            # marked first: a console line cut short by a signal is still undone by a revert
            (self.down.discard if up else self.down.add)(self._cable[p])
            self.console(f'{"ReLink" if up else "Unlink"} "{p.node}"[{p.port}]')
        routed: float | None = None
        if touched and not self.master_cut_off():
            routed = self.timings.phases["master SM routed"] = self.wait_routed(mark, t0, what)
        self._verify(ports, up=up, what=what)
        if up and len(ports) > 1 and touched and not self.master_cut_off():
            # the first ReLink's trap starts a sweep that may route before the last port is
            # back (a leaf's cables relinked one console line at a time): sweep once more now
            # that every port is linked (CI saw a reverted leaf kill still routed around)
            self.resweep()
            routed = time.monotonic() - t0
        t1 = time.monotonic()
        self.route_islands()
        self.timings.phases["standby SMs"] = time.monotonic() - t1
        took = time.monotonic() - t0
        # new tables: the master's SUBNET UP when it routed the change, else the last standby's
        for w in self.watchers:
            w.after(t0, took if routed is None or self.island_engines else routed, what)
        return took

    def _verify(self, ports: list[CablePort], *, up: bool, what: str) -> None:
        """The ports are in the state asked for (ibsim applies console lines on its own time).

        A fault that changed nothing is an error, never a silent pass.
        """
        deadline = time.monotonic() + _VERIFY_S
        while True:
            wiring = merged(self.read_islands(fresh=True))
            wrong = [
                f"{p.node}[{p.port}]"
                for p in ports
                if wiring.linked(self.names.desc_of[self.fabric.index[p.node]], p.port) != up
            ]
            if not wrong:
                return
            if time.monotonic() > deadline:
                state = "still linked" if not up else "still down"
                msg = (
                    f"{what} changed nothing on ibsim for {', '.join(wrong[:6])}: ibnetdiscover "
                    f"shows the port{'s' if len(wrong) > 1 else ''} {state}"
                )
                raise BackendError(msg)
            time.sleep(0.05)

    # -- the console --------------------------------------------------------------------
    def console(self, line: str) -> None:
        """Send one line to the ibsim console (a change: the wiring is read again after it)."""
        assert self.ibsim is not None
        self._wiring_read = False
        self.generation += 1
        write_console(self.ibsim, line)
