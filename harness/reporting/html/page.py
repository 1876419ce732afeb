"""Render report pages with Jinja2 and write them with their figures (reporting edge).

A report directory holds ``index.html`` (self-contained: styles inline, the fabric
drawings as inline SVG, no script or font from the network), the PNG figures it
shows (relative links, so the directory can be moved or archived as a CI
artifact) and each fabric drawing as a standalone ``.svg`` file.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from harness.errors import BackendError
from harness.errors import MissingExtra
from harness.reporting.html.drawing import Drawing
from harness.reporting.html.marks import STATUS_LABELS
from harness.reporting.html.marks import STATUSES

if TYPE_CHECKING:
    import jinja2

INDEX = "index.html"


@cache
def environment() -> jinja2.Environment:
    """The template environment: package templates, autoescaped, strict about names."""
    try:
        import jinja2
    except ImportError as err:
        package = "jinja2"
        raise MissingExtra(package, "an HTML report") from err
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("harness.reporting.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
        keep_trailing_newline=True,
    )
    env.globals.update(statuses=STATUSES, status_labels=STATUS_LABELS)
    env.filters["pct"] = pct
    return env


def pct(x: float | None, digits: int = 1) -> str:
    """``0.95`` -> ``95.0%``; ``None`` -> ``-``."""
    if x is None:
        return "-"
    return f"{x:.{digits}%}"


@dataclass
class ReportDir:
    """What a report writes into its directory, in order."""

    directory: Path
    files: list[Path] = field(default_factory=list)

    def prepare(self) -> None:
        """Create the report directory (BackendError when it cannot be made)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            msg = f"cannot create the report directory {self.directory}"
            raise BackendError(msg, err) from err

    def path(self, name: str) -> Path:
        """The path of a report file, recorded as written."""
        p = self.directory / name
        self.files.append(p)
        return p

    def write_text(self, name: str, text: str) -> Path:
        """Write a report file; its path (BackendError when it cannot be written)."""
        p = self.path(name)
        try:
            p.write_text(text, encoding="utf-8")
        except OSError as err:
            msg = f"cannot write the report file {p}"
            raise BackendError(msg, err) from err
        return p

    def svg(self, name: str, drawing: Drawing, caption: str) -> str:
        """Write a drawing as a standalone SVG file; return its file name."""
        module: Any = environment().get_template("fabric.svg.j2").module
        self.write_text(name, str(module.svg(drawing, caption, True)) + "\n")
        return name


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render a report template, with the version and the time it was generated."""
    from harness import __version__

    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        environment()
        .get_template(template)
        .render({"version": __version__, "generated": now, **context})
    )


def write_page(out: ReportDir, template: str, context: Mapping[str, Any]) -> Path:
    """Render ``template`` as the directory's ``index.html``."""
    return out.write_text(INDEX, render(template, context))
