"""A fabric in ibsim, routed by a real OpenSM, faulted through ibsim's console.

::

    with Simulation(fabric, routing="ftree") as sim:   # ibsim + OpenSM up (SUBNET UP)
        before = sim.routes()                          # LFTs of every switch, walked
        sim.unlink_port(link, end=0)                   # a cut, verified by ibnetdiscover
        sim.resweep()                                  # OpenSM routes around it
        after = sim.routes()

Everything lives in the run's ledger directory (``STATE_ROOT/<run-id>/ibsim``):
the net file, OpenSM's config, cache, dumps and log, the tools' ``sys-<pid>``
trees.  ibsim listens on the abstract socket ``IBSIM_SOCKNAME=harness-<run-id>``,
so two runs at once never meet.  Both daemons are in the ledger before they
run and are ended by PID on every way out (``close``, an exception,
SIGINT/SIGTERM/SIGHUP through ``cleanup_on_signals``); after a SIGKILL,
``harness clean`` ends them from the ledger.
"""

from __future__ import annotations

import re
import signal
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from harness.backends.ibsim.limits import IBSIM_LIMITS
from harness.backends.ibsim.limits import Sizing
from harness.backends.ibsim.limits import check_fits
from harness.backends.ibsim.net import CablePort
from harness.backends.ibsim.net import IbsimNames
from harness.backends.ibsim.net import net_file
from harness.backends.ibsim.procs import Owned
from harness.backends.ibsim.procs import run_tool
from harness.backends.ibsim.procs import sim_env
from harness.backends.ibsim.procs import start_owned
from harness.backends.ibsim.procs import wait_for
from harness.backends.ibsim.procs import write_console
from harness.backends.ibsim.tables import Lfts
from harness.backends.ibsim.tables import Wiring
from harness.backends.ibsim.tables import parse_dump_lfts
from harness.backends.ibsim.tables import parse_wiring
from harness.backends.ibsim.walk import Routes
from harness.backends.ibsim.walk import walk
from harness.backends.signals import ClosesOnSignals
from harness.errors import BackendError
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.ledger import Ledger

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
_SUBNET_UP = "SUBNET UP"
_ENGINE = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")


@dataclass(slots=True)
class Timings:
    """Seconds each phase took (measured here, on this machine)."""

    phases: dict[str, float] = field(default_factory=dict)

    def text(self) -> str:
        return ", ".join(f"{k} {v:.2f} s" for k, v in self.phases.items())


class Simulation(ClosesOnSignals):
    """ibsim running ``fabric`` and OpenSM routing it; ends both on every way out."""

    def __init__(
        self,
        fabric: Fabric,
        *,
        routing: str = "ftree",
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

    @property
    def sm_host(self) -> str:
        """The rail NIC whose HCA OpenSM runs on: the last server's last rail.

        ibsim runs one SM; a fault that cuts this HCA off (its cable, its leaf)
        is refused by :func:`~harness.backends.ibsim.faults.inject` rather than
        measured as a fabric without a subnet manager.
        """
        return self.fabric.ids[max(self.names.hcas)]

    # -- life cycle -----------------------------------------------------------------
    @property
    def sockname(self) -> str:
        assert self.ledger is not None
        return f"harness-{self.ledger.run_id}"

    def start(self) -> None:
        """Start ibsim on the fabric and OpenSM on it; return at SUBNET UP."""
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
        (self.dir / "opensm.conf").write_text(OSM_CONF, encoding="utf-8")
        t0 = time.monotonic()
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
        t1 = time.monotonic()
        env = sim_env(self.sockname, preload=True)
        env["SIM_HOST"] = self.sm_host  # the HCA OpenSM runs on (ibsim node id)
        env["OSM_TMP_DIR"] = str(self.dir)
        env["OSM_CACHE_DIR"] = str(self.dir)
        self.opensm = start_owned(
            self.ledger,
            "opensm",
            [
                "opensm",
                "-F",
                str(self.dir / "opensm.conf"),
                "-f",
                str(self.dir / "opensm.log"),
                "--dump_files_dir",
                str(self.dir),
                "-R",
                ROUTING_ENGINES[self.routing],
                "-s",
                str(self.sweep_interval),
            ],
            cwd=self.dir,
            env=env,
            log=self.dir / "opensm.out",
        )
        self.timings.phases["SUBNET UP"] = self.wait_routed(0, t1, "SUBNET UP")

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
        """End OpenSM and ibsim by PID and remove the run's directory and ledger."""
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

    # -- reading the fabric -----------------------------------------------------------
    def _tool(self, *argv: str) -> str:
        assert self.dir is not None
        env = sim_env(self.sockname, preload=True)
        env["SIM_HOST"] = self.sm_host  # read the fabric from where the SM sees it
        return run_tool(list(argv), cwd=self.dir, env=env)

    def lfts(self) -> Lfts:
        t0 = time.monotonic()
        out = parse_dump_lfts(self._tool("dump_lfts"))
        self.timings.phases["dump_lfts"] = time.monotonic() - t0
        return out

    def wiring(self) -> Wiring:
        t0 = time.monotonic()
        out = parse_wiring(self._tool("ibnetdiscover"))
        self.timings.phases["ibnetdiscover"] = time.monotonic() - t0
        return out

    def routes(self) -> Routes:
        """Every HCA pair's route, from every switch's LFT, walked over the live wiring."""
        lfts, wiring = self.lfts(), self.wiring()
        t0 = time.monotonic()
        out = walk(lfts, wiring, self.names)
        self.timings.phases["LFT walk"] = time.monotonic() - t0
        return out

    # -- the console --------------------------------------------------------------------
    def console(self, line: str) -> None:
        assert self.ibsim is not None
        write_console(self.ibsim, line)

    def unlink(self, port: CablePort) -> None:
        """Unlink one port (both ends of its cable go down)."""
        self.console(f'Unlink "{port.node}"[{port.port}]')

    def unlink_node(self, node: str) -> None:
        """Unlink every port of a node (a switch killed)."""
        self.console(f'Unlink "{node}"')

    def relink(self, port: CablePort) -> None:
        self.console(f'ReLink "{port.node}"[{port.port}]')

    def relink_node(self, node: str) -> None:
        self.console(f'ReLink "{node}"')
