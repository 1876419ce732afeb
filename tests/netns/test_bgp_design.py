"""The BGP design of the netns backend, pure (no root): AS numbers, configurations, BFD, FIBs."""

from __future__ import annotations

from typing import Any

import pytest

from harness.backends.netns.bgp import BFD_BY_SIZE
from harness.backends.netns.bgp import CORE_AS
from harness.backends.netns.bgp import LEAF_AS
from harness.backends.netns.bgp import RTPROT_BGP
from harness.backends.netns.bgp import SPINE_AS
from harness.backends.netns.bgp import BfdTimers
from harness.backends.netns.bgp import as_plan
from harness.backends.netns.bgp import bfd_sessions
from harness.backends.netns.bgp import bfd_timers
from harness.backends.netns.bgp import bfdd_config
from harness.backends.netns.bgp import bgpd_config
from harness.backends.netns.bgp import expected_fib
from harness.backends.netns.bgp import fib_of
from harness.backends.netns.bgp import v6_block
from harness.backends.netns.plan import make_plan
from harness.backends.netns.routing import Alive
from harness.backends.netns.routing import compute
from harness.errors import ScenarioError
from harness.fabric.generators import three_tier
from harness.fabric.generators import two_tier
from harness.fabric.model import Kind

SMALL = two_tier(sus=2, nodes_per_su=2, spines=4, leaf_radix=8, storage=False, name="bgp44")


def test_rfc7938_as_numbers_spines_share_leaves_own() -> None:
    plan = make_plan(SMALL, "hx")
    asn = as_plan(plan)
    f = SMALL
    by_kind: dict[Kind, list[int]] = {}
    for ns, a in asn.items():
        by_kind.setdefault(Kind(int(f.kind[plan.namespaces[ns].elements[0]])), []).append(a)
    assert set(by_kind[Kind.SPINE]) == {SPINE_AS}
    leaves = by_kind[Kind.LEAF]
    assert len(leaves) == len(set(leaves)) == 8
    assert all(LEAF_AS < a < 4_294_967_295 for a in leaves)  # RFC 6996 4-byte private
    assert len(asn) == 12  # every switch, no server


def test_three_tiers_cores_share_one_as_and_pods_their_spine_as() -> None:
    f = three_tier(sus=2, nodes_per_su=2, node="a800", sus_per_pod=1, spines_per_pod=2, radix=16,
                   storage=False)  # fmt: skip
    plan = make_plan(f, "hx")
    asn = as_plan(plan)
    kinds = {ns: Kind(int(f.kind[plan.namespaces[ns].elements[0]])) for ns in asn}
    assert {a for ns, a in asn.items() if kinds[ns] is Kind.CORE} == {CORE_AS}
    spine_as = {a for ns, a in asn.items() if kinds[ns] is Kind.SPINE}
    assert spine_as == {SPINE_AS + 1, SPINE_AS + 2}  # one per pod: no valley through a pod


def test_leaf_config_is_unnumbered_ecmp_and_originates_its_block() -> None:
    plan = make_plan(SMALL, "hx")
    leaf = plan.ns_of[SMALL.index["su01/leaf-r1"]]
    text = bgpd_config(plan, leaf, as_plan(plan)[leaf], BfdTimers(100))
    lines = [line.strip() for line in text.splitlines()]
    assert lines[0] == "frr defaults datacenter"
    block = plan.leaf_block[SMALL.index["su01/leaf-r1"]]
    assert f"network {block}" in lines
    assert f"network {v6_block(block)}" in lines
    uplinks = [line for line in lines if line.endswith("interface v6only peer-group FABRIC")]
    assert len(uplinks) == 4  # one unnumbered session per spine
    assert lines.count("maximum-paths 64") == 2
    assert "bgp bestpath as-path multipath-relax" in lines
    assert sum(line.endswith("bfd profile fabric") for line in lines) == 4
    spine = plan.ns_of[SMALL.index["spine-01"]]
    spine_text = bgpd_config(plan, spine, SPINE_AS, None)
    assert "network" not in spine_text.replace("network import-check", "")
    assert "bfd" not in spine_text
    assert spine_text.count("interface v6only peer-group FABRIC") == 8  # link-local sessions


def test_bfd_is_off_by_default_and_on_picks_timers_by_size() -> None:
    assert bfd_timers(64) is None  # off, as in FRR and SONiC
    assert bfd_timers(64, "off") is None
    picked = {n: bfd_timers(n, "on") for n in (64, 256, 400, 800, 1600)}
    assert {n: t.interval_ms for n, t in picked.items() if t} == {
        64: 300, 256: 300, 400: 1000, 800: 1000, 1600: 1000
    }  # fmt: skip
    assert BFD_BY_SIZE[-1][1].interval_ms * 3 < 9000  # faster than the hold timer
    assert bfd_timers(1600, "250ms") == BfdTimers(250)
    assert "receive-interval 250" in bfdd_config(BfdTimers(250))
    assert "detect-multiplier 3" in bfdd_config(BfdTimers(250))
    with pytest.raises(ScenarioError, match="use off, on or an interval"):
        bfd_timers(64, "fast")


def test_bfd_sessions_are_the_live_cables_between_live_switches() -> None:
    plan = make_plan(SMALL, "hx")
    everything = Alive(frozenset(range(len(plan.wires))), frozenset(range(SMALL.n_elements)))
    want = bfd_sessions(plan, everything)
    spine = plan.ns_of[SMALL.index["spine-01"]]
    leaf = plan.ns_of[SMALL.index["su01/leaf-r0"]]
    assert len(want) == 12
    assert len(want[spine]) == 8
    assert len(want[leaf]) == 4
    assert sum(len(p) for p in want.values()) == 64  # one per BGP session
    hung = Alive(everything.wires, everything.elements - {SMALL.index["spine-01"]})
    without = bfd_sessions(plan, hung)
    assert spine not in without
    assert len(without[leaf]) == 3
    assert without[leaf] < want[leaf]


class _Msg:
    """A stand-in for a decoded pyroute2 rtmsg."""

    def __init__(self, proto: int, dst: str, plen: int, attrs: dict[str, Any]) -> None:
        self.fields = {"proto": proto, "table": 254, "dst_len": plen, "flags": 0}
        self.attrs = {"RTA_DST": dst, **attrs}

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def get_attr(self, key: str) -> Any:
        return self.attrs.get(key)


def test_fib_counts_only_bgp_routes_and_usable_next_hops() -> None:
    routes = [
        _Msg(RTPROT_BGP, "10.1.1.0", 24, {"RTA_MULTIPATH": [
            {"oif": 3, "flags": 0}, {"oif": 4, "flags": 16}, {"oif": 5, "flags": 0}]}),
        _Msg(RTPROT_BGP, "10.1.2.0", 24, {"RTA_OIF": 3}),
        _Msg(RTPROT_BGP, "10.1.3.0", 24, {"RTA_MULTIPATH": [{"oif": 4, "flags": 16}]}),
        _Msg(2, "10.64.0.0", 31, {"RTA_OIF": 3}),  # a connected route: not BGP's
    ]  # fmt: skip
    assert fib_of(routes) == {"10.1.1.0/24": frozenset({3, 5}), "10.1.2.0/24": frozenset({3})}


def test_expected_fib_is_the_up_down_tables_in_both_families() -> None:
    plan = make_plan(SMALL, "hx")
    tables = compute(
        plan, Alive(frozenset(range(len(plan.wires))), frozenset(range(SMALL.n_elements)))
    )
    leaf = plan.ns_of[SMALL.index["su01/leaf-r0"]]
    want = expected_fib(plan, tables, leaf)
    assert len(want) == 2 * 7
    assert {len(v) for v in want.values()} == {4}
