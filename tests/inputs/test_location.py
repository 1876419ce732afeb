"""Where an input came from (harness.inputs.location)."""

from __future__ import annotations

import doctest

from harness.inputs import location
from harness.inputs.location import Location


def test_the_docstring_examples() -> None:
    result = doctest.testmod(location, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_a_location_without_a_line_is_its_path() -> None:
    assert str(Location()) == ""
    assert str(Location("s.yaml", 0, 3)) == "s.yaml"
    assert str(Location("s.yaml", 12, 1)) == "s.yaml:12:1"
