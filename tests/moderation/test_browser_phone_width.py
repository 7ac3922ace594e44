"""Every console page at phone width (issue 19): at 390 px every visible button, link and
submit input lies inside the viewport and the page never scrolls sideways, with data on
each page (entries, a token, audit events, a delivery in the inbox, a maintenance run).
Screenshots at 390 and 1280 px land in tests/artifacts/phone-*.png and desk-*.png."""

from datetime import timedelta

import pytest
from django.core.management.color import no_style
from django.db import connection
from django.utils import timezone

from board.models import Entry
from maintenance.deliveries.models import Delivery, DeliveryAttempt
from maintenance.models import MaintenanceRun
from moderation import actions as moderation
from tests.chromium import ARTIFACTS
from tests.maintenance.conftest import (  # noqa: F401 (fixtures)
    delivery_settings,
    drive,
    endpoint_for,
    receiver,
)
from tests.maintenance.webhook_receiver import Behaviour
from tests.moderation.test_browser import log_in
from tests.moderation.test_pages_inbox import posted

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings", "roomy_limits"),
]

PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}

# Every visible action whose box leaves the viewport (or has none though it is visible).
OFF_SCREEN = """
width => [...document.querySelectorAll("button, a, input[type=submit]")]
  .filter(e => e.checkVisibility() && !e.closest(".visually-hidden"))
  .filter(e => {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return false;
    // inside a box that scrolls: what is clipped by it cannot be reached without scrolling
    for (let p = e.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== "visible") {
        const b = p.getBoundingClientRect();
        if (r.left < b.left - 0.5 || r.right > b.right + 0.5) return true;
      }
    }
    return r.left < 0 || r.right > width + 0.5;
  })
  .slice(0, 8).map(e => `${e.tagName} "${(e.innerText || e.value || "").trim()}" `
    + JSON.stringify(e.getBoundingClientRect()))
"""


def entries_numbered_from(first_id: int) -> None:
    """Let the next entry's id be past `first_id`, as on a board that has run a while.

    An entry with that id is stored the way an old one would be, and PostgreSQL's sequence
    is moved past it (SQLite takes the largest id plus one by itself). Without this the
    ids depend on the tests run before: PostgreSQL keeps counting across a whole run while
    SQLite starts again at 1, which made the width of the deliveries table differ between
    a run of this file and a full run."""
    Entry.objects.create(
        id=first_id, type="question", title="An old question", body="asked long ago",
        actor_name="an-old-agent", submission_mode="autonomous", route="api", source="api",
        created_at=timezone.now() - timedelta(days=3),
    )
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), [Entry]):
            cursor.execute(statement)


def filled(receiver, entry_ids):  # noqa: F811
    """A token, audit events, a delivery whose outcome is unknown, a maintenance run.

    The delivery carries what a busy production board shows (a long endpoint name, an
    entry id in the tens of millions, a send that took seconds), not what happens to be
    left by earlier tests, so the page's width is the same in every run."""
    moderation.token_issue(actor="operator", name="phone-bot-with-a-long-name", hourly_limit=50)
    moderation.entry_hide(actor="operator", entry_id=entry_ids[0], reason="spam, a long reason")
    moderation.posting_pause(actor="operator", reason="checking the phone layout")
    moderation.posting_resume(actor="operator", reason="done checking")
    crm = endpoint_for(receiver, name="customer_relationship_manager_production_eu_west")
    receiver.script.append(Behaviour(close=True))
    entries_numbered_from(41_000_000)
    _, entry_id = posted(title="A question whose delivery was lost on the way")
    assert entry_id > 41_000_000
    delivery = drive(Delivery.objects.get(entry_id=entry_id, endpoint=crm))
    assert delivery.state == "outcome_unknown"
    # The receiver read the request for seconds before closing (timing decides it in a run).
    DeliveryAttempt.objects.filter(delivery=delivery).update(duration_ms=12_345)
    now = timezone.now()
    MaintenanceRun.objects.create(
        job="purge-expired-threads",
        started_at=now - timedelta(seconds=3),
        finished_at=now,
        duration_seconds=3.2,
        counts={"threads": 10001, "entries": 3},
    )
    return entry_id


def test_every_console_page_fits_a_phone_and_a_desk(browser_page, operator, receiver):  # noqa: F811
    posts = [posted(title="A question with a title long enough to wrap " * 3) for _ in range(3)]
    request_ids = [request_id for request_id, _ in posts]
    entry_ids = [entry_id for _, entry_id in posts]
    delivered = filled(receiver, entry_ids)
    pages = {
        "dashboard": "/console/",
        "posting": "/console/posting/",
        "entries": "/console/entries/",
        "operations": f"/console/operations/?request_id={request_ids[1]}",
        "deliveries": "/console/deliveries/",
        "retention": "/console/retention/",
        "tokens": "/console/tokens/",
        "audit": "/console/audit/",
        "thread": f"/console/entries/{delivered}/",
    }
    log_in(browser_page)
    ARTIFACTS.mkdir(exist_ok=True)
    problems = {}
    for name, url in pages.items():
        for label, viewport in (("phone", PHONE), ("desk", DESK)):
            browser_page.set_viewport_size(viewport)
            response = browser_page.goto(url)
            assert response.status == 200, (name, response.status)
            browser_page.screenshot(path=str(ARTIFACTS / f"{label}-{name}.png"), full_page=True)
            off = browser_page.evaluate(OFF_SCREEN, viewport["width"])
            scroll = browser_page.evaluate("document.documentElement.scrollWidth")
            if off or scroll > viewport["width"]:
                problems[f"{label} {name}"] = {"off screen": off, "scrollWidth": scroll}
    assert problems == {}


def wraps(page, selector: str) -> list[str]:
    """Elements matching `selector` whose text runs over more than one line."""
    return page.evaluate(
        """sel => [...document.querySelectorAll(sel)].filter(e => {
             const lh = parseFloat(getComputedStyle(e).lineHeight) || 24;
             const range = document.createRange(); range.selectNodeContents(e);
             return range.getBoundingClientRect().height > lh * 1.5;
           }).map(e => e.innerText.trim())""",
        selector,
    )


def test_at_desk_width_entry_actions_dates_and_figures_stay_on_one_line(
    browser_page,
    operator,
    receiver,  # noqa: F811
):
    entry_ids = [entry_id for _, entry_id in (posted(), posted())]
    filled(receiver, entry_ids)
    log_in(browser_page)
    browser_page.set_viewport_size(DESK)

    browser_page.goto("/console/entries/")
    row = browser_page.locator(f"#entry-{entry_ids[1]}")
    reason = row.get_by_label(f"Reason for entry {entry_ids[1]}").bounding_box()
    delete = row.get_by_role("button", name="Delete", exact=True).bounding_box()
    assert delete["y"] < reason["y"] + reason["height"], "Delete wrapped under the reason"
    assert wraps(browser_page, "time, td.date") == []

    for url in ("/console/retention/", "/console/deliveries/", "/console/audit/"):
        browser_page.goto(url)
        assert wraps(browser_page, "td.num, td.figure, time, td.date") == [], url
