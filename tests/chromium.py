"""Headless Chromium through Playwright, one for the whole run.

Kept in one module and registered once by tests/conftest.py: a second session fixture
(one imported into a test module) would start a second sync Playwright while the first
one's event loop runs, which Playwright refuses.
"""

import os
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in the test's thread; Django would otherwise
# refuse database access from it. Subprocesses that run Django's deploy checks must not
# inherit it (tests/production/test_security.py removes it).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# --- Headless Chromium ---------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def _browser_unavailable(why: str):
    message = (
        f"Chromium cannot start ({why}). The console's browser tests need Debian's chromium: "
        "install it with `sudo apt-get install chromium`."
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} Under CI the browser tests must run.", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def playwright_chromium():
    """One Playwright and one Chromium for the whole run (starting Chromium takes a second)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        _browser_unavailable(f"Playwright is not installed: {error}")
    if not os.path.exists(CHROMIUM):
        _browser_unavailable(f"{CHROMIUM} is missing")
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    except Exception as error:  # Playwright raises its own Error with a long log
        playwright.stop()
        _browser_unavailable(str(error).strip().splitlines()[0])
    yield playwright, browser
    browser.close()
    playwright.stop()


@pytest.fixture
def browser_page(playwright_chromium, live_server, request):
    """A fresh browser context on the live server; a screenshot is saved when the test ends."""
    _, browser = playwright_chromium
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


@pytest.fixture
def api(playwright_chromium, live_server):
    """An HTTP client for the API on the live server, with no console session."""
    playwright, _ = playwright_chromium
    context = playwright.request.new_context(base_url=live_server.url)
    yield context
    context.dispose()
