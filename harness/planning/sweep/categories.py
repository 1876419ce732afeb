"""The categories of failure a sweep or an N+1 margin check enumerates, and ``--elements``.

Pure and light (no numpy): the command line names them in its help and parses them before
anything is built; :mod:`~harness.planning.sweep.cases` enumerates each category's cases.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import ScenarioError

CATEGORIES = ("switches", "cables", "nics", "optics", "nodes", "storage")
DEFAULT_CATEGORIES = ("switches", "cables", "nics")
#: What an N+1 margin (``harness risk``) fails one at a time by default.
DEFAULT_MARGIN_CATEGORIES = ("switches", "cables", "optics", "nics")


def parse_categories(text: str | Sequence[str]) -> tuple[str, ...]:
    """Parse ``--elements``: a comma-separated list (or a sequence) of known categories.

    >>> parse_categories("cables, switches,cables")
    ('cables', 'switches')
    """
    items = [t.strip() for t in text.split(",")] if isinstance(text, str) else list(text)
    items = [t for t in items if t]
    bad = [t for t in items if t not in CATEGORIES]
    if bad or not items:
        import difflib

        near = difflib.get_close_matches(bad[0], CATEGORIES, n=1) if bad else []
        hint = f"; did you mean {near[0]!r}?" if near else ""
        what = repr(bad[0]) if bad else "nothing"
        msg = f"--elements: unknown category {what}{hint} (known: {', '.join(CATEGORIES)})"
        raise ScenarioError(msg)
    return tuple(dict.fromkeys(items))
