"""Parsed records: a network file's switches, host NICs and cables, as the file states them.

Every network reader (ibnetdiscover, containerlab, SimAI, NetQ) turns its file
into a :class:`RawNetwork` before any inference; :func:`problem_at` makes an
error that names the file and the line of a record.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.importers.rules import Role


@dataclass(frozen=True, slots=True)
class RawSwitch:
    """A switch as a file states it."""

    key: str  # unique within the file
    desc: str  # its name / node description
    ports: int  # radix (0: unknown)
    line: int = 0
    role: Role | None = None  # stated by the file (labels)
    eid: str | None = None  # element id stated by the file
    su: int | None = None
    rail: int | None = None


@dataclass(frozen=True, slots=True)
class RawNic:
    """A host NIC (an HCA) as a file states it."""

    key: str
    desc: str
    ports: int
    line: int = 0
    host: str | None = None  # server name, when the file states it
    index: int | None = None  # device index, when the file states it
    sysimg: str | None = None  # system image GUID, when the file states it


@dataclass(frozen=True, slots=True)
class RawCable:
    """A cable between two ports, each end a switch or NIC key."""

    a: str
    a_port: int
    b: str
    b_port: int
    gbps: float | None = None
    lanes: int = 1
    line: int = 0


@dataclass(frozen=True, slots=True)
class RawNetwork:
    """What a network file says, before any inference."""

    path: str
    fmt: str
    switches: tuple[RawSwitch, ...]
    nics: tuple[RawNic, ...]
    cables: tuple[RawCable, ...]
    notes: tuple[str, ...] = ()


def problem_at(net: RawNetwork, line: int, message: str) -> ScenarioError:
    """An error at ``line`` of the file ``net`` was read from."""
    return ScenarioError(Problem(message, path=net.path, line=line))
