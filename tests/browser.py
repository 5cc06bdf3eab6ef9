"""One headless chromium for every browser test (reports, the web view).

Playwright for Python drives Debian's ``/usr/bin/chromium`` (Playwright's own
browser downloads are not possible here, and CI installs chromium with apt).
Tests that need it take the ``browser`` fixture; without chromium or playwright
they are skipped with the reason (``tests/needs.py``; an error under
``ARENA_REQUIRE_ALL=1``, as in CI). ``page_at`` opens a page at a
given viewport width and collects console errors, so a test can assert none.

Playwright keeps every page it drives visible and focused (focus emulation), so
a test that needs a hidden page uses ``window_tabs``: tabs of one window of a
chromium started here, the first in front and the others in the background,
which chromium itself hides (``document.hidden``; no animation frames).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import needs
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
def playwright() -> Iterator[Any]:
    """Playwright's sync API, started once for the session (it allows one at a time)."""
    if not os.path.exists(CHROMIUM):
        needs.missing(f"chromium is not installed (not found at {CHROMIUM})")
    sync_api = needs.module("playwright.sync_api", "install the 'test' extra")
    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Any) -> Iterator[Any]:
    """A launched chromium (Playwright ``Browser``), shared by the whole session."""
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
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


@contextmanager
def devtools_chromium(width: int = 1400, height: int = 900) -> Iterator[str]:
    """Headless chromium with one window of ``width`` x ``height`` and one tab,
    started here rather than by Playwright's launch (whose flags switch off
    background throttling); yields its DevTools endpoint on 127.0.0.1.
    ``bench/web.py`` uses it too. Raises ``RuntimeError`` if chromium gives no
    endpoint within 30 s."""
    profile = Path(tempfile.mkdtemp(prefix="arena-chromium-"))
    process = subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            *ARGS,
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file, deadline = profile / "DevToolsActivePort", time.monotonic() + 30
        while len(lines := (port_file.read_text() if port_file.exists() else "").split()) < 2:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium gave no DevTools port (exit {process.poll()})")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{lines[0]}"
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def tabs_of_one_window(
    playwright: Any, count: int, width: int = 1400, height: int = 900
) -> Iterator[list[Any]]:
    """``count`` tabs of one window of :func:`devtools_chromium`, the first in
    front and the others opened in the background (``Target.createTarget`` with
    ``background``). Playwright attaches without its default overrides
    (``no_defaults``: no focus emulation, which would keep every tab visible).
    ``bench/web.py`` uses it too."""
    with devtools_chromium(width, height) as endpoint:
        browser = playwright.chromium.connect_over_cdp(endpoint, no_defaults=True)
        try:
            context = browser.contexts[0]
            tabs = list(context.pages)  # the window's own tab, in front
            if len(tabs) != 1:
                raise RuntimeError(f"chromium opened {len(tabs)} tabs, not 1")
            session = browser.new_browser_cdp_session()
            for _ in range(count - 1):
                with context.expect_page() as new:
                    session.send(
                        "Target.createTarget",
                        {"url": "about:blank", "newWindow": False, "background": True},
                    )
                tabs.append(new.value)
            session.detach()
            yield tabs
        finally:
            browser.close()


@contextmanager
def window_tabs(
    playwright: Any, count: int, width: int = 1400, height: int = 900
) -> Iterator[tuple[list[Any], list[str]]]:
    """:func:`tabs_of_one_window`, and the list their console errors go to."""
    try:
        opened = tabs_of_one_window(playwright, count, width, height)
        tabs = opened.__enter__()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        errors: list[str] = []
        for tab in tabs:
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: errors.append(str(e)))
        yield tabs, errors
    finally:
        opened.__exit__(None, None, None)


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
