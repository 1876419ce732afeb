"""ibsim's limits: the fabrics that fit are sized, the others refused naming the limit."""

from __future__ import annotations

import doctest
import importlib

import pytest

from harness.backends.ibsim.limits import IBSIM_LIMITS
from harness.backends.ibsim.limits import IbsimLimits
from harness.backends.ibsim.limits import check_fits
from harness.errors import FabricDesignError
from harness.fabric import preset


def test_seed_a800_fits_within_the_defaults() -> None:
    sizing = check_fits(preset("seed-a800"))
    assert (sizing.switches, sizing.nodes) == (60, 860)
    # 60 switches x 41 ports (port 0 included) + 800 HCA ports
    assert sizing.ports == 60 * 41 + 800
    assert sizing.args() == ["-N", "2048", "-S", "256", "-P", str(IBSIM_LIMITS.max_ports)]


def test_a_fabric_past_the_default_counts_raises_them() -> None:
    sizing = check_fits(preset("b200-16su"))  # 320 switches > MAXNETSWITCHS 256
    args = sizing.args()
    assert args[args.index("-S") + 1] == str(sizing.switches) == "320"


def test_more_lids_than_the_linear_cap_is_refused_naming_it() -> None:
    with pytest.raises(FabricDesignError, match=r"MAXLINEARCAP of 30720") as err:
        check_fits(preset("clos-100k"))
    assert "102400 HCAs" in str(err.value)


def test_more_ports_per_switch_than_ibsim_allows_is_refused() -> None:
    with pytest.raises(
        FabricDesignError, match=r"switch spine-01 has 40 ports.*limit of 32 ports per switch"
    ):
        check_fits(preset("seed-a800"), IbsimLimits(max_ports_per_switch=32))


@pytest.mark.parametrize("name", ["harness.backends.ibsim.limits", "harness.backends.ibsim.tables"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
