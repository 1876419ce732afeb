"""Write the README's report screenshots (``docs/img/report-*.png``).

Each report is made by the README's own command (:mod:`tests.report.reports`),
loaded and photographed by the same code the browser tests use
(:func:`tests.report.browser.open_page`), then shrunk to a 256-colour PNG so the
committed images stay small.  Run from the repository root::

    python -m tests.report.screenshots            # all kinds
    python -m tests.report.screenshots risk run   # some
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.report.browser import browser
from tests.report.browser import open_page
from tests.report.reports import ROOT
from tests.report.reports import make_report

OUT = ROOT / "docs" / "img"
HEIGHT = 1500  # CSS pixels of the page shown, from the top
WIDTH = 980  # pixels of the committed image


def shrink(path: Path, width: int = WIDTH) -> None:
    """Scale a screenshot to ``width`` pixels and store it with a 256-colour palette."""
    from PIL import Image

    with Image.open(path) as img:
        rgb = img.convert("RGB")
        height = round(rgb.height * width / rgb.width)
        small = rgb.resize((width, height), Image.Resampling.LANCZOS)
    small.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(path, optimize=True)


def write_screenshots(kinds: list[str], out: Path = OUT) -> list[Path]:
    """Make, load and photograph each report kind; return the images written."""
    written = []
    with tempfile.TemporaryDirectory(prefix="harness-shots-") as tmp, browser() as context:
        for kind in kinds:
            page = make_report(kind, Path(tmp) / kind)
            shot = out / f"report-{kind}.png"
            check = open_page(context, page, screenshot=shot, clip_height=HEIGHT)
            if check.console_errors or check.page_errors or check.blocked_requests:
                msg = f"{kind}: the page has errors: {check}"
                raise RuntimeError(msg)
            shrink(shot)
            written.append(shot)
    return written


def main(argv: list[str]) -> int:
    kinds = argv or ["risk", "sweep", "run", "audit"]
    for path in write_screenshots(kinds):
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
