"""Mutated production dumps and NetQ graphs: a located ScenarioError or a fabric, nothing else.

Lines of the committed dumps are deleted, duplicated, swapped, truncated and
spliced with junk; whatever comes out must either load (and then the
design-free audit and the Slurm export must run on it) or raise
:class:`ScenarioError` whose every problem names the file and a line.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from harness.errors import FabricDesignError
from harness.errors import ScenarioError
from harness.exporters.slurm import to_slurm_topology
from harness.importers.build import build_network
from harness.importers.ibnetdiscover import fabric_from_ibnetdiscover
from harness.importers.ibnetdiscover import parse_ibnetdiscover
from harness.importers.netq import parse_netq
from harness.importers.rules import InferenceRules
from harness.planning.audit.regular import audit_regular
from tests.importers.conftest import DUMPS

TEXTS = {
    name: (DUMPS / name).read_text(encoding="utf-8")
    for name in ("prod_hdr_broken.ibnetdiscover", "prod_hdr_broken.ports")
}
NETQ = (DUMPS / "netq" / "spectrumx_rail.json").read_text(encoding="utf-8")
JUNK = st.sampled_from([
    "", "[", "[999999999]\t\"S-00\"[1]", 'Switch\t41 "x"', "Ca 1 \"H-1\" # \"MT4129\"",
    "devid=0xzz", "sysimgguid=0x" + "f" * 40, "CA 1 1 0x1 4x HDR - SW 2 2 0x2 ( 'a' - 'b' )",
    "\x00", "caguid=0x2c5eab0300b80000", '[1]\t"H-e09d730300850000"[1]',
])  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "junk"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        else:
            lines.insert(i, draw(JUNK))
        if not lines:
            lines = [""]
    return "\n".join(lines)


def _located(err: ScenarioError, path: str) -> None:
    assert err.problems
    for p in err.problems:
        assert p.path == path, p
        assert p.line >= 1, p


def _use(fabric_or_none: object) -> None:
    from harness.fabric import Fabric

    assert isinstance(fabric_or_none, Fabric)
    audit_regular(fabric_or_none)
    reason = ""
    try:
        to_slurm_topology(fabric_or_none)
    except FabricDesignError as err:  # refused only for a reason it names
        reason = str(err)
    assert not reason or "reach no leaf" in reason or "cannot be Slurm" in reason, reason


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TEXTS)).flatmap(lambda n: st.tuples(st.just(n),
                                                                  mutated(TEXTS[n]))))  # fmt: skip
def test_mutated_ibnetdiscover_dumps(case: tuple[str, str]) -> None:
    name, text = case
    try:
        fabric = fabric_from_ibnetdiscover(parse_ibnetdiscover(text, name))
    except ScenarioError as err:
        _located(err, name)
        return
    _use(fabric)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(NETQ))
def test_mutated_netq_graphs(text: str) -> None:
    try:
        raw = parse_netq(text, "netq.json")
        fabric, _ = build_network(raw, InferenceRules(), name="netq")
    except ScenarioError as err:
        _located(err, "netq.json")
        return
    _use(fabric)


@settings(max_examples=40, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.sampled_from(["nodes", "links", "id", "tier", "name", "compounded_nodes",
                         "compounded_links", "interfaces", "node", "interface",
                         "device_type"]), kids, max_size=4),
    max_leaves=20,
))  # fmt: skip
def test_netq_shapes_of_any_json(doc: object) -> None:
    text = json.dumps(doc)
    try:
        raw = parse_netq(text, "netq.json")
        fabric, _ = build_network(raw, InferenceRules(), name="netq")
    except ScenarioError as err:
        _located(err, "netq.json")
        return
    _use(fabric)
