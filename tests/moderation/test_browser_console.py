"""The console's layout and the reason that feeds both entry actions, in headless
Chromium (screenshots land in tests/artifacts/, named after each test)."""

import pytest

from board.models import Entry
from moderation import actions as moderation
from moderation.models import AuditEvent
from tests.conftest import question
from tests.moderation.test_browser import WIDER_THAN_THE_SCREEN, log_in, post

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
# How many lines an element's text is laid out on.
LINES_OF_TEXT = """e => { const r = document.createRange(); r.selectNodeContents(e);
    return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }"""


def box(locator) -> dict:
    found = locator.bounding_box()
    assert found is not None, "not rendered"
    return found


def test_at_phone_width_every_entrys_actions_are_on_screen(
    browser_page, api, operator, roomy_limits
):
    ids = [
        post(api, question(title="A question with a title long enough to wrap " * 3)).json()["id"]
        for _ in range(3)
    ]
    browser_page.set_viewport_size(PHONE)
    log_in(browser_page)

    browser_page.goto("/console/entries/")

    for entry_id in ids:
        row = browser_page.locator(f"#entry-{entry_id}")
        reason = box(row.get_by_label(f"Reason for entry {entry_id}"))
        assert reason["x"] + reason["width"] <= PHONE["width"]
        for name in ("Hide", "Delete"):
            found = row.get_by_role("button", name=name, exact=True)
            button = box(found)
            right = button["x"] + button["width"]
            assert 0 <= button["x"] and right <= PHONE["width"], (name, button)
            # on the line under the reason, its label on one line ("Hi|de" was seen)
            assert button["y"] >= reason["y"] + reason["height"], (name, button, reason)
            assert found.evaluate(LINES_OF_TEXT) == 1, name
    assert browser_page.evaluate(WIDER_THAN_THE_SCREEN + ".length") == 0
    scroller = browser_page.locator(".scroll").first
    assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth")


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["phone", "desk"])
def test_the_login_form_stacks_its_fields(browser_page, operator, viewport):
    browser_page.set_viewport_size(viewport)
    browser_page.goto("/console/login/")

    label = box(browser_page.locator("label[for=id_username]"))
    username = box(browser_page.get_by_label("Username"))
    password = box(browser_page.get_by_label("Password"))
    button = box(browser_page.get_by_role("button", name="Log in"))

    # Each on its own line, in order, the fields as wide as each other.
    assert label["y"] + label["height"] <= username["y"]
    assert username["y"] + username["height"] <= password["y"]
    assert password["y"] + password["height"] <= button["y"]
    assert username["x"] == password["x"] and username["width"] == password["width"]
    assert username["x"] + username["width"] <= viewport["width"]


def test_the_reason_typed_beside_an_entry_deletes_it_after_confirming(
    browser_page, api, operator, roomy_limits
):
    entry_id = post(api, question(title="Delete me with a reason")).json()["id"]
    log_in(browser_page)
    browser_page.goto("/console/entries/")
    row = browser_page.locator(f"#entry-{entry_id}")

    row.get_by_label(f"Reason for entry {entry_id}").fill("Personal data")
    row.get_by_role("button", name="Delete", exact=True).click()

    browser_page.get_by_role("heading", name=f"Delete entry {entry_id}?").wait_for()
    assert browser_page.get_by_label("Reason").input_value() == "Personal data"
    assert Entry.objects.get(pk=entry_id).deleted_at is None
    browser_page.get_by_role("button", name="Delete").click()
    browser_page.get_by_text(f"Entry {entry_id} is deleted").wait_for()
    assert browser_page.url.endswith("/console/entries/")
    event = AuditEvent.objects.get(action="entry_delete")
    assert (event.target_ids, event.reason) == ([entry_id], "Personal data")


def test_the_site_has_an_icon_the_browser_loads(browser_page, operator):
    browser_page.goto("/console/login/")

    loaded = browser_page.evaluate(
        """async () => {
            const href = document.querySelector('link[rel="icon"]').href;
            const image = new Image();
            image.src = href;
            await image.decode();
            return [href, image.naturalWidth > 0];
        }"""
    )

    assert loaded[0].endswith("/static/favicon.svg") and loaded[1] is True


def test_the_deliveries_page_reads_at_phone_width(browser_page, operator, settings):
    settings.SETTLE_PUBLIC_URL = "https://settle.example"
    moderation.endpoint_add(
        actor="op", name="a-receiver-with-a-long-name",
        url="https://hooks.example.com/a/rather/long/path/that/could/push/the/page/wide",
        supports="lookup", lookup_url="https://hooks.example.com/lookup/{delivery_id}",
    )
    browser_page.set_viewport_size(PHONE)
    log_in(browser_page)

    browser_page.goto("/console/deliveries/")

    browser_page.get_by_role("heading", name="Endpoints").wait_for()
    overflow = browser_page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, browser_page.evaluate(WIDER_THAN_THE_SCREEN)
    add = box(browser_page.get_by_role("button", name="Add endpoint"))
    assert add["x"] + add["width"] <= PHONE["width"]
