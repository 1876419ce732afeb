"""``harness emulate up|down|status`` and ``harness clean``: emulations for interactive use.

``up`` builds a fabric in namespaces, marks its run *detached* in the ledger
(so ``harness clean`` leaves it alone) and returns; the namespaces stay until
``down``.  A SIGINT, SIGTERM or SIGHUP before ``up`` returns removes what it
made; a signal during ``down`` waits for the teardown to finish.  ``status``
lists every run the ledger knows, live or left behind.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from harness.backends.ledger import Ledger
from harness.backends.ledger import run_ids
from harness.backends.ledger import run_is_live
from harness.backends.ledger import state_root
from harness.backends.ledger import teardown_entries
from harness.backends.ledger import warn_refused
from harness.backends.ledger_checks import UntrustedLedger
from harness.backends.netns import nsutil
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.plan import DEFAULT_SCALE
from harness.backends.processes import process_alive_owner
from harness.backends.signals import cleaning_up
from harness.backends.signals import cleanup_on_signals
from harness.backends.signals import deferring_signals
from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.fabric.routing import DEFAULT as DEFAULT_ROUTING
from harness.fabric.routing import Routing

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run's emulation as ``harness emulate status`` shows it."""

    run_id: str
    fabric: str
    purpose: str
    state: str  # running | up (detached) | left behind
    namespaces: int
    names_file: Path


def status(root: Path | None = None) -> list[RunInfo]:
    """Every run with a ledger: its state and how many of its namespaces exist."""
    root = root or state_root()
    present = nsutil.list_netns()
    out = []
    for rid in run_ids(root):
        ledger = Ledger(rid, root)
        try:
            try:
                owner = ledger.owner()
            except (FileNotFoundError, json.JSONDecodeError):
                owner = {}
            if owner.get("detached"):
                state = "up"
            elif run_is_live(ledger):
                state = "running"
            else:
                state = "left behind (harness clean removes it)"
            n = len(ledger.names("netns") & present)
        except UntrustedLedger as err:  # reported, and the other runs still listed
            owner, state, n = {}, f"untrusted, left alone: {err}", 0
        out.append(
            RunInfo(
                rid,
                str(owner.get("fabric", "?")),
                str(owner.get("purpose", "?")),
                state,
                n,
                ledger.dir / "names.json",
            )
        )
    return out


def up(
    fabric: Fabric,
    *,
    scale: float = DEFAULT_SCALE,
    root: Path | None = None,
    routing: Routing = DEFAULT_ROUTING,
) -> Emulation:
    """Build ``fabric`` and leave it running (detached) after this process ends.

    ``routing``'s control ``bgp`` starts FRR on every switch (with its ``bfd``);
    its daemons stay with the namespaces and are ended by PID on ``down`` (they
    are in the ledger).
    """
    emu = Emulation(fabric, scale=scale, purpose="emulate", root=root, routing=routing)
    with cleanup_on_signals():  # SIGINT/SIGTERM/SIGHUP during up(): what it made is removed
        emu.up()
        try:
            with deferring_signals():  # detached whole, or not at all
                assert emu.ledger is not None
                emu.ledger.detach(timings=emu.timings.phases)
        except BaseException:
            with cleaning_up():
                emu.down()
            raise
    return emu


def down(fabric_name: str, root: Path | None = None) -> list[str]:
    """Take down every detached emulation of ``fabric_name``; returns the run ids."""
    root = root or state_root()
    done = []
    for rid in run_ids(root):
        ledger = Ledger(rid, root)
        try:
            owner = ledger.owner()
            ledger.entries()  # believed before anything is done with it
        except (FileNotFoundError, json.JSONDecodeError):
            continue
        except UntrustedLedger as err:  # never acted on; the other runs still are
            log.warning("run %s: %s; left alone (`harness clean` reports it)", rid, err)
            continue
        if owner.get("purpose") != "emulate" or owner.get("fabric") != fabric_name:
            continue
        if not owner.get("detached") and process_alive_owner(owner):
            continue  # still being brought up by a live process
        with cleaning_up():  # a signal now waits for the whole teardown
            teardown_entries(ledger)
            warn_refused(ledger)
            ledger.release()
        done.append(rid)
    if not done:  # bad input (exit 2): the name asks for something that is not there
        msg = (
            f"no emulation of {fabric_name!r} is up: nothing to take down (see "
            "`harness emulate status` for what is up; `harness emulate up FABRIC` brings one up)"
        )
        raise ScenarioError(msg)
    return done


def entering_hint(emu: Emulation) -> list[str]:
    """How to get into the namespaces of a running emulation."""
    plan = emu.built
    first_server = next(n for n in plan.namespaces if n.role == "server")
    first_switch = next(n for n in plan.namespaces if n.role == "switch")
    assert emu.ledger is not None
    return [
        f"run {emu.ledger.run_id}: {plan.describe()}",
        f"built in {emu.timings.text()}",
        f"enter a server:  ip netns exec {first_server.name} bash",
        f"see a switch's routes:  ip -n {first_switch.name} route",
        f"namespace -> element ids:  {emu.ledger.dir / 'names.json'}",
    ] + (
        [
            f"routing bgp: {emu.bgp.describe()}",
            # from inside the sockets' directory: a socket address holds 107 bytes at most
            f"ask a switch's bgpd:  (cd {emu.ledger.dir / 'frr' / first_switch.name / 'vty'} "
            "&& vtysh --vty_socket . -c 'show bgp summary')",
        ]
        if emu.bgp is not None
        else []
    )
