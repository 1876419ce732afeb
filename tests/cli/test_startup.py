"""Start-up stays light: the command line imports none of the heavy libraries until a
command that needs them runs (the timing itself is measured in benchmarks/bench_startup.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "scipy", "networkx", "matplotlib", "jinja2")


def _imported_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint('|' + ' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.rpartition("|")[2].split()  # after what the code printed


@pytest.mark.parametrize(
    "code",
    [
        "import harness.cli",
        "from harness.cli import build_parser; build_parser()",  # every command set up
        "from harness.cli import main; main(['--version'])",
    ],
)
def test_the_command_line_imports_no_heavy_library(code: str) -> None:
    assert _imported_after(code) == []


def test_the_public_api_is_imported_on_first_use() -> None:
    assert _imported_after("import harness") == []
    assert "numpy" in _imported_after("from harness import Fabric")


def test_an_unknown_public_name_is_an_attribute_error() -> None:
    import harness

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = harness.Nope  # type: ignore[attr-defined]
    assert "run_scenario" in dir(harness)


def test_the_sample_default_is_the_measurement_plans_default() -> None:
    from harness.cli.run import SAMPLE_PER_RAIL
    from harness.observations.plans import MeasureOptions

    assert MeasureOptions().per_rail == SAMPLE_PER_RAIL


def test_the_union_find_merges_as_networkx_did() -> None:
    from networkx.utils import UnionFind as Reference

    from harness.fabric.union_find import UnionFind

    ours, ref = UnionFind(), Reference()
    pairs = [(1, 2), (3, 4), (2, 4), (5, 5), (6, ("nvsw", 1)), (7, 6), (2, 2), (1, 4)]
    for uf in (ours, ref):
        for a, b in pairs:
            uf.union(a, b)
        uf.union(8)
    items = [1, 2, 3, 4, 5, 6, 7, 8, ("nvsw", 1)]
    partition = {frozenset(x for x in items if ours[x] == ours[y]) for y in items}
    expected = {frozenset(x for x in items if ref[x] == ref[y]) for y in items}
    assert partition == expected
    assert len(partition) == 4
