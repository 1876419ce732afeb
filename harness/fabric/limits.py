"""The largest fabric the harness builds, stated once and checked before allocating.

Every limit is well above the largest preset (``clos-100k``: 380,001
elements, 1,088,000 links, 12,800 servers, 400 SUs, 64-port switches), so a
real design never meets one; a mistyped parameter (``nodes_per_su:
1000000000``, ``gpus: 100000000``, ``sus: 10**30``) is refused at once with the
limit's name, instead of running for a minute and ending in ``MemoryError``.

Generators check their parameters with :func:`check_fabric_size` before they
build anything; :class:`~harness.fabric.builder.FabricBuilder` checks the
element and link counts as it goes (fabric files, importers), and the node
templates check their fields against :data:`NODE_FIELDS`.  The table is
documented in ``docs/scenario-format.md`` (tests keep the two in step).

>>> check_fabric_size("two-tier", servers=12_800, parts=28, internal_links=40,
...                   switches=6_400, cables=1_000_000)
>>> try:
...     check_fabric_size("two-tier", servers=10**9, parts=28, internal_links=40,
...                       switches=1, cables=1)
... except Exception as err:
...     print(str(err).split(";")[0])
two-tier: 1,000,000,000 servers is more than MAX_SERVERS = 100,000 (harness/fabric/limits.py)
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import FabricDesignError

MAX_ELEMENTS = 2_000_000
"""Elements of one fabric (servers, their parts, switches); clos-100k has 380,001."""
MAX_LINKS = 6_000_000
"""Links of one fabric (cables, PCIe, NVLink); clos-100k has 1,088,000."""
MAX_SERVERS = 100_000
"""Servers of one fabric; clos-100k has 12,800.  One SU may hold all of them."""
MAX_SUS = 10_000
"""Scalable units (or segments) of one fabric; clos-100k has 400."""
MAX_PORTS = 4_096
"""Ports (radix) of one switch or NIC; today's largest switches have 256 (SN5600 at 200G)."""
MAX_PORT_NUMBER = MAX_PORTS
"""Highest port number a cable may use (ports count from 1)."""
MAX_ID = 1_000_000_000
"""Largest SU, node, pod, plane or rail number (they are stored as 32-bit integers)."""
MAX_LANES = 64
"""Lanes of one link (InfiniBand cables are 1x..12x; an H100 has 18 NVLink lanes in all)."""
MAX_CABLES_PER_PAIR = MAX_PORTS
"""Parallel cables between two switches."""
MAX_GPUS_PER_SERVER = 576
"""GPUs of one server (an NVLink domain: NVL576 is the largest announced)."""
MAX_GBPS = 100_000.0
"""Speed of one link or NIC port, Gb/s (100 Tb/s; 1.6T optics are 1,600)."""

LIMITS_FILE = "harness/fabric/limits.py"


@dataclass(frozen=True, slots=True)
class FieldRule:
    """Bounds of one node-template field."""

    integer: bool
    minimum: float
    maximum: float
    exclusive_minimum: bool = False
    limit: str = ""


NODE_FIELDS: dict[str, FieldRule] = {
    "gpus": FieldRule(True, 1, MAX_GPUS_PER_SERVER, limit="MAX_GPUS_PER_SERVER"),
    "nvswitches": FieldRule(True, 0, 64),
    "nvlink_lanes": FieldRule(True, 0, MAX_LANES, limit="MAX_LANES"),
    "nvlink_lane_gbs": FieldRule(False, 0, 1_000.0, exclusive_minimum=True),
    "pcie_switches": FieldRule(True, 1, 64),
    "pcie_gbs": FieldRule(False, 0, 10_000.0, exclusive_minimum=True),
    "rails": FieldRule(True, 0, 64),
    "nic_gbps": FieldRule(False, 0, MAX_GBPS, exclusive_minimum=True, limit="MAX_GBPS"),
    "nic_ports": FieldRule(True, 1, 16),
    "storage_nics": FieldRule(True, 0, 16),
    "storage_gbps": FieldRule(False, 0, MAX_GBPS, exclusive_minimum=True, limit="MAX_GBPS"),
    "host_memory_gbs": FieldRule(False, 0, 100_000.0, exclusive_minimum=True),
    "cpus": FieldRule(True, 1, 64),
}
"""Node-template fields that are numbers, with their bounds (``nic_lag`` is a bool,
``model`` a string)."""


def server_size(
    *, gpus: int, cpus: int, pcie: int, nvswitches: int, rails: int, nic_ports: int, storage: int
) -> tuple[int, int]:
    """Elements (the server and its parts) and links (inside, plus its NIC cables) of a server."""
    parts = 1 + cpus + pcie + nvswitches + gpus + rails + storage
    links = (cpus - 1) + pcie + gpus + rails + storage + gpus * nvswitches
    return parts, links + rails * nic_ports + storage


def _over(what: str, count: int, limit: int, name: str, fix: str) -> FabricDesignError:
    return FabricDesignError(
        f"{what}: {count:,} {name.split('_', 1)[1].lower()} is more than {name} = "
        f"{limit:,} ({LIMITS_FILE}); {fix}"
    )


def check_count(what: str, count: int, limit: int, name: str, fix: str) -> None:
    """Raise a :class:`FabricDesignError` naming ``name`` when ``count > limit``."""
    if count > limit:
        raise _over(what, count, limit, name, fix)


def check_fabric_size(
    what: str, *, servers: int, parts: int, internal_links: int, switches: int, cables: int
) -> None:
    """Refuse a fabric past :data:`MAX_SERVERS`, :data:`MAX_ELEMENTS` or :data:`MAX_LINKS`.

    ``parts`` and ``internal_links`` are per server (including the server);
    ``switches`` and ``cables`` count the network.  Python integers, so the
    arithmetic cannot overflow however large the parameters.
    """
    fix = "check the counts (sus, nodes_per_su)"
    check_count(what, servers, MAX_SERVERS, "MAX_SERVERS", fix)
    elements = servers * parts + switches
    check_count(what, elements, MAX_ELEMENTS, "MAX_ELEMENTS", fix + ", spines and radixes")
    links = servers * internal_links + cables
    check_count(what, links, MAX_LINKS, "MAX_LINKS", fix + " and cables_per_pair")
