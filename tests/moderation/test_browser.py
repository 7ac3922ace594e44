"""The console in a real browser (headless Chromium) against a live server, with the API
called over HTTP alongside it: what an operator does, and what agents then see."""

import pytest
from django.utils import timezone

from board.models import Entry
from maintenance.activity import activity_roll_up
from tests.conftest import question

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page, username: str = "operator", password: str = "operator-password") -> None:
    page.goto("/console/")
    assert page.url.endswith("/console/login/?next=/console/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Dashboard").wait_for()


# Elements sticking out to the right, outside the tables that scroll on their own.
WIDER_THAN_THE_SCREEN = """
[...document.querySelectorAll("body *")]
  .filter(e => !e.closest(".scroll")
          && e.getBoundingClientRect().right > document.documentElement.clientWidth)
  .slice(0, 5).map(e => e.tagName + "." + e.className)
"""


def post(api, payload: dict, token: str | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return api.post("/api/v1/entries", data=payload, headers=headers)


def form_with(page, button: str):
    return page.locator("form", has=page.get_by_role("button", name=button))


def test_it_logs_in_and_shows_the_dashboard(browser_page, api, operator, roomy_limits):
    for _ in range(3):
        post(api, question())
    activity_roll_up(now=timezone.now())  # what beat runs every minute
    log_in(browser_page)
    assert browser_page.get_by_text("Open.").is_visible()
    assert browser_page.locator("figure.chart svg rect").count() == 48
    assert browser_page.get_by_role("rowheader", name="Rate-limited").is_visible()
    assert browser_page.get_by_text("3 posts in 48 hours").is_visible()


def test_it_reads_at_phone_width(browser_page, api, operator, agent, roomy_limits):
    payload = question(title="A question with a title long enough to wrap on a phone screen")
    entry_id = post(api, payload, token=agent.token).json()["id"]
    browser_page.set_viewport_size({"width": 390, "height": 844})
    log_in(browser_page)
    for path in [
        "/console/",
        "/console/posting/",
        "/console/entries/",
        f"/console/entries/{entry_id}/",
        f"/console/entries/{entry_id}/delete",
        f"/console/operations/?request_id={payload['request_id']}",
        "/console/tokens/",
        "/console/retention/",
        "/console/audit/",
    ]:
        browser_page.goto(path)
        overflow = browser_page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        culprits = browser_page.evaluate(WIDER_THAN_THE_SCREEN)
        assert overflow <= 0, (path, culprits)


def test_pausing_refuses_new_posts_with_the_reason_while_replays_still_answer(
    browser_page, api, operator, roomy_limits
):
    # given a post saved before the pause
    earlier = question()
    assert post(api, earlier).status == 201
    log_in(browser_page)
    browser_page.get_by_role("link", name="Posting", exact=True).click()

    # when
    pause = form_with(browser_page, "Pause posting")
    pause.get_by_label("Reason").fill("Upgrading the database")
    pause.get_by_role("button", name="Pause posting").click()

    # then
    browser_page.locator("ul.messages").get_by_text("Posting is paused.").wait_for()
    refused = post(api, question())
    assert refused.status == 503
    wait = int(refused.headers["retry-after"])
    assert wait > 0
    assert refused.json()["error"] == {
        "code": "writes_disabled",
        "message": "Upgrading the database",
        "retry_after_seconds": wait,
    }
    replay = post(api, earlier)
    assert replay.status == 200 and replay.json()["replayed"] is True

    # and resuming opens it again
    resume = form_with(browser_page, "Resume posting")
    resume.get_by_label("Reason").fill("Upgrade done")
    resume.get_by_role("button", name="Resume posting").click()
    browser_page.locator("ul.messages").get_by_text("Posting is open again.").wait_for()
    assert post(api, question()).status == 201


def test_hiding_takes_an_entry_out_of_public_reads_and_a_retry_says_not_visible(
    browser_page, api, operator, roomy_limits
):
    payload = question(title="Hide me please")
    entry_id = post(api, payload).json()["id"]
    log_in(browser_page)
    browser_page.goto("/console/entries/?q=Hide+me")

    row = browser_page.locator(f"#entry-{entry_id}")
    row.get_by_placeholder("Reason").fill("Off-topic")
    row.get_by_role("button", name="Hide").click()

    browser_page.get_by_text(f"Entry {entry_id} is hidden.").wait_for()
    assert browser_page.locator(f"#entry-{entry_id}").get_by_role("button", name="Unhide").count()
    assert api.get(f"/threads/{entry_id}").status == 404
    assert api.get(f"/api/v1/threads/{entry_id}").status == 404
    listed = [item["id"] for item in api.get("/api/v1/threads").json()["items"]]
    assert entry_id not in listed
    retry = post(api, payload)
    assert retry.status == 200 and retry.json()["visible"] is False
    entry = Entry.objects.get(pk=entry_id)
    assert entry.title == "Hide me please"  # hiding keeps the content


def test_deleting_asks_first_then_removes_the_text_and_a_retry_answers_410(
    browser_page, api, operator, roomy_limits
):
    payload = question(title="Delete me", body="Text that must go")
    entry_id = post(api, payload).json()["id"]
    log_in(browser_page)
    browser_page.goto("/console/entries/")

    row = browser_page.locator(f"#entry-{entry_id}")
    row.get_by_role("button", name="Delete", exact=True).click()
    browser_page.get_by_role("heading", name=f"Delete entry {entry_id}?").wait_for()
    assert Entry.objects.get(pk=entry_id).deleted_at is None  # nothing happens before confirming
    browser_page.get_by_label("Reason").fill("Personal data")
    browser_page.get_by_role("button", name="Delete").click()

    browser_page.get_by_text(f"Entry {entry_id} is deleted").wait_for()
    retry = post(api, payload)
    assert retry.status == 410 and retry.json()["error"]["code"] == "deleted"
    entry = Entry.objects.get(pk=entry_id)
    assert (entry.title, entry.body, entry.actor_name) == ("", "", "")
    assert not Entry.objects.filter(body__contains="Text that must go").exists()


def test_looking_up_a_request_id(browser_page, api, operator, agent, roomy_limits):
    payload = question()
    post(api, payload, token=agent.token)
    post(api, payload, token=agent.token)
    log_in(browser_page)
    browser_page.get_by_role("link", name="Operations").click()

    browser_page.get_by_label("request_id").fill(payload["request_id"])
    browser_page.get_by_role("button", name="Look up").click()

    section = browser_page.locator("section.operation")
    section.get_by_role("heading", name="In the scope of agent").wait_for()
    assert section.get_by_role("row", name="First route api").is_visible()
    assert section.get_by_role("cell", name="created", exact=True).is_visible()
    assert section.get_by_role("cell", name="replayed", exact=True).is_visible()
    assert section.get_by_role("heading", name="Digests").is_visible()
    assert browser_page.get_by_text("Nothing to settle: no delivery's outcome").is_visible()


def test_issuing_a_token_then_revoking_it(browser_page, api, operator, roomy_limits):
    log_in(browser_page)
    browser_page.get_by_role("link", name="Tokens").click()

    browser_page.get_by_label("Agent name").fill("browser-bot")
    with browser_page.expect_response(lambda r: r.url.endswith("/console/tokens/issue")) as issued:
        browser_page.get_by_role("button", name="Issue token").click()
    token = browser_page.locator("#issued-token").inner_text().strip()

    assert token.startswith("settle_")
    assert "no-store" in issued.value.headers["cache-control"]
    assert all(token not in c["value"] for c in browser_page.context.cookies())
    assert token not in browser_page.locator("ul.messages").inner_text()
    assert post(api, question(), token=token).status == 201

    row = browser_page.locator("#agent-browser-bot")
    row.get_by_role("button", name="Revoke").click()
    browser_page.get_by_text("Revoked 1 token of browser-bot.").wait_for()
    refused = post(api, question(), token=token)
    assert refused.status == 401 and refused.json()["error"]["code"] == "unauthorized"
    assert token not in browser_page.content()
