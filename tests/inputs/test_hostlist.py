"""Slurm hostlists: the expander against python-hostlist, and expand(compress(x)) == x."""

from __future__ import annotations

import hostlist  # type: ignore[import-untyped]  # python-hostlist: an independent parser
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import ScenarioError
from harness.inputs.hostlist import MAX_HOSTS
from harness.inputs.hostlist import compress_hostlist
from harness.inputs.hostlist import expand_hostlist

names = st.lists(
    st.builds(
        lambda p, n, w: f"{p}{n:0{w}d}",
        st.sampled_from(["gpu", "su01-node", "rack1-n", "n", "x1y", "dgx-a08-"]),
        st.integers(0, 1200),
        st.integers(1, 4),
    )
    | st.sampled_from(["login", "ufm", "B11-P1-CUFM"]),
    min_size=1,
    max_size=60,
)


@given(names)
def test_expand_reads_back_what_compress_wrote(hosts: list[str]) -> None:
    expr = compress_hostlist(hosts)
    back = expand_hostlist(expr)
    assert sorted(back) == sorted(set(hosts))
    assert len(back) == len(set(back))
    assert compress_hostlist(back) == expr
    assert back == hostlist.expand_hostlist(expr)  # same order as an independent parser


exprs = st.lists(
    st.builds(
        lambda p, lo, n, w, tail: (
            f"{p}[{lo:0{w}d}-{lo + n:0{w}d}]{tail}" if n else f"{p}{lo:0{w}d}{tail}"
        ),
        st.sampled_from(["gpu", "rack", "su"]),
        st.integers(0, 200),
        st.integers(0, 12),
        st.integers(1, 3),
        st.sampled_from(["", "-node[01-02]", "-b", "-n[7,9-10]"]),
    ),
    min_size=1,
    max_size=5,
).map(",".join)


@given(exprs)
def test_expand_agrees_with_python_hostlist(expr: str) -> None:
    assert expand_hostlist(expr) == hostlist.expand_hostlist(expr)


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ("gpu[001-003,007],cpu01", ["gpu001", "gpu002", "gpu003", "gpu007", "cpu01"]),
        ("rack[1-2]-node[01-02]", ["rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("n[9-10]", ["n9", "n10"]),
        ("a, b ,a", ["a", "b"]),
        ("su01-node[01-02],su02-node01", ["su01-node01", "su01-node02", "su02-node01"]),
    ],
)
def test_expansions(expr: str, names: list[str]) -> None:
    assert expand_hostlist(expr) == names


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        ("gpu[1-3", "never closed"),
        ("gpu1-3]", "closes no"),
        ("gpu[[1-3]]", "do not nest"),
        ("gpu[a-b]", "not a number"),
        ("gpu[3-1]", "runs backwards"),
        (f"n[0-{MAX_HOSTS}]", "more than"),
        ("a[0-999]b[0-999]c[0-9]", "more than"),
    ],
)
def test_bad_hostlists_say_what_and_how(expr: str, why: str) -> None:
    with pytest.raises(ScenarioError, match=why) as err:
        expand_hostlist(expr)
    assert "gpu[001-003,007],cpu01" in str(err.value)  # the form it should take
