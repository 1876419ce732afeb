"""Design-free audit on three tiers: missing spine-core cables are ``spine-uplinks`` departures.

A small three-tier fabric (2 pods x 2 spines, one core per spine index, 4
cables per spine-core pair) is written as an ibsim net file (ibnetdiscover
syntax) by the exporter, a cable or a spine's uplinks deleted at both ends,
and read back: the departure is found, and nothing else.
"""

from __future__ import annotations

import functools

from harness.exporters.ibsim import to_ibsim_net
from harness.fabric import three_tier
from harness.importers.ibnetdiscover import fabric_from_ibnetdiscover
from harness.importers.ibnetdiscover import parse_ibnetdiscover
from harness.planning.audit.regular import RegularAudit
from harness.planning.audit.regular import audit_regular


@functools.cache
def net() -> str:
    f = three_tier(sus=4, nodes_per_su=2, sus_per_pod=2, spines_per_pod=2, radix=8,
                   storage=False, node_overrides={"rails": 2})  # fmt: skip
    return to_ibsim_net(f)


def audited(drop: set[tuple[str, str]]) -> RegularAudit:
    """The net without the port lines (record id, port) in ``drop``, audited."""
    out, record = [], ""
    for line in net().splitlines():
        if line.startswith(("Switch", "Hca", "Ca")):
            record = line.split('"')[1]
        if line.startswith("[") and (record, line[1 : line.index("]")]) in drop:
            continue
        out.append(line)
    topo = parse_ibnetdiscover("\n".join(out), "3t.net")
    return audit_regular(fabric_from_ibnetdiscover(topo))


def test_the_healthy_three_tier_fabric_has_no_departure() -> None:
    report = audited(set())
    assert report.ok, report.lines()


def test_one_missing_spine_core_cable() -> None:
    report = audited({("pod01/spine-01", "5"), ("core-g01-01", "1")})
    assert report.kinds() == [("spine-uplinks", "pod01/spine-01")]
    assert report.lines() == [
        "spine pod01/spine-01 has 3 of 4 core uplinks: missing 1 to core-g01-01"
    ]
    assert report.departures[0].detail == (("core-g01-01", 1),)


def test_a_spine_cut_off_from_every_core() -> None:
    drop = {("pod02/spine-02", p) for p in "5678"}
    drop |= {("core-g02-01", p) for p in "5678"}
    report = audited(drop)
    assert report.kinds() == [("spine-uplinks", "pod02/spine-02")]
    assert report.lines() == [
        "spine pod02/spine-02 has 0 of 4 core uplinks: no cable to any core (its peers have them)"
    ]
