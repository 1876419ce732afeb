"""The ``routing:`` key of scenario and fabric files (fabric stage, pure).

``routing:`` says how the fabric is routed.  A string is the shorthand for the
control plane (``routing: bgp``); a mapping names each setting
(``routing: {control: bgp}``).  Settings:

``control`` (default ``sm``)
    The control plane an emulated backend runs.  ``sm``: the forwarding
    tables are computed from what is alive and installed by the harness, as
    an InfiniBand subnet manager does.  ``bgp``: every switch runs a routing
    daemon (FRR's bgpd on the netns backend, BGP unnumbered, RFC 7938 AS
    numbers), as RoCE fabrics run by SONiC do.  The model backend predicts
    the converged state either way.

``forwarding`` (default ``auto``)
    How switches spread flows over their live uplinks, which decides how
    much bandwidth a job's collectives get (:mod:`harness.invariants.traffic`).
    ``static``: per-destination tables, as OpenSM's ftree/updn/minhop build
    them (every flow to one destination takes one uplink: the destination's
    place among its leaf's ports modulo the live uplinks); ``adaptive``: flows spread over every
    live uplink (InfiniBand adaptive routing, Spectrum-X); ``ecmp``: per-flow
    hashing over the equal-cost uplinks (BGP fabrics).  ``auto`` is what the
    control plane gives unless told otherwise: ``static`` with ``sm`` (OpenSM
    routes are static per destination unless adaptive routing is enabled),
    ``ecmp`` with ``bgp``.

``paths`` (default ``up-down``)
    Which routes exist.  ``up-down``: a route climbs to a switch above both
    ends and comes down, never down-then-up through a lower tier (OpenSM
    ftree/updn, eBGP Clos fabrics with RFC 7938 AS numbering: no valley
    paths).  ``shortest``: any shortest path of the live switches (OpenSM
    minhop).

``engine`` (default ``ftree``)
    The OpenSM routing engine of an InfiniBand fabric (``control: sm``): the
    ibsim backend starts its master and standby OpenSMs with it (``-R``) and
    reports the engine that really made the tables (OpenSM falls back from
    ``ftree`` to ``updn`` when the topology is not a fat tree it accepts).
    ``ftree`` and ``updn`` route up-down, ``minhop`` and ``dor`` (dimension
    order; min-hop on a fabric that is no mesh) any shortest path, valleys
    included, so the engine decides ``paths`` unless that is stated too: an
    engine without ``paths`` implies its rule (``engine: minhop`` is ``paths:
    shortest``), ``paths`` without an engine implies ``ftree`` (up-down) or
    ``minhop`` (shortest), and a pair that contradicts itself (``engine:
    minhop`` with ``paths: up-down``) is bad input.  The model and netns
    backends route by the ``paths`` it implies.

``reroute`` (default ``1s``)
    Seconds from a link failure to the control plane's new routes: a ``kill``,
    ``cut`` or ``optic`` stalls the jobs whose traffic crossed it that long,
    and a job whose timeout is no longer crashes (:mod:`harness.invariants.timeline`).
    OpenSM sweeps on the port-down trap (seed-a800 rerouted in ~1 s in
    ibsim); bgpd drops the session of an interface that lost carrier at once
    and reconverges within about a second on a small fabric.  A hung switch
    that keeps its links up is found only by the BGP hold timer (9 s with
    ``frr defaults datacenter``) or BFD: that is the ``hang`` fault kind, timed by
    ``hold``, ``bfd`` and ``sweep`` (below) on top of this ``reroute``.

``link_up`` (default by the control plane: ``3s`` with ``sm``, ``3s`` with ``bgp``)
    Seconds from a repair (the ``restore`` of a ``kill``, ``cut`` or ``optic``)
    until the repaired link carries traffic again: a job the fault had cut off
    stalls for the outage *and* this bring-up, so a flap as long as the job's
    timeout minus ``link_up`` crashes it (:mod:`harness.invariants.timeline`).
    ``sm``: the port trains (Polling -> LinkUp; about 2 s is assumed for an
    HDR/NDR port: ibsim has no physical layer, so it is not measured) and the
    SM's heavy sweep on the trap makes it Active and routes over it (the 1 s of
    ``reroute``; ibsim's ReLink -> SUBNET UP is measured in docs/ibsim.md).
    ``bgp``: the interface comes up, bgpd opens the session (a first attempt
    that fails is retried after the 2 s connect timer the netns backend
    configures, :data:`harness.backends.netns.bgp.CONNECT_RETRY_S`), and the
    routes are advertised at once (``advertisement-interval 0``): about 3 s (a
    rebooted spine converged in 2.6 s on the small fabric, docs/netns.md).  A
    job that a reroute had already moved off the failed link pays nothing for
    the repair: the routes move back while the old path still works.  The
    restore of a killed switch counts as its links coming back; a switch that
    reboots takes minutes more: say so with a longer ``link_up``.

``hold`` (default ``9s``)
    The BGP hold timer (``control: bgp``): a session whose peer sent nothing for
    this long is dropped, which is how a **hung** switch (a ``hang``: links up,
    nothing forwarded, nothing answered) is found without BFD.  ``9s`` is FRR's
    ``frr defaults datacenter`` (keepalive 3 s, hold 9 s); another value runs
    ``timers bgp HOLD/3 HOLD`` on the netns backend.  FRR takes 3-65535 s.
    The session drops 6-9 s after the hang (the last keepalive came 0-3 s
    before it); the model takes the bound, 9 s.

``sweep`` (default ``10s``)
    The subnet manager's light-sweep interval (``control: sm``; OpenSM's
    ``sweep_interval``, default 10 s).  A hung switch sends no trap (its ports
    stay Active): OpenSM finds it when its next light sweep gets no answer to
    the SMPs it sends the switch, then routes around it in a heavy sweep (the
    ``reroute``).  The model takes the bound: the hang came just after a sweep.

``bfd`` (default ``off``)
    BFD on every BGP session (``control: bgp``; FRR's ``bfdd``), which finds a
    hung neighbour (links up, nothing answering) in three intervals instead of
    the 9 s hold timer.  ``off``; ``on``: timers chosen by the fabric's size
    (:data:`harness.backends.netns.bgp.BFD_BY_SIZE`: 300 ms x 3 on small
    fabrics, slower on large ones, where a few shared cores cannot keep up);
    or an interval (``bfd: 300ms``), detect multiplier 3.  No effect with
    ``control: sm``.

**How long a hang goes unnoticed** (:mod:`harness.invariants.outage`): the detection --
``hold`` under ``bgp`` without BFD, three BFD intervals with it, ``sweep``
under ``sm`` -- then the ``reroute`` that follows any detected failure.  Until
then the hung switch blackholes what is routed through it.

Each choice setting is a field of :class:`Routing` with its choices in
:data:`CHOICES` (the first is the default), each duration one in
:data:`DURATIONS`, so a new setting is one field and one table entry.  A
scenario's ``routing:`` wins over its fabric file's, and ``harness run
--routing`` over both (:meth:`Routing.merged`).

>>> parse_routing("bgp") == Routing(control="bgp")
True
>>> parse_routing({"control": "sm"}).describe()
'control sm, forwarding static, paths up-down, engine ftree, reroute 1s, link_up 3s, sweep 10s'
>>> parse_routing({"control": "bgp", "bfd": "0.3s"}).bfd, parse_routing({"bfd": True}).bfd
('300ms', 'on')
>>> parse_routing({"reroute": "9s", "paths": "shortest"}).reroute
9.0
>>> parse_routing({"engine": "minhop"}).paths
'shortest'
>>> parse_routing({"control": "bpg"})
Traceback (most recent call last):
...
harness.errors.ScenarioError: [control] routing control 'bpg' is unknown (did you mean 'bgp'?); \
use one of sm, bgp, e.g. routing: {control: bgp}
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any
from typing import Literal

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.inputs.checker import Checker
from harness.inputs.durations import parse_duration
from harness.inputs.suggest import closest
from harness.inputs.yaml import KeyPath

Control = Literal["sm", "bgp"]
CONTROLS: tuple[Control, ...] = ("sm", "bgp")
ForwardingSetting = Literal["auto", "static", "adaptive", "ecmp"]
FORWARDING_SETTINGS: tuple[ForwardingSetting, ...] = ("auto", "static", "adaptive", "ecmp")
#: The forwarding model a setting resolves to: how the flow engine places flows
#: (:mod:`harness.invariants.forwarding`).
Forwarding = Literal["static", "adaptive", "ecmp"]
FORWARDINGS: tuple[Forwarding, ...] = ("static", "adaptive", "ecmp")
DEFAULT_FORWARDING: Forwarding = "static"
"""OpenSM's ftree/updn/minhop tables are static per destination unless adaptive routing is on."""

PathRule = Literal["up-down", "shortest"]
PATH_RULES: tuple[PathRule, ...] = ("up-down", "shortest")
Engine = Literal["ftree", "updn", "minhop", "dor"]
ENGINES: tuple[Engine, ...] = ("ftree", "updn", "minhop", "dor")
#: The routes each OpenSM engine takes: up-down (no valleys) or any shortest path.
ENGINE_PATHS: dict[str, PathRule] = {
    "ftree": "up-down", "updn": "up-down", "minhop": "shortest", "dor": "shortest",
}  # fmt: skip
#: The engine a path rule implies when no engine is stated.
PATHS_ENGINE: dict[str, Engine] = {"up-down": "ftree", "shortest": "minhop"}
#: Seconds from a link failure to new routes unless ``reroute:`` says otherwise.
DEFAULT_REROUTE_S = 1.0

#: Every choice setting of ``routing:`` -> its choices (the first one is the default).
CHOICES: dict[str, tuple[str, ...]] = {
    "control": CONTROLS, "forwarding": FORWARDING_SETTINGS, "paths": PATH_RULES,
    "engine": ENGINES,
}  # fmt: skip
#: Seconds from a repair until the link carries traffic, by control plane, unless
#: ``link_up:`` says otherwise (link training + the SM's sweep; the BGP session + routes).
DEFAULT_LINK_UP_S: dict[str, float] = {"sm": 3.0, "bgp": 3.0}
#: Every duration setting -> its default, in seconds (None: by control plane, ``link_up``).
DURATIONS: dict[str, float | None] = {
    "reroute": DEFAULT_REROUTE_S,
    "link_up": None,
    "hold": 9.0,
    "sweep": 10.0,
}
#: The duration settings of one control plane only (shown and used only with it).
DURATION_CONTROL: dict[str, Control] = {"hold": "bgp", "sweep": "sm"}
#: FRR's BGP hold time: 0 (never) or 3-65535 s; the harness needs a finite one.
HOLD_MIN_S, HOLD_MAX_S = 3, 65_535
#: ``bfd: on``: the BFD interval (ms) by fabric size, as (most BGP sessions, interval), the
#: last for any size (measured in docs/netns.md: 300 ms flaps at 1,600 sessions on 2 cores).
BFD_ON_MS: tuple[tuple[int, int], ...] = ((256, 300), (1 << 30, 1000))
BFD_MULTIPLIER = 3  # BFD's detect multiplier: a peer is down after this many silent intervals
#: ``bfd``: off, on (timers by fabric size) or an interval; FRR takes 10-60000 ms.
BFD_WORDS: tuple[str, ...] = ("off", "on")
BFD_MIN_MS, BFD_MAX_MS = 10, 60_000
#: What each setting means (for the JSON Schema and ``--help``).
DOCS: dict[str, str] = {
    "control": "The control plane an emulated backend runs: sm (tables computed by the harness, "
    "as a subnet manager does) or bgp (FRR bgpd on every switch, BGP unnumbered).",
    "forwarding": "How switches spread flows over live uplinks: static (per-destination "
    "tables, OpenSM ftree d-mod-k), adaptive (spread over the live uplinks whose spine still "
    "reaches the destination leaf: IB adaptive routing, Spectrum-X), ecmp (per-flow hash); "
    "auto (default): static with control sm, ecmp with bgp.",
    "paths": "Which routes exist: up-down (default; no valley paths, as OpenSM ftree/updn and "
    "RFC 7938 eBGP route) or shortest (any shortest live path, as OpenSM minhop).",
    "engine": "The OpenSM routing engine (control sm; the ibsim backend runs it): ftree "
    "(default; OpenSM falls back to updn off a fat tree) or updn route up-down, minhop or dor "
    "any shortest path; implies paths (up-down or shortest) unless paths is stated, and must "
    "agree with it.",
    "reroute": "Seconds from a link failure to new routes (default 1s): a kill, cut or optic "
    "stalls the jobs whose traffic crossed it that long; 9s for a hung switch under BGP.",
    "link_up": "Seconds from a repair (restore of a kill, cut or optic) until the link carries "
    "traffic again: a job the fault cut off stalls for the outage plus this (default by control "
    "plane: 3s with sm, link training + the subnet manager's sweep; 3s with bgp, the session "
    "and its routes).",
    "bfd": "BFD on every BGP session (control bgp): off (default), on (timers by fabric size: "
    "300 ms x 3 on small fabrics, 1 s x 3 on large ones) or an interval such as 300ms "
    "(detect multiplier 3).",
    "hold": "The BGP hold timer (control bgp; default 9s, FRR's datacenter defaults): how long a "
    "hung switch goes unnoticed without BFD (then the reroute). 3-65535 s.",
    "sweep": "The subnet manager's light-sweep interval (control sm; default 10s, OpenSM's "
    "sweep_interval): a hung switch is found when the next sweep gets no answer from it "
    "(then the reroute).",
}
SHORTHAND = "control"  # what a bare string sets
ROUTING_KEYS: tuple[str, ...] = (*CHOICES, *DURATIONS, "bfd")


@dataclass(frozen=True, slots=True)
class Routing:
    """How a fabric is routed (see the module docstring for each setting)."""

    control: Control = "sm"
    forwarding: ForwardingSetting = "auto"
    paths: PathRule = "up-down"
    reroute: float = DEFAULT_REROUTE_S
    engine: Engine = "ftree"
    bfd: str = "off"  # off | on | "<N>ms" (parse_bfd)
    link_up: float | None = None  # None: the control plane's (DEFAULT_LINK_UP_S)
    hold: float = 9.0  # bgp: the hold timer (DURATIONS)
    sweep: float = 10.0  # sm: the light-sweep interval (DURATIONS)

    @property
    def link_up_s(self) -> float:
        """Seconds from a repair until the link carries traffic: as stated, or the control
        plane's (:data:`DEFAULT_LINK_UP_S`)."""
        return DEFAULT_LINK_UP_S[self.control] if self.link_up is None else self.link_up

    @property
    def serial_sweeps(self) -> bool:
        """Whether reroutes queue behind each other: a subnet manager sweeps one change at a
        time (``sm``); BGP reconverges each session on its own (``bgp``)."""
        return self.control == "sm"

    @property
    def forwarding_model(self) -> Forwarding:
        """The forwarding the flow engine uses: as stated, or what the control plane gives."""
        if self.forwarding != "auto":
            return self.forwarding
        return "ecmp" if self.control == "bgp" else "static"

    def describe(self) -> str:
        """``control bgp, forwarding ecmp``: every setting, as every report states it."""
        return ", ".join(f"{k} {v}" for k, v in self.to_dict().items())

    def to_dict(self) -> dict[str, str]:
        """Every setting by name; ``forwarding`` as resolved (``auto`` never shows).

        ``engine`` is OpenSM's, so it shows only with ``control sm``; ``bfd`` runs with
        BGP, so it shows only with ``control bgp``.
        """
        out = {k: str(getattr(self, k)) for k in CHOICES}
        out["forwarding"] = self.forwarding_model
        if self.control != "sm":
            del out["engine"]
        out.update({k: f"{self._duration(k):g}s" for k in DURATIONS
                    if DURATION_CONTROL.get(k, self.control) == self.control})  # fmt: skip
        if self.control == "bgp":  # BFD runs with BGP only
            out["bfd"] = self.bfd
        return out

    @classmethod
    def stating(cls, **settings: Any) -> Routing:
        """The defaults with ``settings`` stated over them, as a file's ``routing:`` states them
        (so ``engine`` and ``paths`` go together: :meth:`merged`).

        >>> Routing.stating(paths="shortest").engine, Routing.stating(forwarding="ecmp").paths
        ('minhop', 'up-down')
        """
        return DEFAULT.merged(RoutingOverride(tuple(settings.items())))

    def _duration(self, key: str) -> float:
        return self.link_up_s if key == "link_up" else float(getattr(self, key))

    def merged(self, over: RoutingOverride) -> Routing:
        """These settings with the ones ``over`` states replacing them.

        ``engine`` and ``paths`` go together: a layer that states one of them
        brings the other along unless it states that too (or the other already
        agrees), so a scenario's ``paths: shortest`` over a fabric file's
        ``engine: updn`` runs minhop.

        >>> ftree = Routing()
        >>> ftree.merged(parse_override({"engine": "dor"})).paths
        'shortest'
        >>> Routing(engine="updn").merged(parse_override({"paths": "shortest"})).engine
        'minhop'
        >>> Routing(engine="updn").merged(parse_override({"paths": "up-down"})).engine
        'updn'
        """
        if not over.settings:
            return self
        changes: dict[str, Any] = dict(over.settings)  # each value was checked against CHOICES
        paths = changes.get("paths")
        if "engine" in changes and paths is None:
            changes["paths"] = ENGINE_PATHS[changes["engine"]]
        elif "engine" not in changes and paths not in (None, ENGINE_PATHS[self.engine]):
            changes["engine"] = PATHS_ENGINE[paths]
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True)
class RoutingOverride:
    """The settings one source states (a file's ``routing:``, ``--routing``), others unset."""

    settings: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def control(cls, control: Control) -> RoutingOverride:
        """What ``harness run --routing CONTROL`` states."""
        return cls((("control", control),))

    @classmethod
    def of_options(cls, **options: Any) -> RoutingOverride | None:
        """What command-line options state (those given as None are not stated; None: none is).

        >>> RoutingOverride.of_options(forwarding="ecmp", reroute=None).settings
        (('forwarding', 'ecmp'),)
        """
        settings = tuple((k, v) for k, v in options.items() if v is not None)
        return cls(settings) if settings else None

    def states(self, key: str) -> bool:
        """Whether this source states setting ``key``."""
        return any(k == key for k, _ in self.settings)


def foreign_reroute(own: Routing, stated: RoutingOverride, run: Routing) -> str | None:
    """Why a scenario cannot run with another control plane than its own (``None``: it can).

    A ``reroute`` (or ``link_up``) a scenario states is its control plane's:
    ``--routing bgp`` on a scenario that says ``routing: {control: sm, reroute:
    8s}`` runs FRR, which reroutes as it does, so the 8 s (and what the scenario
    expects of it) no longer describes the fabric.

    >>> sm8 = parse_override({"control": "sm", "reroute": "8s"})
    >>> foreign_reroute(resolve(sm8), sm8, resolve(sm8, RoutingOverride.control("bgp")))
    'it states reroute 8s for control sm; control bgp reroutes as its own control plane does'
    >>> foreign_reroute(resolve(sm8), sm8, resolve(sm8)) is None
    True
    >>> up = parse_override({"link_up": "5s"})
    >>> foreign_reroute(resolve(up), up, resolve(up, RoutingOverride.control("bgp")))
    'it states link_up 5s for control sm; control bgp reroutes as its own control plane does'
    >>> resolve(parse_override("bgp")).link_up_s, resolve(up).link_up_s
    (3.0, 5.0)
    """
    timed = [k for k in DURATIONS if stated.states(k)]
    if run.control == own.control or not timed:
        return None
    said = ", ".join(f"{k} {own._duration(k):g}s" for k in timed)
    return (
        f"it states {said} for control {own.control}; control {run.control} "
        "reroutes as its own control plane does"
    )


DEFAULT = Routing()


def resolve(*layers: RoutingOverride | None) -> Routing:
    """The routing from the defaults and each layer over the previous one.

    >>> resolve(parse_override("bgp"), None, parse_override({"control": "sm"})).control
    'sm'
    """
    out = DEFAULT
    for layer in layers:
        if layer is not None:
            out = out.merged(layer)
    return out


def parse_override(raw: Any) -> RoutingOverride:
    """Read one ``routing:`` value; a :class:`ScenarioError` lists every problem.

    Each problem's ``key`` is the setting it is about (``control``), or empty
    when the value as a whole is wrong, so a loader can place it at file:line.
    """
    if isinstance(raw, str):
        raw = {SHORTHAND: raw}
    if not isinstance(raw, dict):
        msg = (
            f"routing must be a control plane ({' or '.join(CONTROLS)}) or a mapping of "
            f"settings, e.g. routing: bgp or routing: {{control: bgp}}; got {_what(raw)}"
        )
        raise ScenarioError(msg)
    problems: list[Problem] = []
    settings: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "bfd":
            try:
                settings[key] = parse_bfd(value)
            except ScenarioError as err:
                problems.append(Problem(str(err), key=str(key)))
            continue
        if key in DURATIONS:
            try:
                settings[key] = parse_duration(value, f"routing {key}", zero=key not in
                                               DURATION_CONTROL)  # fmt: skip
            except ScenarioError as err:
                problems.append(Problem(f"{err}, e.g. routing: {{{key}: 9s}}", key=str(key)))
                continue
            if key == "hold" and not (HOLD_MIN_S <= settings[key] <= HOLD_MAX_S
                                      and float(settings[key]).is_integer()):  # fmt: skip
                problems.append(
                    Problem(
                        f"routing hold {value!r}: FRR's BGP hold time is whole seconds from "
                        f"{HOLD_MIN_S} to {HOLD_MAX_S}, e.g. routing: {{hold: 9s}}",
                        key=str(key),
                    )
                )
                del settings[key]
            continue
        if key not in CHOICES:
            problems.append(
                Problem(
                    f"unknown routing setting {key!r}{_near(key, ROUTING_KEYS)}; the settings "
                    f"are {', '.join(ROUTING_KEYS)}, e.g. routing: {{control: bgp}}",
                    key=str(key),
                )
            )
            continue
        choices = CHOICES[key]
        if value not in choices:
            problems.append(
                Problem(
                    f"routing {key} {value!r} is unknown{_near(value, choices)}; use one of "
                    f"{', '.join(choices)}, e.g. routing: {{{key}: {choices[-1]}}}",
                    key=str(key),
                )
            )
            continue
        settings[key] = str(value)
    problems.extend(_disagreements(settings))
    if problems:
        raise ScenarioError(problems)
    return RoutingOverride(tuple(settings.items()))


def check_override(c: Checker, raw: Any, path: KeyPath) -> RoutingOverride:
    """A ``routing:`` value (scenario or fabric file); nothing stated when absent or bad.

    Each problem of :func:`parse_override` is added to ``c`` at the setting it is about.
    """
    if raw is None:
        return RoutingOverride()
    try:
        return parse_override(raw)
    except ScenarioError as err:
        for p in err.problems:
            c.add(p.message, (*path, p.key) if p.key else path, key=bool(p.key))
        return RoutingOverride()


def _disagreements(settings: dict[str, Any]) -> list[Problem]:
    """An ``engine`` that contradicts the ``paths`` or ``control`` stated beside it."""
    engine = settings.get("engine")
    if engine is None:
        return []
    if settings.get("control", "sm") != "sm":
        return [
            Problem(
                f"routing engine {engine} is an OpenSM routing engine, for control sm; control "
                f"{settings['control']} routes without one: drop engine or use control sm",
                key="engine",
            )
        ]
    paths = settings.get("paths")
    if paths is None or ENGINE_PATHS[engine] == paths:
        return []
    agree = [e for e in ENGINES if ENGINE_PATHS[e] == paths]
    kind = "up-down routes (no valleys)" if paths == "shortest" else "any shortest path (valleys)"
    return [
        Problem(
            f"routing engine {engine} takes {kind}, which contradicts paths {paths}; drop one of "
            f"them, or use engine {' or '.join(agree)} with paths {paths}, "
            f"e.g. routing: {{engine: {agree[0]}, paths: {paths}}}",
            key="engine",
        )
    ]


def parse_bfd(raw: Any) -> str:
    """A ``bfd:`` value: ``off``, ``on`` or an interval as ``"<N>ms"`` (YAML's off/on are bools).

    >>> parse_bfd(False), parse_bfd("on"), parse_bfd("100ms"), parse_bfd(0.25)
    ('off', 'on', '100ms', '250ms')
    >>> parse_bfd("5ms")
    Traceback (most recent call last):
    ...
    harness.errors.ScenarioError: routing bfd '5ms': FRR's BFD intervals are 10-60000 ms; \
use off, on or an interval, e.g. routing: {bfd: 300ms}
    """
    if isinstance(raw, bool):
        return BFD_WORDS[raw]
    if raw in BFD_WORDS:
        return str(raw)
    hint = "use off, on or an interval, e.g. routing: {bfd: 300ms}"
    try:
        seconds = parse_duration(raw, "routing bfd")
    except ScenarioError as err:
        msg = f"{err}; {hint}"
        raise ScenarioError(msg) from None
    ms = round(seconds * 1000)
    if not BFD_MIN_MS <= ms <= BFD_MAX_MS:
        msg = f"routing bfd {raw!r}: FRR's BFD intervals are {BFD_MIN_MS}-{BFD_MAX_MS} ms; {hint}"
        raise ScenarioError(msg)
    return f"{ms}ms"


def parse_routing(raw: Any) -> Routing:
    """One ``routing:`` value on its own, over the defaults."""
    return resolve(parse_override(raw))


def control_of(value: str) -> Control:
    """``value`` as a control plane (``--routing``); bad input names the choices."""
    if value not in CONTROLS:
        msg = f"--routing takes {' or '.join(CONTROLS)}, not {value!r}{_near(value, CONTROLS)}"
        raise ScenarioError(msg)
    return value


def engine_of(value: str) -> Engine:
    """``value`` as an OpenSM routing engine (``--engine``); bad input names the choices."""
    if value not in ENGINES:
        msg = f"--engine takes {', '.join(ENGINES)}, not {value!r}{_near(value, ENGINES)}"
        raise ScenarioError(msg)
    return value


def _near(word: object, choices: tuple[str, ...]) -> str:
    near = closest(str(word), list(choices), n=1, cutoff=0.5)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _what(value: object) -> str:
    if value is None:
        return "nothing"
    return {bool: "true/false", int: "a number", float: "a number", list: "a list"}.get(
        type(value), type(value).__name__
    )
