"""A rates file on one fabric: the units that fail, and the fault each failure applies.

(Planning stage, pure.)  Each class's selector is resolved in its fault kind's domain
(cables for ``cut``, ports for ``optic``, elements for ``kill``); its targets are grouped
into the units its rate counts (``per: server`` groups a server's GPUs, NICs or cables; the
others make each target a unit of its own, and check the targets are of that kind).  A
failure of a unit hits one of its targets, drawn uniformly.  A failure domain's groups are
units whose failure applies one fault to all their elements at once.

>>> from harness.fabric import preset
>>> from harness.planning.reliability.rates import parse_rates_text
>>> r = parse_rates_text('''
... name: t
... source: a test
... classes:
...   - {class: gpu, fault: kill, select: {kind: gpu}, per: server, rate_per_month: 0.07,
...      repair: {dist: fixed, time: 17h}}
... domains:
...   - {name: pdu, select: {kind: node}, group_by: [su], size: 10, rate_per_month: 0.001,
...      repair: {dist: fixed, time: 6h}}
... ''', "t.yaml")
>>> plan = plan_units(preset("seed-a800"), r)
>>> [(s.name, len(s.units), len(s.units[0])) for s in plan]
[('gpu', 200, 8), ('pdu', 20, 10)]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field

from harness.errors import ScenarioError
from harness.fabric.model import SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.faults.fault import AppliedFault
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.selectors import Domain
from harness.faults.selectors import Selector
from harness.faults.selectors import port_arrays
from harness.faults.selectors import resolve
from harness.planning.reliability.rates import FailureDomain
from harness.planning.reliability.rates import FaultClass
from harness.planning.reliability.rates import Rates
from harness.planning.reliability.rates import Repair

_UNIT_KINDS: dict[str, frozenset[Kind]] = {
    "switch": frozenset(SWITCH_KINDS),
    "gpu": frozenset({Kind.GPU}),
    "nic": frozenset({Kind.NIC}),
}


@dataclass(frozen=True, slots=True)
class Source:
    """One class or domain on a fabric: its units (each a tuple of targets), its rate per unit
    per month, its repair, and the fault it applies to a target (an index in its domain, or
    for a domain a unit index)."""

    name: str
    kind: FaultKind
    domain: Domain
    units: tuple[tuple[int, ...], ...]
    rate_per_month: float
    repair: Repair
    together: bool = False  # a failure domain: a failure takes the whole unit
    ports: Mapping[int, tuple[str, int]] = field(default_factory=dict)  # port -> (id, cable)

    def fault(self, fabric: Fabric, target: int) -> AppliedFault:
        """The applied fault of a failure of ``target`` (of unit ``target`` when together).

        Built from the indices directly (what :meth:`Fault.resolve` of the target's id gives;
        the kind was checked against the targets when the source was planned)."""
        if self.together:
            members = self.units[target]
            fault = Fault(self.kind, Selector(ids=tuple(fabric.ids[i] for i in members)))
            return AppliedFault(fault, tuple(members), (), ())
        if self.domain is Domain.ELEMENTS:
            return AppliedFault(Fault(self.kind, Selector(ids=(fabric.ids[target],))),
                                (target,), (), ())  # fmt: skip
        if self.domain is Domain.PORTS:
            name, cable = self.ports[target]
            return AppliedFault(Fault(self.kind, Selector(ids=(name,))), (), (cable,), (0.0,),
                                (name,))  # fmt: skip
        link_id = fabric.link_id(target)
        return AppliedFault(Fault(self.kind, Selector(ids=(link_id,))), (), (target,), (0.0,))


def server_of(fabric: Fabric, element: int) -> int:
    """The server holding ``element`` (itself for a server); -1 for a switch."""
    e = element
    while e >= 0:
        if int(fabric.kind[e]) == int(Kind.NODE):
            return e
        e = int(fabric.parent[e])
    return -1


def _target_server(fabric: Fabric, domain: Domain, target: int) -> int:
    if domain is Domain.ELEMENTS:
        return server_of(fabric, target)
    if domain is Domain.PORTS:
        plinks, _ = port_arrays(fabric)
        target = int(plinks[target])
    a, b = int(fabric.link_a[target]), int(fabric.link_b[target])
    s = server_of(fabric, a)
    return s if s >= 0 else server_of(fabric, b)


def _located(where: str, err: ScenarioError) -> ScenarioError:
    from harness.errors import Origin

    path, _, line = where.rpartition(":")
    return Origin(path, int(line) if line.isdigit() else 0).locate(err)


def plan_units(fabric: Fabric, rates: Rates) -> tuple[Source, ...]:
    """Every class and domain of ``rates`` resolved on ``fabric``; every problem at once."""
    out: list[Source] = []
    problems: list[ScenarioError] = []
    for c in rates.classes:
        try:
            out.append(_class_source(fabric, c))
        except ScenarioError as err:
            problems.append(_located(c.where, err))
    for d in rates.domains:
        try:
            out.append(_domain_source(fabric, d))
        except ScenarioError as err:
            problems.append(_located(d.where, err))
    if problems:
        raise ScenarioError([p for err in problems for p in err.problems])
    return tuple(out)


def _class_source(fabric: Fabric, c: FaultClass) -> Source:
    name, kind, sel, per, rate, repair = (
        c.name,
        c.fault,
        c.select,
        c.per,
        c.rate_per_month,
        c.repair,
    )
    domain = kind.domain
    targets = [int(i) for i in resolve(sel, fabric, domain)]
    Fault(kind, Selector(ids=(_target_id(fabric, domain, targets[0]),))).resolve(fabric)
    if per == "server":
        groups: dict[int, list[int]] = {}
        for t in targets:
            s = _target_server(fabric, domain, t)
            if s < 0:
                msg = (
                    f"class {name}: per: server, but {_target_id(fabric, domain, t)} is in "
                    "no server; narrow select: or count per: link/switch/element"
                )
                raise ScenarioError(msg)  # fmt: skip
            groups.setdefault(s, []).append(t)
        units = tuple(tuple(g) for _, g in sorted(groups.items()))
    else:
        _check_per(fabric, name, domain, per, targets)
        units = tuple((t,) for t in targets)
    ports: dict[int, tuple[str, int]] = {}
    if domain is Domain.PORTS:
        names = list(fabric.port_index)
        plinks, _ = port_arrays(fabric)
        ports = {t: (names[t], int(plinks[t])) for t in targets}
    return Source(name, kind, domain, units, rate, repair, ports=ports)


def _target_id(fabric: Fabric, domain: Domain, t: int) -> str:
    if domain is Domain.CABLES or domain is Domain.LINKS:
        return fabric.link_ids[t]
    if domain is Domain.PORTS:
        return list(fabric.port_index)[t]
    return fabric.ids[t]


def _check_per(fabric: Fabric, name: str, domain: Domain, per: str, targets: list[int]) -> None:
    want = {"link": (Domain.CABLES, Domain.LINKS), "port": (Domain.PORTS,)}.get(per)
    if want is not None:
        if domain not in want:
            msg = (
                f"class {name}: per: {per}, but its fault picks {domain.value}; count it per "
                "the unit its fault hits (cut: link, optic: port, kill: switch/server/...)"
            )
            raise ScenarioError(msg)  # fmt: skip
        return
    if domain is not Domain.ELEMENTS:
        msg = f"class {name}: per: {per}, but its fault picks {domain.value}; use per: link"
        raise ScenarioError(msg)
    kinds = _UNIT_KINDS.get(per)
    if kinds is None:
        return  # per: element
    bad = [t for t in targets if Kind(int(fabric.kind[t])) not in kinds]
    if bad:
        msg = (f"class {name}: per: {per}, but select: also picks {fabric.ids[bad[0]]} (a "
               f"{Kind(int(fabric.kind[bad[0]])).label}); narrow select: (kind:, tier:) or "
               "count per: element")  # fmt: skip
        raise ScenarioError(msg)


def _domain_source(fabric: Fabric, d: FailureDomain) -> Source:
    name, kind, sel, by, size = d.name, d.fault, d.select, d.group_by, d.size
    rate, repair = d.rate_per_month, d.repair
    targets = [int(i) for i in resolve(sel, fabric, Domain.ELEMENTS)]
    groups: dict[tuple[int, ...], list[int]] = {}
    arrays = {"su": fabric.su, "rail": fabric.rail, "node": fabric.node_no, "pod": fabric.pod,
              "plane": fabric.plane}  # fmt: skip
    for t in targets:
        key = tuple(int(arrays[k][t]) for k in by)
        groups.setdefault(key, []).append(t)
    units: list[tuple[int, ...]] = []
    for _, members in sorted(groups.items()):
        step = size or len(members)
        units += [tuple(members[i : i + step]) for i in range(0, len(members), step)]
    src = Source(name, kind, Domain.ELEMENTS, tuple(units), rate, repair, together=True)
    if units:  # the kind applies to what it groups
        Fault(kind, Selector(ids=tuple(fabric.ids[i] for i in units[0]))).resolve(fabric)
    return src
