"""Selectors: which elements, links or ports a fault hits (faults stage, pure).

A selector is parsed once from YAML (or built in Python) into a frozen
:class:`Selector`, then resolved against a :class:`~harness.fabric.Fabric`
into sorted indices.  A selector that matches nothing is an error, never a
silent pass.  All randomness comes from ``random.Random(seed)``.

>>> from harness.fabric import preset
>>> f = preset("seed-a800")
>>> len(resolve(parse_selector({"tier": "spine", "all-but": 1}), f, Domain.ELEMENTS))
19
"""

from __future__ import annotations

import difflib
import enum
import fnmatch
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.errors import ScenarioError
from harness.fabric.model import CABLE_KINDS
from harness.fabric.model import Fabric
from harness.fabric.model import Kind
from harness.fabric.model import LinkKind
from harness.inputs.suggest import closest


class Domain(enum.Enum):
    """What a selector picks from."""

    ELEMENTS = "elements"
    LINKS = "links"
    CABLES = "cables"
    PORTS = "ports"


KIND_NAMES: dict[str, Kind] = {k.label: k for k in Kind}
ELEMENT_TIERS: dict[str, Kind] = {"leaf": Kind.LEAF, "spine": Kind.SPINE, "core": Kind.CORE}
LINK_TIERS: dict[str, LinkKind] = {k.label: k for k in LinkKind}
STRUCT_KEYS = ("su", "rail", "node", "pod", "plane")
SELECTOR_KEYS = (
    "id", "ids", "glob", "kind", "tier", *STRUCT_KEYS, "between", "end", "all-but", "random",
)  # fmt: skip
GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True, slots=True)
class Selector:
    """A parsed selector.  Empty filters mean "no constraint"."""

    ids: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    su: tuple[int, ...] = ()
    rail: tuple[int, ...] = ()
    node: tuple[int, ...] = ()
    pod: tuple[int, ...] = ()
    plane: tuple[int, ...] = ()
    between: tuple[str, str] | None = None
    end: str | None = None
    all_but: int | None = None
    random_count: int | None = None
    random_seed: int = 0
    union: tuple[Selector, ...] = ()

    def describe(self) -> str:
        """The selector in words (ids, globs, keys, ``between``...; ``everything`` when empty)."""
        if self.union:
            return " + ".join(s.describe() for s in self.union)
        parts = [*self.ids, *self.globs]
        for key in ("kinds", "tiers", *STRUCT_KEYS):
            val = getattr(self, key)
            if val:
                parts.append(f"{key.rstrip('s') if key in ('kinds', 'tiers') else key}="
                             f"{','.join(map(str, val))}")  # fmt: skip
        if self.between:
            parts.append(f"between {self.between[0]} and {self.between[1]}")
        if self.end:
            parts.append(f"end={self.end}")
        if self.all_but is not None:
            parts.append(f"all but {self.all_but}")
        if self.random_count is not None:
            parts.append(f"random {self.random_count} (seed {self.random_seed})")
        return " ".join(parts) or "everything"

    def flow(self) -> str:
        """The selector as a YAML flow mapping, as a scenario file would write it.

        >>> parse_selector({"tier": "leaf-spine", "su": 1, "end": "upper"}).flow()
        '{tier: leaf-spine, su: 1, end: upper}'
        """
        if self.union:
            return "[" + ", ".join(s.flow() for s in self.union) + "]"

        def one(values: tuple[Any, ...]) -> str:
            return str(values[0]) if len(values) == 1 else "[" + ", ".join(map(str, values)) + "]"

        parts = [f"id: {one(self.ids)}"] if self.ids else []
        if self.globs:
            parts.append(f"glob: {one(tuple(repr(g) for g in self.globs))}")
        for key, values in (("kind", self.kinds), ("tier", self.tiers)):
            if values:
                parts.append(f"{key}: {one(values)}")
        parts += [f"{k}: {one(getattr(self, k))}" for k in STRUCT_KEYS if getattr(self, k)]
        if self.between:
            parts.append(f"between: [{self.between[0]}, {self.between[1]}]")
        if self.end:
            parts.append(f"end: {self.end}")
        if self.all_but is not None:
            parts.append(f"all-but: {self.all_but}")
        if self.random_count is not None:
            parts.append(f"random: {{count: {self.random_count}, seed: {self.random_seed}}}")
        return "{" + ", ".join(parts) + "}"


def _ints(key: str, value: Any) -> tuple[int, ...]:
    vals = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        msg = f"selector key {key!r} takes an integer or a list of integers, got {value!r}"
        raise ScenarioError(msg)
    return tuple(vals)


def _strs(key: str, value: Any) -> tuple[str, ...]:
    vals = value if isinstance(value, list) else [value]
    if not all(isinstance(v, str) for v in vals):
        msg = f"selector key {key!r} takes a string or a list of strings, got {value!r}"
        raise ScenarioError(msg)
    return tuple(vals)


def _known(key: str, values: tuple[str, ...], known: list[str]) -> tuple[str, ...]:
    """``values`` if each is one of ``known``; else a ScenarioError with a did-you-mean."""
    for v in values:
        if v not in known:
            near = difflib.get_close_matches(v, known, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            msg = f"unknown {key} {v!r}{hint} (known: {', '.join(known)})"
            raise ScenarioError(msg)
    return values


def _from_string(text: str) -> Selector:
    if GLOB_CHARS.search(text):
        return Selector(globs=(text,))
    return Selector(ids=(text,))


def parse_selector(raw: Any) -> Selector:
    """Parse a YAML selector (string, list or mapping); raise :class:`ScenarioError`.

    Messages carry no location: the scenario loader adds file:line:column.
    """
    if isinstance(raw, str):
        if not raw.strip():
            msg = "empty selector; give an id, a glob or a mapping such as {tier: spine}"
            raise ScenarioError(msg)
        return _from_string(raw)
    if isinstance(raw, list):
        if not raw:
            msg = "empty selector list; list at least one id, glob or mapping"
            raise ScenarioError(msg)
        return Selector(union=tuple(parse_selector(item) for item in raw))
    if not isinstance(raw, dict):
        msg = f"a selector is an id, a glob, a list or a mapping, not {type(raw).__name__}"
        raise ScenarioError(msg)
    unknown = [k for k in raw if k not in SELECTOR_KEYS]
    if unknown:
        key = str(unknown[0])
        near = difflib.get_close_matches(key, SELECTOR_KEYS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else f" (known: {', '.join(SELECTOR_KEYS)})"
        msg = f"unknown selector key {key!r}{hint}"
        raise ScenarioError(msg)
    kw: dict[str, Any] = {}
    if "id" in raw:
        kw["ids"] = _strs("id", raw["id"])
    if "ids" in raw:
        kw["ids"] = kw.get("ids", ()) + _strs("ids", raw["ids"])
    if "glob" in raw:
        kw["globs"] = _strs("glob", raw["glob"])
    if "kind" in raw:
        kw["kinds"] = _known("kind", _strs("kind", raw["kind"]), list(KIND_NAMES))
    if "tier" in raw:
        tiers = sorted({*ELEMENT_TIERS, *LINK_TIERS})
        kw["tiers"] = _known("tier", _strs("tier", raw["tier"]), tiers)
    for key in STRUCT_KEYS:
        if key in raw:
            kw[key] = _ints(key, raw[key])
    if "between" in raw:
        pair = raw["between"]
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            msg = f"'between' takes a list of two ids or globs, got {pair!r}"
            raise ScenarioError(msg)
        kw["between"] = (pair[0], pair[1])
    if "end" in raw:
        if raw["end"] not in ("lower", "upper"):
            msg = f"'end' is 'lower' or 'upper', got {raw['end']!r}"
            raise ScenarioError(msg)
        kw["end"] = raw["end"]
    if "all-but" in raw:
        n = raw["all-but"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            msg = f"'all-but' takes a whole number >= 0, got {n!r}"
            raise ScenarioError(msg)
        kw["all_but"] = n
    if "random" in raw:
        spec = raw["random"]
        if not (isinstance(spec, dict) and set(spec) <= {"count", "seed"} and "count" in spec):
            msg = f"'random' takes {{count: N, seed: S}}, got {spec!r}"
            raise ScenarioError(msg)
        count, seed = spec["count"], spec.get("seed", 0)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (count, seed)) or count < 1:
            msg = f"'random' needs a count >= 1 and an integer seed, got {spec!r}"
            raise ScenarioError(msg)
        kw["random_count"] = count
        kw["random_seed"] = seed
    if "all_but" in kw and "random_count" in kw:
        msg = "use either 'all-but' or 'random' in one selector, not both"
        raise ScenarioError(msg)
    return Selector(**kw)


# -- resolution --------------------------------------------------------------


def _domain_ids(fabric: Fabric, domain: Domain) -> tuple[npt.NDArray[np.int32], list[str]]:
    """Candidate indices and their ids for a domain (ports: index into port list)."""
    if domain is Domain.ELEMENTS:
        return np.arange(fabric.n_elements, dtype=np.int32), list(fabric.ids)
    if domain is Domain.PORTS:
        ports = list(fabric.port_index)
        return np.arange(len(ports), dtype=np.int32), ports
    if domain is Domain.CABLES:
        cables = fabric.links_of_kind(*CABLE_KINDS)
        return cables, [fabric.link_ids[i] for i in cables.tolist()]
    return np.arange(fabric.n_links, dtype=np.int32), list(fabric.link_ids)


def _cable_of(fabric: Fabric, domain: Domain, cand: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """Per candidate link or port: its link (a port's cable)."""
    return port_arrays(fabric)[0][cand] if domain is Domain.PORTS else cand


def _owner(fabric: Fabric, domain: Domain, cand: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """The element whose attributes structural filters look at, per candidate: the
    element itself, or the lower end of a link (of a port's cable, whichever end the
    port is), as documented: the NIC of an access cable, the leaf of a leaf-spine one."""
    if domain is Domain.ELEMENTS:
        return cand
    return fabric.link_a[_cable_of(fabric, domain, cand)]


_DOMAIN_WORDS = {Domain.LINKS: "links", Domain.CABLES: "cables", Domain.PORTS: "optics"}
_TIER_HINT = "access (NIC to leaf), leaf-spine, spine-core, storage, nvlink, pcie, cpu-link"
# the cable tiers of each switch tier: (its down links, its up links)
_SWITCH_CABLES = {"leaf": ("access", "leaf-spine"), "spine": ("leaf-spine", "spine-core"),
                  "core": ("spine-core",)}  # fmt: skip


def _check_domain(sel: Selector, domain: Domain) -> None:
    """Keys that mean nothing in ``domain`` are errors (never silently ignored)."""
    if domain is Domain.ELEMENTS:
        if sel.between is not None:
            msg = (
                "'between' picks the cables or links between two elements, not elements; "
                "use it with cut, optic or degrade, or name the elements with id:/glob:"
            )
            raise ScenarioError(msg)
        if sel.end is not None:
            msg = "'end' picks the optic at one end of a cable; use it with optic:, not here"
            raise ScenarioError(msg)
        return
    if sel.end is not None and domain is not Domain.PORTS:
        msg = (
            f"'end' picks an optic, but this fault takes {_DOMAIN_WORDS[domain]}; "
            "drop end:, or use optic: to fail the optic at one end"
        )
        raise ScenarioError(msg)
    wrong = [t for t in sel.tiers if t in ELEMENT_TIERS]
    if wrong:
        t = wrong[0]
        instead = " or ".join(replace(sel, tiers=(lk,)).flow() for lk in _SWITCH_CABLES[t])
        msg = (
            f"tier {t!r} is a tier of switches; {_DOMAIN_WORDS[domain]} take a link tier "
            f"({_TIER_HINT}); for the {_DOMAIN_WORDS[domain]} of {t} switches write {instead}"
        )
        raise ScenarioError(msg)


def _check_one_tier(
    sel: Selector, fabric: Fabric, domain: Domain, cand: npt.NDArray[np.int32]
) -> None:
    """Structural filters on links without ``tier:`` must not span several link tiers.

    ``{su: 1, rail: 0}`` on optics would take the access cables of SU 1's rail-0 NICs
    *and* the uplinks of su01/leaf-r0 (both have that lower end): say which.
    """
    structural = sel.kinds or any(getattr(sel, k) for k in STRUCT_KEYS)
    if domain is Domain.ELEMENTS or sel.tiers or not structural:
        return
    if sel.ids or sel.globs or sel.between:
        return
    kinds = fabric.link_kind[_cable_of(fabric, domain, cand)]
    found, counts = np.unique(kinds, return_counts=True)
    if found.size <= 1:
        return
    labels = [LinkKind(int(k)).label for k in found.tolist()]
    spread = ", ".join(f"{n} {label}" for n, label in zip(counts.tolist(), labels, strict=True))
    choices = " or ".join(replace(sel, tiers=(label,)).flow() for label in labels[:3])
    msg = (
        f"selector {sel.flow()} is ambiguous: it matches {_DOMAIN_WORDS[domain]} of "
        f"several link tiers ({spread}), because su/rail/node/kind filters match each "
        f"cable's lower end (the NIC of an access cable, the leaf of a leaf-spine cable); "
        f"add tier:, e.g. {choices}"
    )
    raise ScenarioError(msg)


def port_arrays(fabric: Fabric) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int8]]:
    """(cable index, end) per port, in ``fabric.port_index`` order."""
    vals = list(fabric.port_index.values())
    return (
        np.array([v[0] for v in vals], dtype=np.int32),
        np.array([v[1] for v in vals], dtype=np.int8),
    )


def _match_positions(pattern: str, names: list[str]) -> list[int]:
    regex = re.compile(fnmatch.translate(pattern))
    return [i for i, n in enumerate(names) if regex.match(n)]


def _position(fabric: Fabric, domain: Domain, cand: npt.NDArray[np.int32], eid: str) -> int | None:
    """Position of an exact id among the domain's candidates (None: absent)."""
    if domain is Domain.ELEMENTS:
        return fabric.index.get(eid)
    if domain is Domain.PORTS:
        return fabric.port_position.get(eid)
    i = fabric.link_index.get(eid)
    if i is None:
        return None
    at = int(np.searchsorted(cand, i))
    return at if at < cand.size and int(cand[at]) == i else None


def _element_matches(fabric: Fabric, pattern: str) -> npt.NDArray[np.int32]:
    """Elements matching an id or glob, plus their parts (a node matches its NICs)."""
    if GLOB_CHARS.search(pattern):
        hit = np.array(_match_positions(pattern, list(fabric.ids)), dtype=np.int32)
    else:
        i = fabric.index.get(pattern)
        hit = np.array([] if i is None else [i], dtype=np.int32)
    if hit.size:
        parts = np.flatnonzero(np.isin(fabric.parent, hit)).astype(np.int32)
        hit = np.union1d(hit, parts).astype(np.int32)
    return hit


def _not_found(pattern: str, names: list[str], domain: Domain) -> ScenarioError:
    near = closest(pattern, names, n=3, cutoff=0.5)
    hint = f"; closest: {', '.join(near)}" if near else ""
    return ScenarioError(f"selector {pattern!r} matches no {domain.value}{hint}")


def resolve(sel: Selector, fabric: Fabric, domain: Domain) -> list[int]:
    """Indices of the fabric's elements/links/ports (by domain) that ``sel`` selects.

    Ports are indices into ``list(fabric.port_index)``.  Raises
    :class:`ScenarioError` when nothing matches.
    """
    if sel.union:
        out: set[int] = set()
        for part in sel.union:
            out.update(resolve(part, fabric, domain))
        return sorted(out)
    _check_domain(sel, domain)
    cand, names = _domain_ids(fabric, domain)
    keep = np.ones(cand.size, dtype=bool)
    if sel.ids or sel.globs:
        hit = np.zeros(cand.size, dtype=bool)
        for eid in sel.ids:
            at = _position(fabric, domain, cand, eid)
            if at is None:
                raise _not_found(eid, names, domain)
            hit[at] = True
        for pattern in sel.globs:
            found = _match_positions(pattern, names)
            if not found:
                raise _not_found(pattern, names, domain)
            hit[found] = True
        keep &= hit
    owner = _owner(fabric, domain, cand)
    if sel.kinds:
        codes = [int(KIND_NAMES[k]) for k in sel.kinds]
        keep &= np.isin(fabric.kind[owner], codes)
    if sel.tiers:
        el_codes = [int(ELEMENT_TIERS[t]) for t in sel.tiers if t in ELEMENT_TIERS]
        lk_codes = [int(LINK_TIERS[t]) for t in sel.tiers if t in LINK_TIERS]
        if domain is Domain.ELEMENTS:
            keep &= np.isin(fabric.kind[cand], el_codes)
        else:  # _check_domain refused element tiers
            keep &= np.isin(fabric.link_kind[_cable_of(fabric, domain, cand)], lk_codes)
    for key, arr in (("su", fabric.su), ("rail", fabric.rail), ("node", fabric.node_no),
                     ("pod", fabric.pod), ("plane", fabric.plane)):  # fmt: skip
        vals = getattr(sel, key)
        if vals:
            keep &= np.isin(arr[owner], vals)
    if sel.between and domain is not Domain.ELEMENTS:
        ea = _element_matches(fabric, sel.between[0])
        eb = _element_matches(fabric, sel.between[1])
        for pattern, hit in zip(sel.between, (ea, eb), strict=True):
            if not hit.size:
                raise _not_found(pattern, list(fabric.ids), Domain.ELEMENTS)
        links = _cable_of(fabric, domain, cand)
        la, lb = fabric.link_a[links], fabric.link_b[links]
        keep &= (np.isin(la, ea) & np.isin(lb, eb)) | (np.isin(la, eb) & np.isin(lb, ea))
    if sel.end and domain is Domain.PORTS:
        keep &= port_arrays(fabric)[1][cand] == (0 if sel.end == "lower" else 1)
    _check_one_tier(sel, fabric, domain, cand[keep])
    chosen = sorted(int(c) for c in cand[keep].tolist())
    if not chosen:
        msg = f"selector {{{sel.describe()}}} matches no {domain.value} of fabric {fabric.name!r}"
        raise ScenarioError(msg)
    if sel.all_but is not None:
        if sel.all_but >= len(chosen):
            msg = (
                f"selector {{{sel.describe()}}} keeps {sel.all_but} of {len(chosen)} matches up, "
                "so it selects nothing; use a smaller all-but"
            )
            raise ScenarioError(msg)
        chosen = chosen[sel.all_but :]
    if sel.random_count is not None:
        if sel.random_count > len(chosen):
            msg = (
                f"selector {{{sel.describe()}}} asks for {sel.random_count} random matches "
                f"but only {len(chosen)} exist"
            )
            raise ScenarioError(msg)
        chosen = sorted(random.Random(sel.random_seed).sample(chosen, sel.random_count))
    return chosen


def select(raw: Any, fabric: Fabric, domain: Domain = Domain.ELEMENTS) -> list[str]:
    """Convenience: the ids a raw selector picks (for the Python API and tests)."""
    sel = raw if isinstance(raw, Selector) else parse_selector(raw)
    idx = resolve(sel, fabric, domain)
    if domain is Domain.ELEMENTS:
        return [fabric.ids[i] for i in idx]
    if domain is Domain.PORTS:
        ports = list(fabric.port_index)
        return [ports[i] for i in idx]
    return [fabric.link_ids[i] for i in idx]


def as_selector(value: Selector | str | Sequence[str] | dict[str, Any]) -> Selector:
    """A selector from a selector, a string, a list of strings or a mapping."""
    if isinstance(value, Selector):
        return value
    return parse_selector(list(value) if isinstance(value, tuple) else value)
