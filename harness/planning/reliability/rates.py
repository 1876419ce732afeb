"""Rates files: what fails how often on a fabric, how long its repair takes, how jobs restart.

(Planning stage, pure.)  A rates file is strict YAML, checked as scenario and fabric files
are (:class:`~harness.inputs.checker.Checker`): every problem is reported at once, each at
``file:line:column`` with what to write instead.  Rates are always an input with a named
``source:``, never a constant in code (sources differ about 30x)::

    name: llama3-2024
    source: "Llama 3 report, 16,384 H100, 54 days"
    classes:
      - {class: access-cable, fault: cut, select: {tier: access}, per: link,
         rate_per_month: 0.00057, repair: {dist: lognormal, median: 2d, p90: 9d}}
    domains:
      - {name: pdu, select: {kind: node}, group_by: [su], size: 10, rate_per_month: 0.001,
         repair: {dist: fixed, time: 6h}}
    restart: {after: 20m, spares: true}

A month is :data:`MONTH_S` (365.25 / 12 days).  Durations take ``ms``, ``s``, ``m``, ``h``
and ``d`` (days), or seconds.

>>> r = parse_rates_text('''
... name: tiny
... source: "a test"
... classes:
...   - {class: gpu, fault: kill, select: {kind: gpu}, per: server, rate_per_month: 0.07,
...      repair: {dist: exponential, mean: 17h}}
... restart: {after: 20m, spares: true}
... ''', "tiny.yaml")
>>> r.classes[0].per, r.classes[0].repair.mean_s / 3600, r.restart.after_s
('server', 17.0, 1200.0)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Literal

from harness.errors import ScenarioError
from harness.faults.fault import FAULT_KINDS
from harness.faults.fault import FaultKind
from harness.faults.selectors import STRUCT_KEYS
from harness.faults.selectors import Selector
from harness.faults.selectors import parse_selector
from harness.inputs.checker import Checker
from harness.inputs.checker import type_word
from harness.inputs.durations import parse_duration
from harness.inputs.values import is_number
from harness.inputs.yaml import KeyPath
from harness.inputs.yaml import read_yaml
from harness.inputs.yaml import read_yaml_file

#: Seconds in a month (a Julian year's twelfth: 30.44 days), the unit of ``rate_per_month``.
MONTH_S = 365.25 / 12 * 86400.0
#: The z-score of the 90th percentile of a normal distribution (lognormal ``p90``).
Z90 = 1.2815515655446004

Unit = Literal["link", "switch", "server", "gpu", "nic", "port", "element"]
UNITS: tuple[str, ...] = ("link", "switch", "server", "gpu", "nic", "port", "element")
DISTS = ("fixed", "exponential", "lognormal", "empirical")
_DIST_KEYS = {
    "fixed": ("time",),
    "exponential": ("mean",),
    "lognormal": ("median", "p90"),
    "empirical": ("times",),
}
TOP_KEYS = ("name", "source", "classes", "domains", "restart")
CLASS_KEYS = ("class", "fault", "select", "per", "rate_per_month", "repair")
DOMAIN_KEYS = ("name", "fault", "select", "group_by", "size", "rate_per_month", "repair")
RESTART_KEYS = ("after", "spares", "checkpoint")
#: Fault kinds a rates class may name: those that break something until repaired.
RATE_FAULTS = ("kill", "cut", "optic", "drain", "hang")
_DAYS = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*d\s*$")


def parse_span(raw: Any, what: str) -> float:
    """A duration in seconds, also in days (``2d``).

    >>> parse_span("2d", "median"), parse_span("4h", "time"), parse_span(90, "time")
    (172800.0, 14400.0, 90.0)
    """
    if isinstance(raw, str):
        m = _DAYS.match(raw)
        if m is not None:
            value = float(m.group(1)) * 86400.0
            if value <= 0:
                msg = f"{what} must be a positive duration, got {raw!r}"
                raise ScenarioError(msg)
            return value
    try:
        return parse_duration(raw, what)
    except ScenarioError:
        msg = f"{what} {raw!r} is not a duration; write e.g. 9d, 4h, 20m, 30s or seconds"
        raise ScenarioError(msg) from None


@dataclass(frozen=True, slots=True)
class Repair:
    """A repair-time distribution, in seconds.

    ``fixed`` (``a`` the time), ``exponential`` (``a`` the mean), ``lognormal`` (``a`` the
    median, ``b`` the 90th percentile), ``empirical`` (``times``, drawn uniformly).

    >>> Repair("lognormal", 2.0, 9.0).mean_s > 2.0, Repair("empirical", times=(1.0, 3.0)).mean_s
    (True, 2.0)
    """

    dist: str
    a: float = 0.0
    b: float = 0.0
    times: tuple[float, ...] = ()

    @property
    def sigma(self) -> float:
        """A lognormal's sigma (from median and p90); 0 for the others."""
        return math.log(self.b / self.a) / Z90 if self.dist == "lognormal" else 0.0

    @property
    def mean_s(self) -> float:
        """The mean repair time."""
        if self.dist == "lognormal":
            return self.a * math.exp(self.sigma**2 / 2)
        if self.dist == "empirical":
            return sum(self.times) / len(self.times)
        return self.a

    def describe(self) -> str:
        """In words (``lognormal median 2d p90 9d``)."""
        if self.dist == "fixed":
            return f"fixed {span_text(self.a)}"
        if self.dist == "exponential":
            return f"exponential mean {span_text(self.a)}"
        if self.dist == "lognormal":
            return f"lognormal median {span_text(self.a)} p90 {span_text(self.b)}"
        return f"empirical ({len(self.times)} times, mean {span_text(self.mean_s)})"


def span_text(seconds: float) -> str:
    """A duration in its largest whole-ish unit.

    >>> span_text(172800.0), span_text(14400.0), span_text(1200.0), span_text(5.0)
    ('2d', '4h', '20m', '5s')
    """
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("m", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g}{unit}"
    return f"{seconds:.3g}s"


@dataclass(frozen=True, slots=True)
class FaultClass:
    """One class of failures: what breaks (``fault`` on ``select``), per what unit, how often
    (per unit per month) and how long its repair takes.  ``where`` is its ``file:line``."""

    name: str
    fault: FaultKind
    select: Selector
    per: str
    rate_per_month: float
    repair: Repair
    where: str = ""


@dataclass(frozen=True, slots=True)
class FailureDomain:
    """Elements that fail together (a PDU feeding servers, a line card's ports, a leaf pair on
    one feed): ``select`` grouped by ``group_by`` (su, rail, pod, plane, node) and cut into
    runs of ``size`` in id order (``None``: the whole group); each run fails at
    ``rate_per_month`` and every element of it gets ``fault`` (kill by default) at once."""

    name: str
    select: Selector
    group_by: tuple[str, ...]
    size: int | None
    rate_per_month: float
    repair: Repair
    fault: FaultKind = FaultKind.KILL
    where: str = ""


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """How an interrupted job comes back: ``after`` seconds on spares (``spares``), or
    ``after`` seconds once the faults that stop it are repaired (wait for the repair).
    ``checkpoint_s``: its checkpoint interval (half of it is lost work per interruption)."""

    after_s: float = 1200.0
    spares: bool = True
    checkpoint_s: float | None = None

    def describe(self) -> str:
        """In words."""
        how = "on spares" if self.spares else "once repaired"
        ck = f", checkpoint every {span_text(self.checkpoint_s)}" if self.checkpoint_s else ""
        return f"restart {span_text(self.after_s)} after an interruption {how}{ck}"


@dataclass(frozen=True, slots=True)
class Rates:
    """A rates file: named, with its source, its classes and domains, and the restart policy."""

    name: str
    source: str
    classes: tuple[FaultClass, ...]
    domains: tuple[FailureDomain, ...] = ()
    restart: RestartPolicy = RestartPolicy()
    path: str = ""


# -- reading ---------------------------------------------------------------------------------


def load_rates(path: str | Path) -> Rates:
    """Read and check a rates file; raise every problem at once (:class:`ScenarioError`)."""
    return _parse(Checker(read_yaml_file(path, "rates")))


def parse_rates_text(text: str, path: str) -> Rates:
    """:func:`load_rates` on text (``path`` names it in messages)."""
    return _parse(Checker(read_yaml(text, path)))


def _parse(ck: Checker) -> Rates:
    raw = ck.mapping(ck.doc.data, (), "a rates file")
    if raw is None:
        ck.raise_if_any()
        raise AssertionError  # pragma: no cover - mapping() recorded a problem
    ck.check_keys(raw, (), TOP_KEYS, "a rates file")
    name = ck.name(raw.get("name"), ("name",), "the rates' name") if "name" in raw else ""
    if "name" not in raw:
        ck.add("a rates file needs a name: (e.g. name: llama3-2024)", ())
    source = raw.get("source")
    if not isinstance(source, str) or not source.strip():
        ck.add(
            "a rates file needs source: naming where its figures come from (e.g. source: "
            '"Llama 3 report, 16,384 H100, 54 days"); rates differ 30x between sources',
            ("source",) if "source" in raw else (),
        )
    classes: list[FaultClass] = []
    items = raw.get("classes")
    if not isinstance(items, list) or not items:
        ck.add(
            f"classes: is a list of failure classes, not {type_word(items)}; e.g. "
            "- {class: access-cable, fault: cut, select: {tier: access}, per: link, "
            "rate_per_month: 0.00057, repair: {dist: fixed, time: 2d}}",
            ("classes",) if "classes" in raw else (),
        )
        items = []
    for i, item in enumerate(items):
        c = _fault_class(ck, item, ("classes", i))
        if c is not None:
            classes.append(c)
    seen: set[str] = set()
    for i, c in enumerate(classes):
        if c.name in seen:
            ck.add(f"class {c.name!r} is named twice; give each class its own name",
                   ("classes", i, "class"))  # fmt: skip
        seen.add(c.name)
    domains: list[FailureDomain] = []
    draw = raw.get("domains", [])
    if not isinstance(draw, list):
        ck.add(f"domains: is a list, not {type_word(draw)}", ("domains",))
        draw = []
    for i, item in enumerate(draw):
        d = _domain(ck, item, ("domains", i))
        if d is not None:
            domains.append(d)
    restart = _restart(ck, raw.get("restart"), ("restart",)) if "restart" in raw else None
    ck.raise_if_any()
    return Rates(name, str(source), tuple(classes), tuple(domains), restart or RestartPolicy(),
                 ck.doc.path)  # fmt: skip


def _where(ck: Checker, path: KeyPath) -> str:
    line, _ = ck.doc.position(path)
    return f"{ck.doc.path}:{line}"


def _rate(ck: Checker, raw: dict[str, Any], path: KeyPath) -> float:
    if "rate_per_month" not in raw:
        ck.add("missing rate_per_month: (failures per unit per month, e.g. 0.00057)", path)
        return 0.0
    value = raw["rate_per_month"]
    if not is_number(value) or not (0 < float(value) < float("inf")):
        ck.add(f"rate_per_month must be a positive number (failures per unit per month), "
               f"not {value!r}", (*path, "rate_per_month"))  # fmt: skip
        return 0.0
    return float(value)


def _selector(ck: Checker, raw: dict[str, Any], path: KeyPath) -> Selector | None:
    if "select" not in raw:
        ck.add("missing select: (a selector, e.g. {tier: access} or {kind: gpu})", path)
        return None
    try:
        return parse_selector(raw["select"])
    except ScenarioError as err:
        ck.wrap(err, (*path, "select"))
        return None


def _fault(ck: Checker, raw: dict[str, Any], path: KeyPath, default: str | None) -> FaultKind:
    value = raw.get("fault", default)
    if value is None:
        ck.add(f"missing fault: (one of {', '.join(RATE_FAULTS)})", path)
        return FaultKind.KILL
    if value not in RATE_FAULTS:
        hint = (" (a degraded or flaky link is not down; its rate is not an interruption)"
                if value in FAULT_KINDS else "")  # fmt: skip
        ck.add(f"fault {value!r} is not one a rates file takes{hint}: use one of "
               f"{', '.join(RATE_FAULTS)}", (*path, "fault"))  # fmt: skip
        return FaultKind.KILL
    return FAULT_KINDS[value]


def _fault_class(ck: Checker, item: Any, path: KeyPath) -> FaultClass | None:
    raw = ck.mapping(item, path, "a failure class")
    if raw is None:
        return None
    ck.check_keys(raw, path, CLASS_KEYS, "a failure class")
    name = ck.name(raw.get("class"), (*path, "class"), "class") if "class" in raw else ""
    if "class" not in raw:
        ck.add("missing class: (its name, e.g. access-cable)", path)
    kind = _fault(ck, raw, path, None)
    sel = _selector(ck, raw, path)
    per = raw.get("per")
    if per not in UNITS:
        ck.add(f"per: is the unit the rate counts, one of {', '.join(UNITS)}; not {per!r}",
               (*path, "per") if "per" in raw else path)  # fmt: skip
    rate = _rate(ck, raw, path)
    repair = _repair(ck, raw.get("repair"), (*path, "repair")) if "repair" in raw else None
    if "repair" not in raw:
        ck.add("missing repair: (e.g. {dist: fixed, time: 4h})", path)
    if sel is None or per not in UNITS or repair is None or not rate:
        return None
    return FaultClass(name, kind, sel, str(per), rate, repair, _where(ck, path))


def _domain(ck: Checker, item: Any, path: KeyPath) -> FailureDomain | None:
    raw = ck.mapping(item, path, "a failure domain")
    if raw is None:
        return None
    ck.check_keys(raw, path, DOMAIN_KEYS, "a failure domain")
    name = ck.name(raw.get("name"), (*path, "name"), "domain name") if "name" in raw else ""
    if "name" not in raw:
        ck.add("missing name: (e.g. name: pdu)", path)
    kind = _fault(ck, raw, path, "kill")
    sel = _selector(ck, raw, path)
    by = raw.get("group_by", [])
    by = [by] if isinstance(by, str) else by
    if not isinstance(by, list) or any(k not in STRUCT_KEYS for k in by):
        ck.add(f"group_by: lists keys among {', '.join(STRUCT_KEYS)}, not {raw.get('group_by')!r}",
               (*path, "group_by"))  # fmt: skip
        by = []
    size = raw.get("size")
    if size is not None and not (isinstance(size, int) and not isinstance(size, bool)
                                 and size >= 1):  # fmt: skip
        ck.add(f"size: is a whole number of elements >= 1, not {size!r}", (*path, "size"))
        size = None
    rate = _rate(ck, raw, path)
    repair = _repair(ck, raw.get("repair"), (*path, "repair")) if "repair" in raw else None
    if "repair" not in raw:
        ck.add("missing repair: (e.g. {dist: fixed, time: 6h})", path)
    if sel is None or repair is None or not rate:
        return None
    return FailureDomain(name, sel, tuple(by), size, rate, repair, kind, _where(ck, path))


def _span(ck: Checker, raw: dict[str, Any], key: str, path: KeyPath) -> float:
    if key not in raw:
        ck.add(f"missing {key}: (a duration such as 2d, 4h or 20m)", path)
        return 0.0
    try:
        return parse_span(raw[key], key)
    except ScenarioError as err:
        ck.wrap(err, (*path, key))
        return 0.0


def _repair(ck: Checker, item: Any, path: KeyPath) -> Repair | None:
    raw = ck.mapping(item, path, "repair")
    if raw is None:
        return None
    dist = raw.get("dist")
    if dist not in DISTS:
        ck.add(
            f"repair dist: is one of {', '.join(DISTS)}, not {dist!r} (e.g. {{dist: "
            "lognormal, median: 2d, p90: 9d}})",
            (*path, "dist") if "dist" in raw else path,
        )
        return None  # fmt: skip
    ck.check_keys(raw, path, ("dist", *_DIST_KEYS[dist]), f"a {dist} repair")
    if dist == "empirical":
        times = raw.get("times")
        if not isinstance(times, list) or not times:
            ck.add("an empirical repair lists its times: (e.g. times: [2d, 3h, 36h])",
                   (*path, "times") if "times" in raw else path)  # fmt: skip
            return None
        spans = []
        for i, t in enumerate(times):
            try:
                spans.append(parse_span(t, "a repair time"))
            except ScenarioError as err:
                ck.wrap(err, (*path, "times", i))
        return Repair(dist, times=tuple(spans)) if len(spans) == len(times) else None
    keys = _DIST_KEYS[dist]
    values = [_span(ck, raw, k, path) for k in keys]
    if not all(values):
        return None
    if dist == "lognormal" and values[1] <= values[0]:
        ck.add(f"a lognormal's p90 ({raw['p90']}) must be above its median ({raw['median']})",
               (*path, "p90"))  # fmt: skip
        return None
    return Repair(dist, values[0], values[1] if len(values) > 1 else 0.0)


def _restart(ck: Checker, item: Any, path: KeyPath) -> RestartPolicy | None:
    raw = ck.mapping(item, path, "restart")
    if raw is None:
        return None
    ck.check_keys(raw, path, RESTART_KEYS, "restart")
    after = _span(ck, raw, "after", path) if "after" in raw else RestartPolicy().after_s
    spares = raw.get("spares", True)
    if not isinstance(spares, bool):
        ck.add(f"spares: is true (restart on spare servers) or false (wait for the repair), "
               f"not {spares!r}", (*path, "spares"))  # fmt: skip
        spares = True
    checkpoint = _span(ck, raw, "checkpoint", path) if "checkpoint" in raw else None
    return RestartPolicy(after, spares, checkpoint or None)
