"""One headless chromium for every browser test (reports, the web view).

Playwright for Python drives Debian's ``/usr/bin/chromium`` (Playwright's own
browser downloads are not possible here, and CI installs chromium with apt).
Tests that need it take the ``browser`` fixture; without chromium or playwright
they are skipped with the reason, never failed. ``page_at`` opens a page at a
given viewport width and collects console errors, so a test can assert none.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = os.environ.get("ARENA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A launched chromium (Playwright ``Browser``), shared by the whole session."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"chromium not found at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@contextmanager
def page_at(browser: Any, width: int, height: int = 900) -> Iterator[tuple[Any, list[str]]]:
    """A new page ``width`` CSS pixels wide, and the list its console errors go to."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield page, errors
    finally:
        context.close()


def overflow(page: Any) -> dict[str, Any]:
    """How far the page is wider than its viewport, and the widest offenders:
    elements whose right edge passes the viewport (``[]`` when none does)."""
    return page.evaluate(
        """() => {
        const width = document.documentElement.clientWidth;
        const wide = [];
        for (const e of document.querySelectorAll('body *')) {
            const r = e.getBoundingClientRect();
            if (r.width === 0 || r.height === 0) continue;
            if (r.right > width + 1) {
                let inside = false;
                for (let p = e.parentElement; p; p = p.parentElement) {
                    const o = getComputedStyle(p).overflowX;
                    if (o === 'auto' || o === 'scroll' || o === 'hidden') { inside = true; break; }
                }
                if (!inside) wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
                    + (e.className && typeof e.className === 'string' ? '.' + e.className : '')
                    + ' ' + Math.round(r.right));
            }
        }
        return {scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 10)};
    }"""
    )
