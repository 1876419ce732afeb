"""Hypothesis strategies for fabrics, faults and fault programs (public API).

Use them to state properties of a fabric design and let hypothesis search for
the fault set that breaks them::

    from hypothesis import given
    from harness.search import strategies as hst

    @given(hst.fabrics(generators=["two-tier"]).flatmap(
        lambda f: hst.fault_sets(f, kinds=["kill"]).map(lambda fs: (f, fs))))
    def test_something(case): ...

* :func:`fabrics` / :func:`fabric_refs` -- small generated designs (two-tier,
  three-tier, dual-ToR); every fabric remembers the reference that rebuilds it,
  so a failing case can be written as a scenario file
  (:func:`harness.search.reproducer.scenario_yaml`).
* :func:`faults` / :func:`fault_sets` -- :class:`~harness.faults.fault.Fault` objects
  whose selectors are exact ids, including correlated groups (every cable of
  one leaf, both planes of one NIC, all leaves of one SU, one rail everywhere,
  all spines of one pod or plane).
* :func:`fault_programs` -- inject/restore sequences (:class:`ProgramStep`).

Strategies shrink towards fewer faults and towards the first targets in the
fabric's own order (servers and their NICs first), so a reproducer names the
simplest fault that still breaks the property.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.fabric.model import COMPUTE_CABLE_KINDS
from harness.fabric.model import SWITCH_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.fabric.resolve import FabricRef
from harness.fabric.resolve import build_fabric
from harness.faults.fault import FAULT_KINDS
from harness.faults.fault import HANGABLE
from harness.faults.fault import Fault
from harness.faults.fault import FaultKind
from harness.faults.selectors import Selector
from harness.search.reproducer import remember

GeneratorName = Literal["two-tier", "three-tier", "dual-tor"]
GENERATOR_NAMES: tuple[GeneratorName, ...] = ("two-tier", "three-tier", "dual-tor")
DEFAULT_KINDS: tuple[str, ...] = ("kill", "drain", "cut", "optic", "degrade")
DEGRADE_FRACTIONS: tuple[float, ...] = (0.5, 0.25, 0.75)

__all__ = [
    "CORRELATED",
    "DEFAULT_KINDS",
    "GENERATOR_NAMES",
    "ProgramStep",
    "bond_member",
    "correlated_groups",
    "cut",
    "degrade",
    "drain",
    "fabric_refs",
    "fabrics",
    "fault_programs",
    "fault_sets",
    "faults",
    "kill",
    "optic",
]


# -- fabrics -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Size:
    """How big a generated design may be."""

    min_sus: int
    max_sus: int
    min_nodes: int
    max_nodes: int
    storage: bool


def _counts(draw: st.DrawFn, sus: int, size: _Size) -> int | list[int]:
    """Nodes per SU: one count for all SUs, or (sometimes) one count each."""
    each = st.integers(size.min_nodes, size.max_nodes)
    if sus > 1 and draw(st.booleans()):
        return draw(st.lists(each, min_size=sus, max_size=sus))
    return draw(each)


def _largest(counts: int | list[int]) -> int:
    return counts if isinstance(counts, int) else max(counts)


@st.composite
def _two_tier(draw: st.DrawFn, size: _Size) -> FabricRef:
    sus = draw(st.integers(size.min_sus, size.max_sus))
    counts = _counts(draw, sus, size)
    spines = draw(st.integers(1, 4))
    cables = draw(st.integers(1, 2))
    node = draw(st.sampled_from(["a800", "a100"]))
    rails = 4  # both templates
    radix = max(_largest(counts) + spines * cables, sus * rails * cables)
    params = {"sus": sus, "nodes_per_su": counts, "node": node, "spines": spines,
              "cables_per_pair": cables, "leaf_radix": radix, "storage": size.storage}  # fmt: skip
    return FabricRef(generator="two-tier", params=tuple(params.items()))


@st.composite
def _three_tier(draw: st.DrawFn, size: _Size) -> FabricRef:
    sus_per_pod = draw(st.integers(1, 2))
    fewest = max(2, -(-size.min_sus // sus_per_pod))  # at least two pods
    pods = draw(st.integers(fewest, max(fewest, size.max_sus // sus_per_pod)))
    sus = pods * sus_per_pod
    counts = _counts(draw, sus, size)
    spines = draw(st.integers(1, 3))
    spine_down = sus_per_pod * 4  # a800: 4 rails, one cable per pair
    radix = max(_largest(counts) + spines, 2 * spine_down)  # non-blocking spines
    params = {"sus": sus, "nodes_per_su": counts, "node": "a800", "sus_per_pod": sus_per_pod,
              "spines_per_pod": spines, "radix": radix, "storage": size.storage}  # fmt: skip
    return FabricRef(generator="three-tier", params=tuple(params.items()))


@st.composite
def _dual_tor(draw: st.DrawFn, size: _Size) -> FabricRef:
    segments = draw(st.integers(min(size.min_sus, 2), min(2, size.max_sus)))
    counts = _counts(draw, segments, size)
    spines = draw(st.integers(1, 3))
    params = {"segments": segments, "hosts_per_segment": counts, "node": "h800",
              "spines_per_plane": spines, "leaf_radix": _largest(counts) + spines,
              "spine_radix": 64, "storage": size.storage}  # fmt: skip
    return FabricRef(generator="dual-tor", params=tuple(params.items()))


_REF_BUILDERS: dict[str, Callable[[_Size], st.SearchStrategy[FabricRef]]] = {
    "two-tier": _two_tier,
    "three-tier": _three_tier,
    "dual-tor": _dual_tor,
}


def fabric_refs(
    generators: Iterable[GeneratorName] = GENERATOR_NAMES,
    *,
    min_sus: int = 1,
    max_sus: int = 3,
    min_nodes_per_su: int = 1,
    max_nodes_per_su: int = 3,
    storage: bool = False,
) -> st.SearchStrategy[FabricRef]:
    """References to small valid designs (generator + parameters).

    Switch radixes are chosen so that every design builds.  Three-tier designs
    have at least two pods (so at least two SUs); dual-ToR designs have one or
    two segments (their SUs) whatever ``max_sus`` says.
    """
    names = list(generators)
    unknown = [g for g in names if g not in _REF_BUILDERS]
    if unknown or not names:
        what = f"unknown generator(s) {unknown}" if unknown else "no generator given"
        msg = f"{what}; choose from {', '.join(GENERATOR_NAMES)}"
        raise ScenarioError(msg)
    if not 1 <= min_sus <= max_sus:
        msg = f"need 1 <= min_sus <= max_sus, got {min_sus}, {max_sus}"
        raise ScenarioError(msg)
    if not 1 <= min_nodes_per_su <= max_nodes_per_su:
        msg = f"need 1 <= min_nodes_per_su <= max_nodes_per_su, got {min_nodes_per_su}, " \
              f"{max_nodes_per_su}"  # fmt: skip
        raise ScenarioError(msg)
    size = _Size(min_sus, max_sus, min_nodes_per_su, max_nodes_per_su, storage)
    return st.one_of([_REF_BUILDERS[g](size) for g in names])


def _build(ref: FabricRef) -> Fabric:
    return remember(build_fabric(ref), ref)


def fabrics(
    generators: Iterable[GeneratorName] = GENERATOR_NAMES,
    *,
    min_sus: int = 1,
    max_sus: int = 3,
    min_nodes_per_su: int = 1,
    max_nodes_per_su: int = 3,
    storage: bool = False,
) -> st.SearchStrategy[Fabric]:
    """Small generated fabrics (see :func:`fabric_refs`); each remembers its reference."""
    return fabric_refs(
        generators,
        min_sus=min_sus,
        max_sus=max_sus,
        min_nodes_per_su=min_nodes_per_su,
        max_nodes_per_su=max_nodes_per_su,
        storage=storage,
    ).map(_build)


# -- faults --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Pools:
    """Candidate targets of one fabric, as id tuples in index order."""

    kill: tuple[str, ...]
    drain: tuple[str, ...]
    hang: tuple[str, ...]
    cables: tuple[str, ...]
    ports: tuple[str, ...]
    storage_nics: tuple[str, ...]
    groups: dict[str, tuple[tuple[str, ...], ...]]  # correlated groups by flavour


def _ids(fabric: Fabric, idx: Iterable[int]) -> tuple[str, ...]:
    return tuple(fabric.ids[i] for i in idx)


def _cables_at(fabric: Fabric, element: int, kinds: frozenset[LinkKind]) -> tuple[str, ...]:
    codes = [int(k) for k in kinds]
    links = fabric.links_at(element)
    links = np.sort(links[np.isin(fabric.link_kind[links], codes)])
    return tuple(fabric.link_ids[i] for i in links.tolist())


@functools.lru_cache(maxsize=16)
def _pools(fabric: Fabric) -> _Pools:
    f = fabric
    compute = f.links_of_kind(*COMPUTE_CABLE_KINDS)
    cable_kinds = frozenset(COMPUTE_CABLE_KINDS)
    kill = np.sort(np.concatenate([f.servers, f.nics, f.indices_of_kind(*SWITCH_KINDS)]))
    ports = tuple(p for i in compute.tolist() for p in (f.port_id(i, 0), f.port_id(i, 1)))
    groups: dict[str, tuple[tuple[str, ...], ...]] = {}
    groups["leaf-cables"] = tuple(_cables_at(f, leaf, cable_kinds) for leaf in f.leaves.tolist())
    groups["spine-cables"] = tuple(_cables_at(f, sp, cable_kinds) for sp in f.spines.tolist())
    access = frozenset({LinkKind.ACCESS})
    multi = [n for n in f.nics.tolist() if int(f.ports[n]) > 1]
    groups["nic-planes"] = tuple(_cables_at(f, n, access) for n in multi)
    groups["nic-optics"] = tuple(
        tuple(f"{f.ids[n]}:{p}" for p in range(1, int(f.ports[n]) + 1)) for n in multi
    )
    bundles: dict[tuple[int, int], list[str]] = {}
    for i in f.links_of_kind(LinkKind.LEAF_SPINE).tolist():
        bundles.setdefault((int(f.link_a[i]), int(f.link_b[i])), []).append(f.link_ids[i])
    groups["leaf-spine-bundle"] = tuple(tuple(v) for v in bundles.values() if len(v) > 1)
    leaf_su, leaf_rail = f.su[f.leaves], f.rail[f.leaves]
    groups["su-leaves"] = tuple(
        _ids(f, f.leaves[leaf_su == s].tolist()) for s in sorted(set(leaf_su.tolist()))
    )
    groups["rail-leaves"] = tuple(
        _ids(f, f.leaves[leaf_rail == r].tolist()) for r in sorted(set(leaf_rail.tolist()))
    )
    spine_pod, spine_plane = f.pod[f.spines], f.plane[f.spines]
    groups["pod-spines"] = tuple(
        _ids(f, f.spines[spine_pod == p].tolist()) for p in sorted(set(spine_pod.tolist())) if p
    )
    groups["plane-spines"] = tuple(
        _ids(f, f.spines[spine_plane == p].tolist()) for p in sorted(set(spine_plane.tolist())) if p
    )
    return _Pools(
        kill=_ids(f, kill.tolist()),
        drain=_ids(f, f.indices_of_kind(*SWITCH_KINDS).tolist()),
        hang=_ids(f, f.indices_of_kind(*HANGABLE).tolist()),
        cables=tuple(f.link_ids[i] for i in compute.tolist()),
        ports=ports,
        storage_nics=_ids(f, f.indices_of_kind(Kind.STORAGE_NIC).tolist()),
        groups={k: tuple(g for g in v if g) for k, v in groups.items()},
    )


# Correlated groups: flavour -> the fault kind that breaks the whole group at once.
CORRELATED: dict[str, FaultKind] = {
    "leaf-cables": FaultKind.CUT,  # every cable of one leaf (a bad line card, a cut trunk)
    "spine-cables": FaultKind.CUT,
    "nic-planes": FaultKind.CUT,  # both planes of one NIC (dual-ToR)
    "nic-optics": FaultKind.OPTIC,  # both NIC-side optics of one NIC
    "leaf-spine-bundle": FaultKind.CUT,  # all parallel cables of one leaf-spine pair
    "su-leaves": FaultKind.KILL,  # every leaf of one SU (one rack row's power)
    "rail-leaves": FaultKind.KILL,  # one rail in every SU (a bad firmware push)
    "pod-spines": FaultKind.KILL,
    "plane-spines": FaultKind.KILL,
}


def correlated_groups(fabric: Fabric) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The groups of ids that fail together, by flavour (see :data:`CORRELATED`)."""
    return dict(_pools(fabric).groups)


def _kinds(kinds: Iterable[str | FaultKind]) -> tuple[FaultKind, ...]:
    out = []
    for k in kinds:
        if isinstance(k, FaultKind):
            out.append(k)
        elif k in FAULT_KINDS:
            out.append(FAULT_KINDS[k])
        else:
            msg = f"unknown fault kind {k!r} (known: {', '.join(FAULT_KINDS)})"
            raise ScenarioError(msg)
    if not out:
        msg = "give at least one fault kind"
        raise ScenarioError(msg)
    return tuple(dict.fromkeys(out))


def _selector(ids: str | Sequence[str]) -> Selector:
    return Selector(ids=(ids,) if isinstance(ids, str) else tuple(ids))


# Fault constructors over exact ids (hypothesis prints draws with these names).
def kill(ids: str | Sequence[str]) -> Fault:
    """Kill the elements with these exact ids."""
    return Fault(FaultKind.KILL, _selector(ids))


def drain(ids: str | Sequence[str]) -> Fault:
    """Drain the switches with these exact ids."""
    return Fault(FaultKind.DRAIN, _selector(ids))


def cut(ids: str | Sequence[str]) -> Fault:
    """Cut the cables with these exact ids."""
    return Fault(FaultKind.CUT, _selector(ids))


def optic(ids: str | Sequence[str]) -> Fault:
    """Fail the optics at these exact ports (``ELEMENT:PORT``)."""
    return Fault(FaultKind.OPTIC, _selector(ids))


def degrade(ids: str | Sequence[str], fraction: float) -> Fault:
    """Run the links with these exact ids at ``fraction`` of their speed."""
    return Fault(FaultKind.DEGRADE, _selector(ids), fraction)


def bond_member(ids: str | Sequence[str]) -> Fault:
    """Take these storage NICs out of their bond."""
    return Fault(FaultKind.BOND_MEMBER, _selector(ids))


def hang(ids: str | Sequence[str]) -> Fault:
    """Hang the switches with these exact ids (links up, nothing forwarded)."""
    return Fault(FaultKind.HANG, _selector(ids))


CONSTRUCTORS: dict[FaultKind, Callable[[str | Sequence[str]], Fault]] = {
    FaultKind.KILL: kill,
    FaultKind.DRAIN: drain,
    FaultKind.CUT: cut,
    FaultKind.OPTIC: optic,
    FaultKind.BOND_MEMBER: bond_member,
    FaultKind.HANG: hang,
}


def faults(
    fabric: Fabric,
    kinds: Iterable[str | FaultKind] = DEFAULT_KINDS,
    *,
    correlated: bool = True,
) -> st.SearchStrategy[Fault]:
    """One fault on ``fabric`` whose selector lists exact ids.

    ``kinds`` limits the fault kinds (names as in scenario files).  Single
    faults hit one target: ``kill`` a server, NIC or switch; ``drain`` a switch;
    ``cut`` a compute cable; ``optic`` one end of a compute cable; ``degrade`` a
    compute cable to a fraction of its speed; ``bond-member`` a storage NIC; ``hang``
    a leaf, spine or core.
    With ``correlated``, groups that fail together are drawn too (see
    :data:`CORRELATED`), as one fault over several ids.
    """
    pools = _pools(fabric)
    chosen = _kinds(kinds)
    options: list[st.SearchStrategy[Fault]] = []

    def single(kind: FaultKind, pool: tuple[str, ...]) -> None:
        if pool:
            options.append(st.sampled_from(pool).map(CONSTRUCTORS[kind]))

    for kind in chosen:
        if kind is FaultKind.KILL:
            single(kind, pools.kill)
        elif kind is FaultKind.DRAIN:
            single(kind, pools.drain)
        elif kind is FaultKind.CUT:
            single(kind, pools.cables)
        elif kind is FaultKind.OPTIC:
            single(kind, pools.ports)
        elif kind is FaultKind.BOND_MEMBER:
            single(kind, pools.storage_nics)
        elif kind is FaultKind.HANG:
            single(kind, pools.hang)
        elif kind is FaultKind.DEGRADE and pools.cables:
            options.append(
                st.builds(
                    degrade, st.sampled_from(pools.cables), st.sampled_from(DEGRADE_FRACTIONS)
                )
            )
    if correlated:
        for flavour, kind in CORRELATED.items():
            group = pools.groups.get(flavour, ())
            if kind in chosen and group:
                options.append(st.sampled_from(group).map(CONSTRUCTORS[kind]))
    if not options:
        msg = f"fabric {fabric.name!r} has no targets for fault kinds {[k.value for k in chosen]}"
        raise ScenarioError(msg)
    return st.one_of(options)


def fault_sets(
    fabric: Fabric,
    kinds: Iterable[str | FaultKind] = DEFAULT_KINDS,
    *,
    min_size: int = 1,
    max_size: int = 4,
    correlated: bool = True,
) -> st.SearchStrategy[list[Fault]]:
    """Lists of faults (see :func:`faults`) to inject together, in order.

    ``fault_sets(fabric, ("drain",), max_size=2)``: ``kinds`` may be given by
    position or by name; the sizes and ``correlated`` by name only.
    """
    return st.lists(
        faults(fabric, kinds=kinds, correlated=correlated), min_size=min_size, max_size=max_size
    )


@dataclass(frozen=True, slots=True)
class ProgramStep:
    """One step of a fault program: inject ``fault``, or restore applied fault ``index``.

    ``index`` counts the faults applied at that point, oldest first.
    """

    op: Literal["inject", "restore"]
    fault: Fault | None = None
    index: int = -1

    def describe(self) -> str:
        """The step in words (``inject kill spine-05``, ``restore applied fault #0``)."""
        if self.op == "inject" and self.fault is not None:
            return f"inject {self.fault.describe()}"
        return f"restore applied fault #{self.index}"


@st.composite
def _program(
    draw: st.DrawFn, fault: st.SearchStrategy[Fault], max_steps: int, max_applied: int
) -> list[ProgramStep]:
    steps: list[ProgramStep] = []
    applied = 0
    for _ in range(draw(st.integers(1, max_steps))):
        restore = applied > 0 and (applied >= max_applied or draw(st.booleans()))
        if restore:
            steps.append(ProgramStep("restore", index=draw(st.integers(0, applied - 1))))
            applied -= 1
        else:
            steps.append(ProgramStep("inject", fault=draw(fault)))
            applied += 1
    return steps


def fault_programs(
    fabric: Fabric,
    kinds: Iterable[str | FaultKind] = DEFAULT_KINDS,
    *,
    max_steps: int = 8,
    max_applied: int = 4,
    correlated: bool = True,
) -> st.SearchStrategy[list[ProgramStep]]:
    """Inject/restore sequences: every restore names a fault applied at that point."""
    return _program(faults(fabric, kinds=kinds, correlated=correlated), max_steps, max_applied)
