"""Open report pages in Debian's headless chromium through Playwright (test helper).

No browser is downloaded: Playwright drives ``/usr/bin/chromium`` (``CHROMIUM``
overrides the path).  :func:`open_page` loads a page from ``file://`` with every
non-file request aborted and recorded, collects console errors and page errors,
and returns what the tests check: image natural sizes, the highlighted SVG
elements, the page text.  The same code writes the README's screenshots
(``tests/report/screenshots.py``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Chromium as root needs --no-sandbox; the rest keep it off the (closed) network.
ARGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
)  # fmt: skip


@dataclass
class PageCheck:
    """What one page load showed."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    images: list[tuple[str, int, int]] = field(default_factory=list)  # src, natural w, h
    svgs: list[dict[str, Any]] = field(default_factory=list)  # per inline fabric drawing
    text: str = ""
    report: str = ""
    verdict: str = ""
    screenshot: Path | None = None


LAUNCH_TIMEOUT_MS = 90_000
LAUNCH_ATTEMPTS = 3


def _environment(profile: str) -> dict[str, str]:
    """A small environment of its own: nothing a test left in os.environ reaches chromium."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": profile,
        "TMPDIR": profile,
        "XDG_CONFIG_HOME": profile,
        "XDG_CACHE_HOME": profile,
        "LANG": "C.UTF-8",
    }


@contextmanager
def browser() -> Iterator[Any]:
    """A Playwright chromium browser on the system chromium, offline, with a fresh profile.

    A launch that does not answer in 90 s (a machine shared with other builds) is
    tried again with a new profile, up to 3 times; the last error is raised.
    """
    from playwright.sync_api import Error
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        for attempt in range(1, LAUNCH_ATTEMPTS + 1):
            profile = tempfile.mkdtemp(prefix="harness-chromium-")
            try:
                context = pw.chromium.launch_persistent_context(
                    profile,
                    executable_path=CHROMIUM,
                    headless=True,
                    args=list(ARGS),
                    env=_environment(profile),
                    viewport={"width": 1400, "height": 1000},
                    offline=True,
                    timeout=LAUNCH_TIMEOUT_MS,
                )
            except Error:
                shutil.rmtree(profile, ignore_errors=True)
                if attempt == LAUNCH_ATTEMPTS:
                    raise
                continue
            try:
                yield context
            finally:
                context.close()
                shutil.rmtree(profile, ignore_errors=True)
            return


_SVG_JS = """() => Array.from(document.querySelectorAll('figure.fabric svg')).map(s => {
  const r = s.getBoundingClientRect();
  return {
    fabric: s.dataset.fabric, width: r.width, height: r.height,
    caption: s.getAttribute('aria-label'),
    declared: Number(s.dataset.highlighted), declaredLost: Number(s.dataset.lostCells),
    highlighted: s.querySelectorAll('[data-status]').length,
    lost: s.querySelectorAll('[data-lost]').length,
    cells: s.querySelectorAll('g.cell').length,
    statuses: Array.from(s.querySelectorAll('[data-status]')).map(e => e.dataset.status),
    sources: Array.from(s.querySelectorAll('[data-status]')).map(e => e.dataset.source),
    filled: Array.from(s.querySelectorAll('g.cell.marked rect')).map(
      e => getComputedStyle(e).fill),
  };
})"""

_IMG_JS = """() => Array.from(document.images).map(
  i => [i.getAttribute('src'), i.naturalWidth, i.naturalHeight])"""


def open_page(
    context: Any,
    page_path: Path,
    *,
    screenshot: Path | None = None,
    full_page: bool = True,
    clip_height: int | None = None,
) -> PageCheck:
    """Load ``page_path`` and collect what the tests check (see the module docstring)."""
    url = page_path.resolve().as_uri()
    check = PageCheck(url)
    page = context.new_page()

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            check.blocked_requests.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: check.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: check.page_errors.append(str(e)))
    page.on("requestfailed", lambda r: check.failed_requests.append(r.url))
    page.goto(url, wait_until="load")
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)")
    check.images = [tuple(x) for x in page.evaluate(_IMG_JS)]
    check.svgs = page.evaluate(_SVG_JS)
    check.text = page.inner_text("body")
    check.report = page.get_attribute("body", "data-report") or ""
    check.verdict = page.get_attribute("body", "data-verdict") or ""
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        if clip_height is not None:
            box = {"x": 0, "y": 0, "width": 1400, "height": clip_height}
            page.screenshot(path=str(screenshot), full_page=True, clip=box)
        else:
            page.screenshot(path=str(screenshot), full_page=full_page)
        check.screenshot = screenshot
    page.close()
    return check
