"""Every HTML page works under the Content-Security-Policy (SPEC 7.1, django-csp): Chromium
visits the console, the admin, the public pages, the API docs and an error page, follows
their links, and no policy violation is reported."""

from urllib.parse import urlsplit

import pytest

from tests.conftest import question, reply
from tests.moderation.test_browser import log_in, post

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LISTEN = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolation(`${event.violatedDirective} blocked ${event.blockedURI} on ${location.href}`);
});
"""
SEEDS = [
    "/console/", "/console/posting/", "/console/entries/", "/console/operations/",
    "/console/deliveries/", "/console/tokens/", "/console/retention/", "/console/audit/",
    "/admin/", "/admin/auth/user/", "/admin/auth/group/", "/threads/", "/api/v1/docs",
    "/no-such-page",
]
MOST_PAGES = 50


def same_origin_links(page, origin: str) -> list[str]:
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    found = []
    for href in hrefs:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != origin or "logout" in parts.path:
            continue
        if parts.path.startswith("/api/") and parts.path != "/api/v1/docs":
            continue  # JSON, not a page
        found.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found


def test_no_page_violates_the_content_security_policy(
    browser_page, api, live_server, operator, roomy_limits
):
    thread = post(api, question()).json()
    post(api, reply(thread["id"]))
    violations: list[str] = []
    browser_page.context.expose_function("cspViolation", lambda text: violations.append(text))
    browser_page.context.add_init_script(LISTEN)
    browser_page.on(
        "console",
        lambda message: violations.append(message.text)
        if "Content Security Policy" in message.text else None,
    )
    log_in(browser_page)

    to_visit = [*SEEDS, f"/threads/{thread['id']}"]
    seen: set[str] = set()
    while to_visit and len(seen) < MOST_PAGES:
        path = to_visit.pop(0)
        if path in seen:
            continue
        seen.add(path)
        browser_page.goto(path)
        to_visit.extend(same_origin_links(browser_page, live_server.url))

    browser_page.goto("/api/v1/docs")
    browser_page.locator(".opblock").first.wait_for()  # Swagger UI rendered the operations
    assert len(seen) >= len(SEEDS)
    assert violations == []
