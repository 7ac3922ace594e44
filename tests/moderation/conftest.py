"""Console personas: one operator per role, and a client logged in as each.

The groups come from a data migration, but transactional tests (the browser ones) flush
the database afterwards, so the fixtures make sure they exist.
"""

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from moderation.access import ADMINISTRATORS, MODERATORS

# Playwright's sync API runs an event loop in the test's thread; Django would otherwise
# refuse database access from it.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def staff_user(django_user_model, username: str, *groups: str):
    user = django_user_model.objects.create_user(username, "", "secret-password", is_staff=True)
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


@pytest.fixture
def moderator(django_user_model):
    return staff_user(django_user_model, "mod", MODERATORS)


@pytest.fixture
def administrator(django_user_model):
    return staff_user(django_user_model, "admin", ADMINISTRATORS)


@pytest.fixture
def reader(django_user_model):
    """Staff in no group: sees every page, changes nothing."""
    return staff_user(django_user_model, "reader")


def logged_in(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


@pytest.fixture
def console(operator) -> Client:
    return logged_in(operator)


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Hashing a password properly takes a good part of a second; tests need no such care."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- Headless Chromium ---------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


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
