"""How long a fault goes un-routed-around: the reroute, and a hang's detection (pure).

A ``kill``, ``cut`` or ``optic`` takes ports down, which the control plane sees at
once (a trap, a lost carrier): it reroutes in ``routing: {reroute: ...}``.  A
**hang** (a switch that keeps its links up and forwards nothing) tells nobody,
so what is routed through it is lost until the control plane notices, and then
for the reroute:

* ``control: bgp`` without BFD: the hold timer (``routing: {hold: 9s}``, FRR's
  ``frr defaults datacenter``: keepalive 3 s, hold 9 s).  The last keepalive came
  up to a keepalive interval before the hang, so the session drops 6-9 s after
  it; the model takes the bound, 9 s;
* with BFD: three intervals (``bfd: 300ms``: 0.9 s; ``bfd: on``: by fabric size,
  :data:`harness.fabric.routing.BFD_ON_MS`), 0.6-0.9 s after the hang at 300 ms;
* ``control: sm``: a hung switch sends no trap (its ports stay Active).  OpenSM
  finds it when its next light sweep (``routing: {sweep: 10s}``, OpenSM's
  ``sweep_interval``) gets no answer to the SMPs it sends the switch, and routes
  around it in the heavy sweep that follows (the ``reroute``; the SMP timeouts it
  waits, 4 x 200 ms by default, are inside it).  The model takes the bound: the
  hang came just after a sweep.

>>> from harness.fabric.routing import Routing
>>> hang_detect_s(Routing("bgp"), 64), hang_detect_s(Routing("bgp", bfd="on"), 64)
(9.0, 0.9)
>>> hang_detect_s(Routing("bgp", bfd="on"), 1600), hang_detect_s(Routing("sm"), 64)
(3.0, 10.0)
>>> hang_s(Routing("bgp"), 64), hang_s(Routing("bgp", bfd="300ms", reroute=0.5), 64)
(10.0, 1.4)
"""

from __future__ import annotations

import numpy as np

from harness.fabric.model import Fabric
from harness.fabric.model import LinkKind
from harness.fabric.routing import BFD_MULTIPLIER
from harness.fabric.routing import BFD_ON_MS
from harness.fabric.routing import BFD_WORDS
from harness.fabric.routing import Routing
from harness.faults.fault import AppliedFault
from harness.faults.fault import FaultKind

#: The faults a control plane reroutes around (a drain is routed around before it bites).
REROUTED = frozenset({FaultKind.KILL, FaultKind.CUT, FaultKind.OPTIC})
#: The faults that stall the jobs whose traffic crossed them until the routes move: the
#: rerouted ones and a hang (noticed late, then rerouted).
STALLING = REROUTED | {FaultKind.HANG}


def bgp_sessions(fabric: Fabric) -> int:
    """The BGP sessions of ``fabric`` under ``control: bgp``: one per end of every
    switch-to-switch cable (what ``bfd: on`` picks its timers by)."""
    kinds = np.isin(fabric.link_kind, [int(LinkKind.LEAF_SPINE), int(LinkKind.SPINE_CORE)])
    return 2 * int(kinds.sum())


def bfd_ms(routing: Routing, sessions: int) -> int | None:
    """The BFD interval (ms) on a fabric of ``sessions`` BGP sessions (None: no BFD).

    >>> bfd_ms(Routing("bgp", bfd="on"), 64), bfd_ms(Routing("bgp", bfd="on"), 1600)
    (300, 1000)
    >>> bfd_ms(Routing("bgp", bfd="50ms"), 1600), bfd_ms(Routing("sm", bfd="on"), 64)
    (50, None)
    """
    if routing.control != "bgp" or routing.bfd == BFD_WORDS[0]:
        return None
    if routing.bfd == BFD_WORDS[1]:
        return next(ms for most, ms in BFD_ON_MS if sessions <= most)
    return int(routing.bfd.removesuffix("ms"))


def hang_detect_s(routing: Routing, sessions: int) -> float:
    """Seconds until the control plane notices a hung switch on a fabric of ``sessions``
    BGP sessions: the bound (see the module docstring), before the reroute."""
    if routing.control == "sm":
        return routing.sweep
    ms = bfd_ms(routing, sessions)
    return routing.hold if ms is None else round(BFD_MULTIPLIER * ms / 1000, 9)


def hang_detect_min_s(routing: Routing, sessions: int) -> float:
    """The least time a real control plane can take to notice a hang (a faster "detection"
    gives away that it was told, as a kill tells it): the hold timer less a keepalive
    interval (FRR sends one every third of it), one BFD interval fewer than the
    multiplier.  Under ``sm`` 0: on an emulation the harness is the subnet manager.

    >>> hang_detect_min_s(Routing("bgp"), 64), hang_detect_min_s(Routing("bgp", bfd="on"), 64)
    (6.0, 0.6)
    """
    if routing.control == "sm":
        return 0.0
    ms = bfd_ms(routing, sessions)
    if ms is None:
        return routing.hold - routing.hold // 3
    return round((BFD_MULTIPLIER - 1) * ms / 1000, 9)


def hang_s(routing: Routing, sessions: int) -> float:
    """Seconds a hung switch blackholes what is routed through it: its detection
    (:func:`hang_detect_s`) and then the ``reroute``."""
    return round(hang_detect_s(routing, sessions) + routing.reroute, 9)


def outage_s(fabric: Fabric, applied: AppliedFault, routing: Routing) -> float:
    """Seconds from ``applied`` until the control plane has routed around it (0: nothing
    to route around): the ``reroute`` of a kill, cut or optic; a hang's detection and
    then the reroute (:func:`hang_s`).

    >>> from harness.fabric import preset
    >>> from harness.faults.fault import Fault
    >>> f = preset("seed-a800")
    >>> hang = Fault.parse({"hang": "spine-03"}).resolve(f)
    >>> outage_s(f, hang, Routing("bgp")), outage_s(f, hang, Routing("bgp", bfd="on"))
    (10.0, 4.0)
    >>> outage_s(f, hang, Routing("sm")), outage_s(f, Fault.parse({"kill": "spine-03"}).resolve(f),
    ...                                             Routing("bgp"))
    (11.0, 1.0)
    """
    kind = applied.fault.kind
    if kind is FaultKind.HANG:
        return hang_s(routing, bgp_sessions(fabric))
    return routing.reroute if kind in REROUTED else 0.0


def stall_cause(fabric: Fabric, applied: AppliedFault, routing: Routing) -> str:
    """What the jobs a fault stalls wait for, in words (``""``: the reroute).

    >>> from harness.fabric import preset
    >>> from harness.faults.fault import Fault
    >>> f = preset("seed-a800")
    >>> stall_cause(f, Fault.parse({"hang": "spine-03"}).resolve(f), Routing("bgp"))
    'the hung switch goes unnoticed 9 s (the BGP hold timer) and the reroute takes 1 s more'
    """
    if applied.fault.kind is not FaultKind.HANG:
        return ""
    sessions = bgp_sessions(fabric)
    ms = bfd_ms(routing, sessions)
    by = ("the subnet manager's next sweep" if routing.control == "sm" else
          "the BGP hold timer" if ms is None else f"BFD, {BFD_MULTIPLIER} x {ms} ms")  # fmt: skip
    return (f"the hung switch goes unnoticed {hang_detect_s(routing, sessions):.4g} s ({by}) "
            f"and the reroute takes {routing.reroute:.4g} s more")  # fmt: skip
